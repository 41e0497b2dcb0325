"""Cross-agent graph queries on a real SQLite workspace: exact results, scopes, cycles, a fixed clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError
from kg.ports.graph_queries import GraphNodeHead
from kg.workspace import Workspace
from reasoning.graph_queries import CATALOGUE, GraphQueries, expected_progress
from reasoning.graph_query_models import NodeRef
from tests.records import q3_workspace

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with q3_workspace(tmp_path / "ws") as workspace:
        yield workspace


def build(ws: Workspace) -> SimpleNamespace:
    """Goals, beliefs, plans, steps and lineage of three agents; returns their uids."""
    add, link = ws.bdi.add, ws.bdi.link
    u = SimpleNamespace()
    u.g_late = add("goal", "sales", "Close Q3 pipeline", deadline=T0 + 10 * DAY, progress=0.2, status="active").uid
    u.g_ok = add("goal", "sales", "Hire an SDR", deadline=T0 + 10 * DAY, progress=0.6).uid
    u.g_over = add("goal", "finance", "File the audit", deadline=T0 + 2 * DAY, progress=0.5, priority=9).uid
    u.g_done = add("goal", "finance", "Close the books", deadline=T0 + DAY, status="achieved").uid
    u.g_nodl = add("goal", "sales", "Be liked", progress=0.0).uid
    u.g_proj = add("goal", "ops", "Ship v2", deadline=T0 + 20 * DAY, scope="project:q3").uid
    u.g_sub = add("goal", "sales", "Qualify leads").uid
    u.b_market = add("belief", "sales", "The market is hot", certainty=0.9).uid
    u.d_grow = add("desire", "sales", "Grow").uid
    u.p_outbound = add("plan", "sales", "Outbound").uid
    u.p_events = add("plan", "sales", "Events").uid
    for relation, source, target in (
        ("belief-supports-goal", u.b_market, u.g_late), ("desire-motivates-goal", u.d_grow, u.g_late),
        ("goal-decomposition", u.g_late, u.g_sub), ("goal-requires-plan", u.g_late, u.p_outbound),
        ("goal-requires-plan", u.g_sub, u.p_events),
    ):  # fmt: skip
        link("sales", relation, source, target)
    # conflicting beliefs about "acme revenue" across agents (two say the same thing)
    u.b_up = add("belief", "sales", "Acme revenue is growing", certainty=0.9).uid
    u.b_down = add("belief", "finance", "Acme revenue is shrinking", certainty=0.8).uid
    u.b_up2 = add("belief", "ops", "ACME revenue   is growing", certainty=0.7).uid
    u.b_flat = add("belief", "ops", "Acme revenue is flat", certainty=0.5).uid
    u.b_old = add("belief", "sales", "Acme revenue is tiny", certainty=0.9, status="revised").uid
    link("sales", "belief-supports-goal", u.b_up, u.g_ok)
    link("finance", "belief-supports-goal", u.b_down, u.g_over)
    # steps: s2 <- s1 (pending), s3 <- s2, s4 <- done, a cycle s5 <-> s6, a done step on s1
    steps = {n: add("step", "sales", f"step {n}", sequence=n, status=st).uid
             for n, st in ((1, "pending"), (2, "pending"), (3, "in_progress"), (4, "pending"), (5, "pending"),
                           (6, "pending"), (7, "done"), (8, "done"))}  # fmt: skip
    u.s = steps
    for n in range(1, 9):
        link("sales", "plan-contains-step", u.p_outbound, steps[n])
    for dependent, dependency in ((2, 1), (3, 2), (4, 8), (5, 6), (6, 5), (7, 1)):
        link("sales", "step-depends-on", steps[dependent], steps[dependency])
    # lineage: f3 <- f1, f2; m1 <- f3; f4 <- f_priv (ops' private fact); f1 <- m1 through a relation: a cycle
    fact = ws.facts.assert_fact
    u.f1 = fact("sales", "acme", "hasRevenue", "5M")[0].uid
    u.f2 = fact("sales", "acme", "hasIndustry", "saas")[0].uid
    u.f3 = fact("sales", "acme", "isTarget", "true", derived_from=[u.f1, u.f2])[0].uid
    u.m1 = ws.memory.store_item("sales", "Acme is a target", derived_from=[u.f3], store="long_term").item.uid
    u.f_priv = fact("ops", "acme", "churnRisk", "high")[0].uid
    u.f4 = fact("sales", "acme", "watch", "true", derived_from=[u.f_priv])[0].uid
    link("sales", "derived-from", u.f1, u.m1)
    return u


def run(ws: Workspace, name: str, agent: str | None = None, **params: Any) -> Any:
    return GraphQueries(ws.ports.graph_queries, ws.scopes, ws.clock).run(name, params, agent=agent)


def test_expected_progress_is_the_elapsed_share_clamped() -> None:
    assert expected_progress(T0, T0 + 10 * DAY, T0 + 5 * DAY) == 0.5
    assert expected_progress(T0, T0 + 10 * DAY, T0 - DAY) == 0.0
    assert expected_progress(T0, T0 + 10 * DAY, T0 + 30 * DAY) == 1.0
    assert expected_progress(T0, T0, T0) == 1.0  # a deadline at creation is due at once


def test_goals_behind_across_agents_most_behind_first(ws: Workspace) -> None:
    u = build(ws)
    result = run(ws, "goals-behind", at=T0 + 5 * DAY)
    assert (result.source, result.agent, result.scopes) == ("local", None, None)
    rows = [(g.uid, g.agent_id, g.progress, g.expected_progress, g.gap, g.overdue) for g in result.results]
    assert rows == [
        (u.g_over, "finance", 0.5, 1.0, 0.5, True),
        (u.g_late, "sales", 0.2, 0.5, 0.3, False),
        (u.g_proj, "ops", 0.0, 0.25, 0.25, False),
    ]
    assert run(ws, "goals-behind", at=T0 + 5 * DAY, tolerance=0.3).count == 1  # strictly more than 0.3 behind
    assert run(ws, "goals-behind", at=T0 - DAY).count == 0  # before anything was due


def test_goals_behind_uses_the_clock_and_the_agents_scopes(ws: Workspace) -> None:
    u = build(ws)
    assert isinstance(ws.clock, FixedClock)
    ws.clock.set(T0 + 5 * DAY)
    assert [g.uid for g in run(ws, "goals-behind", agent="sales").results] == [u.g_late]
    finance = run(ws, "goals-behind", agent="finance")
    assert finance.scopes == ["global", "agent:finance", "project:q3"]
    assert [g.uid for g in finance.results] == [u.g_over, u.g_proj]
    assert finance.at == T0 + 5 * DAY


def test_paths_from_beliefs_to_plans_follow_subgoals(ws: Workspace) -> None:
    u = build(ws)
    result = run(ws, "paths")
    got = [([n.uid for n in p.nodes], p.relations) for p in result.results]
    assert got == sorted([
        ([u.b_market, u.g_late, u.p_outbound], ["belief-supports-goal", "goal-requires-plan"]),
        ([u.b_market, u.g_late, u.g_sub, u.p_events],
         ["belief-supports-goal", "goal-decomposition", "goal-requires-plan"]),
    ])  # fmt: skip
    assert result.parameters == {"start": "belief", "to": "plan", "max_depth": 4, "limit": 100}


def test_a_result_shows_a_node_by_the_ports_head(ws: Workspace) -> None:
    """NodeRef is kg.ports.GraphNodeHead published: the head's keys in order, none of the row's kind fields, unknown
    fields refused, and the schema of a model named NodeRef."""
    u = build(ws)
    first = run(ws, "paths").results[0].model_dump(mode="json")["nodes"][0]
    assert list(first) == [f.name for f in dataclasses.fields(GraphNodeHead)]
    assert list(first) == ["uid", "kind", "agent_id", "scope", "content", "status"]
    assert (first["uid"], first["kind"], first["agent_id"]) == (u.b_market, "belief", "sales")
    schema = TypeAdapter(NodeRef).json_schema()
    assert (schema["title"], schema["additionalProperties"], schema["required"]) == ("NodeRef", False, list(first))
    with pytest.raises(ValidationError, match="certainty"):
        NodeRef(**first, certainty=0.5)  # type: ignore[call-arg]


def test_paths_from_a_uid_to_a_node_with_depth_and_scope(ws: Workspace) -> None:
    u = build(ws)
    one = run(ws, "paths", start=f"desire:{u.d_grow}", to=u.p_events)
    assert [[n.uid for n in p.nodes] for p in one.results] == [[u.d_grow, u.g_late, u.g_sub, u.p_events]]
    assert run(ws, "paths", start=u.d_grow, to=u.p_events, max_depth=2).count == 0
    steps = run(ws, "paths", start="goal", to="step", max_depth=2)
    assert {p.nodes[0].uid for p in steps.results} == {u.g_late} and steps.count == 8
    assert run(ws, "paths", agent="finance").count == 0  # sales' private graph is invisible to finance
    assert run(ws, "paths", start="plan:P-01J0000000000000000000000A").count == 0  # unknown start: nothing


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"start": "intention"}, "start"),
        ({"start": "goal:B-01J0000000000000000000000A"}, "start"),
        ({"to": "belief"}, "to"),
        ({"start": "plan:not-a-uid"}, "start"),
        ({"max_depth": 9}, "max_depth"),
        ({"limit": 0}, "limit"),
    ],
)
def test_paths_reject_bad_parameters_naming_the_field(ws: Workspace, params: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as err:
        run(ws, "paths", **params)
    assert err.value.field == field


def test_belief_conflicts_group_by_subject_with_affected_goals(ws: Workspace) -> None:
    u = build(ws)
    (conflict,) = run(ws, "belief-conflicts").results
    assert conflict.subject == "acme revenue" and conflict.pairs == 2
    assert [b.uid for b in conflict.beliefs] == sorted([u.b_up, u.b_down, u.b_up2])
    assert [(g.uid, g.supported_by) for g in conflict.goals] == sorted([(u.g_ok, [u.b_up]), (u.g_over, [u.b_down])])
    assert run(ws, "belief-conflicts", agent="sales").count == 0  # sales alone sees one side
    assert run(ws, "belief-conflicts", min_certainty=0.75).results[0].pairs == 1


def test_belief_holders_by_subject_and_by_contains(ws: Workspace) -> None:
    u = build(ws)
    result = run(ws, "belief-holders", subject="ACME revenue")
    assert [(h.agent_id, [b.uid for b in h.beliefs]) for h in result.results] == [
        ("finance", [u.b_down]),
        ("ops", sorted([u.b_up2, u.b_flat])),
        ("sales", [u.b_up]),
    ]  # fmt: skip  (the revised belief is not held any more)
    assert [h.agent_id for h in run(ws, "belief-holders", subject="acme revenue", min_certainty=0.75).results] == [
        "finance", "sales",
    ]  # fmt: skip
    contains = run(ws, "belief-holders", subject="GROWING", match="contains", agent="ops")
    assert [(h.agent_id, [b.uid for b in h.beliefs]) for h in contains.results] == [("ops", [u.b_up2])]
    with pytest.raises(InputError, match="subject"):
        run(ws, "belief-holders", subject="  ")


def test_lineage_both_ways_with_a_cycle(ws: Workspace) -> None:
    u = build(ws)
    result = run(ws, "lineage", uid=u.f3)
    rows = {(n.uid, n.relation, n.depth) for n in result.results}
    assert rows == {(u.f3, "root", 0), (u.f1, "ancestor", 1), (u.f2, "ancestor", 1), (u.m1, "descendant", 1)}
    root = result.results[0]
    assert (root.uid, root.kind, root.parents, root.children) == (u.f3, "fact", sorted([u.f1, u.f2]), [u.m1])
    # the cycle m1 -> f3 -> f1 -> m1 ends: f1's parent m1 is already on the result
    m1 = next(n for n in result.results if n.uid == u.m1)
    assert (m1.kind, m1.label) == ("memory:observation", "Acme is a target")
    ancestors = run(ws, "lineage", uid=u.m1, direction="ancestors", max_depth=1)
    assert [(n.uid, n.depth) for n in ancestors.results] == [(u.m1, 0), (u.f3, 1)]


def test_lineage_respects_scopes(ws: Workspace) -> None:
    u = build(ws)
    assert [n.uid for n in run(ws, "lineage", uid=u.f4).results] == [u.f4, u.f_priv]
    assert [n.uid for n in run(ws, "lineage", uid=u.f4, agent="sales").results] == [u.f4]
    with pytest.raises(NotFoundError):
        run(ws, "lineage", uid=u.f_priv, agent="sales")
    with pytest.raises(InputError, match="uid"):
        run(ws, "lineage", uid="F-nope")


def test_blocked_steps_with_chains_and_cycles(ws: Workspace) -> None:
    u = build(ws)
    s = u.s
    result = run(ws, "blocked-steps")
    got = {b.uid: ([w.uid for w in b.waiting_on], b.root_blockers, b.in_cycle, b.plans) for b in result.results}
    assert got == {
        s[2]: ([s[1]], [s[1]], False, [u.p_outbound]),
        s[3]: ([s[2]], [s[1]], False, [u.p_outbound]),
        s[5]: ([s[6]], [], True, [u.p_outbound]),
        s[6]: ([s[5]], [], True, [u.p_outbound]),
    }
    assert [b.uid for b in result.results] == sorted(got)
    ws.bdi.update("sales", s[1], status="done")
    assert [b.uid for b in run(ws, "blocked-steps").results] == [s[3], s[5], s[6]]
    assert run(ws, "blocked-steps", agent="finance").count == 0


def test_unknown_query_and_unknown_agent_are_input_errors(ws: Workspace) -> None:
    with pytest.raises(InputError, match="query"):
        run(ws, "nope")
    with pytest.raises(NotFoundError, match="agent"):
        run(ws, "goals-behind", agent="ghost")
    with pytest.raises(InputError, match="tolerance"):
        run(ws, "goals-behind", tolerance=2)
    assert sorted(CATALOGUE) == sorted(
        ["belief-conflicts", "belief-holders", "blocked-steps", "goals-behind", "lineage", "paths"]
    )
