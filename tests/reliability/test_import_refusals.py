"""An import refuses a record whose uid names a stored record the agent may not write (issue 30).

``agents/a/`` is what agent ``a`` could write. When one of its records carries the uid of ``b``'s record (a
memory item, fact, rule, case, edge or BDI node, in ``b``'s own scope, ``global`` or a project only ``b``
holds), or the uid of ``a``'s own record in a scope ``a`` may no longer write, the import writes nothing of it
and the report says **refused** with the reason, in the counts, the JSON report and the human output; it
used to say ``skipped`` (and ``created`` for a case or an edge), as if the record were merely kept. Real
workspaces (embedded SQLite) and the real CLI; nothing mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.service import RuleService
from sync.workspace_io import import_workspace
from tests.reliability.test_import_isolation import A, B, scope_state, write_agent_dir

#: Scopes b's records are in: its own, the shared one, and a project only b holds.
B_SCOPES = ("agent:b", "global", "project:y")
KINDS = ("memory", "fact", "rule", "case", "relation", "belief", "goal")
CONDITION = {"subject": "?x", "predicate": "hasIndustry", "object": "saas"}


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def b_records(ws: Workspace, scope: str) -> dict[str, Any]:
    """Agents a and b, and one record of b of every kind in ``scope`` (by kind)."""
    ws.agents.add(A)
    ws.agents.add(B)
    ws.scopes.grant(B, "project:y", granted_by="test")
    memory = ws.memory.store_item(B, f"b's note in {scope}", scope=scope).item
    fact, _ = ws.facts.assert_fact(B, "acme", "hasIndustry", "saas", scope=scope)
    rule = RuleService(ws.ports, ws.scopes, ws.clock).create(
        B, name="b-rule", conditions=[CONDITION], scope=scope,
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "true"})  # fmt: skip
    case = CaseService(ws.ports, ws.scopes, ws.clock, None).store_case(
        B, situation={"context": f"b's case in {scope}"}, solution={"actions": ["x"]}, outcome={"success": True},
        scope=scope).case  # fmt: skip
    belief = ws.bdi.add("belief", B, "b's belief", scope=scope)
    goal = ws.bdi.add("goal", B, "b's goal", scope=scope)
    edge = ws.bdi.link(B, "belief-supports-goal", belief.uid, goal.uid, scope=scope)
    return {"memory": memory, "fact": fact, "rule": rule, "case": case, "relation": edge, "belief": belief,
            "goal": goal}  # fmt: skip


def a_files(theirs: dict[str, Any], scope: str | None) -> dict[str, Any]:
    """a's files naming every uid of ``theirs`` (in ``scope``, or a's default scope when None)."""
    extra = {"scope": scope} if scope else {}
    edge = theirs["relation"]
    nodes = [{"uid": theirs[k].uid, "kind": k, "agent_id": A, "content": "mine now", **extra,
              "created_at": "2024-05-01T12:00:00Z", "updated_at": "2030-01-01T00:00:00Z"}
             for k in ("belief", "goal")]  # fmt: skip
    return {
        "memory-store.json": {
            "long_term": [{"id": theirs["memory"].uid, "content": theirs["memory"].content, "importance": 1.0, **extra}]
        },
        "facts.json": {
            "facts": [
                {
                    "id": theirs["fact"].uid,
                    "subject": "acme",
                    "predicate": "hasIndustry",
                    "object": "saas",
                    "confidence": 0.1,
                    **extra,
                }
            ]
        },
        "rules.json": {
            "rules": [
                {
                    "id": theirs["rule"].uid,
                    "name": "b-rule",
                    "conditions": [CONDITION],
                    "conclusion": {"subject": "?x", "predicate": "paysTo", "object": "a"},
                    **extra,
                }
            ]
        },
        "cases.json": [
            {
                "case_id": theirs["case"].uid,
                "situation": {"context": "planted"},
                "solution": {"actions": ["pay"]},
                "outcome": {"success": True},
                **extra,
            }
        ],
        "mabos-relations.json": {
            "relations": [
                {
                    "uid": edge.uid,
                    "agent_id": A,
                    "scope": scope or "agent:a",
                    "kind": "belief-supports-goal",
                    "source_uid": edge.source_uid,
                    "target_uid": edge.target_uid,
                    "created_at": "2024-05-01T12:00:00Z",
                }
            ]
        },
        "Beliefs.md": f"# Beliefs\n\n<!-- mabos: {json.dumps(nodes[0])} -->\n",
        "Goals.md": f"# Goals\n\n<!-- mabos: {json.dumps(nodes[1])} -->\n",
    }


def statuses(report: Any) -> dict[str, str]:
    """Each listed record's kind -> "refused" or "skipped"."""
    out: dict[str, str] = {}
    for agent in report.agents:
        out.update({r.kind: "refused" for r in agent.refused})
        out.update({r.kind: "skipped" for r in agent.skipped})
    return out


@pytest.mark.parametrize("theirs_in", B_SCOPES)
@pytest.mark.parametrize("filed_in", [None, "global"])
def test_a_uid_naming_another_agents_record_is_refused(
    workspace: Workspace, tmp_path: Path, theirs_in: str, filed_in: str | None
) -> None:
    theirs = b_records(workspace, theirs_in)
    everything = [*B_SCOPES, "agent:a"]
    before = scope_state(workspace, everything)
    src = write_agent_dir(tmp_path / "src", A, a_files(theirs, filed_in))
    expected = {(k, theirs[k].uid) for k in KINDS}
    if theirs_in != "global":  # b's private nodes are ends a may not see: the edge is skipped as if they were not
        expected.discard(("relation", theirs["relation"].uid))
    for dry_run in (True, False):
        report = import_workspace(workspace, src, agents=[A], dry_run=dry_run)
        assert scope_state(workspace, everything) == before
        listed = {(r.kind, r.uid): r.reason for agent in report.agents for r in agent.refused}
        assert expected <= set(listed), statuses(report)
        assert all("another agent (b)" in listed[key] for key in expected)  # the reason names the owner
        assert not any(c.created or c.updated for c in report.totals.values())
        assert all(report.totals[k].refused == 1 for k, _ in expected)


def test_an_edge_named_after_another_agents_edge_is_refused_even_at_the_same_ends(
    workspace: Workspace, tmp_path: Path
) -> None:
    """b's edge between b's global nodes, filed by a in global with the same ends: refused, not "unchanged"."""
    theirs = b_records(workspace, "global")
    src = write_agent_dir(tmp_path / "src", A, {"mabos-relations.json": a_files(theirs, "global")[
        "mabos-relations.json"]})  # fmt: skip
    report = import_workspace(workspace, src, agents=[A])
    [row] = report.agents[0].refused
    assert (row.kind, row.uid) == ("relation", theirs["relation"].uid) and "another agent (b)" in row.reason
    assert report.totals["relation"].unchanged == 0


def test_own_record_in_a_scope_no_longer_writable_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    workspace.agents.add(A)
    workspace.scopes.grant(A, "project:x", granted_by="test")
    mine, _ = workspace.facts.assert_fact(A, "acme", "inScope", "x", scope="project:x")
    note = workspace.memory.store_item(A, "a's project note", scope="project:x").item
    workspace.scopes.revoke(A, "project:x", revoked_by="test")
    before = scope_state(workspace, ["project:x"])
    src = write_agent_dir(tmp_path / "src", A, {  # the same uids, filed in a's own scope
        "facts.json": {"facts": [{"id": mine.uid, "subject": "acme", "predicate": "inScope", "object": "x"}]},
        "memory-store.json": {"long_term": [{"id": note.uid, "content": note.content}]}})  # fmt: skip
    report = import_workspace(workspace, src, agents=[A])
    assert scope_state(workspace, ["project:x"]) == before
    assert statuses(report) == {"fact": "refused", "memory": "refused"}
    assert all("may no longer write" in r.reason for r in report.agents[0].refused)


def test_the_cli_reports_refused_in_json_and_in_the_human_output(workspace: Workspace, tmp_path: Path) -> None:
    theirs = b_records(workspace, "global")
    path = workspace.path
    workspace.close()
    files = a_files(theirs, None)
    src = write_agent_dir(tmp_path / "src", A, {"cases.json": files["cases.json"], "rules.json": files["rules.json"]})
    runner = CliRunner()
    base = ["--workspace", str(path), "sync", "import-workspace", str(src), "--agent", A]
    result = runner.invoke(cli, [*base, "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {k: (c["created"], c["skipped"], c["refused"]) for k, c in report["totals"].items() if k != "agent"} == {
        "case": (0, 0, 1), "rule": (0, 0, 1)}  # fmt: skip
    [agent] = report["agents"]
    assert agent["skipped"] == [] and sorted(r["uid"] for r in agent["refused"]) == sorted(
        [theirs["case"].uid, theirs["rule"].uid])  # fmt: skip
    human = runner.invoke(cli, base)
    assert human.exit_code == 0, human.output
    lines = [line for line in human.stdout.splitlines() if line.startswith("refused: a: ")]
    assert len(lines) == 2 and all("another agent (b)" in line for line in lines)
    assert theirs["case"].uid in human.stdout and "skipped case" not in human.stdout
