"""Hostile text through every page and panel of the console, in Chromium, with the console's CSP in force.

Agent ``h`` of the test workspace (tests/ui/conftest.py, :func:`seed_hostile`) wrote :data:`HOSTILE` (a quote
breaking out of a single-quoted attribute with ``onmouseover``, tags with handlers, ``<script>``, ``</textarea>``,
``javascript:`` URLs, U+2028/U+2029, a template expression) into its name and role, facts (subject, predicate,
object, a derived one), every BDI kind, a memory, a conversation (title, messages) and an ontology proposal (label,
definition, rationale). The console acts as ``h``: each page is loaded once, the script-built elements are hovered
and clicked (graph nodes, the panel's neighbour links, the ontology filter, the reasoning form), and after each the
page must show no sign of script from the data: ``window.__xss`` never set, the title unchanged, and no CSP
violation at all (escaping must keep the text text; the CSP is the second wall). A control proves the CSP really
blocks an injected handler and reports it, so "no violation" means something.

Also here, read-only on the same server: the ontology page is a collapsible, searchable tree with the proposals on
top; the conversation page shows the messages (paged) before any compaction; graph labels do not overlap.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from cli.ui import create_app
from tests.serving import serving_in_thread
from tests.ui.conftest import HOSTILE
from tests.ui.test_browser import CHROMIUM, browser, until  # noqa: F401 - the module's one Chromium, as a fixture

if TYPE_CHECKING:
    from conftest import Built

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.sample || e.blockedURI));
});
"""


@pytest.fixture(scope="module")
def console(built_template: Built) -> Iterator[str]:
    """The console on the session's workspace (these tests only read), served by uvicorn in a thread."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MABOS_EMBEDDER", "none")
        with serving_in_thread(create_app(built_template.path, agent="h")) as port:
            yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def tab(browser: Any) -> Iterator[Any]:  # noqa: F811
    """One page for the module, watching CSP violations from before any page script runs."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(WATCH)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}") or dialog.dismiss())
    yield page
    context.close()
    assert not errors, errors


def clean(page: Any, title: str) -> None:
    """No script from the data ran, nothing even tried (no CSP violation), the title is the page's own."""
    assert page.evaluate("window.__xss") is None
    assert page.evaluate("window.__violations") == []
    assert page.title() == f"{title} · mabos"


def test_hostile_text_runs_no_script_on_any_page(tab: Any, console: str, built_template: Built) -> None:
    uids = built_template.uids
    visible = HOSTILE.split("\u2028")[0].strip()  # the text as shown (a line separator ends the line)

    tab.goto(f"{console}/?agent=h")
    assert HOSTILE.split("'")[0] in tab.inner_text("h1")  # the agent's name, as text
    assert "onerror" in tab.inner_text("main")  # the payloads are there, shown as text
    clean(tab, "Overview")

    tab.goto(f"{console}/graph?agent=h")
    tab.wait_for_selector("body[data-graph-ready='1']")
    assert tab.evaluate("window.mabosGraph.nodes().length") >= 8
    for node_id in (f"entity:{HOSTILE}", uids["h_goal"]):
        x, y = tab.evaluate("""id => { const p = window.mabosGraph.getElementById(id).renderedPosition();
                               const box = document.getElementById('cy').getBoundingClientRect();
                               return [box.x + p.x, box.y + p.y]; }""", node_id)  # fmt: skip
        tab.mouse.move(x, y)
        tab.mouse.click(x, y)
        tab.wait_for_selector("#node-title")
        until(tab, "!document.querySelector('#node-panel p.note')")
        links = tab.locator("#node-panel a[data-id]")
        assert links.count() >= 1
        for i in range(links.count()):
            links.nth(i).hover()
            attributes = links.nth(i).evaluate("a => a.getAttributeNames()")
            assert sorted(attributes) == ["data-id", "href"]  # no handler grew out of the data
        assert "onmouseover" in tab.inner_text("#node-panel")
        clean(tab, "Graph")
    links.first.click()  # a neighbour: expands and shows it
    until(tab, "!document.querySelector('#node-panel p.note')")
    clean(tab, "Graph")

    tab.goto(f"{console}/facts?agent=h&fact={uids['h_derived']}")
    assert "hostile-rule" in tab.inner_text("main") and "<script>" in tab.inner_text("main")
    clean(tab, "Facts")

    tab.goto(f"{console}/memory?agent=h&q=memo")
    assert "memo x'" in tab.inner_text("#recall-results")
    clean(tab, "Memory")

    tab.goto(f"{console}/ontology?agent=h&proposal={uids['h_proposal']}")
    assert "</textarea>" in tab.inner_text("#proposal-detail")
    tab.fill("#tree-filter", visible[:40])
    tab.fill("#tree-filter", "")
    clean(tab, "Ontology")

    tab.goto(f"{console}/reasoning?agent=h")
    tab.fill("#prove-form input[name=subject]", "?x")
    tab.fill("#prove-form input[name=predicate]", "isT")
    tab.fill("#prove-form input[name=object]", "?y")
    tab.click("#prove-form button[value=backward]")
    tab.wait_for_selector("section.detail")
    assert "onmouseover" in tab.inner_text("section.detail")
    clean(tab, "Reasoning")

    tab.goto(f"{console}/conversation?agent=h&session=hostile")
    assert tab.locator("#messages li.message").count() == 3
    assert "message 0 x'" in tab.inner_text("#messages")
    clean(tab, "Conversation")

    tab.goto(f"{console}/sync?agent=h")
    clean(tab, "Sync")

    # the control: the CSP in force blocks an inline handler injected into the page, and reports it
    tab.evaluate("document.body.insertAdjacentHTML('beforeend', '<img src=\"/static/none.png\" "
                 "onerror=\"window.__xss=99\">')")  # fmt: skip
    until(tab, "window.__violations.length > 0")
    assert tab.evaluate("window.__xss") is None
    assert tab.evaluate("window.__violations")[0].startswith("script-src")


def test_ontology_is_a_collapsible_searchable_tree_with_the_proposals_on_top(tab: Any, console: str) -> None:
    tab.goto(f"{console}/ontology?agent=a")
    headings = tab.locator("main h2").all_inner_texts()
    assert headings[0].startswith("Proposals") and headings[1].startswith("Hierarchy")
    tree = tab.locator("#class-tree")
    assert tab.evaluate("document.querySelectorAll('#class-tree details[open]').length") == 0  # all collapsed
    collapsed = tab.evaluate("document.documentElement.scrollHeight")
    assert collapsed < 2500
    assert not tree.locator("li[data-name='ecommerce:Fulfillment']").is_visible()  # inside a closed branch
    tab.fill("#tree-filter", "fulfillment")
    assert tree.locator("li[data-name='ecommerce:Fulfillment']").is_visible()  # its ancestors opened
    shown = [n for n in tree.locator("li:not([hidden])").evaluate_all("ls => ls.map(l => l.dataset.name)") if n]
    assert shown and all("fulfillment" in n.lower() or tab.locator(f"#class-tree li[data-name='{n}'] "
                         "li:not([hidden])").count() for n in shown)  # fmt: skip
    assert tab.inner_text("#tree-count").endswith("matching")
    tab.fill("#tree-filter", "")
    assert tab.evaluate("document.querySelectorAll('#class-tree li[hidden]').length") == 0
    assert tab.evaluate("window.__violations") == []


def test_conversation_shows_messages_paged_before_any_compaction(tab: Any, console: str) -> None:
    tab.goto(f"{console}/conversation?agent=a&session=renewal")
    messages = tab.locator("#messages li.message")
    assert messages.count() == 50  # one page
    first = tab.evaluate("document.querySelector('#messages li.message').value")
    tab.click("p.pager a.next >> nth=0")
    assert tab.evaluate("document.querySelector('#messages li.message').value") == first + 50
    assert tab.locator("p.pager a.previous").count() >= 1
    tab.goto(f"{console}/conversation?agent=h&session=hostile")  # never compacted
    assert tab.locator("#messages li.message").count() == 3
    assert "no summaries yet" in tab.inner_text("main")


#: Pairs of drawn nodes whose boxes (node and label, as cytoscape measures them) overlap: computed here, not by the
#: page's own code.
OVERLAPS = """() => {
  const boxes = window.mabosGraph.nodes().map(n => [n.id(),
    n.boundingBox({includeNodes: true, includeLabels: true, includeEdges: false})]);
  const found = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i][1], b = boxes[j][1];
    if (Math.min(a.x2, b.x2) > Math.max(a.x1, b.x1) && Math.min(a.y2, b.y2) > Math.max(a.y1, b.y1)) {
      found.push([boxes[i][0], boxes[j][0]]);
    }
  }
  return found;
}"""


def test_graph_labels_do_not_overlap(tab: Any, console: str) -> None:
    for agent in ("h", "crowd"):  # both overlapped before (long labels; unlinked nodes in a row)
        tab.goto(f"{console}/graph?agent={agent}")
        tab.wait_for_selector("body[data-graph-ready='1']")
        assert tab.evaluate("window.mabosGraph.nodes().length") >= 8
        assert tab.evaluate(OVERLAPS) == [], agent
