"""Contract: typed edges, their role checks and path queries, on every backend."""

from __future__ import annotations

import pytest

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models import NodeKind, RelationKind

A, B, G = "agent:a", "agent:b", "global"
SUPPORTS = RelationKind.BELIEF_SUPPORTS_GOAL
REQUIRES = RelationKind.GOAL_REQUIRES_PLAN
DECOMPOSES = RelationKind.GOAL_DECOMPOSITION


@pytest.fixture(autouse=True)
def _agents(mk):
    mk.agent("a")
    mk.agent("b")


@pytest.fixture
def g(mk):
    """A small BDI graph of agent a: belief -> goal -> plan, and goal -> sub -> subsub."""
    n = {
        "belief": mk.node(NodeKind.BELIEF, "a", "the market grows"),
        "goal": mk.node(NodeKind.GOAL, "a", "grow revenue"),
        "plan": mk.node(NodeKind.PLAN, "a", "hire sellers"),
        "sub": mk.node(NodeKind.GOAL, "a", "open a shop"),
        "subsub": mk.node(NodeKind.GOAL, "a", "find a site"),
        "step": mk.node(NodeKind.PLAN_STEP, "a", "post a job ad"),
    }
    mk.link(SUPPORTS, n["belief"].uid, n["goal"].uid, "a")
    mk.link(REQUIRES, n["goal"].uid, n["plan"].uid, "a")
    mk.link(DECOMPOSES, n["goal"].uid, n["sub"].uid, "a")
    mk.link(DECOMPOSES, n["sub"].uid, n["subsub"].uid, "a")
    mk.link(RelationKind.PLAN_CONTAINS_STEP, n["plan"].uid, n["step"].uid, "a")
    return n


def labels(paths):
    return sorted(tuple(p.labels) for p in paths)


# ------------------------------------------------------------------------------------------ link


def test_link_is_listed_on_both_ends(mk, graph_store, g):
    rels = graph_store.relations.relations(g["goal"].uid, scopes=[A])

    assert sorted((r.kind, r.source_uid, r.target_uid) for r in rels) == sorted(
        [
            (SUPPORTS, g["belief"].uid, g["goal"].uid),
            (REQUIRES, g["goal"].uid, g["plan"].uid),
            (DECOMPOSES, g["goal"].uid, g["sub"].uid),
        ]
    )
    assert [r.kind for r in graph_store.relations.relations(g["belief"].uid, scopes=[A])] == [SUPPORTS]


def test_link_checks_roles(mk, g):
    before = mk.state([A])

    with pytest.raises(InputError) as err:  # a plan cannot play the goal role
        mk.link(SUPPORTS, g["belief"].uid, g["plan"].uid, "a")
    assert err.value.field == "goal"
    with pytest.raises(InputError) as err:  # nor a goal the belief role
        mk.link(SUPPORTS, g["sub"].uid, g["goal"].uid, "a")
    assert err.value.field == "belief"
    with pytest.raises(InputError):
        mk.link(RelationKind.PLAN_CONTAINS_STEP, g["plan"].uid, g["goal"].uid, "a")

    assert mk.state([A]) == before


def test_link_to_unknown_uid_is_not_found(mk, g):
    before = mk.state([A])

    with pytest.raises(NotFoundError):
        mk.link(SUPPORTS, g["belief"].uid, new_id("goal"), "a")
    with pytest.raises(NotFoundError):
        mk.link(SUPPORTS, new_id("belief"), g["goal"].uid, "a")

    assert mk.state([A]) == before


def test_duplicate_link_is_a_conflict(mk, g):
    before = mk.state([A])

    with pytest.raises(ConflictError):
        mk.link(SUPPORTS, g["belief"].uid, g["goal"].uid, "a")

    assert mk.state([A]) == before


def test_self_link_and_agent_owns_are_refused(mk, g):
    with pytest.raises(InputError):
        mk.link(DECOMPOSES, g["goal"].uid, g["goal"].uid, "a")
    with pytest.raises(InputError):
        mk.link(RelationKind.AGENT_OWNS, mk.store.agents.get("a").uid, g["goal"].uid, "a")


def test_unlink(mk, graph_store, g):
    rel = graph_store.relations.relations(g["belief"].uid, scopes=[A])[0]

    graph_store.relations.unlink(rel.uid, removed_by="a")

    assert graph_store.relations.relations(g["belief"].uid, scopes=[A]) == []
    with pytest.raises(NotFoundError):
        graph_store.relations.unlink(rel.uid, removed_by="a")


def test_relations_hides_edges_of_unreadable_scopes(mk, graph_store):
    shared_belief = mk.node(NodeKind.BELIEF, "a", "shared", scope=G)
    shared_goal = mk.node(NodeKind.GOAL, "a", "shared", scope=G)
    mk.link(SUPPORTS, shared_belief.uid, shared_goal.uid, "b")  # edge kept in agent:b

    assert graph_store.relations.relations(shared_goal.uid, scopes=[A, G]) == []
    assert len(graph_store.relations.relations(shared_goal.uid, scopes=[B, G])) == 1


def test_node_info(mk, graph_store, g):
    fact = mk.fact("a", "acme", "is", "firm", scope=G)

    assert graph_store.relations.node_info(g["step"].uid) == ("plan_step", A)
    assert graph_store.relations.node_info(fact.uid) == ("fact", G)
    assert graph_store.relations.node_info(new_id("goal")) is None


# ------------------------------------------------------------------------------------------ paths


def test_belief_goal_plan_path(graph_store, g):
    paths = graph_store.relations.paths(["belief", "goal", "plan"], scopes=[A])

    assert len(paths) == 1
    path = paths[0]
    assert path.nodes == [g["belief"].uid, g["goal"].uid, g["plan"].uid]
    assert path.kinds == ["belief", "goal", "plan"]
    assert path.relations == [SUPPORTS.value, REQUIRES.value]
    assert path.labels == ["the market grows", "grow revenue", "hire sellers"]


def test_longer_path_to_steps(graph_store, g):
    paths = graph_store.relations.paths(["belief", "goal", "plan", "plan_step"], scopes=[A])

    assert [p.nodes for p in paths] == [[g["belief"].uid, g["goal"].uid, g["plan"].uid, g["step"].uid]]


def test_goal_decomposition_chains(graph_store, g):
    paths = graph_store.relations.paths(["goal", "goal", "goal"], scopes=[A], relation=DECOMPOSES)

    # edges are followed in either direction: the chain read top-down and bottom-up
    assert labels(paths) == sorted(
        [("grow revenue", "open a shop", "find a site"), ("find a site", "open a shop", "grow revenue")]
    )
    assert all(p.relations == [DECOMPOSES.value, DECOMPOSES.value] for p in paths)


def test_start_uid_filter(graph_store, g):
    paths = graph_store.relations.paths(["goal", "goal", "goal"], scopes=[A], start_uid=g["goal"].uid)

    assert [p.nodes for p in paths] == [[g["goal"].uid, g["sub"].uid, g["subsub"].uid]]
    assert graph_store.relations.paths(["goal", "plan"], scopes=[A], start_uid=g["sub"].uid) == []


def test_relation_filter(mk, graph_store, g):
    other_plan = mk.node(NodeKind.PLAN, "a", "raise prices")
    mk.link(REQUIRES, g["sub"].uid, other_plan.uid, "a")

    everything = graph_store.relations.paths(["goal", "goal", "plan"], scopes=[A])
    only_decomp = graph_store.relations.paths(["goal", "goal", "plan"], scopes=[A], relation=DECOMPOSES)

    assert ("grow revenue", "open a shop", "raise prices") in labels(everything)
    assert only_decomp == []  # the last hop is goal-requires-plan


def test_no_node_is_repeated(mk, graph_store):
    one = mk.node(NodeKind.GOAL, "a", "one")
    two = mk.node(NodeKind.GOAL, "a", "two")
    mk.link(DECOMPOSES, one.uid, two.uid, "a")

    assert graph_store.relations.paths(["goal", "goal", "goal"], scopes=[A]) == []
    pairs = graph_store.relations.paths(["goal", "goal"], scopes=[A])
    assert sorted(p.labels for p in pairs) == [["one", "two"], ["two", "one"]]
    assert all(len(set(p.nodes)) == len(p.nodes) for p in pairs)


def test_paths_limit(graph_store, g):
    assert len(graph_store.relations.paths(["goal", "goal"], scopes=[A], limit=1)) == 1


def test_paths_hide_nodes_of_unreadable_scopes(mk, graph_store):
    belief = mk.node(NodeKind.BELIEF, "a", "shared belief", scope=G)
    goal = mk.node(NodeKind.GOAL, "a", "shared goal", scope=G)
    secret_plan = mk.node(NodeKind.PLAN, "b", "b's private plan")
    public_plan = mk.node(NodeKind.PLAN, "a", "public plan", scope=G)
    mk.link(SUPPORTS, belief.uid, goal.uid, "a", scope=G)
    mk.link(REQUIRES, goal.uid, secret_plan.uid, "b", scope=G)
    mk.link(REQUIRES, goal.uid, public_plan.uid, "a", scope=G)

    seen_by_a = graph_store.relations.paths(["belief", "goal", "plan"], scopes=[A, G])
    seen_by_b = graph_store.relations.paths(["belief", "goal", "plan"], scopes=[B, G])

    assert labels(seen_by_a) == [("shared belief", "shared goal", "public plan")]
    assert labels(seen_by_b) == [
        ("shared belief", "shared goal", "b's private plan"),
        ("shared belief", "shared goal", "public plan"),
    ]


def test_paths_hide_edges_of_unreadable_scopes(mk, graph_store):
    belief = mk.node(NodeKind.BELIEF, "a", "shared belief", scope=G)
    goal = mk.node(NodeKind.GOAL, "a", "shared goal", scope=G)
    mk.link(SUPPORTS, belief.uid, goal.uid, "b")  # the edge itself is private to b

    assert graph_store.relations.paths(["belief", "goal"], scopes=[A, G]) == []
    assert len(graph_store.relations.paths(["belief", "goal"], scopes=[B, G])) == 1


def test_fact_lineage_is_a_path(mk, graph_store):
    parent = mk.fact("a", "acme", "hasRevenue", "100")
    child = mk.fact("a", "acme", "isBig", "true", derived_from=[parent.uid])

    paths = graph_store.relations.paths(["fact", "fact"], scopes=[A], start_uid=child.uid)

    assert [(p.nodes, p.relations) for p in paths] == [([child.uid, parent.uid], ["derived-from"])]


@pytest.mark.parametrize("kinds", [[], ["goal"] * 9, [""]])
def test_bad_path_kinds_are_refused(graph_store, kinds):
    with pytest.raises(InputError):
        graph_store.relations.paths(kinds, scopes=[A])
