"""An import's report says what happened to a record whose uid names another agent's case or edge (issue 30).

Before: ``agents/a/cases.json`` holding the uid of ``b``'s case was reported ``case: created 1``, while the store
(which keeps a uid it already holds: ``INSERT OR IGNORE``) wrote nothing; an edge with the uid of ``b``'s edge did
the same. Every record kind now looks its uid up across scopes (memory items, facts, rules and BDI nodes did):
the record is *refused* with the reason, as for the other kinds (docs/workspace-import-export.md), and after the
write a created case or edge the store does not hold as written is reported refused too. Real workspace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kg.ids import new_id
from kg.workspace import Workspace
from reasoning.cases import CaseService
from sync.workspace_io import import_workspace
from tests.reliability.test_import_isolation import A, B, scope_state, victim, write_agent_dir


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def rows(report: Any, status: str) -> list[tuple[str, str, str]]:
    return [(r.kind, r.uid, r.reason) for agent in report.agents for r in getattr(agent, status)]


def test_a_case_with_another_agents_uid_is_refused_not_created(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    cases = CaseService(workspace.ports, workspace.scopes, workspace.clock, None)
    theirs = cases.store_case(B, situation={"context": "b's secret"}, solution={"actions": ["x"]},
                              outcome={"success": True}).case  # fmt: skip
    before = scope_state(workspace, ["agent:b"])
    src = write_agent_dir(tmp_path / "src", A, {"cases.json": [
        {"case_id": theirs.uid, "situation": {"context": "planted"}, "solution": {"actions": ["pay"]},
         "outcome": {"success": True}}]})  # fmt: skip
    for dry_run in (True, False):
        report = import_workspace(workspace, src, agents=[A], dry_run=dry_run)
        assert report.totals["case"].created == 0 and report.totals["case"].refused == 1
        [(kind, uid, reason)] = rows(report, "refused")
        assert (kind, uid) == ("case", theirs.uid) and "another agent" in reason
    assert scope_state(workspace, ["agent:b"]) == before
    assert workspace.ports.cases.list(scopes=["agent:a"]) == []


def test_an_edge_with_another_agents_uid_is_refused_not_created(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    goal_b, plan_b = workspace.bdi.add("goal", B, "b's goal"), workspace.bdi.add("plan", B, "b's plan")
    theirs = workspace.bdi.link(B, "goal-requires-plan", goal_b.uid, plan_b.uid)
    belief, goal = workspace.bdi.add("belief", A, "a's belief"), workspace.bdi.add("goal", A, "a's goal")
    mine = workspace.bdi.add("goal", A, "a's other goal")
    plan = workspace.bdi.add("plan", A, "a's plan")
    before = scope_state(workspace, ["agent:b"])
    edges = [  # b's edge uid between a's own nodes (found after the write), and a plain new edge
        {"uid": theirs.uid, "agent_id": A, "scope": "agent:a", "kind": "belief-supports-goal",
         "source_uid": belief.uid, "target_uid": goal.uid, "created_at": "2024-05-01T12:00:00Z"},
        {"uid": new_id("relation"), "agent_id": A, "scope": "agent:a", "kind": "goal-requires-plan",
         "source_uid": mine.uid, "target_uid": plan.uid, "created_at": "2024-05-01T12:00:00Z"},
    ]  # fmt: skip
    src = write_agent_dir(tmp_path / "src", A, {"mabos-relations.json": {"relations": edges}})
    report = import_workspace(workspace, src, agents=[A])
    assert (report.totals["relation"].created, report.totals["relation"].refused) == (1, 1)
    assert rows(report, "skipped") == []
    [(kind, uid, reason)] = rows(report, "refused")
    assert (kind, uid) == ("relation", theirs.uid) and "could not see or change" in reason
    assert scope_state(workspace, ["agent:b"]) == before
    assert [r.target_uid for r in workspace.ports.relations.relations(mine.uid, scopes=["agent:a"])] == [plan.uid]
