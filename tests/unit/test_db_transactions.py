"""Transactions of the embedded store: pragmas, rollback, waiting for another writer, busy errors."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from kg.clock import FixedClock
from kg.errors import BackendUnavailableError, StoreBusyError
from kg.ids import new_id
from kg.models import Agent, parse
from kg.store.sqlite import SqliteGraphStore
from kg.store.sqlite import db as db_module

HOLD_SECONDS = 0.3


@pytest.fixture
def store(tmp_path: Path, clock: FixedClock):
    s = SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)
    yield s
    s.close()


def make_agent(clock: FixedClock, agent_id: str) -> Agent:
    return parse(
        Agent,
        {
            "uid": new_id("agent"),
            "agent_id": agent_id,
            "name": agent_id,
            "created_at": clock.now(),
            "updated_at": clock.now(),
        },
    )


class LockHolder:
    """Holds the write lock on a second connection (as another process would) for a while."""

    def __init__(self, path: Path, seconds: float) -> None:
        self.path, self.seconds = path, seconds
        self.locked = threading.Event()
        self.released_at = 0.0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            self.locked.set()
            time.sleep(self.seconds)
            self.released_at = time.monotonic()
            conn.execute("COMMIT")
        finally:
            conn.close()

    def __enter__(self) -> LockHolder:
        self.thread.start()
        assert self.locked.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(10)


def test_wal_mode_is_on_and_persistent(store):
    assert store.db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other = sqlite3.connect(store.db.path)
    try:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


def test_foreign_keys_and_busy_timeout_are_on(store):
    assert store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == db_module.BUSY_TIMEOUT_MS > 0
    assert store.db.integrity_ok()


@pytest.mark.parametrize(("name", "value"), [("secure_delete", 0), ("synchronous", "EXTRA"), ("temp_store", "FILE")])
def test_a_scoped_pragma_holds_for_the_block_only(store, name, value):
    """``Database.pragma``: the setting inside the block, the one before it afterwards, also after an error."""
    conn = store.db.conn
    before = conn.execute(f"PRAGMA {name}").fetchone()[0]
    with store.db.pragma(name, value):
        inside = conn.execute(f"PRAGMA {name}").fetchone()[0]
    assert inside != before
    assert conn.execute(f"PRAGMA {name}").fetchone()[0] == before
    with pytest.raises(RuntimeError, match="boom"), store.db.pragma(name, value):
        raise RuntimeError("boom")
    assert conn.execute(f"PRAGMA {name}").fetchone()[0] == before


def test_a_scoped_pragma_takes_only_the_listed_names(store):
    before = store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0]
    for name in ("foreign_keys", "journal_mode", "synchronous = OFF; --"):
        with pytest.raises(ValueError, match="is not one of"), store.db.pragma(name, 0):
            pass  # pragma: no cover - refused before the block
    assert store.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == before


def test_a_failing_transaction_is_rolled_back(store, clock):
    with pytest.raises(RuntimeError), store.db.write() as conn:
        conn.execute(
            "INSERT INTO agents(uid, agent_id, scope, name, commitment_strategy, created_at, "
            "updated_at) VALUES ('A-1', 'x', 'agent:x', 'x', 'cautious', 't', 't')"
        )
        raise RuntimeError("boom")

    assert not store.agents.exists("x")
    assert not store.db.conn.in_transaction
    store.agents.create(make_agent(clock, "y"))  # the connection is usable again
    assert store.agents.exists("y")


def test_nested_writes_join_the_outer_transaction(store, clock):
    with pytest.raises(RuntimeError), store.db.write():
        store.agents.create(make_agent(clock, "inner"))  # its own write() joins the outer one
        assert store.agents.exists("inner")
        raise RuntimeError("outer fails")

    assert not store.agents.exists("inner")
    assert store.outbox.counts() == {"pending": 0, "acked": 0}


def test_a_writer_waits_for_another_connections_lock(store, clock):
    with LockHolder(store.db.path, HOLD_SECONDS) as holder:
        started = time.monotonic()
        store.agents.create(make_agent(clock, "patient"))
        finished = time.monotonic()

    assert finished >= holder.released_at > started
    assert finished - started >= HOLD_SECONDS * 0.5
    assert store.agents.exists("patient")


def test_reads_do_not_wait_for_a_writer(store, clock):
    store.agents.create(make_agent(clock, "early"))
    with LockHolder(store.db.path, HOLD_SECONDS) as holder:
        assert [a.agent_id for a in store.agents.list()] == ["early"]
        read_at = time.monotonic()
    assert read_at < holder.released_at


def test_busy_past_every_retry_is_store_busy(tmp_path, clock, monkeypatch):
    monkeypatch.setattr(db_module, "RETRIES", 1)
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 20)
    store = SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)
    try:
        with LockHolder(store.db.path, 1.0):
            with pytest.raises(StoreBusyError, match="locked") as err:
                store.agents.create(make_agent(clock, "impatient"))
            assert isinstance(err.value, BackendUnavailableError) and err.value.exit_code == 3
        assert not store.agents.exists("impatient")
        store.agents.create(make_agent(clock, "impatient"))  # works once the lock is gone
        assert store.agents.exists("impatient")
        assert store.outbox.counts()["pending"] == 1
    finally:
        store.close()


def test_two_stores_on_one_file_see_each_others_writes(tmp_path, clock):
    first = SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)
    second = SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock)
    try:
        first.agents.create(make_agent(clock, "one"))
        second.agents.create(make_agent(clock, "two"))
        assert [a.agent_id for a in first.agents.list()] == ["one", "two"]
        assert second.outbox.counts()["pending"] == 2
    finally:
        first.close()
        second.close()


def test_concurrent_writers_lose_nothing(tmp_path, clock):
    stores = [SqliteGraphStore(tmp_path / "kg.sqlite", clock=clock) for _ in range(3)]
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(15):
                stores[n].agents.create(make_agent(clock, f"w{n}-{i}"))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == []
        assert len(stores[0].agents.list()) == 45
        assert stores[1].outbox.counts()["pending"] == 45
    finally:
        for s in stores:
            s.close()
