"""Outbox replay into an embedded store: the SQL half of ``sync.replay.EmbeddedTarget``.

:class:`SqliteReplayApplier` applies another store's outbox events to this database idempotently: puts
and matches by uid, deletes of what is gone are no-ops, older states never overwrite newer ones (each
record's last applied source outbox ``seq`` is kept in ``replay_versions``). See ``docs/outbox-replay.md``.

The one thing the adapter cannot compute itself is a case's ``situation_key`` (the reasoning layer's
function): the caller passes it in, so this module imports nothing above kg.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from kg.models import Case, NodeKind, OntologyProposal, OutboxEvent, Rule, format_ts
from kg.ports import SituationKey, UnknownAggregateError
from kg.store.sqlite.db import SqliteAdapter

Handler = Callable[[sqlite3.Connection, OutboxEvent], bool]

_BDI_COLUMNS = (
    "uid", "kind", "agent_id", "scope", "content", "status", "certainty", "priority", "urgency", "progress",
    "deadline", "hierarchy_level", "sequence", "created_at", "updated_at", "updated_by",
)  # fmt: skip
_MEMORY_COLUMNS = (
    "uid", "agent_id", "scope", "content", "type", "store", "importance", "confidence", "source", "tags", "tier",
    "expires_at", "archived_at", "created_at", "updated_at", "derived",
)  # fmt: skip
_MEMORY_MUTABLE = ("type", "store", "importance", "confidence", "tags", "tier", "expires_at", "archived_at")
_FACT_COLUMNS = (
    "uid", "agent_id", "scope", "subject", "predicate", "object", "object_kind", "confidence", "source",
    "valid_from", "valid_until", "created_at", "updated_at", "updated_by", "retracted_at", "retracted_by",
    "rule_id", "derived",
)  # fmt: skip
_FACT_MUTABLE = ("confidence", "source", "object_kind", "valid_from", "valid_until", "rule_id", "updated_by")


def _upsert_sql(table: str, columns: Sequence[str], mutable: Sequence[str], guard: str) -> str:
    """Insert by uid, or update ``mutable`` columns when ``guard`` holds (never an older state)."""
    sets = ", ".join(f"{c} = excluded.{c}" for c in (*mutable, "updated_at"))
    return (
        f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join(':' + c for c in columns)}) "
        f"ON CONFLICT(uid) DO UPDATE SET {sets} WHERE {guard}"
    )


def _newer(table: str, mutable: Sequence[str]) -> str:
    """Guard: the incoming state is not older and differs from the stored one."""
    differs = " OR ".join(f"{table}.{c} IS NOT excluded.{c}" for c in (*mutable, "updated_at"))
    return f"excluded.updated_at >= {table}.updated_at AND ({differs})"


_AGENT_MUTABLE = ("name", "role", "department", "commitment_strategy")
_AGENT_SQL = _upsert_sql(
    "agents",
    ("uid", "agent_id", "scope", "name", "role", "department", "commitment_strategy", "created_at", "updated_at"),
    _AGENT_MUTABLE,
    _newer("agents", _AGENT_MUTABLE),
)
_BDI_MUTABLE = tuple(c for c in _BDI_COLUMNS[4:] if c not in ("created_at", "updated_at"))
_BDI_SQL = _upsert_sql("bdi_nodes", _BDI_COLUMNS, _BDI_MUTABLE, _newer("bdi_nodes", _BDI_MUTABLE))
_MEMORY_SQL = _upsert_sql(
    "memory_items", _MEMORY_COLUMNS, (*_MEMORY_MUTABLE, "derived"), _newer("memory_items", _MEMORY_MUTABLE)
)
# A retracted fact never comes back (retraction is terminal in the source too).
_FACT_SQL = (
    _upsert_sql("facts", _FACT_COLUMNS, (*_FACT_MUTABLE, "derived"), _newer("facts", _FACT_MUTABLE))
    + " AND facts.retracted_at IS NULL"
)
_RULE_SQL = _upsert_sql(
    "rules",
    ("uid", "agent_id", "scope", "name", "type", "enabled", "domain", "body", "created_at", "updated_at"),
    ("name", "type", "enabled", "domain", "body"),
    "excluded.updated_at >= rules.updated_at AND rules.body IS NOT excluded.body",
)
_PROPOSAL_SQL = _upsert_sql(
    "ontology_proposals",
    ("uid", "agent_id", "scope", "domain", "node_id", "status", "body", "created_at", "updated_at"),
    ("domain", "node_id", "status", "body"),
    "excluded.updated_at >= ontology_proposals.updated_at AND ontology_proposals.body IS NOT excluded.body",
)


def _lineage(conn: sqlite3.Connection, child: str, parents: Sequence[str]) -> int:
    """Add lineage links not recorded yet, in payload order; return how many were new."""
    start = conn.execute("SELECT COALESCE(MAX(position) + 1, 0) FROM lineage WHERE child_uid = ?", (child,))
    first = int(start.fetchone()[0])
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO lineage(child_uid, parent_uid, position) VALUES (?, ?, ?)",
        [(child, parent, first + i) for i, parent in enumerate(parents)],
    )
    return conn.total_changes - before


def _changed(conn: sqlite3.Connection, sql: str, params: Any) -> bool:
    before = conn.total_changes
    conn.execute(sql, params)
    return conn.total_changes > before


def _agent(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    return _changed(conn, _AGENT_SQL, e.payload)


def _grant(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    p = e.payload
    if e.op == "delete":
        return _changed(conn, "DELETE FROM grants WHERE agent_id = ? AND scope = ?", (p["agent_id"], p["scope"]))
    return _changed(
        conn,
        "INSERT OR IGNORE INTO grants(agent_id, scope, granted_by, created_at) "
        "VALUES (:agent_id, :scope, :granted_by, :created_at)",
        p,
    )


def _fact(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    p = e.payload
    if e.op == "retract":
        return _changed(
            conn,
            "UPDATE facts SET retracted_at = ?, retracted_by = ? WHERE uid = ? AND retracted_at IS NULL",
            (p["retracted_at"], p["retracted_by"], p["uid"]),
        )
    parents = list(p.get("derived_from") or [])
    row = {**p, "derived": int(bool(p.get("rule_id") or parents))}
    changed = _changed(conn, _FACT_SQL, row)  # the full-text index catches up at the next search (migration 11)
    return _lineage(conn, p["uid"], parents) > 0 or changed


def _memory(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    p = e.payload
    parents = list(p.get("derived_from") or [])
    row = {**p, "tags": json.dumps(p.get("tags") or []), "derived": int(bool(parents))}
    changed = _changed(conn, _MEMORY_SQL, row)
    return _lineage(conn, p["uid"], parents) > 0 or changed


def _bdi(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    # The payload is the node; who changed it last is the event's agent (the source stores the same).
    row = {c: e.payload.get(c) for c in _BDI_COLUMNS} | {"updated_by": e.agent_id or e.payload["agent_id"]}
    return _changed(conn, _BDI_SQL, row)


def _relation(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    if e.op == "delete":
        return _changed(conn, "DELETE FROM relations WHERE uid = ?", (e.record_uid,))
    # OR IGNORE: a relation unlinked and linked again under a new uid may meet its successor on a full
    # replay; the successor's own event keeps it.
    return _changed(
        conn,
        "INSERT OR IGNORE INTO relations(uid, kind, source_uid, target_uid, agent_id, scope, created_at) "
        "VALUES (:uid, :kind, :source_uid, :target_uid, :agent_id, :scope, :created_at)",
        e.payload,
    )


def _rule(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    if e.op == "delete":
        return _changed(conn, "DELETE FROM rules WHERE uid = ?", (e.record_uid,))
    rule = Rule.model_validate({k: v for k, v in e.payload.items() if k != "updated_at"})
    # A rule carries no updated_at: the source stamps the row and the event in the same transaction.
    row = {
        "uid": rule.uid, "agent_id": rule.agent_id, "scope": rule.scope, "name": rule.name,
        "type": rule.type.value, "enabled": int(rule.enabled), "domain": rule.domain, "body": rule.model_dump_json(),
        "created_at": e.payload["created_at"], "updated_at": _stamp(e),
    }  # fmt: skip
    return _changed(conn, _RULE_SQL, row)


def _stamp(e: OutboxEvent) -> str:
    """A rule's updated_at: the source's event time, or what an embedded target passed on with it."""
    return str(e.payload.get("updated_at") or format_ts(e.created_at))


def _case(conn: sqlite3.Connection, e: OutboxEvent, situation_key: SituationKey) -> bool:
    if e.op == "delete":
        return _changed(conn, "DELETE FROM cases WHERE uid = ?", (e.record_uid,))
    case = Case.model_validate(e.payload)
    return _changed(
        conn,
        "INSERT OR IGNORE INTO cases(uid, agent_id, scope, situation_key, success, body, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (case.uid, case.agent_id, case.scope, situation_key(case.situation), int(case.outcome.success),
         case.model_dump_json(), e.payload["created_at"]),
    )  # fmt: skip


def _proposal(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    # The payload is the model's dump: its updated_at is a property (the last status change), not a field.
    p = OntologyProposal.model_validate({k: v for k, v in e.payload.items() if k != "updated_at"})
    row = {
        "uid": p.uid, "agent_id": p.agent_id, "scope": p.scope, "domain": p.domain, "node_id": p.node_id,
        "status": p.status.value, "body": p.model_dump_json(), "created_at": e.payload["created_at"],
        "updated_at": format_ts(p.updated_at),
    }  # fmt: skip
    return _changed(conn, _PROPOSAL_SQL, row)


_CONVERSATION_SQL = _upsert_sql(
    "conversations",
    ("uid", "agent_id", "scope", "session_key", "title", "active", "created_at", "updated_at"),
    ("title", "active"),
    "excluded.updated_at > conversations.updated_at",
)
_MESSAGE_COLUMNS = (
    "uid", "conversation_uid", "seq", "role", "content", "token_count", "tool_call_id", "name", "agent_id", "scope",
    "created_at",
)  # fmt: skip
_SUMMARY_COLUMNS = (
    "uid", "conversation_uid", "kind", "depth", "content", "token_count", "source_token_count", "method", "model",
    "earliest_at", "latest_at", "descendant_count", "agent_id", "scope", "created_at",
)  # fmt: skip


def _conversation(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    return _changed(conn, _CONVERSATION_SQL, {**e.payload, "active": int(bool(e.payload.get("active", True)))})


def _message(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    # Messages are immutable (the target's triggers refuse updates): insert once, ignore a resend.
    columns = ", ".join(_MESSAGE_COLUMNS)
    values = ", ".join(":" + c for c in _MESSAGE_COLUMNS)
    row = {c: e.payload.get(c) for c in _MESSAGE_COLUMNS}
    return _changed(conn, f"INSERT OR IGNORE INTO messages({columns}) VALUES ({values})", row)


def _summary(conn: sqlite3.Connection, e: OutboxEvent) -> bool:
    columns = ", ".join(_SUMMARY_COLUMNS)
    values = ", ".join(":" + c for c in _SUMMARY_COLUMNS)
    row = {c: e.payload.get(c) for c in _SUMMARY_COLUMNS}
    if not _changed(conn, f"INSERT OR IGNORE INTO summaries({columns}) VALUES ({values})", row):
        return False
    conn.executemany(
        "INSERT OR IGNORE INTO summary_edges(parent_uid, child_uid, position) VALUES (?, ?, ?)",
        [(e.record_uid, child, i) for i, child in enumerate(e.payload.get("child_uids") or [])],
    )
    return True


# "case" is bound per batch: its situation_key comes from the reasoning layer (see ``apply_events``).
HANDLERS: dict[str, Handler] = {
    "agent": _agent,
    "grant": _grant,
    "fact": _fact,
    "memory": _memory,
    "relation": _relation,
    "rule": _rule,
    "proposal": _proposal,
    "conversation": _conversation,
    "message": _message,
    "summary": _summary,
    **{kind.value: _bdi for kind in NodeKind},
}


# The version guard: the source outbox position of the last event applied to each record (migration 9).
_LAST_SEQ = "SELECT seq FROM replay_versions WHERE aggregate = ? AND record_uid = ?"
_SET_SEQ = (
    "INSERT INTO replay_versions(aggregate, record_uid, seq) VALUES (?, ?, ?) "
    "ON CONFLICT(aggregate, record_uid) DO UPDATE SET seq = excluded.seq"
)


class SqliteReplayApplier(SqliteAdapter):
    """Applies outbox events to one embedded database (the :class:`kg.ports.ReplayApplier` port).

    Each batch is one write transaction. An event that changed the database is also appended to its own
    outbox (same aggregate, op, uid and payload), so the store can replay onward; an event that changed
    nothing (a resend) leaves no trace.

    Every record carries a version: the source outbox position (``seq``) of the last event applied to it
    (table ``replay_versions``). An event at or below it was applied already and is skipped, so a resend
    never brings back an older state, even of two changes made at the same instant (the row guards compare
    ``updated_at``, which cannot order those). The positions are those of one source's outbox.

    Writes go to the tables directly rather than through the aggregate ports: the ports mint uids, stamp
    the clock's time, check permissions and run capacity rules, while a replay must reproduce the source's
    rows exactly (uids, timestamps, archived states) and idempotently.
    """

    def apply_events(self, events: Sequence[OutboxEvent], *, situation_key: SituationKey) -> None:
        """Apply ``events`` in order in one transaction (all or nothing)."""
        handlers: dict[str, Handler] = {**HANDLERS, "case": partial(_case, situation_key=situation_key)}
        unknown = sorted({e.aggregate for e in events} - handlers.keys())
        if unknown:
            raise UnknownAggregateError(f"aggregate: no replay for {', '.join(unknown)}")
        with self.db.write() as conn:
            for event in events:
                self._apply_one(conn, event, handlers[event.aggregate])

    def _apply_one(self, conn: sqlite3.Connection, event: OutboxEvent, handler: Handler) -> None:
        key = (event.aggregate, event.record_uid)
        last = conn.execute(_LAST_SEQ, key).fetchone()
        if last is not None and event.seq <= int(last[0]):
            return  # this event or a later one of the record is applied already: a resend
        conn.execute(_SET_SEQ, (*key, event.seq))
        if handler(conn, event):
            payload = event.payload
            if event.aggregate == "rule" and event.op == "upsert":  # pass the row's stamp on to the next hop
                payload = {**payload, "updated_at": _stamp(event)}
            self.db.outbox(
                conn, aggregate=event.aggregate, op=event.op, record_uid=event.record_uid,
                agent_id=event.agent_id, scope=event.scope, payload=payload,
            )  # fmt: skip


__all__ = ["HANDLERS", "SqliteReplayApplier"]
