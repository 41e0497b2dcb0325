"""SQLite adapter of :class:`kg.ports.GraphQueryBackend`: candidate rows for ``mabos graph query``.

Only SQL lives here; the catalogue (``reasoning/graph_queries.py``) turns the rows into answers.
Lineage is a recursive CTE over the ``lineage`` table and ``derived-from`` relations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.models import NodeKind, RelationKind
from kg.ports import GraphEdgeRow, GraphNodeRow, LineageRecordRow
from kg.ports.graph_queries import OPEN_GOAL_STATUSES
from kg.store.sqlite.db import SqliteAdapter, marks

_CHUNK = 500  # bound parameters per IN list (SQLite allows 32766; smaller keeps plans simple)
_NODE_FIELDS = "uid, kind, agent_id, scope, content, status, certainty, priority, progress, deadline, created_at"


def _ts(value: Any) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _node(row: Any, prefix: str = "") -> GraphNodeRow:
    return GraphNodeRow(
        uid=row[f"{prefix}uid"], kind=row[f"{prefix}kind"], agent_id=row[f"{prefix}agent_id"],
        scope=row[f"{prefix}scope"], content=row[f"{prefix}content"], status=row[f"{prefix}status"],
        certainty=row[f"{prefix}certainty"], priority=row[f"{prefix}priority"], progress=row[f"{prefix}progress"],
        deadline=_ts(row[f"{prefix}deadline"]), created_at=_ts(row[f"{prefix}created_at"]),
    )  # fmt: skip


def _scope_filter(columns: Sequence[str], scopes: Sequence[str] | None) -> tuple[str, list[Any]]:
    if scopes is None:
        return "1", []
    if not scopes:
        raise InputError("scopes", "at least one scope is needed")
    return " AND ".join(f"{c} IN ({marks(scopes)})" for c in columns), [s for _ in columns for s in scopes]


def _chunks(values: Sequence[str]) -> list[Sequence[str]]:
    return [values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK)]


class SqliteGraphQueries(SqliteAdapter):
    """Graph-query candidates from the embedded store (``source`` ``local``)."""

    source = "local"

    def open_goals(self, *, scopes: Sequence[str] | None) -> list[GraphNodeRow]:
        """Goals with a deadline and a non-final status."""
        return self._nodes(NodeKind.GOAL, OPEN_GOAL_STATUSES, scopes, with_deadline=True)

    def active_beliefs(self, *, scopes: Sequence[str] | None) -> list[GraphNodeRow]:
        """Active beliefs."""
        return self._nodes(NodeKind.BELIEF, ("active",), scopes)

    def _nodes(self, kind: NodeKind, statuses: Sequence[str], scopes: Sequence[str] | None, *,
               with_deadline: bool = False) -> list[GraphNodeRow]:  # fmt: skip
        """BDI nodes of ``kind`` with one of ``statuses`` (and a deadline when asked) in ``scopes``, by uid: the
        SQL twin of the TypeDB adapter's ``nodes_query``."""
        where, params = _scope_filter(("scope",), scopes)
        deadline = "AND deadline IS NOT NULL " if with_deadline else ""
        rows = self.db.read(
            f"SELECT {_NODE_FIELDS} FROM bdi_nodes WHERE kind = ? {deadline}AND status IN ({marks(statuses)}) "
            f"AND {where} ORDER BY uid",
            [kind.value, *statuses, *params],
        )
        return [_node(r) for r in rows]

    def edges(
        self, kind: RelationKind, *, scopes: Sequence[str] | None, sources: Sequence[str] | None = None
    ) -> list[GraphEdgeRow]:
        """Relations of ``kind`` between visible BDI nodes (leaving ``sources`` when given)."""
        if kind in (RelationKind.AGENT_OWNS, RelationKind.DERIVED_FROM):
            raise InputError("relation", f"{kind.value} does not link BDI nodes")
        if sources is not None and not sources:
            return []
        where, params = _scope_filter(("r.scope", "s.scope", "t.scope"), scopes)
        cols = ", ".join(f"{p}.{c.strip()} AS {p}_{c.strip()}" for p in "st" for c in _NODE_FIELDS.split(","))
        sql = (
            f"SELECT r.uid AS r_uid, r.scope AS r_scope, {cols} FROM relations r "
            "JOIN bdi_nodes s ON s.uid = r.source_uid JOIN bdi_nodes t ON t.uid = r.target_uid "
            f"WHERE r.kind = ? AND {where} {{sources}} ORDER BY r.source_uid, r.target_uid"
        )
        rows: list[Any] = []
        for chunk in _chunks(sources) if sources is not None else [None]:
            extra = f"AND r.source_uid IN ({marks(chunk)})" if chunk is not None else ""
            rows += self.db.read(sql.format(sources=extra), [kind.value, *params, *(chunk or [])])
        rows.sort(key=lambda r: (r["s_uid"], r["t_uid"]))
        return [GraphEdgeRow(uid=r["r_uid"], kind=kind.value, scope=r["r_scope"], source=_node(r, "s_"),
                             target=_node(r, "t_")) for r in rows]  # fmt: skip

    def lineage_links(self, uids: Sequence[str], *, direction: str, max_depth: int) -> list[tuple[str, str]]:
        """(child, parent) links within ``max_depth`` steps of ``uids`` (recursive CTE, any scope)."""
        if direction not in ("ancestors", "descendants"):
            raise InputError("direction", f"must be ancestors or descendants, got {direction!r}")
        if not uids:
            return []
        near, far = ("child", "parent") if direction == "ancestors" else ("parent", "child")
        sql = f"""
        WITH RECURSIVE
          links(child, parent) AS (
            SELECT child_uid, parent_uid FROM lineage
            UNION SELECT source_uid, target_uid FROM relations WHERE kind = '{RelationKind.DERIVED_FROM.value}'
          ),
          reach(uid, depth) AS (
            SELECT value, 0 FROM json_each(?)
            UNION SELECT l.{far}, reach.depth + 1 FROM reach JOIN links l ON l.{near} = reach.uid
            WHERE reach.depth < ?
          )
        SELECT DISTINCT l.child, l.parent FROM links l JOIN reach ON l.{near} = reach.uid AND reach.depth < ?
        ORDER BY l.child, l.parent
        """
        rows = self.db.read(sql, [json.dumps(list(uids)), max_depth, max_depth])
        return [(r["child"], r["parent"]) for r in rows]

    def lineage_records(self, uids: Sequence[str]) -> list[LineageRecordRow]:
        """Facts and memory items by uid, in any scope."""
        found: list[LineageRecordRow] = []
        for chunk in _chunks(list(dict.fromkeys(uids))):
            rows = self.db.read(
                f"SELECT uid, 'fact' AS kind, agent_id, scope, subject || ' ' || predicate || ' ' || object AS label, "
                f"created_at, retracted_at IS NOT NULL AS retracted FROM facts WHERE uid IN ({marks(chunk)}) "
                f"UNION ALL SELECT uid, 'memory:' || type, agent_id, scope, content, created_at, 0 FROM memory_items "
                f"WHERE uid IN ({marks(chunk)})",
                [*chunk, *chunk],
            )
            found += [LineageRecordRow(uid=r["uid"], kind=r["kind"], agent_id=r["agent_id"], scope=r["scope"],
                                       label=r["label"], created_at=_ts(r["created_at"]) or datetime.min,
                                       retracted=bool(r["retracted"])) for r in rows]  # fmt: skip
        return sorted(found, key=lambda r: r.uid)
