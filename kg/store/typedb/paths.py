"""Path queries of the TypeDB relation adapter: candidate fetches in TypeQL, the search in Python.

A path query names node kinds in order (``belief, goal, plan``). Instead of recursive TypeQL functions, the
adapter fetches with typed, non-recursive queries (each golden-tested):

* the visible nodes of every kind named (:func:`path_nodes_query`: agents, BDI nodes, live facts, memory items
  of a type or of any type), with their scope and label;
* every stored edge, in any scope, of each relation kind that could join two consecutive kinds by
  :data:`~kg.models.RELATION_SPECS` (:func:`needed_relation_kinds`, :func:`edges_query`): an edge of an
  unreadable scope still matters, because it hides the step between its two ends;
* the ``derived-from-uid`` lineage when ``derived-from`` could join two kinds (:func:`lineage_query`).

:func:`find_paths` then walks them exactly as the embedded store's recursive CTE does (kg/store/sqlite/graph.py):
edges are followed in either direction, a node never appears twice, every node must be in a visible scope,
a step is refused when a stored relation of the step's kind between its two ends has an unreadable scope,
lineage edges are kind ``derived-from``, and the result is every path sorted by (nodes, relations) and cut at
``limit``, so the answer is the same for any limit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from kg.models import RELATION_SPECS, GraphPath, NodeKind, RelationKind
from kg.models.bdi import MAX_PATH_LENGTH
from kg.ports import PATH_LIMIT
from kg.store.typedb.agents import query, scope_filter
from kg.store.typedb.literals import encode_label, encode_string
from kg.store.typedb.writes import node_type

#: Relation kinds that can be stored (agent-owns is implied by each record's agent_id and never stored).
STORED_KINDS = tuple(k for k in RelationKind if k is not RelationKind.AGENT_OWNS)
LINEAGE_KIND = RelationKind.DERIVED_FROM.value


@dataclass(frozen=True)
class PathNode:
    """A graph node as a path sees it."""

    uid: str
    kind: str
    scope: str
    label: str


@dataclass(frozen=True)
class Edge:
    """A stored relation (with its scope) or a lineage link (scope None), as (source, target)."""

    kind: str
    source: str
    target: str
    scope: str | None = None


def kind_fits(node_kind: str, wanted: str) -> bool:
    """Whether a node of ``node_kind`` fills a path position of ``wanted`` (``memory`` takes ``memory:skill``)."""
    return node_kind == wanted or node_kind.startswith(wanted + ":")


def _compatible(wanted: str, spec_kinds: Iterable[str]) -> bool:
    """Whether some node kind both fills ``wanted`` and plays a role open to ``spec_kinds``."""
    return any(kind_fits(wanted, s) or kind_fits(s, wanted) for s in spec_kinds)


def needed_relation_kinds(kinds: Sequence[str], relation: RelationKind | None) -> list[RelationKind]:
    """The stored relation kinds that could join two consecutive ``kinds`` (either way), only ``relation``'s."""
    needed: list[RelationKind] = []
    for kind in STORED_KINDS if relation is None else [relation]:
        spec = RELATION_SPECS[kind]
        if kind in STORED_KINDS and any(
            (_compatible(a, spec.source_kinds) and _compatible(b, spec.target_kinds))
            or (_compatible(a, spec.target_kinds) and _compatible(b, spec.source_kinds))
            for a, b in pairwise(kinds)
        ):
            needed.append(kind)
    return needed


# ------------------------------------------------------------------------------ queries


def path_nodes_query(kind: str, scopes: Sequence[str]) -> str | None:
    """The nodes of a path kind in ``scopes`` as ``{uid, scope, label, ...}``; None for a kind no node has."""
    scope = scope_filter("$scope", scopes)
    common = "has uid $uid, has record-scope $scope"
    keys = ['"uid": $uid', '"scope": $scope']
    if kind == "agent" or kind in NodeKind._value2member_map_:
        label_attr, label = ("agent-name", "agent") if kind == "agent" else ("has-content", node_type(kind))
        match = [f"$x isa {encode_label(label)}, {common}, has {label_attr} $label;", *scope]
        keys.append('"label": $label')
    elif kind == "fact":
        match = [f"$x isa fact, {common}, has subject-term $subject, has predicate-term $predicate, "
                 "has object-value $object;", "not { $x has retracted-at $gone; };", *scope]  # fmt: skip
        keys += ['"subject": $subject', '"predicate": $predicate', '"object": $object']
    elif kind == "memory" or kind.startswith("memory:"):
        match = [f"$x isa memory-item, {common}, has has-content $label, has memory-type $type;", *scope]
        if kind != "memory":
            match.append(f"$type == {encode_string(kind.removeprefix('memory:'), 'kinds')};")
        keys += ['"label": $label', '"type": $type']
    else:
        return None
    return query(match, "fetch {\n" + ",\n".join(f"  {k}" for k in keys) + "\n};\n")


def edges_query(kind: RelationKind) -> str:
    """Every stored edge of ``kind`` as ``{source, target, scope}`` (every scope: see the module docstring)."""
    spec = RELATION_SPECS[kind]
    roles = f"{encode_label(spec.source_role, 'role')}: $s, {encode_label(spec.target_role, 'role')}: $t"
    match = [f"$r isa {encode_label(kind.value)}, links ({roles}), has record-scope $scope;",
             "$s has uid $source;", "$t has uid $target;"]  # fmt: skip
    return query(match, 'fetch {\n  "source": $source,\n  "target": $target,\n  "scope": $scope\n};\n')


def lineage_query() -> str:
    """Every lineage link ``{child, parent}`` (a record's ``derived-from-uid`` values)."""
    match = ["$c isa record, has uid $child, has derived-from-uid $parent;"]
    return query(match, 'fetch {\n  "child": $child,\n  "parent": $parent\n};\n')


def path_node_from_doc(wanted: str, doc: Mapping[str, Any]) -> PathNode:
    """A node from a document of ``path_nodes_query(wanted, ...)`` (memory items: kind ``memory:<type>``)."""
    if wanted == "fact":
        return PathNode(doc["uid"], "fact", doc["scope"], f"{doc['subject']} {doc['predicate']} {doc['object']}")
    kind = f"memory:{doc['type']}" if wanted == "memory" or wanted.startswith("memory:") else wanted
    return PathNode(doc["uid"], kind, doc["scope"], doc["label"])


def edge_from_doc(kind: RelationKind, doc: Mapping[str, Any]) -> Edge:
    """A stored edge from an :func:`edges_query` document."""
    return Edge(kind.value, doc["source"], doc["target"], doc.get("scope"))


def lineage_from_doc(doc: Mapping[str, Any]) -> Edge:
    """A lineage link (child -> parent) from a :func:`lineage_query` document."""
    return Edge(LINEAGE_KIND, doc["child"], doc["parent"])


# ------------------------------------------------------------------------------ search


def find_paths(
    kinds: Sequence[str],
    nodes: Mapping[str, PathNode],
    edges: Iterable[Edge],
    *,
    scopes: Sequence[str],
    start_uid: str | None = None,
    relation: RelationKind | None = None,
    limit: int = PATH_LIMIT,
) -> list[GraphPath]:
    """Every path over ``nodes`` and ``edges`` whose node kinds follow ``kinds``, sorted, cut at ``limit``."""
    visible = set(scopes)
    adjacent: dict[str, list[tuple[str, str]]] = defaultdict(list)
    hidden: set[tuple[str, frozenset[str]]] = set()
    for edge in edges:
        if relation is not None and edge.kind != relation.value:
            continue
        adjacent[edge.source].append((edge.kind, edge.target))
        adjacent[edge.target].append((edge.kind, edge.source))
        if edge.scope is not None and edge.scope not in visible:
            hidden.add((edge.kind, frozenset((edge.source, edge.target))))

    def fits(uid: str, depth: int) -> bool:
        node = nodes.get(uid)
        return node is not None and node.scope in visible and kind_fits(node.kind, kinds[depth])

    found: list[tuple[list[str], list[str]]] = []

    def walk(path: list[str], rels: list[str]) -> None:
        if len(path) == len(kinds):
            found.append((path, rels))
            return
        for kind, nxt in adjacent.get(path[-1], ()):
            if nxt not in path and fits(nxt, len(path)) and (kind, frozenset((path[-1], nxt))) not in hidden:
                walk([*path, nxt], [*rels, kind])

    for uid in nodes:
        if (not start_uid or uid == start_uid) and fits(uid, 0):
            walk([uid], [])
    found.sort()
    kept = found[:limit] if limit >= 0 else found  # a negative LIMIT is no limit in SQLite
    return [GraphPath(nodes=path, relations=rels, kinds=[nodes[u].kind for u in path],
                      labels=[nodes[u].label for u in path]) for path, rels in kept]  # fmt: skip


__all__ = [
    "LINEAGE_KIND",
    "MAX_PATH_LENGTH",
    "STORED_KINDS",
    "Edge",
    "PathNode",
    "edge_from_doc",
    "edges_query",
    "find_paths",
    "kind_fits",
    "lineage_from_doc",
    "lineage_query",
    "needed_relation_kinds",
    "path_node_from_doc",
    "path_nodes_query",
]
