"""TypeDB adapters of the BDI node and relation ports, with path search over fetched candidates.

Semantics mirror :mod:`kg.store.sqlite.graph` (roles from :data:`~kg.models.RELATION_SPECS`, NotFoundError for
unknown ends, ConflictError for duplicates, scope filtering). Writes are the outbox replay's queries for the
same change (:func:`~kg.store.typedb.agents.record_writes`), so the layout is the replay's.

**Paths** are not recursive TypeQL functions: :meth:`TypeDBRelationStore.paths` fetches, in one read
transaction, the visible nodes of each kind the path names (one typed query per kind) and every stored edge
of the relation kinds that could join two consecutive kinds (one typed query per relation kind, plus the
``derived-from-uid`` lineage when ``derived-from`` could), then :func:`~kg.store.typedb.paths.find_paths`
enumerates every path in Python, sorts and cuts at ``limit``: the same algorithm and order for any limit
as the embedded store's recursive CTE. Its cost grows with the number of edges of those kinds.

Graph nodes are what the embedded store's ``graph_nodes`` view holds: agents, BDI nodes, memory items
(kind ``memory:<type>``) and live facts. A record whose type is none of these (a case, a rule, an instance
of an ontology subtype) is not a graph node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from kg.clock import Clock
from kg.errors import ConflictError, NotFoundError
from kg.models import NODE_MODELS, RELATION_SPECS, BDINode, GraphPath, NodeKind, Relation, RelationKind
from kg.models.bdi import changed_node, check_link_end, check_node_changes, check_path_kinds, link_ends
from kg.ports import NODE_LIMIT, NodeFilter, PathSearch
from kg.store.typedb.agents import (
    agent_count_query,
    apply,
    count_of,
    count_query,
    fetch_body,
    query,
    record_writes,
    run,
    scope_filter,
    uid_count_query,
    values,
)
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.literals import encode_integer, encode_label, encode_string
from kg.store.typedb.paths import (
    STORED_KINDS,
    edge_from_doc,
    edges_query,
    find_paths,
    lineage_from_doc,
    lineage_query,
    needed_relation_kinds,
    path_node_from_doc,
    path_nodes_query,
)
from kg.store.typedb.writes import node_type

#: Fetch keys of a BDI node -> attributes (every kind; plan steps add ``sequence``).
NODE_FIELDS = (
    ("uid", "uid"), ("agent_id", "agent-id"), ("scope", "record-scope"), ("content", "has-content"),
    ("status", "node-status"), ("certainty", "certainty-score"), ("priority", "priority"),
    ("urgency", "urgency-score"), ("progress", "progress-score"), ("deadline", "deadline"),
    ("hierarchy_level", "hierarchy-level"), ("created_at", "created-at"), ("updated_at", "updated-at"),
)  # fmt: skip
_NODE_DATETIMES = ("deadline", "created_at", "updated_at")
#: Fetch keys of a stored relation.
RELATION_FIELDS = (("uid", "uid"), ("agent_id", "agent-id"), ("scope", "record-scope"), ("created_at", "created-at"))
#: Graph node kind of each entity type (memory items: ``memory:<memory-type>``).
TYPE_KINDS = {"agent": "agent", "fact": "fact", **{node_type(k.value): k.value for k in NodeKind}}
MEMORY_TYPES = frozenset({"memory-item", "skill", "decision"})


# ------------------------------------------------------------------------------ BDI nodes


def node_fields(kind: NodeKind) -> tuple[tuple[str, str], ...]:
    """The fetch keys of a node of ``kind``."""
    return (*NODE_FIELDS, ("sequence", "sequence-number")) if kind is NodeKind.PLAN_STEP else NODE_FIELDS


def node_query(kind: NodeKind, uid: str) -> str:
    """The node of ``kind`` with ``uid`` (no answer when the uid is another kind's)."""
    match = [f"$x isa {encode_label(node_type(kind.value))}, has uid {encode_string(uid, 'uid')};"]
    return query(match, fetch_body("$x", node_fields(kind)))


def nodes_query(kind: NodeKind, *, scopes: Sequence[str], agent_id: str | None, status: str | None,
                limit: int | None) -> str:  # fmt: skip
    """The first ``limit`` nodes of ``kind`` in ``scopes`` by (created_at, uid), filtered by owner and status."""
    match = [f"$x isa {encode_label(node_type(kind.value))}, has uid $uid, has created-at $created, "
             "has record-scope $scope;", *scope_filter("$scope", scopes)]  # fmt: skip
    if agent_id is not None:
        match.append(f"$x has agent-id {encode_string(agent_id, 'agent_id')};")
    if status is not None:
        match.append(f"$x has node-status {encode_string(status, 'status')};")
    tail = "sort $created, $uid;\n" + (f"limit {encode_integer(limit, 'limit')};\n" if limit is not None else "")
    return query(match, tail + fetch_body("$x", node_fields(kind)))


def node_from_doc(kind: NodeKind, doc: dict[str, Any]) -> BDINode:
    """A node from its fetched document (an absent attribute is None, not the model's default)."""
    data = values(doc, _NODE_DATETIMES, keep_null=True)
    for key in ("priority", "sequence"):
        if data.get(key) is not None:
            data[key] = int(data[key])
    return NODE_MODELS[kind].model_validate({**data, "kind": kind})


def _get_node(tx: Any, uid: str) -> BDINode | None:
    for kind in NodeKind:
        docs = TypeDBClient.answers(tx, node_query(kind, uid))
        if docs:
            return node_from_doc(kind, docs[0])
    return None


def _not_found(uid: str) -> NotFoundError:
    return NotFoundError(f"uid: no belief, desire, goal, intention, plan or step {uid!r}")


def _commit_new(
    tx: Any, writes: Sequence[str], taken: Sequence[Any], agents: Sequence[Any], *, uid: str, agent_id: str
) -> None:
    """Write a new node or relation and commit: ConflictError when ``taken`` (the rows holding its uid) is not
    empty, NotFoundError when ``agents`` (the rows of its agent) is."""
    if count_of(taken):
        raise ConflictError(f"uid: a record {uid!r} already exists")
    if not count_of(agents):
        raise NotFoundError(f"agent_id: no agent {agent_id!r}")
    apply(tx, writes)
    tx.commit()


class TypeDBBDIStore:
    """Beliefs, desires, goals, intentions, plans and plan steps in the shared TypeDB graph."""

    def __init__(self, client: TypeDBClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def add(self, node: BDINode) -> BDINode:
        """Store a new node: ConflictError if its uid is taken, NotFoundError for an unknown agent."""
        data = node.model_dump(mode="json")
        writes = record_writes(node.kind.value, data, agent_id=node.agent_id, now=self.clock.now())
        with self.client.transaction("write", "add node") as tx:
            taken, agents = run(tx, [uid_count_query(node.uid), agent_count_query(node.agent_id)])
            _commit_new(tx, writes, taken, agents, uid=node.uid, agent_id=node.agent_id)
        return node

    def get(self, uid: str) -> BDINode:
        """One node by uid, or NotFoundError."""
        with self.client.transaction("read", "get node") as tx:
            node = _get_node(tx, uid)
        if node is None:
            raise _not_found(uid)
        return node

    def list(self, **where: Unpack[NodeFilter]) -> list[BDINode]:
        """Nodes in ``scopes`` filtered by kind, owner and status, ordered by (created_at, uid)."""
        scopes, kind, limit = where["scopes"], where.get("kind"), where.get("limit", NODE_LIMIT)
        kinds = [kind] if kind is not None else list(NodeKind)
        if limit == 0:
            scope_filter("$scope", scopes)
            return []
        cap = limit if limit > 0 else None  # a negative limit is no limit, as in SQLite
        agent_id, status = where.get("agent_id"), where.get("status")
        queries = [nodes_query(k, scopes=scopes, agent_id=agent_id, status=status, limit=cap) for k in kinds]
        with self.client.transaction("read", "list nodes") as tx:
            answers = [TypeDBClient.answers(tx, q) for q in queries]
        nodes = [node_from_doc(k, d) for k, docs in zip(kinds, answers, strict=True) for d in docs]
        nodes.sort(key=lambda n: (n.created_at, n.uid))
        return nodes[:cap] if cap is not None else nodes

    def update(self, uid: str, changes: dict[str, Any], *, updated_by: str) -> BDINode:
        """Validate and apply ``changes`` to mutable fields in one write transaction; return the node."""
        check_node_changes(changes)
        with self.client.transaction("write", "update node") as tx:
            current = _get_node(tx, uid)
            if current is None:
                raise _not_found(uid)
            now = self.clock.now()
            node = changed_node(current, changes, now)
            apply(tx, record_writes(node.kind.value, node.model_dump(mode="json"), agent_id=updated_by, now=now))
            tx.commit()
        return node


# ------------------------------------------------------------------------------ relations


def _roles(kind: RelationKind) -> str:
    spec = RELATION_SPECS[kind]
    return f"links ({encode_label(spec.source_role, 'role')}: $s, {encode_label(spec.target_role, 'role')}: $t)"


def relations_query(kind: RelationKind, uid: str, scopes: Sequence[str]) -> str:
    """Edges of ``kind`` from or to ``uid`` whose own scope is one of ``scopes``."""
    key = encode_string(uid, "uid")
    match = [f"$r isa {encode_label(kind.value)}, {_roles(kind)}, has record-scope $scope;",
             f"{{ $s has uid {key}; }} or {{ $t has uid {key}; }};", "$s has uid $source;", "$t has uid $target;",
             *scope_filter("$scope", scopes)]  # fmt: skip
    fields = (*RELATION_FIELDS, ("source_uid", "$source"), ("target_uid", "$target"))
    lines = ",\n".join(f'  "{k}": {a if a.startswith("$") else "$r." + a}' for k, a in fields)
    return query(match, f"fetch {{\n{lines}\n}};\n")


def relation_from_doc(kind: RelationKind, doc: dict[str, Any]) -> Relation:
    """A relation from its fetched document."""
    return Relation.model_validate({**values(doc, ("created_at",)), "kind": kind})


def duplicate_query(kind: RelationKind, source_uid: str, target_uid: str) -> str:
    """Stored edges of ``kind`` from ``source_uid`` to ``target_uid`` (0 or 1)."""
    return count_query([f"$s isa record, has uid {encode_string(source_uid, 'source')};",
                        f"$t isa record, has uid {encode_string(target_uid, 'target')};",
                        f"$r isa {encode_label(kind.value)}, {_roles(kind)};"])  # fmt: skip


def owner_query(uid: str) -> str:
    """Rows ``{"r": {"type": label, "iid": ...}}`` of whatever owns ``uid`` (a record or a relation)."""
    return query([f"$r has uid {encode_string(uid, 'uid')};"], "select $r;\n")


def unlink_query(kind: RelationKind, uid: str) -> str:
    """Delete the edge of ``kind`` with ``uid``."""
    return query([f"$r isa {encode_label(kind.value)}, has uid {encode_string(uid, 'uid')};"], "delete\n  $r;\n")


def node_info_query(uid: str) -> str:
    """Rows ``{"x": {"type": label, ...}, "scope": scope}`` of the record ``uid`` unless a retracted fact."""
    match = [f"$x isa record, has uid {encode_string(uid, 'uid')}, has record-scope $scope;",
             "not { $x has retracted-at $gone; };"]  # fmt: skip
    return query(match, "select $x, $scope;\n")


def memory_type_query(uid: str) -> str:
    """Rows ``{"type": memory type}`` of the memory item ``uid``."""
    match = f"$x isa memory-item, has uid {encode_string(uid, 'uid')}, has memory-type $type;"
    return query([match], "select $type;\n")


def node_kind(type_label: str, memory_type: str | None = None) -> str | None:
    """The graph node kind of an instance of ``type_label`` (None when such records are not graph nodes)."""
    if type_label in MEMORY_TYPES:
        return f"memory:{memory_type}" if memory_type else None
    return TYPE_KINDS.get(type_label)


def _node_info(tx: Any, uid: str) -> tuple[str, str] | None:
    rows = TypeDBClient.answers(tx, node_info_query(uid))
    if not rows:
        return None
    label, scope = str(rows[0]["x"]["type"]), str(rows[0]["scope"])
    memory = None
    if label in MEMORY_TYPES:
        found = TypeDBClient.answers(tx, memory_type_query(uid))
        memory = str(found[0]["type"]) if found else None
    kind = node_kind(label, memory)
    return (kind, scope) if kind is not None else None


def _check_paths(kinds: Sequence[str], scopes: Sequence[str]) -> None:
    check_path_kinds(kinds)
    scope_filter("$scope", scopes)


class TypeDBRelationStore:
    """Typed edges and traversals in the shared TypeDB graph."""

    def __init__(self, client: TypeDBClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def node_info(self, uid: str) -> tuple[str, str] | None:
        """(kind, scope) of any graph node by uid (kinds ``goal``, ``fact``, ``memory:skill`` ...), else None."""
        with self.client.transaction("read", "node info") as tx:
            return _node_info(tx, uid)

    def link(self, relation: Relation) -> Relation:
        """Store an edge whose ends exist and play the relation's roles."""
        ends = link_ends(relation)
        writes = record_writes("relation", relation.model_dump(mode="json"), agent_id=relation.agent_id,
                               now=self.clock.now())  # fmt: skip
        with self.client.transaction("write", "link") as tx:
            for uid, role, allowed in ends:
                info = _node_info(tx, uid)
                check_link_end(relation, uid, role, allowed, info[0] if info else None)
            checks = [duplicate_query(relation.kind, relation.source_uid, relation.target_uid),
                      count_query([f"$r has uid {encode_string(relation.uid, 'uid')};"]),
                      agent_count_query(relation.agent_id)]  # fmt: skip
            duplicate, taken, agents = run(tx, checks)
            if count_of(duplicate):
                edge = f"{relation.source_uid} {relation.kind.value} {relation.target_uid}"
                raise ConflictError(f"relation: {edge} exists")
            _commit_new(tx, writes, taken, agents, uid=relation.uid, agent_id=relation.agent_id)
        return relation

    def unlink(self, uid: str, *, removed_by: str) -> None:
        """Delete an edge; NotFoundError when no relation has this uid."""
        with self.client.transaction("write", "unlink") as tx:
            labels = {str(row["r"]["type"]) for row in TypeDBClient.answers(tx, owner_query(uid)) if row.get("r")}
            kinds = [k for k in STORED_KINDS if k.value in labels]
            if not kinds:
                raise NotFoundError(f"relation: no relation {uid!r}")
            apply(tx, [unlink_query(kinds[0], uid)])
            tx.commit()

    def relations(self, uid: str, *, scopes: Sequence[str]) -> list[Relation]:
        """Edges from or to ``uid`` in visible scopes, ordered by (created_at, uid)."""
        queries = [(kind, relations_query(kind, uid, scopes)) for kind in STORED_KINDS]
        with self.client.transaction("read", "relations") as tx:
            found = [relation_from_doc(kind, d) for kind, q in queries for d in TypeDBClient.answers(tx, q)]
        return sorted(found, key=lambda r: (r.created_at, r.uid))

    def paths(self, kinds: Sequence[str], **options: Unpack[PathSearch]) -> list[GraphPath]:
        """Paths whose node kinds follow ``kinds`` (edges in either direction, no node twice)."""
        scopes, relation = options["scopes"], options.get("relation")
        _check_paths(kinds, scopes)
        node_queries = {k: path_nodes_query(k, scopes) for k in dict.fromkeys(kinds)}
        if any(q is None for q in node_queries.values()):
            return []  # a kind no graph node has: no path
        relation_kinds = needed_relation_kinds(kinds, relation)
        with self.client.transaction("read", "paths") as tx:
            nodes = {n.uid: n for k, q in node_queries.items() if q is not None
                     for n in (path_node_from_doc(k, d) for d in TypeDBClient.answers(tx, q))}  # fmt: skip
            edges = [edge_from_doc(k, d) for k in relation_kinds for d in TypeDBClient.answers(tx, edges_query(k))]
            if RelationKind.DERIVED_FROM in relation_kinds:
                edges += [lineage_from_doc(d) for d in TypeDBClient.answers(tx, lineage_query())]
        return find_paths(kinds, nodes, edges, **options)


__all__ = [
    "NODE_FIELDS",
    "TypeDBBDIStore",
    "TypeDBRelationStore",
    "duplicate_query",
    "memory_type_query",
    "node_from_doc",
    "node_info_query",
    "node_kind",
    "node_query",
    "nodes_query",
    "owner_query",
    "relation_from_doc",
    "relations_query",
    "unlink_query",
]
