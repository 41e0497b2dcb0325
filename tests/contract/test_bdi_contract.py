"""Contract: the BDI node port, on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import is_id, new_id
from kg.models import NODE_MODELS, HierarchyLevel, NodeKind

A, B, G = "agent:a", "agent:b", "global"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _agents(mk):
    mk.agent("a")
    mk.agent("b")


@pytest.mark.parametrize("kind", list(NodeKind))
def test_add_then_get_round_trips_every_kind(mk, graph_store, kind):
    node = mk.node(kind, "a", f"a {kind.value}", deadline=T0 + timedelta(days=3), urgency=0.25)

    got = graph_store.bdi.get(node.uid)

    assert type(got) is NODE_MODELS[kind]
    assert got.model_dump() == node.model_dump()
    assert got.status == node.status  # the kind's default status
    assert is_id(got.uid) and got.scope == A


def test_kind_specific_fields_round_trip(mk, graph_store):
    goal = mk.node(
        NodeKind.GOAL,
        "a",
        "Grow revenue 20%",
        priority=9,
        progress=0.4,
        hierarchy_level=HierarchyLevel.STRATEGIC,
        status="active",
    )
    belief = mk.node(NodeKind.BELIEF, "a", "The market grows", certainty=0.7)
    step = mk.node(NodeKind.PLAN_STEP, "a", "Call the bank", sequence=3)

    got = graph_store.bdi.get(goal.uid)
    assert (got.priority, got.progress, got.hierarchy_level, got.status) == (9, 0.4, HierarchyLevel.STRATEGIC, "active")
    assert graph_store.bdi.get(belief.uid).certainty == 0.7
    assert graph_store.bdi.get(step.uid).sequence == 3


def test_get_unknown_node_is_not_found(graph_store):
    with pytest.raises(NotFoundError):
        graph_store.bdi.get(new_id("goal"))


def test_adding_the_same_uid_twice_is_a_conflict(mk, graph_store):
    node = mk.node(NodeKind.GOAL, "a", "g")

    with pytest.raises(ConflictError):
        graph_store.bdi.add(node.model_copy(update={"content": "other"}))

    assert graph_store.bdi.get(node.uid).content == "g"


def test_node_of_unknown_agent_is_not_found(mk, graph_store):
    with pytest.raises(NotFoundError, match="ghost"):
        mk.node(NodeKind.GOAL, "ghost", "g")
    assert graph_store.bdi.list(scopes=["agent:ghost"]) == []


@pytest.fixture
def nodes(mk):
    return {
        "b1": mk.node(NodeKind.BELIEF, "a", "belief 1"),
        "g1": mk.node(NodeKind.GOAL, "a", "goal 1"),
        "g2": mk.node(NodeKind.GOAL, "a", "goal 2", status="active"),
        "p1": mk.node(NodeKind.PLAN, "a", "plan 1"),
        "gs": mk.node(NodeKind.GOAL, "a", "shared goal", scope=G, status="active"),
        "gb": mk.node(NodeKind.GOAL, "b", "their goal", status="active"),
    }


def test_list_by_kind_status_owner_and_scope(graph_store, nodes):
    def uids(**kw):
        return [n.uid for n in graph_store.bdi.list(**kw)]

    assert uids(scopes=[A], kind=NodeKind.GOAL) == [nodes["g1"].uid, nodes["g2"].uid]
    assert uids(scopes=[A, G], kind=NodeKind.GOAL, status="active") == [nodes["g2"].uid, nodes["gs"].uid]
    assert uids(scopes=[A, B, G], kind=NodeKind.GOAL, agent_id="b") == [nodes["gb"].uid]
    assert uids(scopes=[A], kind=NodeKind.BELIEF) == [nodes["b1"].uid]
    assert uids(scopes=[A], kind=NodeKind.INTENTION) == []
    everything = sorted(n.uid for n in nodes.values())  # one created_at: (created_at, uid) is uid order
    assert uids(scopes=[A, B, G]) == everything
    assert uids(scopes=[A, B, G], limit=2) == everything[:2]


def test_list_orders_by_created_at_first(mk, graph_store, clock):
    clock.set(T0 + timedelta(hours=1))
    late = mk.node(NodeKind.GOAL, "a", "late")
    clock.set(T0)
    early = mk.node(NodeKind.GOAL, "a", "early")

    assert [n.uid for n in graph_store.bdi.list(scopes=[A])] == [early.uid, late.uid]


def test_update_changes_fields_and_moves_updated_at(graph_store, nodes, clock):
    clock.advance(timedelta(minutes=5))

    updated = graph_store.bdi.update(nodes["g1"].uid, {"status": "achieved", "progress": 1.0}, updated_by="a")

    stored = graph_store.bdi.get(nodes["g1"].uid)
    assert stored.model_dump() == updated.model_dump()
    assert (stored.status, stored.progress, stored.content) == ("achieved", 1.0, "goal 1")
    assert stored.updated_at == T0 + timedelta(minutes=5)
    assert stored.created_at == T0


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"status": "bogus"}, "status"),
        ({"progress": 1.5}, "progress"),
        ({"priority": 0}, "priority"),
        ({"content": "   "}, "content"),
        ({"certainty": float("nan")}, "certainty"),
        ({"deadline": "2024-02-30"}, "deadline"),
        ({"scope": G}, "scope"),
        ({"agent_id": "b"}, "agent_id"),
        ({"kind": "plan"}, "kind"),
        ({"colour": "red"}, "colour"),
        ({"status": "active", "owner": "b"}, "owner"),
    ],
)
def test_bad_update_names_the_field_and_changes_nothing(mk, nodes, clock, changes, field):
    before = mk.state([A, B, G])
    clock.advance(timedelta(minutes=5))

    with pytest.raises(InputError) as err:
        mk.store.bdi.update(nodes["g1"].uid, changes, updated_by="a")

    assert err.value.field == field
    assert mk.state([A, B, G]) == before


def test_update_unknown_node_is_not_found(graph_store):
    with pytest.raises(NotFoundError):
        graph_store.bdi.update(new_id("goal"), {"status": "active"}, updated_by="a")
