"""The BDI maintenance cycle (R5) on a real workspace: staleness, chunks, conflicts, reports, desires, CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.commands.bdi_cycle import bdi
from cli.main import cli
from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.memory.files import daily_log_entry, daily_log_header, daily_log_path
from kg.workspace import Workspace
from reasoning.bdi import CycleResult, run_all, run_cycle
from reasoning.bdi.report import report_path

SEED_KEYS = {"agentId", "staleIntentionsPruned", "desiresPrioritized", "conflictsDetected", "chunksProcessed",
             "timestamp"}  # fmt: skip
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # a Wednesday


def _agent(ws: Workspace, agent_id: str, strategy: str = "open-minded") -> str:
    ws.agents.add(agent_id, commitment_strategy=strategy)
    return agent_id


def _status(ws: Workspace, agent_id: str, uid: str) -> str:
    return ws.bdi.get(agent_id, uid).status


# ------------------------------------------------------------------------------------- result shape


def test_result_json_has_the_seed_keys_plus_details(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    result = run_cycle(workspace, agent)
    data = result.model_dump(mode="json")
    assert set(data) == SEED_KEYS | {"details"}
    assert data["agentId"] == "a"
    assert data["timestamp"] == "2024-05-01T12:00:00.000000Z"
    assert data == result.model_dump(mode="json", by_alias=True)
    assert CycleResult.model_validate(data) == result  # camelCase JSON reads back
    assert (data["staleIntentionsPruned"], data["desiresPrioritized"], data["conflictsDetected"],
            data["chunksProcessed"]) == (0, 0, 0, 0)  # fmt: skip


def test_unknown_agent_is_not_found_and_a_bad_id_is_an_input_error(workspace: Workspace) -> None:
    with pytest.raises(NotFoundError, match="no agent 'ghost'"):
        run_cycle(workspace, "ghost")
    with pytest.raises(InputError, match=r"^agent:"):
        run_cycle(workspace, "Bad Id")


def test_an_injected_clock_sets_the_timestamp(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    later = FixedClock(T0 + timedelta(hours=3))
    assert run_cycle(workspace, agent, clock=later).timestamp == T0 + timedelta(hours=3)


# ------------------------------------------------------------------------------------ stale intentions


@pytest.mark.parametrize(("strategy", "period"), [("open-minded", timedelta(days=7)), ("cautious", timedelta(days=3))])
def test_stall_period_boundary(workspace: Workspace, strategy: str, period: timedelta, clock: FixedClock) -> None:
    agent = _agent(workspace, "a", strategy)
    intention = workspace.bdi.add("intention", agent, "Close the Acme deal")
    clock.advance(period)
    exactly = run_cycle(workspace, agent)
    assert exactly.stale_intentions_pruned == 0
    assert _status(workspace, agent, intention.uid) == "active"
    clock.advance(timedelta(seconds=1))
    after = run_cycle(workspace, agent)
    assert after.stale_intentions_pruned == 1
    assert [(p.uid, p.reason) for p in after.details.pruned_intentions] == [(intention.uid, "stalled")]
    assert _status(workspace, agent, intention.uid) == "dropped"  # dropped, never deleted


def test_single_minded_never_stalls(workspace: Workspace, clock: FixedClock) -> None:
    agent = _agent(workspace, "a", "single-minded")
    intention = workspace.bdi.add("intention", agent, "Close the Acme deal")
    clock.advance(timedelta(days=3650))
    assert run_cycle(workspace, agent).stale_intentions_pruned == 0
    assert _status(workspace, agent, intention.uid) == "active"


@pytest.mark.parametrize("strategy", ["single-minded", "open-minded", "cautious"])
def test_a_passed_deadline_prunes_under_every_strategy(workspace: Workspace, strategy: str, clock: FixedClock) -> None:
    agent = _agent(workspace, "a", strategy)
    deadline = T0 + timedelta(hours=1)
    intention = workspace.bdi.add("intention", agent, "Ship the release", deadline=deadline)
    clock.set(deadline)
    assert run_cycle(workspace, agent).stale_intentions_pruned == 0  # at the deadline it has not passed yet
    clock.advance(timedelta(seconds=1))
    result = run_cycle(workspace, agent)
    assert [(p.uid, p.reason) for p in result.details.pruned_intentions] == [(intention.uid, "deadline")]
    assert _status(workspace, agent, intention.uid) == "dropped"


def test_updates_reset_the_stall_clock_and_finished_intentions_are_left_alone(
    workspace: Workspace, clock: FixedClock
) -> None:
    agent = _agent(workspace, "a", "cautious")
    touched = workspace.bdi.add("intention", agent, "Keep going")
    suspended = workspace.bdi.add("intention", agent, "On hold", status="suspended")
    completed = workspace.bdi.add("intention", agent, "Done already", status="completed")
    clock.advance(timedelta(days=2))
    workspace.bdi.update(agent, touched.uid, priority=8)
    clock.advance(timedelta(days=2))
    result = run_cycle(workspace, agent)
    assert [p.uid for p in result.details.pruned_intentions] == [suspended.uid]
    assert _status(workspace, agent, touched.uid) == "active"
    assert _status(workspace, agent, completed.uid) == "completed"


def test_other_agents_intentions_are_not_touched(workspace: Workspace, clock: FixedClock) -> None:
    a, b = _agent(workspace, "a", "cautious"), _agent(workspace, "b")
    theirs = workspace.bdi.add("intention", b, "Shared plan", scope="global")
    clock.advance(timedelta(days=5))
    assert run_cycle(workspace, a).stale_intentions_pruned == 0
    assert _status(workspace, b, theirs.uid) == "active"


# ------------------------------------------------------------------------------------------- chunks


@pytest.mark.parametrize(("beliefs", "chunks"), [(0, 0), (1, 1), (50, 1), (51, 2), (100, 2), (101, 3)])
def test_chunks_of_fifty_beliefs(workspace: Workspace, beliefs: int, chunks: int) -> None:
    agent = _agent(workspace, "a")
    for i in range(beliefs):
        workspace.bdi.add("belief", agent, f"Market {i} is open", certainty=0.5)
    result = run_cycle(workspace, agent)
    assert result.chunks_processed == chunks
    assert result.details.beliefs == beliefs


def test_withdrawn_beliefs_are_not_processed(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    for i in range(51):
        belief = workspace.bdi.add("belief", agent, f"Market {i} is open")
        if i == 0:
            workspace.bdi.update(agent, belief.uid, status="withdrawn")
    assert run_cycle(workspace, agent).chunks_processed == 1


# ---------------------------------------------------------------------------------------- conflicts


def test_belief_conflict_is_detected_and_reported(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    growing = workspace.bdi.add("belief", agent, "Acme is growing fast", certainty=0.8)
    shrinking = workspace.bdi.add("belief", agent, "Acme is shrinking", certainty=0.9)
    workspace.bdi.add("belief", agent, "Globex is growing", certainty=0.9)
    result = run_cycle(workspace, agent)
    assert result.conflicts_detected == 1
    [conflict] = result.details.conflicts
    assert (conflict.kind, conflict.subject, conflict.pairs) == ("belief", "acme", 1)
    assert [m.uid for m in conflict.members] == [growing.uid, shrinking.uid]
    path = report_path(workspace.path, agent, T0)
    assert path == workspace.path / "agents" / "a" / "memory" / "bdi-conflicts" / "2024-05-01.md"
    assert result.details.report_path == str(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# BDI conflict report — 2024-05-01\n")
    assert "> 1 conflict(s) in 1 group(s) detected for agent a" in text
    assert '## Conflict 1: beliefs about "acme"' in text
    assert f"- {growing.uid} (certainty 0.80, scope agent:a, a's): Acme is growing fast" in text
    assert f"- {shrinking.uid} (certainty 0.90, scope agent:a, a's): Acme is shrinking" in text
    assert not list(path.parent.glob(".*.tmp"))  # written through atomic_write: no temp file left


@pytest.mark.parametrize(("first", "second"), [(0.6, 0.9), (0.9, 0.6), (0.5, 0.5)])
def test_no_conflict_unless_both_certainties_exceed_0_6(workspace: Workspace, first: float, second: float) -> None:
    agent = _agent(workspace, "a")
    workspace.bdi.add("belief", agent, "Acme is growing", certainty=first)
    workspace.bdi.add("belief", agent, "Acme is shrinking", certainty=second)
    result = run_cycle(workspace, agent)
    assert result.conflicts_detected == 0
    assert result.details.report_path is None
    assert not (workspace.path / "agents" / "a" / "memory" / "bdi-conflicts").exists()


def test_same_statement_twice_is_no_conflict_and_pairs_are_counted(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    workspace.bdi.add("belief", agent, "Acme is growing", certainty=0.9)
    workspace.bdi.add("belief", agent, "acme  is GROWING", certainty=0.8)  # same content, other case/spacing
    assert run_cycle(workspace, agent).conflicts_detected == 0
    workspace.bdi.add("belief", agent, "Acme is shrinking", certainty=0.7)
    result = run_cycle(workspace, agent)
    assert result.conflicts_detected == 2  # each "growing" against "shrinking"
    assert len(result.details.conflicts[0].members) == 3


def test_beliefs_the_agent_cannot_read_are_not_mixed_in(workspace: Workspace) -> None:
    a, b = _agent(workspace, "a"), _agent(workspace, "b")
    workspace.bdi.add("belief", a, "Acme is growing", certainty=0.9)
    workspace.bdi.add("belief", b, "Acme is shrinking", certainty=0.9)  # scope agent:b: a cannot read it
    assert run_cycle(workspace, a).conflicts_detected == 0


def test_conflicts_with_readable_beliefs_of_other_agents_name_the_owner(workspace: Workspace) -> None:
    """Issue 35.5: `graph query belief-conflicts` saw alice against bob in a shared project scope while the cycle
    looked only at the agent's own beliefs and reported 0."""
    alice, bob = _agent(workspace, "alice"), _agent(workspace, "bob")
    for agent in (alice, bob):
        workspace.scopes.grant(agent, "project:apollo", granted_by="admin")
    hers = workspace.bdi.add("belief", alice, "Apollo launch is on track", certainty=0.9, scope="project:apollo")
    his = workspace.bdi.add("belief", bob, "Apollo launch is delayed", certainty=0.8, scope="agent:bob")
    for agent in (bob, alice):
        result = run_cycle(workspace, agent)
        # bob reads both; alice cannot read bob's private belief, so she sees no conflict.
        expected = 1 if agent == bob else 0
        assert result.conflicts_detected == expected, agent
    result = run_cycle(workspace, bob)
    [conflict] = result.details.conflicts
    owners = {m.uid: m.agent_id for m in conflict.members}
    assert owners == {hers.uid: "alice", his.uid: "bob"}
    text = Path(str(result.details.report_path)).read_text(encoding="utf-8")
    assert f"- {hers.uid} (certainty 0.90, scope project:apollo, alice's): Apollo launch is on track" in text
    # The CLI's JSON says whose belief each member is, as the graph query does.
    runner = CliRunner()
    out = runner.invoke(cli, ["--workspace", str(workspace.path), "bdi", "cycle", "--agent", "bob", "--json"])
    assert out.exit_code == 0, out.output
    members = json.loads(out.output)["details"]["conflicts"][0]["members"]
    assert {m["agentId"] for m in members} == {"alice", "bob"}


def test_fact_conflict_with_overlapping_validity(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    alice, _ = workspace.facts.assert_fact(agent, "acme", "hasCEO", "alice", confidence=0.9,
                                           valid_from="2020-01-01", valid_until="2024-01-01")  # fmt: skip
    bob, _ = workspace.facts.assert_fact(agent, "acme", "hasCEO", "bob", confidence=0.8, valid_from="2023-06-01")
    result = run_cycle(workspace, agent)
    assert result.conflicts_detected == 1
    [conflict] = result.details.conflicts
    assert (conflict.kind, conflict.subject, conflict.predicate) == ("fact", "acme", "hasCEO")
    assert [m.uid for m in conflict.members] == [alice.uid, bob.uid]
    text = Path(str(result.details.report_path)).read_text(encoding="utf-8")
    assert "## Conflict 1: acme hasCEO" in text
    assert (f"- {alice.uid} (confidence 0.90, valid [2020-01-01T00:00:00.000000Z, 2024-01-01T00:00:00.000000Z), "
            "scope agent:a, a's): alice") in text  # fmt: skip
    assert f"- {bob.uid} (confidence 0.80, valid [2023-06-01T00:00:00.000000Z, open), scope agent:a, a's): bob" in text


def test_facts_without_conflict(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    facts = workspace.facts
    # consecutive CEOs: validity is half-open, so ending when the other starts is no overlap
    facts.assert_fact(agent, "acme", "hasCEO", "alice", valid_from="2010-01-01", valid_until="2020-01-01")
    facts.assert_fact(agent, "acme", "hasCEO", "bob", valid_from="2020-01-01")
    # one side not confident enough
    facts.assert_fact(agent, "globex", "locatedIn", "berlin", confidence=0.9)
    facts.assert_fact(agent, "globex", "locatedIn", "paris", confidence=0.59)
    # not a functional predicate: many values are fine
    facts.assert_fact(agent, "acme", "hasProduct", "rockets")
    facts.assert_fact(agent, "acme", "hasProduct", "anvils")
    # retracted
    initech, _ = facts.assert_fact(agent, "initech", "hasCEO", "bill")
    facts.assert_fact(agent, "initech", "hasCEO", "peter")
    facts.retract(agent, uids=[initech.uid])
    assert run_cycle(workspace, agent).conflicts_detected == 0


def test_functional_predicates_and_confidence_can_be_chosen(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    workspace.facts.assert_fact(agent, "acme", "hasProduct", "rockets", confidence=0.7)
    workspace.facts.assert_fact(agent, "acme", "hasProduct", "anvils", confidence=0.7)
    assert run_cycle(workspace, agent, functional_predicates={"hasProduct"}).conflicts_detected == 1
    stricter = run_cycle(workspace, agent, functional_predicates={"hasProduct"}, min_fact_confidence=0.8)
    assert stricter.conflicts_detected == 0
    with pytest.raises(InputError, match=r"^min_fact_confidence:"):
        run_cycle(workspace, agent, min_fact_confidence=1.5)


def test_a_later_cycle_the_same_day_replaces_the_report(workspace: Workspace, clock: FixedClock) -> None:
    agent = _agent(workspace, "a")
    workspace.bdi.add("belief", agent, "Acme is growing", certainty=0.9)
    workspace.bdi.add("belief", agent, "Acme is shrinking", certainty=0.9)
    first = Path(str(run_cycle(workspace, agent).details.report_path))
    workspace.bdi.add("belief", agent, "Globex is big", certainty=0.9)
    workspace.bdi.add("belief", agent, "Globex is small", certainty=0.9)
    clock.advance(timedelta(hours=1))
    second = Path(str(run_cycle(workspace, agent).details.report_path))
    assert first == second
    assert "> 2 conflict(s) in 2 group(s)" in second.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------ desires


def test_desire_priorities_follow_urgency_and_motivated_goals(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    bdi = workspace.bdi
    urgent = bdi.add("desire", agent, "Lead the market", priority=5, urgency=0.2)
    goal = bdi.add("goal", agent, "Grow revenue", priority=10, progress=0.0)
    done = bdi.add("goal", agent, "Hire a CFO", priority=10, status="achieved")
    bdi.link(agent, "desire-motivates-goal", urgent.uid, goal.uid)
    bdi.link(agent, "desire-motivates-goal", urgent.uid, done.uid)
    calm = bdi.add("desire", agent, "Keep the office tidy", priority=4)  # no urgency, no goals: kept as is
    result = run_cycle(workspace, agent)
    assert result.desires_prioritized == 1
    [change] = result.details.desire_changes
    # U = 0.2, G = (10 - 1) / 9 * (1 - 0) = 1.0 -> score 0.6 -> 1 + round(5.4) = 6
    assert (change.uid, change.old_priority, change.new_priority, change.goals) == (urgent.uid, 5, 6, 1)
    assert bdi.get(agent, urgent.uid).priority == 6
    assert bdi.get(agent, calm.uid).priority == 4
    assert run_cycle(workspace, agent).desires_prioritized == 0  # stable: nothing changed since
    bdi.update(agent, goal.uid, progress=1.0)
    again = run_cycle(workspace, agent)
    # G = 0 now -> score 0.1 -> 1 + round(0.9) = 2
    assert [(c.old_priority, c.new_priority) for c in again.details.desire_changes] == [(6, 2)]


# ----------------------------------------------------------------------------------------- Sundays


def test_no_hierarchy_build_on_weekdays(workspace: Workspace) -> None:
    agent = _agent(workspace, "a")
    result = run_cycle(workspace, agent)
    assert not result.details.hierarchy_built
    assert not (workspace.path / "agents" / "a" / "memory" / "weekly").exists()


def test_a_sunday_cycle_builds_the_weekly_summary(workspace: Workspace, clock: FixedClock) -> None:
    pytest.importorskip("kg.memory.hierarchy", reason="the time hierarchy (R2) module is not there yet")
    agent = _agent(workspace, "a")
    for day in range(29, 31):  # Monday 29 and Tuesday 30 April 2024: ISO week 2024-W18
        when = datetime(2024, 4, day, 9, 30, tzinfo=UTC)
        entry = daily_log_entry(when=when, uid=new_id("memory"), type_="decision", importance=0.8,
                                store="long_term", tags=["auth"], content=f"Decision of day {day}")  # fmt: skip
        path = daily_log_path(workspace.path, agent, when.date())
        path.write_text(daily_log_header(when.date()) + entry, encoding="utf-8")
    clock.set(datetime(2024, 5, 5, 20, 0, tzinfo=UTC))  # a Sunday
    result = run_cycle(workspace, agent)
    assert result.details.hierarchy_built
    weekly = workspace.path / "agents" / "a" / "memory" / "weekly" / "2024-W18.md"
    assert weekly.is_file()
    assert str(weekly) in result.details.weekly_summaries


# ---------------------------------------------------------------------------------------- all agents


def test_run_all_runs_every_agent_in_id_order(workspace: Workspace, clock: FixedClock) -> None:
    _agent(workspace, "zed", "cautious")
    _agent(workspace, "amy")
    stale = workspace.bdi.add("intention", "zed", "Old plan")
    clock.advance(timedelta(days=4))
    results = run_all(workspace)
    assert [(r.agent_id, r.stale_intentions_pruned) for r in results] == [("amy", 0), ("zed", 1)]
    assert results[1].details.pruned_intentions[0].uid == stale.uid
    assert run_all(workspace) != []


# ----------------------------------------------------------------------------------------------- CLI


@pytest.fixture
def mabos(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, list[str]]:
    """The real root command with ``bdi`` attached, and the args naming the test workspace."""
    monkeypatch.setitem(cli.commands, "bdi", bdi)
    monkeypatch.delenv("MABOS_WORKSPACE", raising=False)
    return CliRunner(), ["--workspace", str(workspace.path)]


def test_cli_cycle_one_agent_json(workspace: Workspace, mabos: tuple[CliRunner, list[str]]) -> None:
    runner, ws_args = mabos
    agent = _agent(workspace, "sales-agent")
    workspace.bdi.add("belief", agent, "Acme is growing", certainty=0.9)
    workspace.bdi.add("belief", agent, "Acme is shrinking", certainty=0.9)
    result = runner.invoke(cli, [*ws_args, "bdi", "cycle", "--agent", agent, "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert set(data) == SEED_KEYS | {"details"}
    assert (data["agentId"], data["conflictsDetected"], data["chunksProcessed"]) == ("sales-agent", 1, 1)


def test_cli_cycle_all_json_and_human(workspace: Workspace, mabos: tuple[CliRunner, list[str]]) -> None:
    runner, ws_args = mabos
    _agent(workspace, "a")
    _agent(workspace, "b")
    workspace.bdi.add("belief", "b", "Acme is growing", certainty=0.9)
    workspace.bdi.add("belief", "b", "Acme is shrinking", certainty=0.9)
    result = runner.invoke(cli, [*ws_args, "bdi", "cycle", "--all", "--json"])
    assert result.exit_code == 0, result.output
    assert [r["agentId"] for r in json.loads(result.stdout)] == ["a", "b"]
    human = runner.invoke(cli, [*ws_args, "bdi", "cycle", "--all"])
    assert human.exit_code == 0, human.output
    assert "BDI cycle" in human.stdout
    assert 'b: belief conflict about "acme"' in human.stdout
    assert "bdi-conflicts" in human.stdout


def test_cli_errors(workspace: Workspace, mabos: tuple[CliRunner, list[str]]) -> None:
    runner, ws_args = mabos
    _agent(workspace, "a")
    unknown = runner.invoke(cli, [*ws_args, "bdi", "cycle", "--agent", "ghost"])
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("error: agent: no agent 'ghost'")
    for args in ([], ["--agent", "a", "--all"]):
        usage = runner.invoke(cli, [*ws_args, "bdi", "cycle", *args])
        assert usage.exit_code == 2, args
        assert "give either --agent AGENT or --all" in usage.stderr


def test_cli_help_has_an_example() -> None:
    command = bdi.commands["cycle"]
    assert "Example" in (command.help or "")
    assert "mabos bdi cycle" in (command.help or "")
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert {"--json", "--workspace", "--agent", "--all"} <= options
