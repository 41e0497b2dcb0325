"""Workspace import/export in the OpenClaw-MABOS layout: round trip, idempotence, bad files, original files.

Real workspaces (embedded SQLite) on both sides; nothing is mocked.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.errors import InputError
from kg.models import FactQuery, MemoryQuery
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.service import RuleService
from sync.workspace_io import MANIFEST, export_workspace, import_workspace
from sync.workspace_io.requests import WorkspaceExportRequest, WorkspaceImportRequest
from tests.budget import examples

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "openclaw_workspace"
#: Memory fields the layout carries but an import does not write (local usage statistics).
NOT_CARRIED = {"accessed_at", "access_count"}


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def fresh(tmp_path: Path, name: str) -> Workspace:
    return kg.init_workspace(tmp_path / name)


def populate(ws: Workspace, clock: FixedClock) -> dict[str, str]:
    """Agents, every BDI kind with links, facts (derived, retracted), memory items, rules and a case."""
    ws.agents.add("sales", name="Sales", role="seller", commitment_strategy="cautious")
    ws.agents.add("finance")
    revenue, _ = ws.facts.assert_fact(
        "sales", "acme", "hasRevenue", "$50000", confidence=0.9, source="crm", valid_from="2024-01-01T00:00:00Z"
    )
    industry, _ = ws.facts.assert_fact("sales", "acme", "hasIndustry", "saas")
    rules = RuleService(ws.ports, ws.scopes, ws.clock)
    rule = rules.create(
        "sales",
        name="saas-target",
        description="SaaS companies are targets",
        conditions=[{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "true"},
    )
    rules.create(
        "sales",
        name="floor",
        type="constraint",
        violation_message="?x earns too little",
        severity="error",
        conditions=[{"subject": "?x", "predicate": "hasRevenue", "object": "100000", "operator": "lt"}],
    )
    clock.advance(timedelta(seconds=5))
    derived, _ = ws.facts.assert_fact(
        "sales",
        "acme",
        "isTarget",
        "true",
        confidence=0.81,
        source="inference",
        derived_from=[industry.uid, revenue.uid],
        rule_id=rule.uid,
    )
    old, _ = ws.facts.assert_fact("sales", "globex", "hasIndustry", "retail")
    ws.facts.retract("sales", uids=[old.uid])
    ws.facts.assert_fact("finance", "acme", "owes", "1200", scope="global")
    belief = ws.bdi.add("belief", "sales", "Acme is growing\nfast | very --> really", certainty=0.8)
    desire = ws.bdi.add("desire", "sales", "Lead the SaaS market", priority=9, urgency=0.4)
    goal = ws.bdi.add(
        "goal",
        "sales",
        "Grow revenue",
        hierarchy_level="strategic",
        priority=8,
        progress=0.25,
        deadline="2025-12-31T00:00:00Z",
    )
    sub = ws.bdi.add("goal", "sales", "Win Acme", hierarchy_level="operational")
    plan = ws.bdi.add("plan", "sales", "Outbound campaign", status="active")
    step1 = ws.bdi.add("step", "sales", "Build the lead list", sequence=1)
    step2 = ws.bdi.add("step", "sales", "Send the emails", sequence=2, status="in_progress")
    ws.bdi.add("step", "sales", "A step of no plan")
    ws.bdi.add("intention", "sales", "Close the Acme deal", priority=7)
    for kind, source, target in (
        ("belief-supports-goal", belief, goal),
        ("desire-motivates-goal", desire, goal),
        ("goal-decomposition", goal, sub),
        ("goal-requires-plan", goal, plan),
        ("plan-contains-step", plan, step1),
        ("plan-contains-step", plan, step2),
        ("step-depends-on", step2, step1),
    ):
        ws.bdi.link("sales", kind, source.uid, target.uid)
    ws.memory.store_item("sales", "JWT uses RS256", type="decision", tags=["auth", "jwt"], store="working")
    ws.memory.store_item(
        "sales", "Acme prefers annual billing", type="preference", store="long_term", importance=0.9, source="call"
    )
    ws.memory.store_item("finance", "Invoices go out on the 1st", type="fact", store="short_term")
    CaseService(ws.ports, ws.scopes, ws.clock, None).store_case(
        "sales",
        situation={"beliefs": [belief.uid], "desires": [desire.uid], "context": "a late client"},
        solution={"plan_id": plan.uid, "actions": ["remind", "offer a plan"]},
        outcome={"success": True, "metrics": {"days": 6.0}, "lessons": ["plans beat reminders", "be early"]},
    )
    return {"derived": derived.uid, "rule": rule.uid, "plan": plan.uid}


def dump_all(ws: Workspace) -> dict[str, Any]:
    """Every record of every agent, as JSON data keyed by uid (memory minus what the layout does not carry)."""
    out: dict[str, Any] = {}
    scopes = sorted({"global", *(f"agent:{a.agent_id}" for a in ws.agents.list())})
    for agent in ws.agents.list():
        out[agent.uid] = agent.model_dump(mode="json")
    for fact in ws.ports.facts.query(FactQuery(scopes=scopes, include_retracted=True, limit=1000)):
        out[fact.uid] = fact.model_dump(mode="json")
    for item in ws.ports.memory.list(MemoryQuery(scopes=scopes, include_archived=True)):
        out[item.uid] = {k: v for k, v in item.model_dump(mode="json").items() if k not in NOT_CARRIED}
    for node in ws.ports.bdi.list(scopes=scopes):
        out[node.uid] = node.model_dump(mode="json")
        for relation in ws.ports.relations.relations(node.uid, scopes=scopes):
            out[relation.uid] = relation.model_dump(mode="json")
    for rule in ws.ports.rules.list(scopes=scopes):
        out[rule.uid] = rule.model_dump(mode="json")
    for case in ws.ports.cases.list(scopes=scopes):
        out[case.uid] = case.model_dump(mode="json")
    return out


def counts(report: Any, status: str) -> dict[str, int]:
    return {kind: getattr(c, status) for kind, c in report.totals.items() if getattr(c, status)}


def test_round_trip_gives_the_same_records(workspace: Workspace, clock: FixedClock, tmp_path: Path) -> None:
    uids = populate(workspace, clock)
    exported = export_workspace(workspace, tmp_path / "out")
    assert counts(exported, "exported")["fact"] == 5  # a retracted one; finance's global fact with finance
    target = fresh(tmp_path, "target")
    report = import_workspace(target, tmp_path / "out")
    assert counts(report, "skipped") == {}
    assert dump_all(target) == dump_all(workspace)
    explained = target.facts.explain("sales", uids["derived"])
    assert [s.uid for s in explained.supports] and explained.rule_name == "saas-target"


def test_export_takes_its_request(workspace: Workspace, clock: FixedClock, tmp_path: Path) -> None:
    """export_workspace takes the request ``mabos sync export-workspace`` generates its options from (issue 34), or the
    directory with ``agents`` as a keyword: the same export; a field beside a request is refused naming it."""
    populate(workspace, clock)
    by_request = export_workspace(workspace, WorkspaceExportRequest(path=tmp_path / "a", agents=["finance", "finance"]))
    by_keywords = export_workspace(workspace, str(tmp_path / "b"), agents=["finance"])
    assert [a.agent_id for a in by_request.agents] == [a.agent_id for a in by_keywords.agents] == ["finance"]
    assert by_request.totals == by_keywords.totals
    with pytest.raises(InputError) as beside:
        export_workspace(workspace, WorkspaceExportRequest(path=tmp_path / "c"), agents=["sales"])
    assert beside.value.field == "agents" and not (tmp_path / "c").exists()


def test_importing_twice_adds_nothing(workspace: Workspace, clock: FixedClock, tmp_path: Path) -> None:
    populate(workspace, clock)
    export_workspace(workspace, tmp_path / "out")
    target = fresh(tmp_path, "target")
    first = import_workspace(target, tmp_path / "out")
    outbox = target.ports.outbox.counts()
    before = dump_all(target)
    second = import_workspace(target, tmp_path / "out")
    assert counts(second, "created") == {} and counts(second, "updated") == {} and counts(second, "skipped") == {}
    assert counts(second, "unchanged") == counts(first, "created")
    assert target.ports.outbox.counts() == outbox
    assert dump_all(target) == before


def test_import_into_the_source_workspace_changes_nothing(
    workspace: Workspace, clock: FixedClock, tmp_path: Path
) -> None:
    populate(workspace, clock)
    export_workspace(workspace, tmp_path / "out")
    before = dump_all(workspace)
    report = import_workspace(workspace, tmp_path / "out")
    assert counts(report, "created") == {} and counts(report, "updated") == {}
    assert dump_all(workspace) == before


@pytest.mark.parametrize(
    ("file", "edit", "message"),
    [
        ("facts.json", lambda d: d["facts"][1].update(confidence=2), "facts.json: facts[1].confidence"),
        ("memory-store.json", lambda d: d["working"][0].update(type="gossip"), "memory-store.json: working[0].type"),
        ("rules.json", lambda d: d["rules"][0]["conditions"].clear(), "rules.json: rules[0].conditions"),
        ("cases.json", lambda d: d[0]["outcome"].pop("success"), "cases.json: [0].outcome.success"),
    ],
)
def test_a_malformed_file_changes_nothing(  # noqa: PLR0917  # fixtures and parameters
    workspace: Workspace, clock: FixedClock, tmp_path: Path, snapshot: Any, file: str, edit: Any, message: str
) -> None:
    populate(workspace, clock)
    export_workspace(workspace, tmp_path / "out")
    path = tmp_path / "out" / "agents" / "sales" / file
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    target = fresh(tmp_path, "target")
    before = snapshot(target)
    with pytest.raises(InputError) as err:
        import_workspace(target, tmp_path / "out")
    assert f"agents/sales/{message}" in str(err.value) and "\n" not in str(err.value)
    assert snapshot(target) == before


def test_bad_json_and_bad_markdown_name_the_file(workspace: Workspace, tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path / "src")
    (tmp_path / "src" / "agents" / "cfo" / "facts.json").write_text("[\n  not json\n]")
    with pytest.raises(InputError, match=r"agents/cfo/facts.json: not valid JSON: .* at line 2"):
        import_workspace(workspace, tmp_path / "src")
    shutil.copy(FIXTURE / "agents" / "cfo" / "facts.json", tmp_path / "src" / "agents" / "cfo" / "facts.json")
    goals = tmp_path / "src" / "agents" / "cfo" / "Goals.md"
    goals.write_text(goals.read_text().replace("- **Progress:** 25%", "- **Progress:** lots"))
    with pytest.raises(InputError, match=r"agents/cfo/Goals.md:\d+: progress: must be a number"):
        import_workspace(workspace, tmp_path / "src")
    assert [a.agent_id for a in workspace.agents.list()] == []


def test_the_original_layout_imports_with_the_expected_counts(workspace: Workspace) -> None:
    report = import_workspace(workspace, FIXTURE)
    assert counts(report, "created") == {
        "agent": 1,
        "fact": 3,
        "memory": 2,
        "belief": 3,
        "desire": 1,
        "goal": 3,
        "intention": 1,
        "plan": 1,
        "plan_step": 2,
        "relation": 6,
        "rule": 2,
        "case": 1,
    }
    agent = workspace.agents.get("cfo")
    assert (agent.name, agent.role) == ("Chief Financial Officer", "cfo")
    derived = workspace.facts.query("cfo", predicate="isSmallBusiness")[0]
    assert derived.confidence == 0.81 and len(derived.derived_from) == 1 and derived.rule_id is not None
    assert workspace.facts.get("cfo", derived.derived_from[0]).object == "$50000"
    goals = {g.content: g for g in workspace.bdi.list("cfo", "goal")}
    assert goals["Extend cash runway to 12 months"].progress == 0.25
    assert goals["Extend cash runway to 12 months"].priority == 9
    assert goals["Close the 2025 books"].status == "achieved"
    steps = sorted(workspace.bdi.list("cfo", "step"), key=lambda s: s.sequence or 0)
    assert [s.status for s in steps] == ["done", "pending"]
    case = workspace.ports.cases.list(scopes=["agent:cfo"])[0]
    assert case.outcome.lessons == ["A payment plan gets paid faster than reminders"]
    plan = workspace.bdi.list("cfo", "plan")[0]
    assert case.solution.plan_id == plan.uid
    lesson = workspace.memory.list_items("cfo", types=["lesson"])[0]
    assert lesson.store.value == "long_term" and lesson.created_at.isoformat().startswith("2026-01-03T09:00")
    assert any("'Success Criteria' is not carried" in w for w in report.agents[0].warnings)
    again = import_workspace(workspace, FIXTURE)
    assert counts(again, "created") == {} and counts(again, "updated") == {}


def test_dry_run_writes_nothing(workspace: Workspace, snapshot: Any) -> None:
    before = snapshot(workspace)
    report = import_workspace(workspace, FIXTURE, dry_run=True)
    assert report.dry_run and counts(report, "created")["fact"] == 3
    assert snapshot(workspace) == before


def test_import_takes_its_request(workspace: Workspace, snapshot: Any) -> None:
    """import_workspace takes the request ``mabos sync import-workspace`` generates its options from (issue 34), or the
    directory with ``agents`` and ``dry_run`` as keywords: the same report; a field beside a request is refused
    naming it, and nothing is written."""
    before = snapshot(workspace)
    by_request = import_workspace(workspace, WorkspaceImportRequest(path=FIXTURE, dry_run=True))
    by_keywords = import_workspace(workspace, str(FIXTURE), dry_run=True)
    assert by_request.dry_run and by_request.model_dump() == by_keywords.model_dump()
    with pytest.raises(InputError) as beside:
        import_workspace(workspace, WorkspaceImportRequest(path=FIXTURE), dry_run=True)
    assert beside.value.field == "dry_run"
    with pytest.raises(InputError) as bad:
        import_workspace(workspace, FIXTURE, agents=[7])  # type: ignore[list-item]
    assert bad.value.field.startswith("agents")
    assert snapshot(workspace) == before


def test_export_never_overwrites_files_it_does_not_own(workspace: Workspace, clock: FixedClock, tmp_path: Path) -> None:
    populate(workspace, clock)
    foreign = tmp_path / "out" / "agents" / "sales" / "Goals.md"
    foreign.parent.mkdir(parents=True)
    foreign.write_text("# my own goals\n")
    (tmp_path / "out" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match=r"agents/sales/Goals\.md: exists .* not written by mabos"):
        export_workspace(workspace, tmp_path / "out")
    assert foreign.read_text() == "# my own goals\n"
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == ["Goals.md", "notes.txt"]
    foreign.unlink()
    export_workspace(workspace, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert "agents/sales/Goals.md" in manifest["files"] and "notes.txt" not in manifest["files"]
    export_workspace(workspace, tmp_path / "out")  # its own files: rewritten freely
    assert (tmp_path / "out" / "notes.txt").read_text() == "keep me"


def test_export_of_one_agent_and_unknown_agents(workspace: Workspace, clock: FixedClock, tmp_path: Path) -> None:
    populate(workspace, clock)
    report = export_workspace(workspace, tmp_path / "out", agents=["finance"])
    assert [a.agent_id for a in report.agents] == ["finance"]
    assert not (tmp_path / "out" / "agents" / "sales").exists()
    with pytest.raises(kg.errors.NotFoundError):
        export_workspace(workspace, tmp_path / "out", agents=["nobody"])
    with pytest.raises(kg.errors.NotFoundError):
        import_workspace(workspace, tmp_path / "out", agents=["nobody"])


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
    lambda t: t.strip() != ""
)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    beliefs=st.lists(st.tuples(_TEXT, st.floats(0, 1)), min_size=1, max_size=4),
    objects=st.lists(_TEXT, min_size=1, max_size=4, unique=True),
)
def test_export_then_import_round_trips_any_text(
    tmp_path_factory: pytest.TempPathFactory, beliefs: list[tuple[str, float]], objects: list[str]
) -> None:
    base = tmp_path_factory.mktemp("prop")
    source = fresh(base, "source")
    source.agents.add("a")
    for text, certainty in beliefs:
        source.bdi.add("belief", "a", text.strip(), certainty=certainty)
    for obj in objects:
        source.facts.assert_fact("a", "s", "p", obj)
    export_workspace(source, base / "out")
    target = fresh(base, "target")
    import_workspace(target, base / "out")
    assert dump_all(target) == dump_all(source)


def test_one_triple_twice_in_a_file_is_imported_once(workspace: Workspace, tmp_path: Path) -> None:
    """Two live facts of one triple and scope (the store keeps one): the second is skipped, not a crash."""
    folder = tmp_path / "src" / "agents" / "a"
    folder.mkdir(parents=True)
    fact = {"subject": "acme", "predicate": "hasIndustry", "object": "saas"}
    (folder / "facts.json").write_text(json.dumps({"facts": [{"id": "F-1", **fact}, {"id": "F-2", **fact}]}))
    report = import_workspace(workspace, tmp_path / "src")
    assert counts(report, "created")["fact"] == 1 and counts(report, "skipped") == {"fact": 1}
    assert "the same triple is imported as" in report.agents[0].skipped[0].reason
    assert len(workspace.facts.query("a", subject="acme")) == 1


def test_refused_and_skipped_records_are_reported_apart(workspace: Workspace, tmp_path: Path) -> None:
    """A record in another agent's scope, or naming another agent's record, is refused; a record of the agent that
    cannot take the imported version is skipped (kept as stored)."""
    workspace.agents.add("a")
    workspace.agents.add("b")
    theirs = workspace.memory.store_item("b", "b's own note").item
    mine = workspace.memory.store_item("a", "a's stored note").item
    folder = tmp_path / "src" / "agents" / "a"
    folder.mkdir(parents=True)
    (folder / "memory-store.json").write_text(json.dumps({"short_term": [
        {"id": "M-1", "content": "into b", "scope": "agent:b"},
        {"id": theirs.uid, "content": theirs.content, "scope": "global"},
        {"id": mine.uid, "content": "a's note rewritten"},
        {"id": "M-2", "content": "a's own"}]}))  # fmt: skip
    report = import_workspace(workspace, tmp_path / "src", agents=["a"])
    [agent] = report.agents
    assert [(r.kind, r.uid) for r in agent.refused] == [("memory", agent.refused[0].uid), ("memory", theirs.uid)]
    assert agent.refused[0].where == "agents/a/memory-store.json: short_term[0]"
    assert "may not write 'agent:b'" in agent.refused[0].reason and "another agent (b)" in agent.refused[1].reason
    assert [r.uid for r in agent.skipped] == [mine.uid] and "never changes" in agent.skipped[0].reason
    assert (agent.counts["memory"].created, agent.counts["memory"].refused, agent.counts["memory"].skipped) == (1, 2, 1)
    assert sorted(i.content for i in workspace.memory.list_items("a")) == ["a's own", "a's stored note"]
    stored = workspace.memory.get("b", theirs.uid)
    assert (stored.agent_id, stored.scope, stored.tags) == ("b", "agent:b", theirs.tags)
