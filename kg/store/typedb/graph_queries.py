"""TypeDB adapter of :class:`kg.ports.GraphQueryBackend`: TypeQL 3 read queries for ``mabos graph query``.

The queries follow the record layout of the outbox writer (``docs/typedb-schema.md``, base schema
``schema/typedb/base.tql``): record entities keyed by ``uid`` with ``agent-id``, ``record-scope`` and
``created-at``; relations named by :class:`~kg.models.RelationKind` with the roles of
:data:`~kg.models.RELATION_SPECS`; lineage as ``derived-from-uid`` attributes plus ``derived-from`` relations.

Every value enters the query text through :mod:`kg.store.typedb.literals` (never by concatenation), and
the query builders are pure functions, tested as golden text (``tests/data/typedb/graph_queries``). The
queries run through any :class:`TypeDBReader` (a read transaction returning fetch documents); this module
does not import the driver. Timestamps come back as ``YYYY-MM-DDTHH:MM:SS.fffffffff`` (UTC).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from kg.errors import BackendUnavailableError, InputError
from kg.models import RELATION_SPECS, NodeKind, RelationKind
from kg.ports import GraphEdgeRow, GraphNodeRow, LineageRecordRow
from kg.ports.graph_queries import OPEN_GOAL_STATUSES
from kg.store.typedb.literals import encode_label, encode_string

#: Values per disjunction: long ``or`` chains are split over several queries.
BATCH = 100
_NODE_ATTRIBUTES = (
    ("uid", "uid"), ("agent_id", "agent-id"), ("scope", "record-scope"), ("content", "has-content"),
    ("status", "node-status"), ("certainty", "certainty-score"), ("priority", "priority"),
    ("progress", "progress-score"), ("deadline", "deadline"), ("created_at", "created-at"),
)  # fmt: skip
_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]00:?00)?\Z")


class TypeDBReader(Protocol):
    """What this adapter needs from a TypeDB client: run one read query, return its fetch documents."""

    def read(self, query: str) -> list[dict[str, Any]]:
        """Run ``query`` in a read transaction and return every fetched document (JSON objects)."""
        ...


def _type_label(kind: str) -> str:
    return encode_label(kind.replace("_", "-"), "kind")


def one_of(variable: str, values: Sequence[str], field: str = "value") -> str:
    """``$v == "a";`` or ``{ $v == "a"; } or { $v == "b"; };``: the variable equals one of the values."""
    if not values:
        raise InputError(field, "at least one value is needed")
    tests = [f"{variable} == {encode_string(v, field)};" for v in values]
    return tests[0] if len(tests) == 1 else " or ".join(f"{{ {t} }}" for t in tests) + ";"


def _scoped(variable: str, scopes: Sequence[str] | None) -> list[str]:
    if scopes is None:
        return []
    return [f"{variable} has record-scope {variable}_scope;", one_of(f"{variable}_scope", scopes, "scopes")]


def _node_fetch(variable: str, indent: str) -> str:
    return ",\n".join(f'{indent}"{key}": {variable}.{attr}' for key, attr in _NODE_ATTRIBUTES)


def _query(match: Sequence[str], fetch: str) -> str:
    return "match\n" + "".join(f"  {line}\n" for line in match) + f"fetch {{\n{fetch}\n}};\n"


def nodes_query(kind: NodeKind, statuses: Sequence[str], scopes: Sequence[str] | None, *,
                with_deadline: bool = False) -> str:  # fmt: skip
    """BDI nodes of ``kind`` with one of ``statuses`` (and a deadline when asked) in ``scopes``."""
    match = [f"$n isa {_type_label(kind.value)}, has node-status $status;", one_of("$status", statuses, "status")]
    if with_deadline:
        match.append("$n has deadline $deadline;")
    return _query([*match, *_scoped("$n", scopes)], _node_fetch("$n", "  "))


def edges_query(kind: RelationKind, scopes: Sequence[str] | None, sources: Sequence[str] | None = None) -> str:
    """Relations of ``kind`` whose edge and both ends are in ``scopes`` (leaving ``sources`` when given)."""
    spec = RELATION_SPECS[kind]
    roles = f"{encode_label(spec.source_role, 'role')}: $s, {encode_label(spec.target_role, 'role')}: $t"
    match = [f"$r isa {encode_label(kind.value, 'relation')}, links ({roles});", "$s has uid $source_uid;"]
    if sources is not None:
        match.append(one_of("$source_uid", sources, "sources"))
    for variable in ("$r", "$s", "$t"):
        match += _scoped(variable, scopes)
    fetch = (f'  "uid": $r.uid,\n  "scope": $r.record-scope,\n  "source": {{\n{_node_fetch("$s", "    ")}\n  }},\n'
             f'  "target": {{\n{_node_fetch("$t", "    ")}\n  }}')  # fmt: skip
    return _query(match, fetch)


def lineage_queries(uids: Sequence[str], direction: str) -> list[str]:
    """One step of lineage from ``uids``: links through ``derived-from-uid`` and ``derived-from`` relations."""
    if direction not in ("ancestors", "descendants"):
        raise InputError("direction", f"must be ancestors or descendants, got {direction!r}")
    near = "$child" if direction == "ancestors" else "$parent"
    fetch = '  "child": $child,\n  "parent": $parent'
    by_attribute = ["$c isa record, has uid $child, has derived-from-uid $parent;", one_of(near, uids, "uid")]
    by_relation = ["$r isa derived-from, links (derived: $c, source: $p);", "$c has uid $child;",
                   "$p has uid $parent;", one_of(near, uids, "uid")]  # fmt: skip
    return [_query(by_attribute, fetch), _query(by_relation, fetch)]


def record_queries(uids: Sequence[str]) -> list[str]:
    """Facts and memory items with these uids."""
    common = '  "uid": $u,\n  "agent_id": $x.agent-id,\n  "scope": $x.record-scope,\n  "created_at": $x.created-at,\n'
    fact = common + ('  "subject": $x.subject-term,\n  "predicate": $x.predicate-term,\n  "object": $x.object-value,\n'
                     '  "retracted_at": $x.retracted-at')  # fmt: skip
    memory = common + '  "content": $x.has-content,\n  "type": $x.memory-type'
    return [
        _query(["$x isa fact, has uid $u;", one_of("$u", uids, "uid")], fact),
        _query(["$x isa memory-item, has uid $u;", one_of("$u", uids, "uid")], memory),
    ]


def parse_datetime(value: Any) -> datetime | None:
    """A fetched ``datetime`` (``1999-02-26T12:15:05.000000000``, UTC) as an aware datetime (microseconds)."""
    if value is None:
        return None
    match = _DATETIME.match(str(value))
    if match is None:
        raise BackendUnavailableError(f"typedb: unexpected datetime {str(value)[:40]!r} in a query answer")
    micros = (match.group(2) or "").ljust(6, "0")[:6]
    return datetime.fromisoformat(f"{match.group(1)}.{micros}").replace(tzinfo=UTC)


def _node(doc: dict[str, Any], kind: str) -> GraphNodeRow:
    priority = doc.get("priority")
    return GraphNodeRow(
        uid=doc["uid"], kind=kind, agent_id=doc["agent_id"], scope=doc["scope"], content=doc["content"],
        status=doc["status"], certainty=doc.get("certainty"), priority=int(priority) if priority is not None else None,
        progress=doc.get("progress"), deadline=parse_datetime(doc.get("deadline")),
        created_at=parse_datetime(doc.get("created_at")),
    )  # fmt: skip


def _record(doc: dict[str, Any], kind: str, label: str) -> LineageRecordRow:
    return LineageRecordRow(uid=doc["uid"], kind=kind, agent_id=doc["agent_id"], scope=doc["scope"], label=label,
                            created_at=parse_datetime(doc["created_at"]) or datetime.min.replace(tzinfo=UTC),
                            retracted=doc.get("retracted_at") is not None)  # fmt: skip


def _batches(values: Sequence[str]) -> list[Sequence[str]]:
    unique = sorted(set(values))
    return [unique[i : i + BATCH] for i in range(0, len(unique), BATCH)]


class TypeDBGraphQueries:
    """Graph-query candidates from the shared TypeDB graph (``source`` ``typedb``)."""

    source = "typedb"

    def __init__(self, client: TypeDBReader) -> None:
        self.client = client

    def open_goals(self, *, scopes: Sequence[str] | None) -> list[GraphNodeRow]:
        """Goals with a deadline and a non-final status."""
        docs = self.client.read(nodes_query(NodeKind.GOAL, OPEN_GOAL_STATUSES, scopes, with_deadline=True))
        return sorted((_node(d, "goal") for d in docs), key=lambda n: n.uid)

    def active_beliefs(self, *, scopes: Sequence[str] | None) -> list[GraphNodeRow]:
        """Active beliefs."""
        docs = self.client.read(nodes_query(NodeKind.BELIEF, ("active",), scopes))
        return sorted((_node(d, "belief") for d in docs), key=lambda n: n.uid)

    def edges(
        self, kind: RelationKind, *, scopes: Sequence[str] | None, sources: Sequence[str] | None = None
    ) -> list[GraphEdgeRow]:
        """Relations of ``kind`` between visible BDI nodes (leaving ``sources`` when given)."""
        spec = RELATION_SPECS[kind]
        ends = (spec.source_kinds[0], spec.target_kinds[0])
        if kind is RelationKind.AGENT_OWNS or not all(k in NodeKind._value2member_map_ for k in ends):
            raise InputError("relation", f"{kind.value} does not link BDI nodes")
        queries = [edges_query(kind, scopes, None)] if sources is None else [
            edges_query(kind, scopes, chunk) for chunk in _batches(sources)]  # fmt: skip
        docs = [d for q in queries for d in self.client.read(q)]
        rows = [GraphEdgeRow(uid=d["uid"], kind=kind.value, scope=d["scope"], source=_node(d["source"], ends[0]),
                             target=_node(d["target"], ends[1])) for d in docs]  # fmt: skip
        return sorted(rows, key=lambda e: (e.source.uid, e.target.uid))

    def lineage_links(self, uids: Sequence[str], *, direction: str, max_depth: int) -> list[tuple[str, str]]:
        """(child, parent) links within ``max_depth`` steps, breadth-first, one step per round of queries."""
        links: set[tuple[str, str]] = set()
        seen, frontier = set(uids), sorted(set(uids))
        for _ in range(max_depth):
            if not frontier:
                break
            found = {(d["child"], d["parent"]) for chunk in _batches(frontier)
                     for q in lineage_queries(chunk, direction) for d in self.client.read(q)}  # fmt: skip
            links |= found
            far = {p if direction == "ancestors" else c for c, p in found}
            frontier = sorted(far - seen)
            seen |= far
        return sorted(links)

    def lineage_records(self, uids: Sequence[str]) -> list[LineageRecordRow]:
        """Facts and memory items by uid."""
        rows: list[LineageRecordRow] = []
        for chunk in _batches(uids) if uids else []:
            facts, memories = (self.client.read(q) for q in record_queries(chunk))
            rows += [_record(d, "fact", f"{d['subject']} {d['predicate']} {d['object']}") for d in facts]
            rows += [_record(d, f"memory:{d['type']}", d["content"]) for d in memories]
        return sorted(rows, key=lambda r: r.uid)
