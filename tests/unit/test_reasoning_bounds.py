"""Bounded, paged forward closures on a real SQLite workspace (issue 18): ``infer_forward``, ``constraint_check``,
``policy_eval``, ``knowledge_explain`` and the nightly inference step all stop at the workspace's bounds with a
sound partial closure marked ``fixpoint: false``. Chains are short (200 facts, cap 1,000) to keep this fast."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kg
from cli import tools
from kg.clock import FixedClock
from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.service import DEFAULT_LIMITS, INFERENCE_SOURCE, Reasoner, RuleService
from sync.nightly_steps import StepContext, infer_step

TRANSITIVE = {
    "name": "transitive",
    "conditions": ["?x p ?y", "?y p ?z"],
    "conclusion": "?x p ?z",
}
LONG = {  # a constraint that holds on every derived edge of the chain
    "name": "too-long",
    "type": "constraint",
    "conditions": ["?x p ?z"],
    "violation_message": "?x reaches ?z",
}


@pytest.fixture
def ws(tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """Agent ``a`` with a chain of 200 ``p`` facts and the transitive rule; ``[reasoning] max_derived = 1000``."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    kg.init_workspace(tmp_path / "ws", clock=clock).close()
    config = tmp_path / "ws" / "mabos.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[reasoning]\nmax_derived = 1000\n", encoding="utf-8")
    workspace = kg.open_workspace(tmp_path / "ws", clock=clock)
    workspace.agents.add("a")
    chain(workspace, 200)
    call(workspace, "rule_create", **TRANSITIVE)
    yield workspace
    workspace.close()


def chain(ws: Workspace, n: int) -> None:
    ws.facts.assert_many("a", [{"subject": f"n{i:04d}", "predicate": "p", "object": f"n{i + 1:04d}"}
                               for i in range(n)])  # fmt: skip


def call(ws: Workspace, name: str, /, **arguments: Any) -> Any:
    return tools.call(name, workspace=ws.path, agent="a", **arguments)


def test_the_workspace_bound_stops_forward_chaining_with_a_note(ws: Workspace) -> None:
    report = call(ws, "infer_forward", max_iterations=100)
    assert report.total_derived == 1000 and len(report.derived) == 1000
    assert not report.fixpoint and report.stopped_by == "max_derived"
    assert "max_derived 1000" in report.note and "incomplete" in report.note
    assert report.closure.max_derived == 1000 and report.closure.max_join == DEFAULT_LIMITS.max_join
    assert all(d.subject < d.object for d in report.derived)  # sound: every one is a path along the chain


def test_pages_cover_the_derived_facts_once_in_order(ws: Workspace) -> None:
    whole = [(d.subject, d.object) for d in call(ws, "infer_forward", max_iterations=100).derived]
    pages: list[tuple[str, str]] = []
    offset: int | None = 0
    while offset is not None:
        page = call(ws, "infer_forward", max_iterations=100, offset=offset, limit=300)
        assert len(page.derived) <= 300 and page.total_derived == 1000
        pages += [(d.subject, d.object) for d in page.derived]
        offset = page.next_offset
    assert pages == whole
    assert call(ws, "infer_forward", offset=5000).derived == []


def test_a_call_may_lower_the_bounds_but_not_raise_them(ws: Workspace) -> None:
    lower = call(ws, "infer_forward", max_iterations=100, max_derived=50)
    assert lower.total_derived == 50 and lower.stopped_by == "max_derived"
    joins = call(ws, "infer_forward", max_iterations=100, max_join=500)
    assert joins.stopped_by == "max_join" and joins.closure.join_work > 500
    with pytest.raises(InputError, match=r"^max_derived: must be from 1 to 1000 \(the workspace's \[reasoning\]"):
        call(ws, "infer_forward", max_derived=1001)
    for field, bad in (("limit", 0), ("limit", 10_001), ("offset", -1), ("max_join", 0)):
        with pytest.raises(InputError, match=f"^{field}: "):
            call(ws, "infer_forward", **{field: bad})


def test_a_cut_closure_is_persisted_but_retracts_nothing(ws: Workspace, tmp_path: Path) -> None:
    full = call(ws, "infer_forward", persist=True, max_iterations=100, max_derived=1000)
    assert full.created == 1000
    cut = call(ws, "infer_forward", persist=True, max_iterations=100, max_derived=10)
    assert cut.retracted == [] and "Nothing was retracted" in cut.note
    stored = ws.facts.query("a", predicate="p", limit=10_000)
    assert sum(1 for f in stored if f.source == INFERENCE_SOURCE) == 1000


def test_constraints_policies_and_knowledge_say_their_closure_was_cut(ws: Workspace) -> None:
    call(ws, "rule_create", **LONG)
    checked = call(ws, "constraint_check")
    assert not checked.fixpoint and "max_derived 1000" in checked.note
    # 200 asserted edges and 1,000 derived ones violate it; one call returns at most 1,000 violations
    assert len(checked.violations) == 1000 and checked.truncated and "1000 results" in checked.note
    fired = call(ws, "policy_eval")
    assert not fired.fixpoint and fired.note
    answer = call(ws, "knowledge_explain", question="Does n0000 p n0003?")
    assert not answer.fixpoint and answer.note


def test_a_small_closure_is_complete_and_says_so(tmp_path: Path, clock: FixedClock,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "small", clock=clock) as small:
        small.agents.add("a")
        chain(small, 10)
        RuleService(small.ports, small.scopes, small.clock).create("a", **{
            **TRANSITIVE, "conditions": [{"subject": "?x", "predicate": "p", "object": "?y"},
                                         {"subject": "?y", "predicate": "p", "object": "?z"}],
            "conclusion": {"subject": "?x", "predicate": "p", "object": "?z"}})  # fmt: skip
        report = Reasoner.for_workspace(small).forward("a", max_iterations=100)
        assert report.fixpoint and report.stopped_by is None and report.note is None
        assert report.total_derived == 45 and report.next_offset is None
        assert report.closure.max_derived == DEFAULT_LIMITS.max_derived


def test_the_nightly_inference_step_keeps_the_workspace_bounds(ws: Workspace) -> None:
    counts = infer_step(StepContext(ws=ws), "a")
    assert counts["derived"] == 1000 and counts["fixpoint"] is False and counts["stopped_by"] == "max_derived"
