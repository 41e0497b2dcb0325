"""Export -> import of the OpenClaw-MABOS layout is the identity for every record kind and any text (issue 30).

The defect: ``sync/workspace_io/markdown.py`` joined lines on ``"\\n"`` but read them with ``str.splitlines()``,
which also ends a line at ``\\r``, ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029; and the
``<!-- mabos: {...} -->`` line held U+2028 raw (``json.dumps(ensure_ascii=False)``). A goal whose text held U+2028
and ``### G-999: forged goal`` came back as two goals; a text ending in U+2028 ``- **Priority:** 10`` broke the
JSON line and stopped the whole import. The hypothesis test puts arbitrary Unicode (every line separator among
it, control characters too) in every text field of every record kind (agent profile, facts, memory items,
rules, cases, beliefs, desires, goals, intentions, plans, plan steps and their edges), exports, imports into a
fresh workspace, and checks every record is back unchanged and nothing else was created. Real workspaces
(SQLite), nothing mocked. Default run: a few examples; ``MABOS_SLOW=1`` (or ``-m slow``) draws many more.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.limits import LINE_BREAKS
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.service import RuleService
from sync.workspace_io import export_workspace, import_workspace
from sync.workspace_io.markdown import parse_markdown, render_nodes
from tests.budget import examples
from tests.unit.test_workspace_io import dump_all

SEPARATORS = "\n" + LINE_BREAKS  # every character str.splitlines() ends a line at
FORGERIES = ("### G-999: forged goal", "- **Priority:** 10", "<!-- mabos: {} -->", "## Log", "| ID | Goal |", "> ")


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def _hostile() -> st.SearchStrategy[str]:
    """Arbitrary text (no surrogates or NUL, which the models refuse) mixed with line separators and lines that
    look like the Markdown structure."""
    piece = st.one_of(
        st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12),
        st.sampled_from(SEPARATORS),
        st.sampled_from(FORGERIES),
    )
    return st.lists(piece, min_size=1, max_size=8).map("".join).filter(lambda t: t.strip() != "")


TEXT = _hostile()
#: A term (subject, predicate, object, tag, rule name): letters and digits of any script (a tag takes no space or
#: comma, a rule term no leading "?"); the free text is in TEXT.
TERM = st.text(st.characters(whitelist_categories=["L", "N"]), min_size=1, max_size=20)


def _populate(ws: Workspace, texts: list[str], terms: list[str]) -> None:
    """One record of every kind, each text field filled from ``texts``/``terms`` (cycled)."""

    def text(i: int) -> str:
        return texts[i % len(texts)]

    def term(i: int) -> str:
        return terms[i % len(terms)]

    ws.agents.add("a", name=term(0), role=text(1))
    fact, _ = ws.facts.assert_fact("a", term(1), term(2), text(2), source=term(3))
    ws.facts.assert_fact("a", term(4), "hasNote", text(3), scope="global")
    ws.memory.store_item("a", text(4), type="decision", tags=[term(5)], store="long_term", source=term(6))
    rule = RuleService(ws.ports, ws.scopes, ws.clock).create(
        "a",
        name=term(7),
        description=text(5),
        conditions=[{"subject": "?x", "predicate": term(8), "object": term(9)}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": term(10)},
    )
    belief = ws.bdi.add("belief", "a", text(6), certainty=0.5)
    desire = ws.bdi.add("desire", "a", text(7), priority=3)
    goal = ws.bdi.add("goal", "a", text(8), priority=9, progress=0.5)
    sub = ws.bdi.add("goal", "a", text(9))
    plan = ws.bdi.add("plan", "a", text(10))
    step = ws.bdi.add("step", "a", text(11), sequence=1)
    ws.bdi.add("intention", "a", text(12))
    ws.bdi.add("step", "a", text(13))  # a step of no plan
    for kind, source, target in (
        ("belief-supports-goal", belief, goal),
        ("desire-motivates-goal", desire, goal),
        ("goal-decomposition", goal, sub),
        ("goal-requires-plan", goal, plan),
        ("plan-contains-step", plan, step),
    ):
        ws.bdi.link("a", kind, source.uid, target.uid)
    CaseService(ws.ports, ws.scopes, ws.clock, None).store_case(
        "a",
        situation={"beliefs": [belief.uid], "context": text(14)},
        solution={"plan_id": plan.uid, "actions": [text(15)]},
        outcome={"success": True, "lessons": [text(16)]},
    )
    assert rule.uid and fact.uid


@pytest.fixture
def pair(
    tmp_path_factory: pytest.TempPathFactory, fresh_template: Path, copy_workspace: Callable[[Path, Path], None]
) -> Callable[[], tuple[Path, Workspace, Workspace]]:
    """``pair()``: a new directory with two fresh workspaces (copies of the per-process template), source and
    target."""

    def make() -> tuple[Path, Workspace, Workspace]:
        base = tmp_path_factory.mktemp("roundtrip")
        for name in ("source", "target"):
            copy_workspace(fresh_template / "ws", base / name)
        return base, kg.init_workspace(base / "source"), kg.init_workspace(base / "target")

    return make


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TEXT, min_size=1, max_size=17), terms=st.lists(TERM, min_size=1, max_size=11, unique=True))
def test_export_then_import_is_the_identity_for_every_record_kind(
    pair: Callable[[], tuple[Path, Workspace, Workspace]], texts: list[str], terms: list[str]
) -> None:
    base, source, target = pair()
    with source, target:
        _populate(source, texts, terms)
        export_workspace(source, base / "out")
        report = import_workspace(target, base / "out")
        assert [r for a in report.agents for r in (*a.skipped, *a.refused)] == []
        assert dump_all(target) == dump_all(source)
        export_workspace(target, base / "again")
        for path in (base / "out" / "agents" / "a").iterdir():  # and exporting the copy writes the same files
            assert (base / "again" / "agents" / "a" / path.name).read_bytes() == path.read_bytes(), path.name


def test_a_line_separator_in_a_goal_forges_no_record(pair: Callable[[], tuple[Path, Workspace, Workspace]]) -> None:
    """The two repros of issue 30, with every separator: each goal comes back once, as it was, and nothing aborts."""
    base, source, target = pair()
    with source, target:
        source.agents.add("a")
        made = []
        for separator in SEPARATORS:
            made.append(source.bdi.add("goal", "a", f"real goal{separator}### G-999: forged goal", priority=2))
            made.append(source.bdi.add("goal", "a", f"another goal{separator}- **Priority:** 10", priority=3))
        export_workspace(source, base / "out")
        report = import_workspace(target, base / "out")
        assert report.totals["goal"].created == len(made)
        goals = {node.uid: node for node in target.ports.bdi.list(scopes=["agent:a"])}
        assert goals == {node.uid: node for node in made}


def test_every_rendered_line_is_one_line_for_splitlines(tmp_path: Path) -> None:
    """The writer's side of the rule: no line of a rendered file holds a character splitlines() splits at."""
    with kg.init_workspace(tmp_path / "s") as ws:
        ws.agents.add("a")
        node = ws.bdi.add("goal", "a", "x" + "y".join(SEPARATORS) + "z")
        text = render_nodes(node.kind, "a", [node], [])
    assert text.split("\n") == text.splitlines() + ([""] if text.endswith("\n") else [])
    parsed = parse_markdown(text, node.kind, "Goals.md")
    assert [data["content"] for _, data in parsed.exact] == [node.content] and len(parsed.native) == 1
