"""TypeDBGraphStore's agent, scope, BDI and relation adapters without a server: golden TypeQL and pure helpers.

No TypeDB server runs here, so nothing in this file claims server behaviour: the query text every template
emits is compared with reviewed golden files (``tests/data/typedb/store/{agents,scopes,bdi,relations,paths}_*``),
the conversions are fed documents shaped as typedb-notes §2.8 describes fetch output (datetimes as
``YYYY-MM-DDTHH:MM:SS.fffffffff``, absent attributes as null), the path search runs on in-memory edges, and the
input checks that run before any query are called on a store whose server is never contacted. The contract
suite (tests/contract/) is the behavioural proof; it runs against a real server where one exists.
Regenerate the golden files after a deliberate change with
``UPDATE_GOLDEN=1 pytest tests/unit/test_typedb_store_graph.py`` and review the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kg.clock import FixedClock
from kg.errors import BackendError, InputError
from kg.models import (
    NODE_MODELS,
    Agent,
    CommitmentStrategy,
    Grant,
    HierarchyLevel,
    NodeKind,
    Relation,
    RelationKind,
    format_ts,
    parse,
)
from kg.store.typedb.agents import (
    agent_count_query,
    agent_from_doc,
    agent_query,
    grant_count_query,
    grant_delete_query,
    grant_from_doc,
    grant_insert_query,
    grant_uid,
    grants_query,
    record_writes,
    uid_count_query,
    values,
)
from kg.store.typedb.graph import (
    duplicate_query,
    memory_type_query,
    node_from_doc,
    node_info_query,
    node_kind,
    node_query,
    nodes_query,
    owner_query,
    relation_from_doc,
    relations_query,
    unlink_query,
)
from kg.store.typedb.literals import decode_string
from kg.store.typedb.paths import (
    STORED_KINDS,
    Edge,
    PathNode,
    edges_query,
    find_paths,
    lineage_query,
    needed_relation_kinds,
    path_node_from_doc,
    path_nodes_query,
)
from kg.store.typedb.settings import TypeDBSettings
from kg.store.typedb.store import TypeDBGraphStore, stats_queries

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "typedb" / "store"
PREFIXES = ("agents_", "scopes_", "bdi_", "relations_", "paths_")
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SCOPES = ["global", "agent:sales-agent", "project:q3"]
# Not valid ids or scopes: any value is encoded, quotes, backslashes and newlines included.
TRICKY = 'x "quoted" \\back\\slash\nnew line'
B1, G1, P1 = "B-01J00000000000000000000001", "G-01J00000000000000000000002", "P-01J00000000000000000000003"
S1, E1, A1 = "S-01J00000000000000000000004", "E-01J00000000000000000000005", "A-01J00000000000000000000006"
# A store whose server is never contacted: nothing below reaches a query.
OFFLINE = TypeDBSettings(address="127.0.0.1:1", database="never_contacted")


def _agent() -> Agent:
    return parse(Agent, {"uid": A1, "agent_id": "sales-agent", "name": TRICKY, "role": "seller",
                         "commitment_strategy": "cautious", "created_at": T0, "updated_at": T0})  # fmt: skip


def _step() -> Any:
    return parse(NODE_MODELS[NodeKind.PLAN_STEP], {"uid": S1, "agent_id": "sales-agent", "content": TRICKY,
                                                   "sequence": 3, "created_at": T0, "updated_at": T0})  # fmt: skip


def _goal(**fields: Any) -> Any:
    data = {"uid": G1, "agent_id": "sales-agent", "content": "grow", "created_at": T0, "updated_at": T0, **fields}
    return parse(NODE_MODELS[NodeKind.GOAL], data)


def _relation() -> Relation:
    return parse(Relation, {"uid": E1, "kind": "goal-requires-plan", "source_uid": G1, "target_uid": P1,
                            "agent_id": "sales-agent", "scope": "global", "created_at": T0})  # fmt: skip


def _writes(queries: list[str]) -> str:
    return "\n".join(queries) + "\n"


def _stats() -> str:
    return "".join(f"# {name}\n{text}\n" for name, text in stats_queries().items())


def _agent_writes() -> str:
    return _writes(record_writes("agent", _agent().model_dump(mode="json"), agent_id="sales-agent", now=T0))


def _add_writes() -> str:
    return _writes(record_writes("plan_step", _step().model_dump(mode="json"), agent_id="sales-agent", now=T0))


def _update_writes() -> str:
    later = T0 + timedelta(minutes=5)
    goal = _goal(status="achieved", hierarchy_level=None, updated_at=later)
    return _writes(record_writes("goal", goal.model_dump(mode="json"), agent_id="finance-agent", now=later))


def _link_writes() -> str:
    return _writes(record_writes("relation", _relation().model_dump(mode="json"), agent_id="sales-agent", now=T0))


def _list_unlimited() -> str:
    return nodes_query(NodeKind.PLAN_STEP, scopes=["global"], agent_id=None, status=None, limit=None)


GRANT = parse(Grant, {"agent_id": "sales-agent", "scope": "project:q3", "granted_by": TRICKY, "created_at": T0})

CASES: dict[str, Callable[[], str]] = {
    "agents_get": lambda: agent_query(TRICKY),
    "agents_list": lambda: agent_query(None),
    "agents_count": lambda: agent_count_query(TRICKY),
    "agents_uid_count": lambda: uid_count_query(TRICKY),
    "agents_create_writes": _agent_writes,
    "agents_stats": _stats,
    "scopes_grant_count": lambda: grant_count_query(TRICKY, "project:q3"),
    "scopes_grant_insert": lambda: grant_insert_query(GRANT),
    "scopes_grant_delete": lambda: grant_delete_query(TRICKY, "project:q3"),
    "scopes_grants": lambda: grants_query(TRICKY),
    "bdi_list_filtered": lambda: nodes_query(NodeKind.GOAL, scopes=SCOPES, agent_id=TRICKY, status=TRICKY, limit=1000),
    "bdi_list_unlimited": _list_unlimited,
    "bdi_add_writes": _add_writes,
    "bdi_update_writes": _update_writes,
    "relations_duplicate": lambda: duplicate_query(RelationKind.STEP_DEPENDS_ON, TRICKY, S1),
    "relations_owner": lambda: owner_query(TRICKY),
    "relations_unlink": lambda: unlink_query(RelationKind.GOAL_DECOMPOSITION, TRICKY),
    "relations_node_info": lambda: node_info_query(TRICKY),
    "relations_memory_type": lambda: memory_type_query(TRICKY),
    "relations_link_writes": _link_writes,
    "paths_lineage": lineage_query,
}


def _node_get(kind: NodeKind) -> Callable[[], str]:
    return lambda: node_query(kind, TRICKY)


def _relations_of(kind: RelationKind) -> Callable[[], str]:
    return lambda: relations_query(kind, TRICKY, SCOPES)


def _edges(kind: RelationKind) -> Callable[[], str]:
    return lambda: edges_query(kind)


def _path_nodes(kind: str) -> Callable[[], str]:
    return lambda: str(path_nodes_query(kind, SCOPES))


CASES |= {f"bdi_get_{kind.value}": _node_get(kind) for kind in NodeKind}
CASES |= {f"relations_of_{kind.value}": _relations_of(kind) for kind in STORED_KINDS}
CASES |= {f"paths_edges_{kind.value}": _edges(kind) for kind in STORED_KINDS}
CASES |= {f"paths_nodes_{name}": _path_nodes(kind) for name, kind in (
    ("agent", "agent"), ("belief", "belief"), ("plan_step", "plan_step"), ("fact", "fact"), ("memory", "memory"),
    ("memory_skill", "memory:skill"), ("memory_tricky", f"memory:{TRICKY}"))}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_query_text_matches_its_golden_file(name: str, golden: Callable[[Path, str], None]) -> None:
    golden(GOLDEN / f"{name}.tql", CASES[name]())


def test_every_golden_file_of_these_adapters_has_a_case() -> None:
    mine = sorted(p.stem for p in GOLDEN.glob("*.tql") if p.name.startswith(PREFIXES))
    assert mine == sorted(CASES)


def test_values_enter_query_text_as_literals_that_decode_back() -> None:
    text = agent_count_query(TRICKY)
    literal = text.split("has agent-id ", 1)[1].split(";\n", 1)[0]
    assert decode_string(literal) == TRICKY
    assert "\n" not in literal  # one line: a newline in a value never ends a statement
    assert decode_string(grant_insert_query(GRANT).split("has granted-by ", 1)[1].split(", has", 1)[0]) == TRICKY


def test_the_grant_key_is_the_outbox_record_uid_of_a_grant() -> None:
    assert grant_uid("sales-agent", "project:q3") == "sales-agent|project:q3"


# ------------------------------------------------------------------------------ documents -> models


def _fetched(moment: datetime) -> str:
    """A datetime as fetch returns it: UTC, no zone, nine fraction digits."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "789"


def test_agent_document_reads_back_the_agent() -> None:
    agent = _agent()
    doc = {"uid": A1, "agent_id": "sales-agent", "scope": "agent:sales-agent", "name": TRICKY, "role": "seller",
           "department": "", "commitment_strategy": "cautious", "created_at": _fetched(T0),
           "updated_at": _fetched(T0)}  # fmt: skip

    assert agent_from_doc(doc).model_dump() == agent.model_dump()
    absent = agent_from_doc({**doc, "role": None, "department": None, "commitment_strategy": None})
    assert (absent.role, absent.department) == ("", "")
    assert absent.commitment_strategy is CommitmentStrategy.OPEN_MINDED


def test_grant_document_reads_back_the_grant() -> None:
    doc = {"agent_id": "sales-agent", "scope": "project:q3", "granted_by": TRICKY, "created_at": _fetched(T0)}
    assert grant_from_doc(doc) == GRANT


@pytest.mark.parametrize("kind", list(NodeKind))
def test_node_document_reads_back_every_kind(kind: NodeKind) -> None:
    deadline = T0 + timedelta(days=3)
    node = parse(NODE_MODELS[kind], {"uid": G1, "agent_id": "a", "content": TRICKY, "urgency": 0.25,
                                     "deadline": deadline, "created_at": T0, "updated_at": T0})  # fmt: skip
    data = node.model_dump()
    doc = {"uid": G1, "agent_id": "a", "scope": "agent:a", "content": TRICKY, "status": data["status"],
           "certainty": data["certainty"], "priority": data["priority"], "urgency": 0.25, "progress": data["progress"],
           "deadline": _fetched(deadline), "hierarchy_level": data["hierarchy_level"],
           "created_at": _fetched(T0), "updated_at": _fetched(T0)}  # fmt: skip
    if kind is NodeKind.PLAN_STEP:
        doc["sequence"] = 0

    got = node_from_doc(kind, doc)

    assert type(got) is NODE_MODELS[kind]
    assert got.model_dump() == node.model_dump()


def test_absent_node_attributes_stay_none_rather_than_the_kinds_default() -> None:
    goal = _goal(hierarchy_level=None, priority=None)
    doc = {"uid": G1, "agent_id": "sales-agent", "scope": "agent:sales-agent", "content": "grow", "status": "pending",
           "certainty": None, "priority": None, "urgency": None, "progress": 0.0, "deadline": None,
           "hierarchy_level": None, "created_at": _fetched(T0), "updated_at": _fetched(T0)}  # fmt: skip

    assert node_from_doc(NodeKind.GOAL, doc).model_dump() == goal.model_dump()
    assert node_from_doc(NodeKind.GOAL, {**doc, "hierarchy_level": "strategic", "priority": 9.0}).priority == 9
    assert node_from_doc(NodeKind.GOAL, {**doc, "hierarchy_level": "strategic"}).hierarchy_level is (
        HierarchyLevel.STRATEGIC
    )


def test_relation_document_reads_back_the_relation() -> None:
    doc = {"uid": E1, "agent_id": "sales-agent", "scope": "global", "created_at": _fetched(T0), "source_uid": G1,
           "target_uid": P1}  # fmt: skip
    assert relation_from_doc(RelationKind.GOAL_REQUIRES_PLAN, doc) == _relation()


def test_fetched_datetimes_become_aware_utc_with_microseconds() -> None:
    parsed = values({"at": "2024-05-01T12:00:00.123456789", "gone": None, "text": "2024"}, ("at", "gone"))
    assert parsed == {"at": datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC), "text": "2024"}
    assert values({"gone": None}, ("gone",), keep_null=True) == {"gone": None}
    assert format_ts(parsed["at"]) == "2024-05-01T12:00:00.123456Z"


def test_graph_node_kinds_of_type_labels() -> None:
    assert node_kind("plan-step") == "plan_step"
    assert node_kind("goal") == "goal"
    assert node_kind("agent") == "agent"
    assert node_kind("fact") == "fact"
    assert node_kind("skill", "skill") == "memory:skill"
    assert node_kind("memory-item", "lesson") == "memory:lesson"
    assert node_kind("case") is None  # cases, rules, proposals are not graph nodes (as in the embedded store)
    assert node_kind("rule") is None


def test_path_node_documents() -> None:
    fact = path_node_from_doc("fact", {"uid": "F-1", "scope": "global", "subject": "acme", "predicate": "is",
                                       "object": "firm"})  # fmt: skip
    memory = path_node_from_doc("memory", {"uid": "M-1", "scope": "global", "label": "text", "type": "skill"})
    step = path_node_from_doc("plan_step", {"uid": S1, "scope": "agent:a", "label": "call"})

    assert fact == PathNode("F-1", "fact", "global", "acme is firm")
    assert memory == PathNode("M-1", "memory:skill", "global", "text")
    assert step == PathNode(S1, "plan_step", "agent:a", "call")
    assert path_nodes_query("case", SCOPES) is None  # a kind no graph node has
    assert path_nodes_query("nonsense", SCOPES) is None


# ------------------------------------------------------------------------------ which edges a path needs


def test_needed_relation_kinds_follow_the_role_specs() -> None:
    supports, requires = RelationKind.BELIEF_SUPPORTS_GOAL, RelationKind.GOAL_REQUIRES_PLAN
    assert needed_relation_kinds(["belief", "goal", "plan"], None) == [supports, requires]
    assert needed_relation_kinds(["plan", "goal"], None) == [requires]
    assert needed_relation_kinds(["fact", "fact"], None) == [RelationKind.DERIVED_FROM]
    assert needed_relation_kinds(["memory", "goal"], None) == [RelationKind.DECISION_RESOLVES_GOAL]
    assert needed_relation_kinds(["memory:skill", "goal"], None) == []
    assert needed_relation_kinds(["agent", "memory"], None) == [RelationKind.AGENT_HAS_SKILL]
    assert needed_relation_kinds(["goal", "goal"], None) == [RelationKind.GOAL_DECOMPOSITION]
    assert needed_relation_kinds(["goal", "goal", "plan"], RelationKind.GOAL_DECOMPOSITION) == [
        RelationKind.GOAL_DECOMPOSITION
    ]
    assert needed_relation_kinds(["belief", "plan"], None) == []
    assert needed_relation_kinds(["goal"], None) == []
    assert needed_relation_kinds(["agent", "goal"], RelationKind.AGENT_OWNS) == []  # never stored


# ------------------------------------------------------------------------------ path search (in memory)

A, B, G = "agent:a", "agent:b", "global"
SUPPORTS, REQUIRES, DECOMPOSES = "belief-supports-goal", "goal-requires-plan", "goal-decomposition"


def _nodes(*nodes: tuple[str, str, str, str]) -> dict[str, PathNode]:
    return {uid: PathNode(uid, kind, scope, label) for uid, kind, scope, label in nodes}


# The contract suite's graph: belief -> goal -> plan -> step, and goal -> sub -> subsub (all agent:a).
GRAPH = _nodes(("B1", "belief", A, "the market grows"), ("G1", "goal", A, "grow revenue"),
               ("P1", "plan", A, "hire sellers"), ("G2", "goal", A, "open a shop"), ("G3", "goal", A, "find a site"),
               ("S1", "plan_step", A, "post a job ad"))  # fmt: skip
EDGES = [Edge(SUPPORTS, "B1", "G1", A), Edge(REQUIRES, "G1", "P1", A), Edge(DECOMPOSES, "G1", "G2", A),
         Edge(DECOMPOSES, "G2", "G3", A), Edge("plan-contains-step", "P1", "S1", A)]  # fmt: skip


def _labels(paths: list[Any]) -> list[tuple[str, ...]]:
    return sorted(tuple(p.labels) for p in paths)


def test_a_path_follows_the_kinds_in_order() -> None:
    paths = find_paths(["belief", "goal", "plan"], GRAPH, EDGES, scopes=[A])

    assert [p.model_dump() for p in paths] == [{
        "nodes": ["B1", "G1", "P1"], "kinds": ["belief", "goal", "plan"], "relations": [SUPPORTS, REQUIRES],
        "labels": ["the market grows", "grow revenue", "hire sellers"],
    }]  # fmt: skip
    longer = find_paths(["belief", "goal", "plan", "plan_step"], GRAPH, EDGES, scopes=[A])
    assert [p.nodes for p in longer] == [["B1", "G1", "P1", "S1"]]


def test_edges_are_followed_both_ways_and_filtered_by_relation() -> None:
    chains = find_paths(["goal", "goal", "goal"], GRAPH, EDGES, scopes=[A], relation=RelationKind.GOAL_DECOMPOSITION)

    assert _labels(chains) == sorted([("grow revenue", "open a shop", "find a site"),
                                      ("find a site", "open a shop", "grow revenue")])  # fmt: skip
    edges = [*EDGES, Edge(REQUIRES, "G2", "P2", A)]
    graph = {**GRAPH, **_nodes(("P2", "plan", A, "raise prices"))}
    assert ("grow revenue", "open a shop", "raise prices") in _labels(
        find_paths(["goal", "goal", "plan"], graph, edges, scopes=[A]))  # fmt: skip
    decomposes = RelationKind.GOAL_DECOMPOSITION
    assert find_paths(["goal", "goal", "plan"], graph, edges, scopes=[A], relation=decomposes) == []


def test_start_uid_and_no_node_twice() -> None:
    assert [p.nodes for p in find_paths(["goal", "goal", "goal"], GRAPH, EDGES, scopes=[A], start_uid="G1")] == [
        ["G1", "G2", "G3"]
    ]
    assert find_paths(["goal", "plan"], GRAPH, EDGES, scopes=[A], start_uid="G2") == []
    pair = _nodes(("X", "goal", A, "one"), ("Y", "goal", A, "two"))
    assert find_paths(["goal", "goal", "goal"], pair, [Edge(DECOMPOSES, "X", "Y", A)], scopes=[A]) == []
    assert [p.labels for p in find_paths(["goal", "goal"], pair, [Edge(DECOMPOSES, "X", "Y", A)], scopes=[A])] == [
        ["one", "two"], ["two", "one"]]  # fmt: skip


def test_paths_are_sorted_by_nodes_then_relations_before_the_limit() -> None:
    everything = find_paths(["goal", "goal"], GRAPH, EDGES, scopes=[A])

    assert [p.nodes for p in everything] == [["G1", "G2"], ["G2", "G1"], ["G2", "G3"], ["G3", "G2"]]
    assert [p.nodes for p in find_paths(["goal", "goal"], GRAPH, EDGES, scopes=[A], limit=1)] == [["G1", "G2"]]
    assert find_paths(["goal", "goal"], GRAPH, list(reversed(EDGES)), scopes=[A], limit=3) == everything[:3]
    assert find_paths(["goal", "goal"], GRAPH, EDGES, scopes=[A], limit=0) == []
    assert find_paths(["goal", "goal"], GRAPH, EDGES, scopes=[A], limit=-1) == everything


def test_nodes_of_unreadable_scopes_are_not_on_any_path() -> None:
    graph = _nodes(("B", "belief", G, "shared belief"), ("G", "goal", G, "shared goal"),
                   ("P1", "plan", B, "b's private plan"), ("P2", "plan", G, "public plan"))  # fmt: skip
    edges = [Edge(SUPPORTS, "B", "G", G), Edge(REQUIRES, "G", "P1", G), Edge(REQUIRES, "G", "P2", G)]

    assert _labels(find_paths(["belief", "goal", "plan"], graph, edges, scopes=[A, G])) == [
        ("shared belief", "shared goal", "public plan")]  # fmt: skip
    assert len(find_paths(["belief", "goal", "plan"], graph, edges, scopes=[B, G])) == 2


def test_an_edge_of_an_unreadable_scope_hides_the_step() -> None:
    graph = _nodes(("B", "belief", G, "shared belief"), ("G", "goal", G, "shared goal"))

    assert find_paths(["belief", "goal"], graph, [Edge(SUPPORTS, "B", "G", B)], scopes=[A, G]) == []
    assert len(find_paths(["belief", "goal"], graph, [Edge(SUPPORTS, "B", "G", B)], scopes=[B, G])) == 1
    # as in the embedded store, a hidden edge of the same kind between the same ends hides the visible one too
    both = [Edge(DECOMPOSES, "X", "Y", A), Edge(DECOMPOSES, "Y", "X", B)]
    pair = _nodes(("X", "goal", A, "one"), ("Y", "goal", A, "two"))
    assert find_paths(["goal", "goal"], pair, both, scopes=[A]) == []


def test_fact_lineage_is_a_path_of_kind_derived_from() -> None:
    graph = _nodes(("F1", "fact", A, "acme hasRevenue 100"), ("F2", "fact", A, "acme isBig true"),
                   ("M1", "memory:lesson", A, "big firms pay late"))  # fmt: skip
    lineage = [Edge("derived-from", "F2", "F1"), Edge("derived-from", "M1", "F2")]

    paths = find_paths(["fact", "fact"], graph, lineage, scopes=[A], start_uid="F2")
    assert [(p.nodes, p.relations) for p in paths] == [(["F2", "F1"], ["derived-from"])]
    mixed = find_paths(["memory", "fact", "fact"], graph, lineage, scopes=[A])
    assert [(p.nodes, p.kinds) for p in mixed] == [(["M1", "F2", "F1"], ["memory:lesson", "fact", "fact"])]


def test_single_kind_paths_are_the_visible_nodes_of_that_kind() -> None:
    assert [p.nodes for p in find_paths(["goal"], GRAPH, [], scopes=[A])] == [["G1"], ["G2"], ["G3"]]
    assert find_paths(["goal"], GRAPH, [], scopes=[B]) == []


# ------------------------------------------------------------------------------ checks before any query


@pytest.fixture
def offline() -> TypeDBGraphStore:
    return TypeDBGraphStore(OFFLINE, clock=FixedClock(T0))


@pytest.mark.parametrize("kinds", [[], ["goal"] * 9, [""], ["x" * 257]])
def test_bad_path_kinds_are_refused_before_any_query(offline: TypeDBGraphStore, kinds: list[str]) -> None:
    with pytest.raises(InputError) as err:
        offline.relations.paths(kinds, scopes=[A])
    assert err.value.field == "kinds"


def test_missing_scopes_are_refused_before_any_query(offline: TypeDBGraphStore) -> None:
    for call in (lambda: offline.relations.paths(["goal"], scopes=[]),
                 lambda: offline.relations.relations(G1, scopes=[]),
                 lambda: offline.bdi.list(scopes=[]),
                 lambda: offline.bdi.list(scopes=[], limit=0)):  # fmt: skip
        with pytest.raises(InputError) as err:
            call()
        assert err.value.field == "scopes"


def test_bad_links_and_updates_are_refused_before_any_query(offline: TypeDBGraphStore) -> None:
    agent_owns = _relation().model_copy(update={"kind": RelationKind.AGENT_OWNS})
    with pytest.raises(InputError, match="agent-owns"):
        offline.relations.link(agent_owns)
    with pytest.raises(InputError) as err:
        offline.relations.link(_relation().model_copy(update={"target_uid": G1}))
    assert err.value.field == "target"
    with pytest.raises(InputError) as err:
        offline.bdi.update(G1, {"status": "active", "owner": "b"}, updated_by="a")
    assert err.value.field == "owner"


def test_capabilities_and_embedded_only_ports(offline: TypeDBGraphStore) -> None:
    caps = offline.capabilities
    assert (caps.shared, caps.recursive_paths, caps.full_text, caps.system_time_history, caps.outbox, caps.memory) == (
        True, True, False, False, False, False)  # fmt: skip
    for port in ("memory", "rules", "cases", "proposals", "embeddings", "index_queue", "outbox", "conversations",
                 "summaries"):  # fmt: skip
        with pytest.raises(BackendError, match=f"typedb: {port} stays in the embedded store"):
            getattr(offline, port)
    offline.close()  # closes nothing: the driver is shared by the process
