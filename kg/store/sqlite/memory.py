"""SQLite adapter of the memory port: inserts with capacity rules, updates, filters, FTS5 search.

Expiry is read, not written, by a read: a short-term item past its ``expires_at`` (at the store clock's time)
counts as archived as of its expiry - left out unless archived items are asked for, counted as archived, not
valid after it - whether or not the write that archives it (:meth:`SqliteMemoryStore.archive_expired`, the next
:meth:`~SqliteMemoryStore.add` of the agent, the nightly job) has run yet. That write stores ``archived_at`` =
``expires_at`` and appends the outbox event, so which items a read returns does not depend on when it runs; the
item's fields read as stored.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Unpack

from kg.errors import BackendUnavailableError, InputError, NotFoundError
from kg.models import MemoryItem, MemoryQuery, MemoryType, format_ts
from kg.ports import MemoryWrite, MemoryWriteResult, StoreLimits
from kg.store.sqlite.db import Database, marks
from kg.store.sqlite.facts_sql import exact_doubles, register_json_real
from kg.store.sqlite.memory_rows import COLUMNS, EXPIRED, FIELDS, LINEAGE, to_items, where_clause
from kg.store.sqlite.term_stats import ROW_WINDOW, TermStats
from kg.text.words import words

#: Earlier items of the same agent and scope that make up an item's context (with the one just after it),
#: and how close in time.
CONTEXT_ITEMS = 2
CONTEXT_WINDOW = timedelta(hours=1)
CONTEXT_WEIGHT = 0.5  # of the context column in BM25, against 1.0 for content and tags
#: Episodic items (what was said or happened) are read in their conversation's context; semantic ones
#: (facts, decisions, preferences ...) stand alone and lend no context.
EPISODIC = (MemoryType.OBSERVATION, MemoryType.EVENT)
_UPDATABLE = frozenset({"store", "tier", "importance", "confidence", "expires_at", "archived_at", "tags", "type"})

# One outbox event per selected item, its payload the item's JSON built in SQL (doubles exact: see exact_doubles).
_MEMORY_PAYLOAD = exact_doubles(
    f"""json_object(
    'uid', m.uid, 'agent_id', m.agent_id, 'scope', m.scope, 'content', m.content, 'type', m.type,
    'store', m.store, 'importance', '#', 'confidence', '#', 'source', m.source,
    'tags', json(m.tags), 'tier', m.tier, 'expires_at', m.expires_at, 'archived_at', m.archived_at,
    'created_at', m.created_at, 'updated_at', m.updated_at,
    'derived_from', json({LINEAGE})
)""",
    {"importance": "m.importance", "confidence": "m.confidence"},
)
_MEMORY_EVENTS = f"""
INSERT INTO outbox(aggregate, op, record_uid, agent_id, scope, payload, created_at)
SELECT 'memory', 'upsert', m.uid, m.agent_id, m.scope, {_MEMORY_PAYLOAD}, ?
FROM memory_items m WHERE m.uid IN ({{marks}})
"""


def _ts(value: datetime | None) -> str | None:
    return format_ts(value) if value is not None else None


class SqliteMemoryStore:
    """Memory items in the embedded store."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.term_stats = TermStats(db)
        register_json_real(db.conn)

    # ------------------------------------------------------------------ writes

    def add(self, items: Sequence[MemoryItem], **write: Unpack[MemoryWrite]) -> MemoryWriteResult:
        """Insert items, apply ``updates`` and the capacity rules for the owners, in one transaction."""
        limits, now, updates = write["limits"], write["now"], write.get("updates", ())
        if not items and not updates:
            return MemoryWriteResult()
        with self.db.write() as conn:
            agents = sorted({item.agent_id for item in items})
            known = {
                r[0] for r in conn.execute(f"SELECT agent_id FROM agents WHERE agent_id IN ({marks(agents)})", agents)
            }
            missing = [a for a in agents if a not in known]
            if missing:
                raise NotFoundError(f"agent_id: no agent {missing[0]!r}")
            contexts, appends = self._contexts(conn, items)
            # derived text, like the context itself: no new updated_at, no outbox event
            conn.executemany("UPDATE memory_items SET context = ltrim(context || ' ' || ?) WHERE seq = ?", appends)
            conn.executemany(
                f"INSERT INTO memory_items({', '.join(FIELDS)}, derived, context) VALUES ({marks(FIELDS)}, ?, ?)",
                [
                    (*self._row(item), int(bool(item.derived_from)), ctx)
                    for item, ctx in zip(items, contexts, strict=True)
                ],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO lineage(child_uid, parent_uid, position) VALUES (?, ?, ?)",
                [(item.uid, parent, i) for item in items for i, parent in enumerate(item.derived_from)],
            )
            stamp = format_ts(now)
            self._apply(conn, updates, stamp)
            demoted: list[str] = []
            archived: list[str] = []
            for agent_id in agents:
                archived += self._archive_expired(conn, agent_id, stamp)
                demoted += self._demote_working(conn, agent_id, limits, now)
                archived += self._evict_short_term(conn, agent_id, limits, stamp)
            changed = sorted({*(i.uid for i in items), *(uid for uid, _ in updates), *demoted, *archived})
            self._events(conn, changed, stamp)
        return MemoryWriteResult(demoted=tuple(demoted), archived=tuple(archived))

    @staticmethod
    def _contexts(
        conn: sqlite3.Connection, items: Sequence[MemoryItem]
    ) -> tuple[builtins.list[str], builtins.list[tuple[str, int]]]:
        """Each episodic item's context, and what to append to the contexts of stored items.

        An episodic item's context is the content of up to two episodic items stored just before it by the
        same agent in the same scope, each within an hour of it, followed by the content of the one stored
        just after it (the batch's items count both ways). The item before a new one - in the batch or
        already stored, returned as ``(text, seq)`` - gets the new one's content appended: the answer to a
        question often lies in the turn after the one that shares its words.
        """
        # (agent, scope) -> the latest episodic items: (created_at, content, seq if stored else batch index)
        recent: dict[tuple[str, str], builtins.list[tuple[datetime, str, int | None, int | None]]] = {}
        contexts: builtins.list[str] = []
        appends: builtins.list[tuple[str, int]] = []
        for index, item in enumerate(items):
            if item.type not in EPISODIC:
                contexts.append("")
                continue
            key = (item.agent_id, item.scope)
            if key not in recent:
                rows = conn.execute(
                    "SELECT created_at, content, seq FROM memory_items WHERE agent_id = ? AND scope = ? "
                    f"AND type IN ({marks(EPISODIC)}) ORDER BY seq DESC LIMIT ?",
                    (*key, *(t.value for t in EPISODIC), CONTEXT_ITEMS),
                ).fetchall()
                recent[key] = [(datetime.fromisoformat(r[0]), r[1], int(r[2]), None) for r in reversed(rows)]
            earlier = recent[key]
            near = [e for e in earlier if abs(item.created_at - e[0]) <= CONTEXT_WINDOW]
            contexts.append(" ".join(text for _, text, _, _ in near))
            if near and near[-1] is earlier[-1]:  # the item just before this one, close enough: its next turn
                _, _, seq, batch_index = near[-1]
                if batch_index is not None:
                    contexts[batch_index] = f"{contexts[batch_index]} {item.content}".lstrip()
                elif seq is not None:
                    appends.append((item.content, seq))
            earlier.append((item.created_at, item.content, None, index))
            del earlier[:-CONTEXT_ITEMS]
        return contexts, appends

    @staticmethod
    def _row(item: MemoryItem) -> tuple[Any, ...]:
        data = item.model_dump(mode="json")
        data["tags"] = json.dumps(item.tags)
        data["updated_at"] = data["updated_at"] or data["created_at"]
        return tuple(data[f] for f in FIELDS)

    @staticmethod
    def _archive_expired(conn: sqlite3.Connection, agent_id: str, stamp: str) -> list[str]:
        """Archive the agent's expired short-term items as of their expiry (what reads already show)."""
        rows = conn.execute(
            "UPDATE memory_items SET archived_at = expires_at, updated_at = ? WHERE agent_id = ? "
            "AND store = 'short_term' AND archived_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ? "
            "RETURNING uid",
            (stamp, agent_id, stamp),
        ).fetchall()
        return sorted(r[0] for r in rows)

    @staticmethod
    def _demote_working(conn: sqlite3.Connection, agent_id: str, limits: StoreLimits, now: datetime) -> list[str]:
        expires = format_ts(now + timedelta(seconds=limits.short_term_ttl_seconds))
        rows = conn.execute(
            "UPDATE memory_items SET store = 'short_term', expires_at = ?, updated_at = ? WHERE uid IN ("
            " SELECT uid FROM memory_items WHERE agent_id = ? AND store = 'working' AND archived_at IS NULL"
            " ORDER BY created_at DESC, uid DESC LIMIT -1 OFFSET ?) RETURNING uid",
            (expires, format_ts(now), agent_id, limits.working_capacity),
        ).fetchall()
        return sorted(r[0] for r in rows)

    @staticmethod
    def _evict_short_term(conn: sqlite3.Connection, agent_id: str, limits: StoreLimits, stamp: str) -> list[str]:
        rows = conn.execute(
            "UPDATE memory_items SET archived_at = ?, updated_at = ? WHERE uid IN ("
            " SELECT uid FROM memory_items WHERE agent_id = ? AND store = 'short_term' AND archived_at IS NULL"
            " ORDER BY importance DESC, created_at DESC, uid DESC LIMIT -1 OFFSET ?) RETURNING uid",
            (stamp, stamp, agent_id, limits.short_term_capacity),
        ).fetchall()
        return sorted(r[0] for r in rows)

    def _events(self, conn: sqlite3.Connection, uids: Sequence[str], stamp: str) -> None:
        for start in range(0, len(uids), 900):
            chunk = list(uids[start : start + 900])
            conn.execute(_MEMORY_EVENTS.format(marks=marks(chunk)), [stamp, *chunk])

    def update(self, changes: Sequence[tuple[str, dict[str, Any]]], *, now: datetime) -> None:
        """Apply validated field changes to items (one transaction, one outbox event per item)."""
        if not changes:
            return
        stamp = format_ts(now)
        with self.db.write() as conn:
            self._apply(conn, changes, stamp)
            self._events(conn, [uid for uid, _ in changes], stamp)

    @staticmethod
    def _apply(conn: sqlite3.Connection, changes: Sequence[tuple[str, dict[str, Any]]], stamp: str) -> None:
        """Run the changes as one ``executemany`` per set of changed fields; every uid must exist."""
        batches: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for uid, fields in changes:
            unknown = sorted(set(fields) - _UPDATABLE)
            if unknown:
                raise InputError(unknown[0], f"cannot be changed (changeable: {', '.join(sorted(_UPDATABLE))})")
            values = {k: (json.dumps(v) if k == "tags" else _ts(v) if isinstance(v, datetime) else v)
                      for k, v in fields.items()}  # fmt: skip
            batches.setdefault(tuple(sorted(values)), []).append({**values, "updated_at_": stamp, "uid_": uid})
        for columns, rows in batches.items():
            sets = "".join(f"{k} = :{k}, " for k in columns)
            cur = conn.executemany(f"UPDATE memory_items SET {sets}updated_at = :updated_at_ WHERE uid = :uid_", rows)
            if cur.rowcount != len(rows):  # rowcount counts the statement's rows only (not the FTS triggers')
                missing = [r["uid_"] for r in rows if not conn.execute(
                    "SELECT 1 FROM memory_items WHERE uid = ?", (r["uid_"],)).fetchone()]  # fmt: skip
                raise NotFoundError(f"uid: no memory item {(missing or ['?'])[0]!r}")

    def archive_expired(self, agent_id: str, *, now: datetime) -> list[str]:
        """Archive expired short-term items of one agent (with their outbox events), ``archived_at`` their expiry.

        Run by writes and maintenance (idle time, the nightly job), never by a read (reads already see expired
        items as archived); it checks first without taking the write lock, so it costs no write when nothing
        has expired.
        """
        stamp = format_ts(now)
        due = self.db.read(
            "SELECT 1 FROM memory_items WHERE agent_id = ? AND store = 'short_term' AND archived_at IS NULL "
            "AND expires_at IS NOT NULL AND expires_at <= ? LIMIT 1",
            (agent_id, stamp),
        )
        if not due:
            return []
        with self.db.write() as conn:
            archived = self._archive_expired(conn, agent_id, stamp)
            self._events(conn, archived, stamp)
        return archived

    def touch(self, uids: Sequence[str], *, now: datetime, importance: Mapping[str, float] | None = None) -> None:
        """Increment access counts (no outbox event: usage statistics stay local) and, in the same write, set the
        recalculated ``importance`` of some of them (those do get an outbox event).

        Raises:
            BackendUnavailableError: the store cannot be written (read-only file or connection; StoreBusyError
                when it stayed locked): nothing was counted.
        """
        if not uids:
            return
        stamp = format_ts(now)
        try:
            with self.db.write() as conn:
                conn.execute(
                    "UPDATE memory_items SET access_count = access_count + 1, accessed_at = ? "
                    f"WHERE uid IN ({marks(uids)})",
                    [stamp, *uids],
                )
                if importance:
                    self._apply(conn, [(uid, {"importance": v}) for uid, v in importance.items()], stamp)
                    self._events(conn, list(importance), stamp)
        except sqlite3.OperationalError as exc:  # busy is StoreBusyError already; this is a read-only store
            raise BackendUnavailableError(f"store: access counts not written ({exc})") from exc

    # ------------------------------------------------------------------ reads

    def list(self, query: MemoryQuery) -> builtins.list[MemoryItem]:
        """Items matching ``query`` in creation order."""
        where, params = where_clause(query, self.db.now())
        order = "m.created_at, m.uid" if query.order == "created" else "m.importance DESC, m.created_at DESC, m.uid"
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM memory_items m WHERE {' AND '.join(where)} ORDER BY {order} LIMIT ?",
            [*params, query.limit],
        )
        return to_items(rows)

    def search(self, text: str, query: MemoryQuery) -> builtins.list[tuple[MemoryItem, float]]:
        """Items whose content, tags or context contain any term of ``text``, best BM25 first.

        Terms are stemmed by the index (Porter); the context column (earlier items of the same
        conversation) counts half as much as the content and tags.
        """
        terms = list(dict.fromkeys(words(text)))  # kg.text: one regex pass, not a Python step per character
        if not terms:
            return []
        kept, matches = self.term_stats.plan(terms)  # common words cost most and weigh least
        match = " OR ".join(f'"{t}"' for t in kept)
        where, params = where_clause(query, self.db.now())
        # the newest ROW_WINDOW matches only, when there are far more (see kg.store.sqlite.term_stats)
        window = f"ORDER BY rowid DESC LIMIT {ROW_WINDOW}" if matches > ROW_WINDOW else ""
        rows = self.db.read(
            f"SELECT {COLUMNS}, f.rank AS rank FROM (SELECT rowid, bm25(memory_fts, 1.0, 1.0, {CONTEXT_WEIGHT}) "
            f"AS rank FROM memory_fts WHERE memory_fts MATCH ? {window}) f JOIN memory_items m ON m.seq = f.rowid "
            f"WHERE {' AND '.join(where)} ORDER BY f.rank, m.uid LIMIT ?",
            [match, *params, query.limit],
        )
        items = to_items(rows)
        return [(item, float(row["rank"])) for item, row in zip(items, rows, strict=True)]

    def scan(self, after: int, limit: int) -> builtins.list[tuple[int, MemoryItem]]:
        """Up to ``limit`` items in insertion order after position ``after`` (0: from the start), with positions."""
        sql = f"SELECT m.seq AS pos, {COLUMNS} FROM memory_items m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
        rows = self.db.read(sql, (after, limit))
        return list(zip((int(r["pos"]) for r in rows), to_items(rows), strict=True))

    def filter_items(self, uids: Iterable[str], query: MemoryQuery) -> dict[str, MemoryItem]:
        """The items of ``uids`` that match ``query``'s filters, by uid (its text, order and limit are ignored)."""
        where, params = where_clause(query, self.db.now())
        return self._by_uid(uids, " AND ".join(where), params)

    def get_many(self, uids: Iterable[str]) -> dict[str, MemoryItem]:
        """Items by uid."""
        return self._by_uid(uids, "1", [])

    def _by_uid(self, uids: Iterable[str], where: str, params: builtins.list[Any]) -> dict[str, MemoryItem]:
        # The uid list drives the join (CROSS JOIN fixes the order): without statistics SQLite would
        # otherwise scan the agent's (agent_id, scope) index - 40 ms instead of 0.3 at 100,000 items.
        rows = self.db.read(
            f"SELECT {COLUMNS} FROM json_each(?) w CROSS JOIN memory_items m ON m.uid = w.value WHERE {where}",
            [json.dumps(list(dict.fromkeys(uids))), *params],
        )
        return {item.uid: item for item in to_items(rows)}

    def counts(self, agent_id: str) -> dict[str, dict[str, int]]:
        """Active and archived items per store for one agent (an expired item counts as archived)."""
        result = {s: {"active": 0, "archived": 0} for s in ("working", "short_term", "long_term")}
        archived = f"(m.archived_at IS NOT NULL OR {EXPIRED})"
        for row in self.db.read(
            f"SELECT m.store AS store, COUNT(*) - SUM({archived}) AS active, SUM({archived}) AS archived "
            "FROM memory_items m WHERE m.agent_id = ? GROUP BY m.store",
            (self.db.now(), self.db.now(), agent_id),
        ):
            result[row["store"]] = {"active": int(row["active"]), "archived": int(row["archived"])}
        return result
