"""Scope isolation through the services: an agent never sees another's private scope unless granted."""

from __future__ import annotations

import pytest

from kg.errors import InputError, NotFoundError, ScopeError


@pytest.fixture
def private(ws):
    """Agent a's private fact and BDI nodes."""
    fact, _ = ws.facts.assert_fact("a", "acme", "hasSecret", "plan-x")
    belief = ws.bdi.add("belief", "a", "acme will sell")
    goal = ws.bdi.add("goal", "a", "buy acme")
    ws.bdi.link("a", "belief-supports-goal", belief.uid, goal.uid)
    return {"fact": fact, "belief": belief, "goal": goal}


def test_private_facts_are_invisible_to_others(ws, private):
    uid = private["fact"].uid

    assert ws.facts.query("b") == []
    assert ws.facts.query("b", subject="acme") == []
    assert ws.ports.facts.search("acme", scopes=ws.scopes.readable("b")) == []
    with pytest.raises(ScopeError):
        ws.facts.query("b", scope="agent:a")
    with pytest.raises(NotFoundError):
        ws.facts.get("b", uid)
    with pytest.raises(NotFoundError):
        ws.facts.explain("b", uid)
    assert [f.uid for f in ws.facts.query("a")] == [uid]


def test_others_cannot_retract_private_facts(ws, private):
    uid = private["fact"].uid

    with pytest.raises(NotFoundError):
        ws.facts.retract("b", uids=[uid])
    assert ws.facts.retract("b", subject="acme") == []
    with pytest.raises(ScopeError):
        ws.facts.retract("b", subject="acme", scope="agent:a")

    assert [f.uid for f in ws.facts.query("a")] == [uid]


def test_private_nodes_are_invisible_to_others(ws, private):
    goal = private["goal"]

    with pytest.raises(NotFoundError):
        ws.bdi.get("b", goal.uid)
    with pytest.raises(NotFoundError):
        ws.bdi.update("b", goal.uid, status="active")
    assert ws.bdi.list("b") == []
    assert ws.bdi.list("b", "goal") == []
    assert ws.bdi.relations("b", goal.uid) == []
    assert ws.bdi.paths("b", ["belief", "goal"]) == []
    assert ws.bdi.get("a", goal.uid).status == "pending"
    assert len(ws.bdi.paths("a", ["belief", "goal"])) == 1


def test_others_cannot_link_to_private_nodes(ws, private):
    their_belief = ws.bdi.add("belief", "b", "acme is cheap")

    with pytest.raises(NotFoundError):
        ws.bdi.link("b", "belief-supports-goal", their_belief.uid, private["goal"].uid)
    with pytest.raises(NotFoundError):
        ws.bdi.link("b", "derived-from", private["fact"].uid, private["fact"].uid)

    assert ws.bdi.relations("a", private["goal"].uid)[0].source_uid == private["belief"].uid
    assert len(ws.bdi.relations("a", private["goal"].uid)) == 1


def test_writing_into_another_agents_scope_is_refused(ws, private):
    with pytest.raises(ScopeError, match="agent:a"):
        ws.facts.assert_fact("b", "acme", "hasSecret", "mine", scope="agent:a")
    with pytest.raises(ScopeError):
        ws.bdi.add("goal", "b", "sabotage", scope="agent:a")
    their_belief = ws.bdi.add("belief", "b", "x")
    their_goal = ws.bdi.add("goal", "b", "y")
    with pytest.raises(ScopeError):
        ws.bdi.link("b", "belief-supports-goal", their_belief.uid, their_goal.uid, scope="agent:a")
    with pytest.raises(ScopeError):
        ws.facts.assert_many("b", [{"subject": "s", "predicate": "p", "object": "o", "scope": "agent:a"}])

    assert [f.object for f in ws.facts.query("a", subject="acme")] == ["plan-x"]
    assert ws.bdi.list("a", "goal") == [private["goal"]]


def test_global_is_shared(ws):
    fact, _ = ws.facts.assert_fact("a", "acme", "isA", "company", scope="global")
    goal = ws.bdi.add("goal", "a", "shared goal", scope="global")

    assert [f.uid for f in ws.facts.query("b")] == [fact.uid]
    assert ws.facts.get("b", fact.uid).object == "company"
    assert ws.bdi.get("b", goal.uid).content == "shared goal"
    ws.bdi.update("b", goal.uid, status="active")  # global is writable by every agent
    assert ws.bdi.get("a", goal.uid).status == "active"


def test_a_grant_lets_an_agent_read_and_write_a_project(ws):
    ws.scopes.grant("a", "project:x", granted_by="admin")
    mine, _ = ws.facts.assert_fact("a", "acme", "inProject", "x", scope="project:x")
    with pytest.raises(ScopeError):
        ws.facts.assert_fact("b", "acme", "inProject", "y", scope="project:x")
    assert ws.facts.query("b") == []

    ws.scopes.grant("b", "project:x", granted_by="admin")

    assert [f.uid for f in ws.facts.query("b", scope="project:x")] == [mine.uid]
    theirs, _ = ws.facts.assert_fact("b", "acme", "inProject", "y", scope="project:x")
    assert {f.uid for f in ws.facts.query("a", scope="project:x")} == {mine.uid, theirs.uid}
    assert "project:x" in ws.scopes.readable("b")

    assert ws.scopes.revoke("b", "project:x", revoked_by="admin")
    assert ws.facts.query("b") == []
    with pytest.raises(ScopeError):
        ws.facts.query("b", scope="project:x")
    with pytest.raises(NotFoundError):
        ws.facts.get("b", theirs.uid)


def test_grants_of_implicit_scopes_are_refused(ws):
    with pytest.raises(InputError, match="scope"):
        ws.scopes.grant("a", "global", granted_by="admin")
    with pytest.raises(InputError, match="scope"):
        ws.scopes.grant("a", "agent:a", granted_by="admin")
    with pytest.raises(InputError, match="scope"):
        ws.scopes.grant("a", "nonsense", granted_by="admin")
    assert ws.scopes.grants("a") == []


def test_a_grant_of_another_agents_scope_is_explicit(ws, private):
    ws.scopes.grant("b", "agent:a", granted_by="a")

    assert [f.uid for f in ws.facts.query("b", scope="agent:a")] == [private["fact"].uid]
    assert ws.bdi.get("b", private["goal"].uid).content == "buy acme"


@pytest.mark.parametrize(("agent_id", "error"), [("ghost", NotFoundError), ("Bad/Id", InputError), ("", InputError)])
def test_unknown_or_malformed_agents_are_refused(ws, agent_id, error):
    with pytest.raises(error):
        ws.facts.query(agent_id)
    with pytest.raises(error):
        ws.facts.assert_fact(agent_id, "s", "p", "o")
    with pytest.raises(error):
        ws.bdi.add("goal", agent_id, "g")
    with pytest.raises(error):
        ws.scopes.grant(agent_id, "project:x", granted_by="admin")


def test_the_caller_cannot_pass_its_own_scope_list(ws, private):
    with pytest.raises(InputError) as err:
        ws.facts.query("b", scopes=["agent:a"])
    assert err.value.field == "scopes"
    with pytest.raises(InputError):
        ws.facts.query("b", scopes=["agent:a"], scope="global")
