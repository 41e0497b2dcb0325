"""Bad input at the service level: a clear error naming the field, and the workspace byte-for-byte unchanged."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest

from kg.agents import AgentAddRequest
from kg.errors import ConflictError, InputError, MabosError, NotFoundError, ScopeError
from kg.ids import new_id


@pytest.fixture
def ws(ws):
    """The two-agent workspace with a fact, a belief, a goal and a plan of agent a."""
    workspace = ws
    fact, _ = workspace.facts.assert_fact("a", "acme", "hasCEO", "bob")
    belief = workspace.bdi.add("belief", "a", "acme grows")
    goal = workspace.bdi.add("goal", "a", "buy acme")
    plan = workspace.bdi.add("plan", "a", "raise money")
    workspace.bdi.link("a", "belief-supports-goal", belief.uid, goal.uid)
    workspace.seed = {"fact": fact, "belief": belief, "goal": goal, "plan": plan}
    return workspace


def _calls(ws):
    s = ws.seed
    facts, bdi, agents, scopes = ws.facts, ws.bdi, ws.agents, ws.scopes
    return {
        # (callable, expected error, field named or None)
        "confidence>1": (lambda: facts.assert_fact("a", "x", "p", "o", confidence=1.5), InputError, "confidence"),
        "confidence nan": (
            lambda: facts.assert_fact("a", "x", "p", "o", confidence=float("nan")),
            InputError,
            "confidence",
        ),
        "confidence inf": (
            lambda: facts.assert_fact("a", "x", "p", "o", confidence=float("inf")),
            InputError,
            "confidence",
        ),
        "blank subject": (lambda: facts.assert_fact("a", "  ", "p", "o"), InputError, "subject"),
        "empty object": (lambda: facts.assert_fact("a", "x", "p", ""), InputError, "object"),
        "NUL predicate": (lambda: facts.assert_fact("a", "x", "p\x00", "o"), InputError, "predicate"),
        "long subject": (lambda: facts.assert_fact("a", "x" * 5000, "p", "o"), InputError, "subject"),
        "bad date": (lambda: facts.assert_fact("a", "x", "p", "o", valid_from="2024-02-30"), InputError, "valid_from"),
        "empty window": (
            lambda: facts.assert_fact("a", "x", "p", "o", valid_from="2024-05-02", valid_until="2024-05-01"),
            InputError,
            "valid_until",
        ),
        "bad scope": (lambda: facts.assert_fact("a", "x", "p", "o", scope="team:x"), InputError, "scope"),
        "foreign scope": (lambda: facts.assert_fact("b", "x", "p", "o", scope="agent:a"), ScopeError, None),
        "unknown field": (lambda: facts.assert_fact("a", "x", "p", "o", colour="red"), InputError, "colour"),
        "bad rule id": (lambda: facts.assert_fact("a", "x", "p", "o", rule_id="R-1"), InputError, "rule_id"),
        "bad agent": (lambda: facts.assert_fact("../x", "x", "p", "o"), InputError, "agent"),
        "unknown agent": (lambda: facts.assert_fact("ghost", "x", "p", "o"), NotFoundError, None),
        "bulk bad item": (
            lambda: facts.assert_many(
                "a", [{"subject": "x", "predicate": "p", "object": "o"}, {"subject": "y", "predicate": "p"}]
            ),
            InputError,
            "facts[1].object",
        ),
        "retract nothing": (lambda: facts.retract("a"), InputError, "retract"),
        "retract blank": (lambda: facts.retract("a", subject="  "), InputError, "subject"),
        "retract unknown": (lambda: facts.retract("a", uids=[s["fact"].uid, new_id("fact")]), NotFoundError, None),
        "query bad limit": (lambda: facts.query("a", limit=0), InputError, "limit"),
        "explain depth": (lambda: facts.explain("a", s["fact"].uid, depth=99), InputError, "depth"),
        "agent A": (lambda: agents.add("A"), InputError, "agent_id"),
        "agent ../x": (lambda: agents.add("../x"), InputError, "agent_id"),
        "agent nl": (lambda: agents.add("x\n"), InputError, "agent_id"),
        "agent strategy": (lambda: agents.add("c", commitment_strategy="stubborn"), InputError, "commitment_strategy"),
        "agent duplicate": (lambda: agents.add("a"), ConflictError, None),
        "agent unknown field": (lambda: agents.add("c", rank="boss"), InputError, "rank"),
        "agent field beside request": (lambda: agents.add(AgentAddRequest(agent_id="c"), role="x"), InputError, "role"),
        "agent long role": (lambda: agents.add("c", role="r" * 300), InputError, "role"),
        "node kind": (lambda: bdi.add("wish", "a", "x"), InputError, "kind"),
        "node priority": (lambda: bdi.add("goal", "a", "x", priority=11), InputError, "priority"),
        "node status": (lambda: bdi.add("goal", "a", "x", status="done"), InputError, "status"),
        "node content": (lambda: bdi.add("belief", "a", " "), InputError, "content"),
        "node deadline": (lambda: bdi.add("goal", "a", "x", deadline="2024-13-01"), InputError, "deadline"),
        "update status": (lambda: bdi.update("a", s["goal"].uid, status="bogus"), InputError, "status"),
        "update field": (lambda: bdi.update("a", s["goal"].uid, scope="global"), InputError, "scope"),
        "update nothing": (lambda: bdi.update("a", s["goal"].uid), InputError, "changes"),
        "link role": (
            lambda: bdi.link("a", "belief-supports-goal", s["belief"].uid, s["plan"].uid),
            InputError,
            "goal",
        ),
        "link kind": (lambda: bdi.link("a", "likes", s["belief"].uid, s["goal"].uid), InputError, "relation"),
        "link duplicate": (
            lambda: bdi.link("a", "belief-supports-goal", s["belief"].uid, s["goal"].uid),
            ConflictError,
            None,
        ),
        "link unknown": (
            lambda: bdi.link("a", "goal-requires-plan", s["goal"].uid, new_id("plan")),
            NotFoundError,
            None,
        ),
        "list limit": (lambda: bdi.list("a", limit=0), InputError, "limit"),
        "paths limit": (lambda: bdi.paths("a", ["goal"], limit=0), InputError, "limit"),
        "grant scope": (lambda: scopes.grant("b", "everything", granted_by="a"), InputError, "scope"),
        "grant global": (lambda: scopes.grant("b", "global", granted_by="a"), InputError, "scope"),
    }


#: The case names (the calls are only built, not made, so a stand-in workspace will do).
CASES = list(_calls(SimpleNamespace(seed={}, facts=None, bdi=None, agents=None, scopes=None)))


@pytest.mark.parametrize("case", CASES)
def test_bad_input_names_the_field_and_changes_nothing(ws, snapshot, case):
    call, error, field = _calls(ws)[case]
    ws.clock.advance(timedelta(minutes=1))  # a write that slipped through would carry a new timestamp
    before = snapshot(ws)

    with pytest.raises(error) as err:
        call()

    assert isinstance(err.value, MabosError)
    if field is not None:
        assert err.value.field == field
        assert str(err.value).startswith(f"{field}: ") and len(str(err.value)) < 400
    assert snapshot(ws) == before


def test_the_snapshot_notices_a_change(ws, snapshot):
    before = snapshot(ws)
    ws.facts.assert_fact("a", "acme", "hasCEO", "bob", confidence=0.5)
    after_fact = snapshot(ws)
    ws.agents.add("c")
    after_agent = snapshot(ws)

    assert before["store"] != after_fact["store"] and before["files"] == after_fact["files"]
    assert after_agent["files"] != after_fact["files"]  # agents/c/ appeared


def test_agent_add_takes_its_request_or_keywords(ws):
    """AgentService.add takes the request ``mabos agent add`` generates its options from (issue 34), or the id with
    the other fields as keywords: the same agent; the name defaults to the id, also when given empty."""
    by_request = ws.agents.add(AgentAddRequest(agent_id="c", role="seller", commitment_strategy="cautious"))
    by_keywords = ws.agents.add("d", role="seller", commitment_strategy="cautious", name="")
    assert (by_request.name, by_keywords.name) == ("c", "d")
    assert (by_request.role, by_request.commitment_strategy) == (by_keywords.role, by_keywords.commitment_strategy)
    assert ws.agents.get("c") == by_request
