"""The console in a real browser: Debian's headless Chromium driven by Playwright, against uvicorn on a free
loopback port. Draw the graph and click a node, run a recall and see the score bars, approve a proposal and see
the merge. Skips with a reason only where Chromium is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from cli.ui import create_app
from kg.workspace import open_workspace
from tests.serving import serving_in_thread

if TYPE_CHECKING:
    from conftest import Built

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium (apt-get install chromium)")


def until(page: Any, expression: str, timeout: float = 15) -> None:
    """Poll ``expression`` (evaluated over CDP, so the console's CSP, which forbids eval, does not apply) until it
    is truthy; Playwright's ``wait_for_function`` compiles its predicate with eval in the page, which the CSP
    refuses."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the module (never `playwright install`: the Debian binary)."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only where Chromium exists

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def console(built: Built) -> Iterator[str]:
    """The console on the test workspace, served by uvicorn in a thread; its base URL."""
    with serving_in_thread(create_app(built.path, agent="a")) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any browser-side error."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert not errors, errors


def test_graph_is_drawn_and_a_click_shows_the_node_and_expands_it(page: Any, console: str, built: Built) -> None:
    page.goto(f"{console}/graph?agent=a&types=belief,goal,plan&limit=1")
    page.wait_for_selector("body[data-graph-ready='1']")
    assert page.evaluate("window.mabosGraph.nodes().length") == 1
    assert "showing 1 of 3 BDI nodes" in page.inner_text("#graph-note")
    x, y = page.evaluate(
        """uid => { const p = window.mabosGraph.getElementById(uid).renderedPosition();
                    const box = document.getElementById('cy').getBoundingClientRect();
                    return [box.x + p.x, box.y + p.y]; }""",
        built.uids["belief"],
    )
    page.mouse.click(x, y)
    page.wait_for_selector("#node-title")
    assert "Acme is growing fast" in page.inner_text("#node-title")
    assert "Win the Acme renewal" in page.inner_text("#node-panel")  # its neighbour
    page.click("#expand")
    until(page, "window.mabosGraph.nodes().length === 2")
    assert page.evaluate(f"window.mabosGraph.getElementById('{built.uids['goal']}').nonempty()")
    page.goto(f"{console}/graph?agent=a")
    page.wait_for_selector("body[data-graph-ready='1']")
    drawn = page.evaluate("window.mabosGraph.nodes().map(n => n.id())")
    assert "entity:acme" in drawn and built.uids["b_goal"] not in drawn and len(drawn) == 10
    assert page.evaluate("window.mabosGraph.edges().length") == 7


def test_recall_shows_the_score_bars(page: Any, console: str) -> None:
    page.goto(f"{console}/memory?agent=a")
    page.fill("input[name=q]", "signing keys rotate")
    page.click("#recall-form button")
    page.wait_for_selector("#recall-results .hit")
    first = page.locator("#recall-results .hit").first
    assert "JWT signing keys rotate" in first.inner_text()
    labels = first.locator(".bar-label").all_inner_texts()
    assert labels == ["bm25", "vector", "fusion", "importance", "decay", "mmr"]
    bm25_width = first.locator(".bar-bm25").evaluate("el => el.getBoundingClientRect().width")
    assert bm25_width > 0


def test_approve_a_proposal_and_see_the_merge(page: Any, console: str, built: Built) -> None:
    uid = built.uids["proposal"]
    page.goto(f"{console}/ontology?agent=a")
    row = page.locator(f"#row-{uid}")
    assert row.locator(".status").inner_text() == "validated"
    row.locator("button.approve").click()
    page.wait_for_selector("main > p.flash")
    assert page.inner_text("main > p.flash") == f"{uid} merged"
    assert row.locator(".status").inner_text() == "approved-merged"
    assert row.locator("button.approve").count() == 0
    with open_workspace(built.path) as ws:
        assert ws.ports.proposals.get(uid).status.value == "approved-merged"
    page.goto(f"{console}/ontology?agent=a&proposal={uid}")
    assert page.inner_text("#proposal-status") == "approved-merged"
