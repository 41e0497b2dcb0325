"""Workspace import and export never cross agents (issue 18): isolation probes for ``sync.workspace_io``.

The threat: agent ``a`` can write the files under ``agents/a/`` of an OpenClaw workspace (that is what an
agent does there), and the operator runs ``mabos sync import-workspace DIR --agent a``. Whatever those files
say (a ``"scope": "agent:b"`` field, the uid of one of ``b``'s records, a relation to ``b``'s node), the
import may only create or update records in scopes ``a`` may write, and only ``a``'s own records; everything
else is refused (a relation to a node ``a`` may not see: skipped, like a missing end) and listed in the
report. Export is the other door: ``a``'s export holds nothing of ``b``'s private data.

The attacks are the ones found on main (each test reproduces one), then a hypothesis probe sweep feeds
random hostile ``agents/a/`` directories (every record kind, every scope, fresh uids and ``b``'s uids) and
checks that nothing readable only by others changed. Real workspaces (embedded SQLite), nothing mocked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.ids import new_id
from kg.models import FactQuery, MemoryQuery
from kg.workspace import Workspace
from reasoning.service import Reasoner, RuleService
from sync.workspace_io import export_workspace, import_workspace
from tests.budget import examples
from tests.reliability.test_scope_isolation import MARK, World, populate

A, B = "a", "b"


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


# ------------------------------------------------------------------------------------------ the world


def victim(ws: Workspace) -> dict[str, str]:
    """Agents a and b; b's private memory item, fact and inference rule (uids by name)."""
    ws.agents.add(A)
    ws.agents.add(B)
    memory = ws.memory.store_item(B, "b's password hint is the dog's name", tags=["secret"]).item
    fact, _ = ws.facts.assert_fact(B, "acme", "hasIndustry", "saas")
    rule = RuleService(ws.ports, ws.scopes, ws.clock).create(
        B, name="saas-target", conditions=[{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "true"},
    )  # fmt: skip
    return {"memory": memory.uid, "memory_text": memory.content, "fact": fact.uid, "rule": rule.uid}


def write_agent_dir(root: Path, agent: str, files: dict[str, Any]) -> Path:
    """``root/agents/<agent>/<name>`` for each file (JSON data, or text for Markdown)."""
    folder = root / "agents" / agent
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return root


def scope_state(ws: Workspace, scopes: list[str]) -> dict[str, Any]:
    """Every record in ``scopes`` (any agent) as JSON data by uid."""
    out: dict[str, Any] = {}
    store = ws.ports
    for fact in store.facts.query(FactQuery(scopes=scopes, include_retracted=True, limit=100_000)):
        out[fact.uid] = fact.model_dump(mode="json")
    for item in store.memory.list(MemoryQuery(scopes=scopes, include_archived=True, limit=100_000)):
        out[item.uid] = item.model_dump(mode="json", exclude={"accessed_at", "access_count"})
    for node in store.bdi.list(scopes=scopes, limit=100_000):
        out[node.uid] = node.model_dump(mode="json")
        for relation in store.relations.relations(node.uid, scopes=scopes):
            out[relation.uid] = relation.model_dump(mode="json")
    for rule in store.rules.list(scopes=scopes):
        out[rule.uid] = rule.model_dump(mode="json")
    for case in store.cases.list(scopes=scopes):
        out[case.uid] = case.model_dump(mode="json")
    return out


def refused(report: Any) -> list[Any]:
    return [r for agent in report.agents for r in agent.refused]


# ------------------------------------------------------------------------------------------ the attacks


def test_a_scope_field_naming_another_agent_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    before = scope_state(workspace, ["agent:b"])
    src = write_agent_dir(tmp_path / "src", A, {
        "memory-store.json": {"short_term": [{"id": "M-1", "content": "planted in b", "scope": "agent:b"}]},
        "facts.json": {"facts": [{"id": "F-1", "subject": "b", "predicate": "trusts", "object": "attacker",
                                  "scope": "agent:b"}]},
        "cases.json": [{"case_id": "C-1", "situation": {"context": "planted"}, "solution": {"actions": ["pay"]},
                        "outcome": {"success": True}, "scope": "agent:b"}],
    })  # fmt: skip
    report = import_workspace(workspace, src, agents=[A])
    assert scope_state(workspace, ["agent:b"]) == before
    assert not workspace.facts.query(B, subject="b")
    rows = refused(report)
    assert sorted(r.kind for r in rows) == ["case", "fact", "memory"]
    assert all("may not write 'agent:b'" in r.reason and r.where.startswith("agents/a/") for r in rows)
    assert {k: c.refused for k, c in report.totals.items() if c.refused} == {"case": 1, "fact": 1, "memory": 1}


def test_a_uid_naming_another_agents_memory_is_refused(workspace: Workspace, tmp_path: Path) -> None:
    uids = victim(workspace)
    before = scope_state(workspace, ["agent:b", "global"])
    src = write_agent_dir(tmp_path / "src", A, {
        "memory-store.json": {"long_term": [{"id": uids["memory"], "content": uids["memory_text"],
                                             "scope": "global", "importance": 1.0, "tags": ["published"]}]},
    })  # fmt: skip
    report = import_workspace(workspace, src, agents=[A])
    assert scope_state(workspace, ["agent:b", "global"]) == before  # not moved to global, not re-owned
    assert not workspace.memory.list_items(A)
    [row] = refused(report)
    assert (row.kind, row.uid) == ("memory", uids["memory"]) and "another agent" in row.reason
    assert report.totals["memory"].refused == 1 and report.totals["memory"].skipped == 0


def test_another_agents_rule_is_not_rewritten(workspace: Workspace, tmp_path: Path) -> None:
    uids = victim(workspace)
    for scope in ("agent:b", None):  # named in b's scope, and with no scope (the default: a's own)
        hostile = {"id": uids["rule"], "name": "saas-target", "conditions": [
            {"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
            "conclusion": {"subject": "?x", "predicate": "sendsMoneyTo", "object": "attacker"},
            **({"scope": scope} if scope else {})}  # fmt: skip
        src = write_agent_dir(tmp_path / f"src-{scope}", A, {"rules.json": {"rules": [hostile]}})
        report = import_workspace(workspace, src, agents=[A])
        rule = workspace.ports.rules.get_many([uids["rule"]])[uids["rule"]]
        assert (rule.agent_id, rule.scope, rule.conclusion and rule.conclusion.predicate) == (B, "agent:b",
                                                                                              "isTarget")  # fmt: skip
        assert [(r.kind, r.uid) for r in refused(report)] == [("rule", uids["rule"])]
    forward = Reasoner(workspace.ports, workspace.scopes, workspace.clock, workspace.facts).forward(B)
    assert {d.predicate for d in forward.derived} == {"isTarget"}


def test_a_relation_to_another_agents_node_is_skipped(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    goal = workspace.bdi.add("goal", B, "b's secret goal")
    belief = workspace.bdi.add("belief", A, "a's belief")
    relation = {"uid": new_id("relation"), "agent_id": A, "scope": "agent:a", "kind": "belief-supports-goal",
                "source_uid": belief.uid, "target_uid": goal.uid, "created_at": "2024-05-01T12:00:00Z"}  # fmt: skip
    src = write_agent_dir(tmp_path / "src", A, {"mabos-relations.json": {"relations": [relation]}})
    report = import_workspace(workspace, src, agents=[A])
    assert not workspace.ports.relations.relations(goal.uid, scopes=["agent:a", "agent:b", "global"])
    [row] = [r for agent in report.agents for r in agent.skipped]
    assert row.kind == "relation" and goal.uid in row.reason and "b's secret goal" not in row.reason


def test_granted_scopes_import_and_ungranted_ones_do_not(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    records = [{"id": f"F-{s}", "subject": "acme", "predicate": "inScope", "object": s, "scope": s}
               for s in ("global", "agent:a", "project:x", "project:y")]  # fmt: skip
    src = write_agent_dir(tmp_path / "src", A, {"facts.json": {"facts": records}})
    workspace.scopes.grant(A, "project:x", granted_by="test")
    report = import_workspace(workspace, src, agents=[A])
    assert sorted(f.object for f in workspace.facts.query(A, predicate="inScope")) == [
        "agent:a", "global", "project:x"]  # fmt: skip
    assert [r.uid for r in refused(report)] and "project:y" in refused(report)[0].reason
    assert report.totals["fact"].created == 3 and report.totals["fact"].refused == 1


def test_a_new_agent_gets_its_own_and_global_scopes_only(workspace: Workspace, tmp_path: Path) -> None:
    """An import that creates agent ``n`` grants it nothing: its records in a project scope are refused."""
    records = [{"id": f"F-{s}", "subject": "acme", "predicate": "inScope", "object": s, "scope": s}
               for s in ("global", "agent:n", "project:x", "agent:m")]  # fmt: skip
    src = write_agent_dir(tmp_path / "src", "n", {"facts.json": {"facts": records}})
    report = import_workspace(workspace, src)
    assert sorted(f.object for f in workspace.facts.query("n", predicate="inScope")) == ["agent:n", "global"]
    assert sorted(r.uid.split("-")[0] for r in refused(report)) == ["F", "F"]


def test_an_agent_record_in_another_scope_refuses_its_whole_new_directory(workspace: Workspace, tmp_path: Path) -> None:
    victim(workspace)
    profile = {"uid": new_id("agent"), "agent_id": "n", "scope": "agent:b", "name": "N",
               "created_at": "2024-05-01T12:00:00Z", "updated_at": "2024-05-01T12:00:00Z"}  # fmt: skip
    src = write_agent_dir(tmp_path / "src", "n", {
        "mabos-agent.json": profile,
        "facts.json": {"facts": [{"id": "F-1", "subject": "n", "predicate": "p", "object": "o"}]}})  # fmt: skip
    report = import_workspace(workspace, src)
    assert [r.kind for r in refused(report)] == ["agent", "fact"]
    assert "own scope 'agent:n'" in refused(report)[0].reason and "was refused" in refused(report)[1].reason
    assert not workspace.ports.agents.exists("n")


def test_dry_run_reports_the_refusals_too(workspace: Workspace, tmp_path: Path, snapshot: Any) -> None:
    victim(workspace)
    src = write_agent_dir(
        tmp_path / "src",
        A,
        {"facts.json": {"facts": [{"id": "F-1", "subject": "b", "predicate": "p", "object": "o", "scope": "agent:b"}]}},
    )
    before = snapshot(workspace)
    report = import_workspace(workspace, src, agents=[A], dry_run=True)
    assert [r.kind for r in refused(report)] == ["fact"] and snapshot(workspace) == before


# ------------------------------------------------------------------------------------------ probe sweep

SCOPES = ("agent:a", "agent:b", "global", "project:x", "project:y", None)
KINDS = ("memory", "fact", "rule", "case", "belief", "goal")


def hostile_files(entries: list[tuple[str, str | None, bool]], uids: dict[str, str]) -> dict[str, Any]:
    """The files of one hostile ``agents/a/`` directory: each entry is (kind, scope, reuse b's uid)."""
    memory: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    rules: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    for n, (kind, scope, steal) in enumerate(entries):
        extra = {"scope": scope} if scope else {}
        if kind == "memory":
            uid = uids["memory"] if steal else f"M-{n}"
            memory.append({"id": uid, "content": uids["memory_text"] if steal else f"probe {n}", **extra})
        elif kind == "fact":
            uid = uids["fact"] if steal else f"F-{n}"
            facts.append({"id": uid, "subject": "acme", "predicate": "hasIndustry", "object": "saas", **extra})
        elif kind == "rule":
            rules.append({"id": uids["rule"] if steal else f"R-{n}", "name": f"probe-{n}",
                          "conditions": [{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
                          "conclusion": {"subject": "?x", "predicate": "sendsMoneyTo", "object": "attacker"},
                          **extra})  # fmt: skip
        elif kind == "case":
            cases.append({"case_id": f"C-{n}", "situation": {"context": f"probe {n}"},
                          "solution": {"actions": ["pay"]}, "outcome": {"success": True}, **extra})  # fmt: skip
        else:
            uid = uids[kind] if steal else new_id(kind)
            nodes.append({"uid": uid, "kind": kind, "agent_id": A, "content": f"probe {kind} {n}",
                          "created_at": "2024-05-01T12:00:00Z", "updated_at": "2030-01-01T00:00:00Z",
                          **extra})  # fmt: skip
    files: dict[str, Any] = {"memory-store.json": {"short_term": memory}, "facts.json": {"facts": facts},
                             "rules.json": {"rules": rules}, "cases.json": cases}  # fmt: skip
    for kind, name in (("belief", "Beliefs.md"), ("goal", "Goals.md")):
        lines = [f"<!-- mabos: {json.dumps(node)} -->" for node in nodes if node["kind"] == kind]
        files[name] = "\n".join(["# probes", "", *lines, ""])
    return files


_ENTRY = st.tuples(st.sampled_from(KINDS), st.sampled_from(SCOPES), st.booleans())


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_ENTRY, min_size=1, max_size=10))
def test_probe_no_hostile_directory_changes_what_a_may_not_write(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, str | None, bool]]
) -> None:
    base = tmp_path_factory.mktemp("probe")
    ws = kg.init_workspace(base / "ws")
    uids = victim(ws)
    uids["belief"] = ws.bdi.add("belief", B, "b believes in secrets").uid
    uids["goal"] = ws.bdi.add("goal", B, "b's goal").uid
    ws.scopes.grant(B, "project:y", granted_by="test")
    ws.memory.store_item(B, "project y plan", scope="project:y")
    ws.scopes.grant(A, "project:x", granted_by="test")
    forbidden = ["agent:b", "project:y"]
    before = scope_state(ws, forbidden)
    last = max((e.seq for e in ws.ports.outbox.pending(limit=100_000)), default=0)
    report = import_workspace(ws, write_agent_dir(base / "src", A, hostile_files(entries, uids)), agents=[A])
    assert scope_state(ws, forbidden) == before
    # b's uids named in a's files: every one is refused, none changed hands
    named = {uids[k] for k, _, steal in entries if steal and k in uids}
    assert named <= {r.uid for r in refused(report)}
    # everything a's import did write is a's and in a scope a may write
    after = scope_state(ws, ["agent:a", "global", "project:x"])
    for data in after.values():
        assert data["agent_id"] in (A, B) and data["scope"] in ("agent:a", "global", "project:x")
    events = ws.ports.outbox.pending(limit=100_000, after_seq=last)  # what the import wrote, as the push sees it
    assert {(e.agent_id, e.scope) for e in events} <= {(A, s) for s in ("agent:a", "global", "project:x")}
    forward = Reasoner(ws.ports, ws.scopes, ws.clock, ws.facts).forward(B)
    published = any(k == "rule" and scope == "global" and not steal for k, scope, steal in entries)
    assert ("sendsMoneyTo" in {d.predicate for d in forward.derived}) == published  # a's own global rule: a's right
    ws.close()


# ------------------------------------------------------------------------------------------ export


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path, Path]:
    """b's private world of every record kind (the scope isolation harness's); a's export, and everyone's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MABOS_EMBEDDER", "none")
        base = tmp_path_factory.mktemp("export")
        ws = kg.init_workspace(base / "ws")
        ws.agents.add(A)
        ws.agents.add(B)
        world = populate(ws)
        export_workspace(ws, base / "a-only", agents=[A])
        export_workspace(ws, base / "all")
        ws.close()
    return world, base / "a-only", base / "all"


def _leaks(folder: Path, world: World) -> list[str]:
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8")
        if MARK in text.lower():
            found.append(f"{path.relative_to(folder)}: marker")
        found += [f"{path.relative_to(folder)}: uid {u}" for u in world.private_uids if u in text]
    return found


def test_export_of_a_holds_nothing_of_b(exported: tuple[World, Path, Path]) -> None:
    world, a_only, everyone = exported
    assert sorted(p.name for p in (a_only / "agents").iterdir()) == [A]
    assert _leaks(a_only, world) == []
    assert _leaks(everyone / "agents" / A, world) == []
    assert _leaks(everyone / "agents" / B, world)  # positive control: the probe does see b's data where it is


def test_importing_as_a_the_files_of_b_writes_nothing_of_b(exported: tuple[World, Path, Path],
                                                           tmp_path: Path) -> None:  # fmt: skip
    """b's whole export copied into agents/a/ and imported as a, into the workspace holding b's data."""
    world, _, everyone = exported
    ws = kg.open_workspace(world.path)
    try:
        before = scope_state(ws, ["agent:b"])
        hostile = tmp_path / "hostile" / "agents" / A
        hostile.mkdir(parents=True)
        for path in (everyone / "agents" / B).iterdir():
            (hostile / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
        (hostile / "mabos-agent.json").unlink()
        report = import_workspace(ws, tmp_path / "hostile", agents=[A])
        assert scope_state(ws, ["agent:b"]) == before
        assert report.totals and not any(c.created + c.updated for c in report.totals.values())
        assert refused(report)
    finally:
        ws.close()
