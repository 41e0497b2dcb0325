"""SQLite adapters of the BDI node and relation ports, with recursive-CTE path queries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Unpack

from kg.errors import ConflictError, NotFoundError
from kg.models import NODE_MODELS, BDINode, GraphPath, NodeKind, Relation
from kg.models.bdi import (
    changed_node,
    check_link_end,
    check_node_changes,
    check_path_kinds,
    link_ends,
)
from kg.ports import NODE_LIMIT, PATH_LIMIT, NodeFilter, PathSearch
from kg.store.sqlite.db import SqliteAdapter, in_clause

_NODE_COLUMNS = (
    "uid", "kind", "agent_id", "scope", "content", "status", "certainty", "priority", "urgency", "progress",
    "deadline", "hierarchy_level", "sequence", "created_at", "updated_at",
)  # fmt: skip


def _node(row: Any) -> BDINode:
    data = {k: row[k] for k in _NODE_COLUMNS}
    return NODE_MODELS[NodeKind(data["kind"])].model_validate(data)


class SqliteBDIStore(SqliteAdapter):
    """Beliefs, desires, goals, intentions, plans and plan steps in the embedded store."""

    def add(self, node: BDINode) -> BDINode:
        """Insert a node and its outbox event."""
        with self.db.write() as conn:
            self.db.insert_record(
                conn,
                f"INSERT INTO bdi_nodes({', '.join(_NODE_COLUMNS)}, updated_by) "
                f"VALUES ({', '.join(':' + c for c in _NODE_COLUMNS)}, :agent_id)",
                node,
                aggregate=node.kind.value,
            )
        return node

    def get(self, uid: str) -> BDINode:
        """One node by uid."""
        rows = self.db.read("SELECT * FROM bdi_nodes WHERE uid = ?", (uid,))
        if not rows:
            raise NotFoundError(f"uid: no belief, desire, goal, intention, plan or step {uid!r}")
        return _node(rows[0])

    def list(self, **where: Unpack[NodeFilter]) -> list[BDINode]:
        """Nodes in ``scopes`` filtered by kind, owner and status."""
        clause, params = in_clause("scope", where["scopes"])
        clauses = [clause]
        kind = where.get("kind")
        for column, value in (
            ("kind", kind.value if kind else None),
            ("agent_id", where.get("agent_id")),
            ("status", where.get("status")),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        rows = self.db.read(
            f"SELECT * FROM bdi_nodes WHERE {' AND '.join(clauses)} ORDER BY created_at, uid LIMIT ?",
            [*params, where.get("limit", NODE_LIMIT)],
        )
        return [_node(r) for r in rows]

    def update(self, uid: str, changes: dict[str, Any], *, updated_by: str) -> BDINode:
        """Validate and apply ``changes`` to mutable fields; one transaction with its outbox event."""
        check_node_changes(changes)
        with self.db.write() as conn:
            node = changed_node(self.get(uid), changes, self.db.clock.now())
            data = node.model_dump(mode="json")
            sets = ", ".join(f"{c} = :{c}" for c in (*sorted(changes), "updated_at"))
            conn.execute(f"UPDATE bdi_nodes SET {sets}, updated_by = :updated_by WHERE uid = :uid",
                         {**data, "updated_by": updated_by})  # fmt: skip
            self.db.outbox(
                conn, aggregate=node.kind.value, op="upsert", record_uid=uid, agent_id=updated_by,
                scope=node.scope, payload=data,
            )  # fmt: skip
        return node


class SqliteRelationStore(SqliteAdapter):
    """Typed edges and traversals in the embedded store."""

    def node_info(self, uid: str) -> tuple[str, str] | None:
        """(kind, scope) of any record by uid."""
        rows = self.db.read("SELECT kind, scope FROM graph_nodes WHERE uid = ?", (uid,))
        return (str(rows[0]["kind"]), str(rows[0]["scope"])) if rows else None

    def link(self, relation: Relation) -> Relation:
        """Insert an edge whose ends exist and play the relation's roles."""
        ends = link_ends(relation)
        with self.db.write() as conn:
            for uid, role, allowed in ends:
                info = self.node_info(uid)
                check_link_end(relation, uid, role, allowed, info[0] if info else None)
            if conn.execute(
                "SELECT 1 FROM relations WHERE kind = ? AND source_uid = ? AND target_uid = ?",
                (relation.kind.value, relation.source_uid, relation.target_uid),
            ).fetchone():
                raise ConflictError(
                    f"relation: {relation.source_uid} {relation.kind.value} {relation.target_uid} exists"
                )
            self.db.insert_record(
                conn,
                "INSERT INTO relations(uid, kind, source_uid, target_uid, agent_id, scope, created_at) "
                "VALUES (:uid, :kind, :source_uid, :target_uid, :agent_id, :scope, :created_at)",
                relation,
                aggregate="relation",
            )
        return relation

    def unlink(self, uid: str, *, removed_by: str) -> None:
        """Delete an edge (the outbox keeps the removal for replay)."""
        with self.db.write() as conn:
            row = conn.execute("DELETE FROM relations WHERE uid = ? RETURNING agent_id, scope", (uid,)).fetchone()
            if row is None:
                raise NotFoundError(f"relation: no relation {uid!r}")
            self.db.outbox(
                conn, aggregate="relation", op="delete", record_uid=uid, agent_id=removed_by, scope=row["scope"],
                payload={"uid": uid, "removed_by": removed_by},
            )  # fmt: skip

    def relations(self, uid: str, *, scopes: Sequence[str]) -> list[Relation]:
        """Edges from or to ``uid`` in visible scopes."""
        clause, params = in_clause("scope", scopes)
        rows = self.db.read(
            f"SELECT * FROM relations WHERE (source_uid = ? OR target_uid = ?) AND {clause} ORDER BY created_at, uid",
            [uid, uid, *params],
        )
        return [Relation.model_validate(dict(r)) for r in rows]

    def paths(self, kinds: Sequence[str], **options: Unpack[PathSearch]) -> list[GraphPath]:
        """Paths whose node kinds follow ``kinds`` (edges in either direction, no node twice)."""
        check_path_kinds(kinds)
        scopes, start_uid, relation = options["scopes"], options.get("start_uid"), options.get("relation")
        node_scope, scope_params = in_clause("n.scope", scopes)
        rel_filter = "AND a.kind = ?" if relation is not None else ""
        kind_rows = ", ".join("(?, ?)" for _ in kinds)
        start_filter = "AND n.uid = ?" if start_uid else ""
        # Every node on the path must be visible; the edge's own scope must be too (relations carry scopes,
        # lineage edges inherit the visibility of their ends).
        sql = f"""
        WITH RECURSIVE
          wanted(depth, kind) AS (VALUES {kind_rows}),
          walk(depth, uid, nodes, rels, kinds, labels) AS (
            SELECT 0, n.uid, json_array(n.uid), json_array(), json_array(n.kind), json_array(n.label)
            FROM graph_nodes n JOIN wanted w ON w.depth = 0
            WHERE (n.kind = w.kind OR n.kind LIKE w.kind || ':%') AND {node_scope} {start_filter}
            UNION ALL
            SELECT walk.depth + 1, n.uid, json_insert(walk.nodes, '$[#]', n.uid),
                   json_insert(walk.rels, '$[#]', a.kind), json_insert(walk.kinds, '$[#]', n.kind),
                   json_insert(walk.labels, '$[#]', n.label)
            FROM walk
            JOIN wanted w ON w.depth = walk.depth + 1
            JOIN graph_adjacency a ON a.from_uid = walk.uid {rel_filter}
            JOIN graph_nodes n ON n.uid = a.to_uid
            WHERE (n.kind = w.kind OR n.kind LIKE w.kind || ':%') AND {node_scope}
              AND NOT EXISTS (SELECT 1 FROM json_each(walk.nodes) WHERE json_each.value = n.uid)
              AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.kind = a.kind
                    AND ((r.source_uid = walk.uid AND r.target_uid = n.uid)
                      OR (r.source_uid = n.uid AND r.target_uid = walk.uid))
                    AND r.scope NOT IN ({",".join("?" * len(scopes))}))
          )
        SELECT nodes, rels, kinds, labels FROM walk WHERE depth = ? ORDER BY nodes, rels LIMIT ?
        """
        params: list[Any] = [x for i, k in enumerate(kinds) for x in (i, k)]
        params += scope_params + ([start_uid] if start_uid else [])
        params += ([relation.value] if relation is not None else []) + scope_params + list(scopes)
        params += [len(kinds) - 1, options.get("limit", PATH_LIMIT)]
        rows = self.db.read(sql, params)
        return [
            GraphPath(
                nodes=json.loads(r["nodes"]),
                relations=json.loads(r["rels"]),
                kinds=json.loads(r["kinds"]),
                labels=json.loads(r["labels"]),
            )
            for r in rows
        ]
