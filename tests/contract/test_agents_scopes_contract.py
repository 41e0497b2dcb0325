"""Contract: the agent and scope ports, on every backend."""

from __future__ import annotations

import pytest

from kg.errors import ConflictError, NotFoundError
from kg.ids import is_id, new_id
from kg.models import Agent, CommitmentStrategy, parse


def test_create_then_get_returns_the_same_agent(mk, graph_store):
    created = mk.agent(
        "sales-agent", role="seller", department="revenue", commitment_strategy=CommitmentStrategy.CAUTIOUS
    )

    got = graph_store.agents.get("sales-agent")

    assert got.model_dump() == created.model_dump()
    assert got.commitment_strategy is CommitmentStrategy.CAUTIOUS
    assert got.scope == "agent:sales-agent"
    assert is_id(got.uid, "agent")
    assert graph_store.agents.exists("sales-agent")


def test_duplicate_agent_id_is_a_conflict_and_keeps_the_first(mk, graph_store, clock):
    first = mk.agent("a1", role="first")
    dup = parse(
        Agent,
        {
            "uid": new_id("agent"),
            "agent_id": "a1",
            "name": "Other",
            "role": "second",
            "created_at": clock.now(),
            "updated_at": clock.now(),
        },
    )

    with pytest.raises(ConflictError, match="a1"):
        graph_store.agents.create(dup)

    assert [a.model_dump() for a in graph_store.agents.list()] == [first.model_dump()]


def test_get_unknown_agent_is_not_found(graph_store):
    with pytest.raises(NotFoundError, match="ghost"):
        graph_store.agents.get("ghost")
    assert not graph_store.agents.exists("ghost")


def test_list_is_ordered_by_agent_id_not_creation(mk, graph_store):
    for agent_id in ("zeta", "alpha", "mid-1", "mid_0", "0-first"):
        mk.agent(agent_id)

    assert [a.agent_id for a in graph_store.agents.list()] == ["0-first", "alpha", "mid-1", "mid_0", "zeta"]


def test_empty_store_lists_no_agents(graph_store):
    assert graph_store.agents.list() == []


# ------------------------------------------------------------------------------------------ scopes


def test_grant_is_listed_and_idempotent(mk, graph_store):
    mk.agent("b")
    mk.grant("b", "project:x", granted_by="alice")

    mk.grant("b", "project:x", granted_by="bob")

    grants = graph_store.scopes.grants("b")
    assert [(g.agent_id, g.scope) for g in grants] == [("b", "project:x")]
    assert grants[0].granted_by == "alice"  # the first grant is kept


def test_grants_are_ordered_by_scope_and_per_agent(mk, graph_store):
    mk.agent("a")
    mk.agent("b")
    for scope in ("user:zed", "custom:team", "project:x"):
        mk.grant("b", scope)
    mk.grant("a", "project:y")

    assert [g.scope for g in graph_store.scopes.grants("b")] == ["custom:team", "project:x", "user:zed"]
    assert [g.scope for g in graph_store.scopes.grants("a")] == ["project:y"]


def test_revoke_removes_the_grant_and_says_whether_there_was_one(mk, graph_store):
    mk.agent("b")
    mk.grant("b", "project:x")
    mk.grant("b", "project:y")

    assert graph_store.scopes.revoke("b", "project:x", revoked_by="admin") is True
    assert graph_store.scopes.revoke("b", "project:x", revoked_by="admin") is False
    assert graph_store.scopes.revoke("b", "project:never", revoked_by="admin") is False

    assert [g.scope for g in graph_store.scopes.grants("b")] == ["project:y"]


def test_grant_to_unknown_agent_is_not_found(mk, graph_store):
    with pytest.raises(NotFoundError, match="ghost"):
        mk.grant("ghost", "project:x")
    assert graph_store.scopes.grants("ghost") == []
