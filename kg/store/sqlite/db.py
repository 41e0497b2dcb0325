"""Connection, pragmas, migrations and retrying transactions of the embedded SQLite store.

Only modules under ``kg/store/sqlite`` write SQL. Every mutation runs inside :meth:`Database.write`:
``BEGIN IMMEDIATE`` (take the write lock up front, so two writers never deadlock on an upgrade),
the change, its outbox event(s), ``COMMIT``. A lock held by another process is waited for by
SQLite's ``busy_timeout`` and then retried with backoff; only after every retry does the caller
get :class:`~kg.errors.StoreBusyError`.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from kg.clock import Clock, SystemClock
from kg.errors import (
    BackendUnavailableError,
    ConflictError,
    CorruptStoreError,
    InputError,
    MabosError,
    NotFoundError,
    StoreBusyError,
    WorkspaceError,
    logger,
)
from kg.models import Record, format_ts
from kg.store.sqlite.migrations import Migration, load_migrations, split_statements

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5_000
#: The settings :meth:`Database.pragma` changes for the length of a block.
SCOPED_PRAGMAS = frozenset({"secure_delete", "synchronous", "temp_store"})
RETRIES = 8


def marks(values: Sequence[Any]) -> str:
    """``?,?,?``: one placeholder per value, for an ``IN (...)`` list."""
    return ",".join("?" * len(values))


def ordered_ids(column: str, table: str, key: str, owner: str) -> str:
    """A subquery: the JSON array of ``column`` over the ``table`` rows whose ``key`` is ``owner``, by ``position``
    (the children of a summary, the parents of a derived record)."""
    return (f"(SELECT json_group_array({column}) FROM (SELECT {column} FROM {table} "
            f"WHERE {key} = {owner} ORDER BY position))")  # fmt: skip


def in_clause(column: str, scopes: Sequence[str]) -> tuple[str, list[Any]]:
    """``column IN (?, ...)`` and its parameters; InputError when no scope is given."""
    if not scopes:
        raise InputError("scopes", "at least one scope is needed")
    return f"{column} IN ({marks(scopes)})", list(scopes)


def integrity_error(exc: sqlite3.IntegrityError, agent_id: str, uid: str, noun: str = "record") -> MabosError:
    """Translate a constraint failure of an insert at the adapter boundary: unknown agent, or a taken uid."""
    if "FOREIGN KEY" in str(exc):
        return NotFoundError(f"agent_id: no agent {agent_id!r}")
    return ConflictError(f"uid: a {noun} {uid!r} already exists")


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class Database:
    """One SQLite connection with the store's pragmas and a write lock for this process's threads."""

    def __init__(self, path: Path | str, *, clock: Clock | None = None, migrate: bool = True) -> None:
        self.path = Path(path) if path != ":memory:" else None
        self.clock: Clock = clock or SystemClock()
        self._lock = threading.RLock()
        self._depth = 0
        #: Called after every committed top-level write transaction, under the write lock: keep them cheap
        #: (write-through only wakes its worker). A failing hook is logged, never raised.
        self.commit_hooks: list[Callable[[], None]] = []
        try:
            self.conn = sqlite3.connect(
                str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"store: cannot open {path}: {exc}") from exc
        self.conn.row_factory = sqlite3.Row
        try:
            self._pragmas()
            if migrate:
                self.migrate()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc):
                raise StoreBusyError(f"store: {path} stayed locked by another writer; try again") from exc
            raise CorruptStoreError(f"store: {path} is not a usable mabos database ({exc})") from exc
        except BaseException:
            self.conn.close()
            raise

    def _pragmas(self) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self.conn.execute("PRAGMA foreign_keys = ON")
        if self.path is not None:
            # 16 KiB pages for a new store (no effect on an existing one, which keeps its size): a 100k-fact bulk
            # load took ~20% less CPU and wall time than with 4 KiB (docs/decisions/2026-11-26-facts-bulk-schema.md).
            # Set before WAL: a WAL database cannot change its page size.
            self.conn.execute("PRAGMA page_size = 16384")
            mode = self._retry(self._to_wal)
            if mode.lower() != "wal":
                raise BackendUnavailableError(f"store: could not switch {self.path} to WAL (got {mode})")
        # FULL: a commit is on disk before the caller hears "ok" (survives power loss, not only kill -9).
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.execute("PRAGMA temp_store = MEMORY")
        self.conn.execute("PRAGMA cache_size = -65536")

    def _to_wal(self) -> str:
        """``PRAGMA journal_mode = WAL``; the mode it leaves. While another process bulk-loads the store with a
        rollback journal (:meth:`rollback_journal`) SQLite answers busy at once instead of waiting (the switch would
        promote a read lock): then wait for that writer as a write does (``BEGIN IMMEDIATE`` waits up to the busy
        timeout) and switch after it (:meth:`_retry` repeats both)."""
        try:
            return str(self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("ROLLBACK")
        return str(self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])

    @contextmanager
    def rollback_journal(self) -> Iterator[bool]:
        """Run the block with a rollback journal instead of the WAL when no other connection has the store open
        (yields True; the store is switched back to WAL after the block, also after an error), else unchanged
        (another connection open, a transaction open, an in-memory store: yields False).

        For a bulk load into a small store (docs/facts-bulk.md): the WAL gets every page once and the checkpoint
        copies it into the database file, then the close unlinks the WAL; a rollback journal keeps only the pages
        that existed before, and the new ones are written once. Another process opening the store meanwhile waits
        for the writer (:meth:`_to_wal`) and then sees all of the load or, after a rollback, none of it; after a
        kill the journal is hot and the next open rolls it back before switching to WAL. ``synchronous = EXTRA``
        meanwhile: the commit is the journal's unlink, and only a sync of its directory keeps a power loss right
        after the answer from bringing the journal back and rolling the load back."""
        with self._lock:
            switched = False
            if self.path is not None and not self._depth and not self.conn.in_transaction:
                try:
                    switched = str(self.conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]).lower() == "delete"
                except sqlite3.OperationalError as exc:  # another connection holds the WAL open: it stays
                    if not _is_busy(exc):
                        raise
            if not switched:
                yield False
                return
            try:
                with self.pragma("synchronous", "EXTRA"):
                    yield True
            finally:
                self._back_to_wal()

    def _back_to_wal(self) -> None:
        try:
            mode = self._retry(self._to_wal)
        except (MabosError, sqlite3.Error) as exc:  # never hide the block's own error; the next open switches it
            logger().warning("store: %s not switched back to WAL after a bulk load: %s", self.path, exc)
            return
        if mode.lower() != "wal":  # pragma: no cover - SQLite switches a file database it holds alone
            logger().warning("store: %s left in %s mode after a bulk load", self.path, mode)

    @contextmanager
    def packed_sorts(self) -> Iterator[bool]:
        """Run the block with ``temp_store = FILE`` when SQLite allows the switch (yields whether it did), then
        the setting as it was. For large sorts (``CREATE INDEX`` at the end of a bulk load, docs/facts-bulk.md):
        with ``MEMORY`` SQLite's sorter allocates and frees every record on its own; with ``FILE`` it packs them
        into one buffer that grows up to the page cache's size (64 MiB) and writes a temporary file only past it.
        Only inside a transaction: there SQLite refuses the switch once the connection's temp database is open (a
        TEMP table: the recall's term statistics), and the block then runs as it would have; outside one it would
        close that database, and its TEMP tables with it."""
        with ExitStack() as setting:
            switched = self.conn.in_transaction
            if switched:
                try:
                    setting.enter_context(self.pragma("temp_store", "FILE"))
                except sqlite3.OperationalError:  # the temp database is open
                    switched = False
            yield switched

    @contextmanager
    def pragma(self, name: str, value: int | str) -> Iterator[None]:
        """Run the block with ``PRAGMA name = value``, then the value as it was, also after an error. ``name`` is
        one of :data:`SCOPED_PRAGMAS` (the connection's own settings that a bulk load changes for a while). If
        SQLite refuses the switch, it raises and nothing changed; if it refuses to set the value back, that is
        logged, so the block's own error is never hidden."""
        if name not in SCOPED_PRAGMAS:
            raise ValueError(f"pragma: {name!r} is not one of {sorted(SCOPED_PRAGMAS)}")
        with self._lock:  # the connection's setting: no other thread's write runs under it meanwhile
            before = self.conn.execute(f"PRAGMA {name}").fetchone()[0]
            self.conn.execute(f"PRAGMA {name} = {value}")
            try:
                yield
            finally:
                try:
                    self.conn.execute(f"PRAGMA {name} = {int(before)}")
                except sqlite3.Error as exc:  # pragma: no cover - nothing in a bulk load opens what would refuse it
                    logger().warning("store: PRAGMA %s not set back to %s: %s", name, before, exc)

    # ---------------------------------------------------------------- migrations

    def schema_version(self) -> int:
        """The highest applied migration (0 for a new database)."""
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        if not exists:
            return 0
        row = self.conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def migrate(self, migrations: list[Migration] | None = None) -> list[int]:
        """Apply pending migrations, each in its own transaction; return the versions applied."""
        migrations = load_migrations() if migrations is None else migrations
        known = {m.version: m for m in migrations}
        if self._up_to_date(known):  # the common case: no write lock needed just to open the store
            return []
        applied: list[int] = []
        with self._lock:
            self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            try:
                self.conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    "name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
                )
                done = {
                    int(r["version"]): str(r["checksum"])
                    for r in self.conn.execute("SELECT version, checksum FROM schema_migrations")
                }
                newest = max(done, default=0)
                if newest > max(known, default=0):
                    raise WorkspaceError(
                        f"schema: the store is at version {newest} but this mabos knows only up to "
                        f"{max(known, default=0)}; upgrade mabos"
                    )
                for version, checksum in done.items():
                    if version in known and known[version].checksum != checksum:
                        raise WorkspaceError(f"schema: migration {version} was edited after it was applied")
                for migration in migrations:
                    if migration.version in done:
                        continue
                    for statement in split_statements(migration.sql):
                        self.conn.execute(statement)
                    self.conn.execute(
                        "INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                        (migration.version, migration.name, migration.checksum, self.now()),
                    )
                    applied.append(migration.version)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self._close_temp_database()
        return applied

    def _close_temp_database(self) -> None:
        """Close the temp database the migrations opened (their index builds sort there), when it holds no TEMP
        table: while it is open, SQLite refuses :meth:`packed_sorts`'s switch inside a transaction, so a bulk load on
        the connection that created the store sorted record by record. Outside a transaction any change of
        ``temp_store`` closes it; the setting is then put back as it was."""
        if self.conn.in_transaction or self.conn.execute("SELECT 1 FROM temp.sqlite_master LIMIT 1").fetchone():
            return
        before = int(self.conn.execute("PRAGMA temp_store").fetchone()[0])
        self.conn.execute(f"PRAGMA temp_store = {1 if before != 1 else 2}")
        self.conn.execute(f"PRAGMA temp_store = {before}")

    def _up_to_date(self, known: dict[int, Migration]) -> bool:
        if not self.schema_version():
            return not known
        done = {
            int(r["version"]): str(r["checksum"]) for r in self.read("SELECT version, checksum FROM schema_migrations")
        }
        return done.keys() == known.keys() and all(known[v].checksum == c for v, c in done.items())

    # ---------------------------------------------------------------- transactions

    def now(self) -> str:
        """The clock's time as stored text."""
        return format_ts(self.clock.now())

    def _retry(self, action: Callable[[], T]) -> T:
        delay = 0.05
        for attempt in range(RETRIES + 1):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == RETRIES:
                    if _is_busy(exc):
                        raise StoreBusyError(f"store: {self.path} stayed locked by another writer; try again") from exc
                    raise
                time.sleep(delay * (1 + random.random()))  # noqa: S311 - jitter, not security
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (nested calls join the outer one)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                # SQLite has rolled back by itself after an interrupt, a full disk or an I/O error: a second
                # ROLLBACK would fail and hide that error behind "no transaction is active"
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                self._retry(lambda: self.conn.execute("COMMIT"))
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            for hook in self.commit_hooks:
                try:
                    hook()
                except Exception as exc:  # a hook (write-through) must never fail a committed write
                    logger().warning("commit hook failed: %s", exc)

    def read(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        """Run a query and fetch every row (retrying while the store is busy)."""
        with self._lock:
            return self._retry(lambda: self.conn.execute(sql, params).fetchall())

    def outbox(
        self,
        conn: sqlite3.Connection,
        *,
        aggregate: str,
        op: str,
        record_uid: str,
        agent_id: str | None,
        scope: str | None,
        payload: dict[str, Any],
    ) -> None:
        """Append one outbox event inside the current write transaction."""
        conn.execute(
            "INSERT INTO outbox(aggregate, op, record_uid, agent_id, scope, payload, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (aggregate, op, record_uid, agent_id, scope, json.dumps(payload), self.now()),
        )

    def insert_record(
        self,
        conn: sqlite3.Connection,
        sql: str,
        record: Record,
        *,
        aggregate: str,
        params: Any = None,
        error: Callable[[sqlite3.IntegrityError], MabosError] | None = None,
    ) -> None:
        """Insert ``record`` and append its ``upsert`` outbox event (payload: the record as JSON) inside the
        current write transaction.

        ``params`` of ``sql`` default to the record's JSON fields (named parameters). A constraint failure
        becomes ``error(exc)``, by default :func:`integrity_error` (unknown agent or taken uid).
        """
        data = record.model_dump(mode="json")
        try:
            conn.execute(sql, data if params is None else params)
        except sqlite3.IntegrityError as exc:
            raise (error(exc) if error else integrity_error(exc, record.agent_id, record.uid)) from exc
        self.outbox(
            conn, aggregate=aggregate, op="upsert", record_uid=record.uid, agent_id=record.agent_id,
            scope=record.scope, payload=data,
        )  # fmt: skip

    def integrity_ok(self) -> bool:
        """Whether ``PRAGMA integrity_check`` reports ok."""
        return str(self.read("PRAGMA integrity_check")[0][0]) == "ok"

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self.conn.close()


class SqliteAdapter:
    """A port adapter of the embedded store: it reads and writes the one :class:`Database` it is given."""

    def __init__(self, db: Database) -> None:
        self.db = db
