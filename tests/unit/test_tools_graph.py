"""The BDI and graph tools (cli/tools/graph.py) through ``cli.tools.call`` on a real workspace: the BDI cycle
and every graph query, the local fallback when TypeDB is configured but unreachable (127.0.0.1:1: nothing
listens there, no server is mocked), bad input and agent binding."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import kg
from cli import tools
from cli.tools.graph import BdiCycleResults, GraphQueryAnswer, GraphQueryInput
from kg.clock import FixedClock
from kg.errors import InputError, ScopeError
from reasoning.graph_queries import CATALOGUE
from reasoning.graph_query_models import QUERY_PARAMS

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)  # the data's creation time; the tools later run on the real clock
DAY = timedelta(days=1)
DEAD = "127.0.0.1:1"


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A closed workspace (``u.path``) with three agents' goals, beliefs, a plan with steps and a lineage."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    u = SimpleNamespace(path=tmp_path / "ws")
    with kg.init_workspace(u.path, clock=FixedClock(T0)) as ws:
        for agent in ("sales", "finance", "ops"):
            ws.agents.add(agent)
        add, link = ws.bdi.add, ws.bdi.link
        u.g_late = add("goal", "sales", "Close Q3 pipeline", deadline=T0 + 10 * DAY, progress=0.2).uid
        u.g_over = add("goal", "finance", "File the audit", deadline=T0 + 2 * DAY, progress=0.5).uid
        u.b_market = add("belief", "sales", "The market is hot", certainty=0.9).uid
        u.plan = add("plan", "sales", "Outbound").uid
        link("sales", "belief-supports-goal", u.b_market, u.g_late)
        link("sales", "goal-requires-plan", u.g_late, u.plan)
        u.b_up = add("belief", "sales", "Acme revenue is growing", certainty=0.9).uid
        u.b_down = add("belief", "finance", "Acme revenue is shrinking", certainty=0.8).uid
        u.s1 = add("step", "sales", "Build the list", sequence=1).uid
        u.s2 = add("step", "sales", "Send the emails", sequence=2).uid
        link("sales", "plan-contains-step", u.plan, u.s1)
        link("sales", "plan-contains-step", u.plan, u.s2)
        link("sales", "step-depends-on", u.s2, u.s1)
        u.f1 = ws.facts.assert_fact("sales", "acme", "hasRevenue", "5M")[0].uid
        u.f2 = ws.facts.assert_fact("sales", "acme", "isTarget", "true", derived_from=[u.f1])[0].uid
        u.intention = add("intention", "sales", "Call Acme").uid  # untouched since T0: stalled by now
    return u


def query(u: SimpleNamespace, name: str, agent: str | None = None, **params: Any) -> GraphQueryAnswer:
    answer = tools.call("graph_query", workspace=u.path, agent=agent, name=name, **params)
    assert isinstance(answer, GraphQueryAnswer)
    return answer


# ------------------------------------------------------------------------------------------ bdi_cycle


def test_bdi_cycle_for_one_agent_prunes_and_detects(data: SimpleNamespace) -> None:
    out = tools.call("bdi_cycle", workspace=data.path, agent_id="sales")
    assert isinstance(out, BdiCycleResults)
    [result] = out.results
    assert (result.agent_id, result.stale_intentions_pruned) == ("sales", 1)
    assert [(p.uid, p.reason) for p in result.details.pruned_intentions] == [(data.intention, "stalled")]
    dumped = out.model_dump(mode="json")["results"][0]  # what MCP returns: the seed's camelCase keys
    assert set(dumped) >= {"agentId", "staleIntentionsPruned", "conflictsDetected"}
    with kg.open_workspace(data.path) as ws:
        assert ws.bdi.get("sales", data.intention).status == "dropped"
    again = tools.call("bdi_cycle", workspace=data.path, agent_id="sales").results[0]
    assert again.stale_intentions_pruned == 0


def test_bdi_cycle_detects_one_agents_conflicting_beliefs(data: SimpleNamespace) -> None:
    with kg.open_workspace(data.path) as ws:
        ws.bdi.add("belief", "ops", "Churn is rising", certainty=0.9)
        ws.bdi.add("belief", "ops", "Churn is falling", certainty=0.9)
    [result] = tools.call("bdi_cycle", workspace=data.path, agent="ops").results
    assert result.conflicts_detected == 1
    assert result.details.report_path and Path(result.details.report_path).is_file()


def test_bdi_cycle_for_all_agents_in_id_order(data: SimpleNamespace) -> None:
    out = tools.call("bdi_cycle", workspace=data.path, all_agents=True)
    assert [r.agent_id for r in out.results] == ["finance", "ops", "sales"]


def test_bdi_cycle_refuses_bad_calls(data: SimpleNamespace) -> None:
    with pytest.raises(InputError) as caught:
        tools.call("bdi_cycle", workspace=data.path)
    assert caught.value.field == "agent_id"
    with pytest.raises(InputError) as caught:
        tools.call("bdi_cycle", workspace=data.path, agent_id="sales", all_agents=True)
    assert caught.value.field == "all_agents"
    with pytest.raises(InputError) as caught:
        tools.call("bdi_cycle", workspace=data.path, agent_id="sales", all_agents="sometimes")
    assert caught.value.field == "all_agents"
    with pytest.raises(ScopeError):
        tools.call("bdi_cycle", workspace=data.path, agent="sales", agent_id="finance")
    with pytest.raises(ScopeError, match="all_agents"):
        tools.call("bdi_cycle", workspace=data.path, agent="sales", all_agents=True)
    with kg.open_workspace(data.path) as ws:
        assert ws.bdi.get("sales", data.intention).status == "active"  # no cycle ran


# ------------------------------------------------------------------------------------------ graph_query


def test_goals_behind_across_agents_and_for_one(data: SimpleNamespace) -> None:
    every = query(data, "goals-behind", at=T0 + 5 * DAY)
    assert (every.source, every.agent, every.scopes, every.fallback_reason) == ("local", None, None, None)
    assert [(g.uid, g.gap, g.overdue) for g in every.results] == [(data.g_over, 0.5, True), (data.g_late, 0.3, False)]
    sales = query(data, "goals-behind", agent="sales", at=(T0 + 5 * DAY).isoformat(), tolerance=0.1)
    assert sales.agent == "sales" and sales.scopes == ["global", "agent:sales"]
    assert [g.uid for g in sales.results] == [data.g_late]


def test_paths_belief_conflicts_lineage_holders_blocked_steps(data: SimpleNamespace) -> None:
    paths = query(data, "paths", start=f"belief:{data.b_market}", to="plan", max_depth=3)
    assert [[n.uid for n in p.nodes] for p in paths.results] == [[data.b_market, data.g_late, data.plan]]
    assert paths.parameters == {"start": f"belief:{data.b_market}", "to": "plan", "max_depth": 3, "limit": 100}

    conflicts = query(data, "belief-conflicts")
    assert [sorted(b.uid for b in c.beliefs) for c in conflicts.results] == [sorted([data.b_up, data.b_down])]
    assert query(data, "belief-conflicts", agent="sales").results == []  # finance's belief is private

    lineage = query(data, "lineage", uid=data.f2, direction="ancestors")
    assert {(n.uid, n.relation) for n in lineage.results} == {(data.f2, "root"), (data.f1, "ancestor")}

    holders = query(data, "belief-holders", subject="acme revenue")
    assert [h.agent_id for h in holders.results] == ["finance", "sales"]

    blocked = query(data, "blocked-steps", limit=5)
    assert [(s.uid, [w.uid for w in s.waiting_on]) for s in blocked.results] == [(data.s2, [data.s1])]


def test_an_unreachable_typedb_answers_from_the_local_store_and_says_why(
    data: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MABOS_TYPEDB_ADDRESS", DEAD)
    answer = query(data, "blocked-steps")
    assert answer.source == "local" and answer.count == 1
    assert answer.fallback_reason is not None and DEAD in answer.fallback_reason
    assert "unreachable" in answer.fallback_reason
    again = query(data, "blocked-steps")  # within the breaker's cooldown: no new attempt
    assert again.source == "local" and "circuit breaker open" in str(again.fallback_reason)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"name": "everything"}, "name"),
        ({}, "name"),
        ({"name": "goals-behind", "tolerance": 2}, "tolerance"),
        ({"name": "goals-behind", "to": "plan"}, "to"),
        ({"name": "paths", "max_depth": 9}, "max_depth"),
        ({"name": "paths", "start": "intention"}, "start"),
        ({"name": "lineage"}, "uid"),
        ({"name": "belief-holders", "subject": "   "}, "subject"),
        ({"name": "blocked-steps", "limit": 0}, "limit"),
        ({"name": "blocked-steps", "colour": "red"}, "colour"),
    ],
)
def test_malformed_queries_name_the_field(data: SimpleNamespace, params: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as caught:
        tools.call("graph_query", workspace=data.path, **params)
    assert caught.value.field == field


def test_a_bound_agent_sees_its_scopes_and_cannot_act_as_another(data: SimpleNamespace) -> None:
    with pytest.raises(ScopeError, match="agent_id"):
        query(data, "goals-behind", agent="sales", agent_id="finance")
    bound = tools.call("graph_query", workspace=data.path, agent="finance", name="goals-behind", at=T0 + 5 * DAY)
    assert isinstance(bound, GraphQueryAnswer)
    assert bound.agent == "finance" and [g.uid for g in bound.results] == [data.g_over]


def test_the_graph_query_input_gathers_each_query_parameter_once() -> None:
    """graph_query's flat input is made from the catalogue's query models (issue 34: a parameter is declared once):
    every parameter of every query is a property whose description names the queries that take it, a parameter two
    queries bound differently takes the wider bound (the query's own model then checks its own), and the catalogue
    runs the same models."""
    assert {name: spec.params for name, spec in CATALOGUE.items()} == QUERY_PARAMS
    properties = GraphQueryInput.model_json_schema()["properties"]
    taken = {field for model in QUERY_PARAMS.values() for field in model.model_fields}
    assert list(properties)[:2] == ["agent_id", "name"]
    assert set(properties) == {"agent_id", "name", *taken}
    for name, model in QUERY_PARAMS.items():
        assert f"{name}: " in properties["name"]["description"]
        for field in model.model_fields:  # "q1, q2: what it means to them. q3: ..." names the query before a colon
            assert re.search(rf"(^|\. )([a-z-]+, )*{name}(, [a-z-]+)*: ", properties[field]["description"]), field
    assert properties["max_depth"]["anyOf"][0]["maximum"] == 50  # lineage's; paths' own model stops at 8
    assert "lineage: most derivation steps (1..50; default 10)" in properties["max_depth"]["description"]
