"""SQLite adapter of the fact port: upserts, retraction, pattern and as-of queries, lineage."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kg.errors import InputError, NotFoundError
from kg.models import (
    AssertOutcome,
    AssertStatus,
    Fact,
    FactInput,
    FactQuery,
    LiveTriple,
    format_ts,
)
from kg.store.sqlite.db import Database, in_clause
from kg.store.sqlite.facts_sql import (
    CHANGED_EVENT,
    COLUMNS,
    CREATED_EVENTS,
    DEFER_INDEX_MAX_ROWS,
    DEFERRED_INDEXES,
    INDEX_PENDING,
    INSERT_LINEAGE,
    MOVE_MARK,
    SEARCH_PENDING,
    UPSERT,
    as_of_source,
    exact_doubles,
    insert_values,
    json_real,
    pattern_clause,
    register_json_real,
)

LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM facts"

# Re-exported: the memory adapter builds its payloads with the same exact-double writer.
__all__ = ["SqliteFactStore", "exact_doubles", "json_real", "pattern_clause", "register_json_real"]

if TYPE_CHECKING:  # the write path's types and row building load with the first write, not with a query
    from kg.ports.facts import FactRow, PreparedFacts


class SqliteFactStore:
    """Facts in the embedded store."""

    def __init__(self, db: Database) -> None:
        self.db = db
        register_json_real(db.conn)
        self._max_variables = db.conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)

    # ------------------------------------------------------------------ writes

    def assert_many(self, facts: Sequence[FactInput], *, asserted_by: str) -> list[AssertOutcome]:
        """Upsert ``facts`` in one transaction (with their outbox events): :meth:`prepare`, then write."""
        return self.assert_prepared(self.prepare(facts, asserted_by=asserted_by))

    def prepare(self, facts: Sequence[FactInput | FactRow], *, asserted_by: str) -> PreparedFacts:
        """Rows with fresh uids, outcomes and lineage rows, and the parameters of the batch's multi-row statements
        (:mod:`kg.store.sqlite.facts_prepare`). CPU only: no statement, no lock."""
        from kg.ports.facts import PreparedFacts  # noqa: PLC0415 - a query does not load the write path
        from kg.store.sqlite.facts_prepare import prepare_rows  # noqa: PLC0415

        payload = prepare_rows(facts, max_variables=self._max_variables)
        return PreparedFacts(facts, asserted_by, payload)

    def assert_prepared(self, prepared: PreparedFacts) -> list[AssertOutcome]:
        """Write a prepared batch in one transaction.

        Same result as asserting the facts one by one: rows whose (scope, s, p, o) is not live yet go in with
        a few multi-row statements; the others (already live, or repeated inside the batch) then take the per-row upsert
        path in their original order, after the creation events.
        """
        from kg.store.sqlite.facts_prepare import Prepared, full_row  # noqa: PLC0415 - loaded by prepare()

        batch = prepared.payload
        if not isinstance(batch, Prepared):
            raise InputError("prepared", "was not prepared by this store")
        facts, asserted_by = prepared.facts, prepared.asserted_by
        with self.db.write() as conn:
            self._check_agents(conn, batch.agents)
            now = self.db.now()
            last_seq = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM facts").fetchone()[0]
            shared = [now, asserted_by, *batch.constants]
            count = sum(conn.execute(insert_values(batch.varying, size), shared + values).rowcount
                        for size, values in batch.chunks)  # fmt: skip
            if count == len(facts):  # the bulk-load case: every row new
                conn.executemany(INSERT_LINEAGE, batch.lineage)
                conn.execute(CREATED_EVENTS, (asserted_by, now, last_seq))
                return batch.created
            inserted = {r[0] for r in conn.execute("SELECT uid FROM facts WHERE seq > ?", (last_seq,))}
            conn.executemany(INSERT_LINEAGE, [link for link in batch.lineage if link[0] in inserted])
            conn.execute(CREATED_EVENTS, (asserted_by, now, last_seq))
            created = AssertStatus.CREATED
            outcomes = [
                AssertOutcome(row[0], created) if row[0] in inserted
                else self._upsert_one(conn, fact, full_row(row, now, asserted_by), asserted_by, now)
                for fact, row in zip(facts, batch.rows(), strict=True)
            ]  # fmt: skip
            return outcomes

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """One write transaction around several :meth:`assert_prepared` calls (they join it): committed at the end,
        rolled back on an exception.

        Inside it, nothing is deleted, so freed cell space is not zeroed (``secure_delete`` off: the cells moved
        when B-tree pages split are still stored elsewhere); and a store holding at most
        :data:`DEFER_INDEX_MAX_ROWS` facts gets its :data:`DEFERRED_INDEXES` built once from the rows at the end
        (same SQL, same transaction; a rollback brings the old ones back, and readers keep their snapshot): a
        sorted build instead of an insert per row into each, its records packed (:meth:`Database.packed_sorts`).
        Into such a store it also writes with a rollback journal rather than the WAL when it has the store to
        itself (:meth:`Database.rollback_journal`: the pages written once, not twice, and no WAL to remove). See
        docs/facts-bulk.md."""
        small = self.db.read(LAST_SEQ)[0][0] <= DEFER_INDEX_MAX_ROWS
        with (
            self.db.rollback_journal() if small else nullcontext(False),
            self.db.write() as conn,
            self.db.pragma("secure_delete", 0),
        ):
            rebuild = self._defer_indexes(conn)
            yield
            with self.db.packed_sorts():  # the builds' records in one buffer, not a malloc each
                for sql in rebuild:
                    conn.execute(sql)

    @staticmethod
    def _defer_indexes(conn: sqlite3.Connection) -> list[str]:
        """Drop :data:`DEFERRED_INDEXES` when the store is small enough to rebuild them cheaply; their SQL."""
        if conn.execute(LAST_SEQ).fetchone()[0] > DEFER_INDEX_MAX_ROWS:
            return []
        found = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'facts' "
            f"AND name IN ({','.join('?' * len(DEFERRED_INDEXES))}) ORDER BY name",
            DEFERRED_INDEXES,
        ).fetchall()
        for name, _ in found:
            conn.execute(f'DROP INDEX "{name}"')
        return [str(sql) for _, sql in found]

    @staticmethod
    def _check_agents(conn: sqlite3.Connection, agent_ids: set[str]) -> None:
        """NotFoundError for an unknown owner (instead of a foreign-key failure mid-batch)."""
        wanted = sorted(agent_ids)
        found = {
            r[0]
            for r in conn.execute(
                f"SELECT agent_id FROM agents WHERE agent_id IN ({','.join('?' * len(wanted))})", wanted
            )
        }
        missing = [a for a in wanted if a not in found]
        if missing:
            raise NotFoundError(f"agent_id: no agent {missing[0]!r}")

    def _upsert_one(
        self, conn: sqlite3.Connection, fact: FactInput | FactRow, row: tuple[Any, ...], asserted_by: str, now: str
    ) -> AssertOutcome:
        updated = conn.execute(UPSERT, row).fetchone()
        status = AssertStatus.UPDATED if updated is not None else AssertStatus.UNCHANGED
        uid = updated[0] if updated is not None else conn.execute(
            "SELECT uid FROM facts WHERE scope = ? AND subject = ? AND predicate = ? AND object = ? "
            "AND retracted_at IS NULL",
            (fact.scope, fact.subject, fact.predicate, fact.object),
        ).fetchone()[0]  # fmt: skip
        added_lineage = self._write_lineage(conn, uid, fact.derived_from)
        if updated is not None or added_lineage:
            status = AssertStatus.UPDATED
            conn.execute(CHANGED_EVENT, (asserted_by, now, uid))
        return AssertOutcome(uid, status)

    @staticmethod
    def _write_lineage(conn: sqlite3.Connection, uid: str, parents: Sequence[str]) -> int:
        """Add lineage links not yet recorded; return how many were new."""
        if not parents:
            return 0
        start = conn.execute(
            "SELECT COALESCE(MAX(position) + 1, 0) FROM lineage WHERE child_uid = ?", (uid,)
        ).fetchone()[0]
        before = conn.total_changes
        conn.executemany(INSERT_LINEAGE, [(uid, parent, start + i) for i, parent in enumerate(parents)])
        return conn.total_changes - before

    def retract(
        self,
        *,
        scopes: Sequence[str],
        retracted_by: str,
        uids: Sequence[str] = (),
        subject: str | None = None,
        predicate: str | None = None,
    ) -> list[str]:
        """Retract live facts by uid, or by subject and/or predicate, within ``scopes``."""
        if not uids and subject is None and predicate is None:
            raise InputError("retract", "give fact ids, a subject or a predicate")
        where, params = self._scope_clause(scopes)
        if uids:
            where.append(f"uid IN ({','.join('?' * len(uids))})")
            params.extend(uids)
        if subject is not None:
            where.append("subject = ?")
            params.append(subject)
        if predicate is not None:
            where.append("predicate = ?")
            params.append(predicate)
        with self.db.write() as conn:
            if uids:
                self._check_uids_retractable(conn, uids, scopes)
            now = self.db.now()
            rows = conn.execute(
                f"UPDATE facts SET retracted_at = ?, retracted_by = ? WHERE retracted_at IS NULL "
                f"AND {' AND '.join(where)} RETURNING uid, agent_id, scope",
                [now, retracted_by, *params],
            ).fetchall()
            for row in rows:
                self.db.outbox(
                    conn,
                    aggregate="fact",
                    op="retract",
                    record_uid=row["uid"],
                    agent_id=retracted_by,
                    scope=row["scope"],
                    payload={"uid": row["uid"], "retracted_at": now, "retracted_by": retracted_by},
                )
        return sorted(str(r["uid"]) for r in rows)

    @staticmethod
    def _check_uids_retractable(conn: sqlite3.Connection, uids: Sequence[str], scopes: Sequence[str]) -> None:
        marks = ",".join("?" * len(uids))
        found = {
            r["uid"]: r
            for r in conn.execute(f"SELECT uid, scope, retracted_at FROM facts WHERE uid IN ({marks})", list(uids))
        }
        for uid in uids:
            row = found.get(uid)
            if row is None or row["scope"] not in scopes:
                raise NotFoundError(f"uids: no fact {uid!r} visible to this agent")

    # ------------------------------------------------------------------ reads

    @staticmethod
    def _scope_clause(scopes: Sequence[str], column: str = "scope") -> tuple[list[str], list[Any]]:
        clause, params = in_clause(column, scopes)
        return [clause], params

    def query(self, query: FactQuery) -> list[Fact]:
        """Facts matching ``query``, ordered by (created_at, uid)."""
        where, params = self._scope_clause(query.scopes, "f.scope")
        for column, pattern in (
            ("subject", query.subject),
            ("predicate", query.predicate),
            ("object", query.object),
        ):
            clause = pattern_clause(f"f.{column}", pattern)
            if clause is not None:
                where.append(clause[0])
                params.append(clause[1])
        if not query.include_derived:
            where.append("f.derived = 0")
        if query.only_derived:
            where.append("f.derived = 1")
        if query.min_confidence > 0:
            where.append("f.confidence >= ?")
            params.append(query.min_confidence)
        if query.valid_at is not None:
            at = format_ts(query.valid_at)
            where.append("(f.valid_from IS NULL OR f.valid_from <= ?) AND (f.valid_until IS NULL OR f.valid_until > ?)")
            params.extend([at, at])
        if query.as_of is None and not query.include_retracted:
            sql = f"SELECT {COLUMNS} FROM facts AS f WHERE {' AND '.join(where)} AND f.retracted_at IS NULL"
            sql += " ORDER BY f.created_at, f.uid LIMIT ?"
        else:
            sql, params = self._both_halves(f"SELECT {COLUMNS} FROM {{source}} AS f WHERE {{where}}", where, params,
                                            query.as_of)  # fmt: skip
            sql += " ORDER BY created_at, uid LIMIT ?"
        rows = self.db.read(sql, [*params, query.limit])
        return self._to_facts(rows)

    @staticmethod
    def _both_halves(select: str, where: list[str], params: list[Any], as_of: datetime | None) -> tuple[str, list[Any]]:
        """``select`` over live and over retracted facts (or, ``as_of`` a time, over the facts as they stood then:
        still live, or retracted since), joined by UNION ALL: each half reads its own partial index."""
        halves: list[tuple[str, list[Any], str]]
        if as_of is None:
            halves = [("facts", [], "f.retracted_at IS NULL"), ("facts", [], "f.retracted_at IS NOT NULL")]
        else:
            at = format_ts(as_of)
            halves = [(*as_of_source(at, live=live), "1") for live in (True, False)]
        parts: list[str] = []
        args: list[Any] = []
        for source, source_params, condition in halves:
            parts.append(select.format(source=source, where=" AND ".join([*where, condition])))
            args += [*source_params, *params]
        return " UNION ALL ".join(parts), args

    def live_triples(
        self, *, scopes: Sequence[str], valid_at: datetime, derived: bool | None = None, batch: int = 50_000
    ) -> Iterator[LiveTriple]:
        """Every live fact of ``scopes`` valid at ``valid_at``, lightly, in insertion order (for reasoning over
        the whole store without building a model per fact); only asserted (``derived=False``) or only derived
        (``True``) facts when asked. Read in batches by position, so a long pass holds no lock in between."""
        where, params = self._scope_clause(scopes)
        where.append("retracted_at IS NULL")
        where.append("(valid_from IS NULL OR valid_from <= ?) AND (valid_until IS NULL OR valid_until > ?)")
        at = format_ts(valid_at)
        params += [at, at]
        if derived is not None:
            where.append("derived = ?")
            params.append(int(derived))
        after = 0
        while True:
            rows = self.db.read(
                "SELECT seq, uid, subject, predicate, object, confidence, rule_id, scope, object_kind FROM facts "
                f"WHERE seq > ? AND {' AND '.join(where)} ORDER BY seq LIMIT ?",
                [after, *params, batch],
            )
            for row in rows:
                yield LiveTriple(row[1], row[2], row[3], row[4], float(row[5]), row[6], row[7], row[8])
            if len(rows) < batch:
                return
            after = int(rows[-1][0])

    def get_many(self, uids: Iterable[str], *, as_of: datetime | None = None) -> dict[str, Fact]:
        """Facts by uid in any scope (callers filter by scope)."""
        wanted = list(dict.fromkeys(uids))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        if as_of is None:
            rows = self.db.read(f"SELECT {COLUMNS} FROM facts WHERE uid IN ({marks})", wanted)
        else:
            sql, params = self._both_halves(f"SELECT {COLUMNS} FROM {{source}} AS f WHERE {{where}}",
                                            [f"f.uid IN ({marks})"], wanted, as_of)  # fmt: skip
            rows = self.db.read(sql, params)
        return {fact.uid: fact for fact in self._to_facts(rows)}

    def search(self, text: str, *, scopes: Sequence[str], limit: int = 20) -> list[Fact]:
        """FTS5 search over subject, predicate and object of live facts, best first (the index caught up first:
        every fact committed before the call is searchable)."""
        terms = [t for t in text.replace('"', " ").split() if t]
        if not terms:
            return []
        self.catch_up_search()
        match = " ".join(f'"{t}"' for t in terms)
        where, params = self._scope_clause(scopes, "f.scope")
        rows = self.db.read(
            f"SELECT {', '.join('f.' + c.strip() for c in COLUMNS.split(','))} FROM facts_fts "
            f"JOIN facts f ON f.seq = facts_fts.rowid WHERE facts_fts MATCH ? AND f.retracted_at IS NULL "
            f"AND {' AND '.join(where)} ORDER BY bm25(facts_fts), f.uid LIMIT ?",
            [match, *params, limit],
        )
        return self._to_facts(rows)

    def search_pending(self) -> int:
        """How many facts wait to be added to the full-text index (0 when it is up to date)."""
        mark, top = self.db.read(SEARCH_PENDING)[0]
        return max(0, int(top) - int(mark))

    def catch_up_search(self) -> int:
        """Add every fact not yet in the full-text index to it, in one write transaction with the index's mark
        (a crash keeps both or neither); return how many rows were indexed. Writers do not index (migration 11):
        a bulk load pays for tokenizing once, at the first search after it, in one statement. Cheap when there
        is nothing to do: one read, no write lock."""
        mark, top = self.db.read(SEARCH_PENDING)[0]
        if top <= mark:
            return 0
        with self.db.write() as conn:
            mark, top = conn.execute(SEARCH_PENDING).fetchone()  # again under the lock: another may have done it
            if top <= mark:
                return 0
            indexed = conn.execute(INDEX_PENDING, (mark,)).rowcount
            conn.execute(MOVE_MARK, (top,))
        return int(indexed)

    def _to_facts(self, rows: list[sqlite3.Row]) -> list[Fact]:
        if not rows:
            return []
        uids = [r["uid"] for r in rows]
        lineage: dict[str, list[str]] = {}
        for start in range(0, len(uids), 900):
            chunk = uids[start : start + 900]
            for link in self.db.read(
                f"SELECT child_uid, parent_uid FROM lineage WHERE child_uid IN ({','.join('?' * len(chunk))}) "
                "ORDER BY child_uid, position",
                chunk,
            ):
                lineage.setdefault(link["child_uid"], []).append(link["parent_uid"])
        return [Fact.model_validate({**dict(row), "derived_from": lineage.get(row["uid"], [])}) for row in rows]
