"""A bulk load into a small store writes with a rollback journal when it has the store to itself (issue 33).

``SqliteFactStore.bulk`` into a store of at most ``DEFER_INDEX_MAX_ROWS`` facts runs inside
``Database.rollback_journal``: ``PRAGMA journal_mode = DELETE`` when no other connection has the store open (SQLite
refuses the switch otherwise, and the load stays in WAL mode as before), back to WAL after the load, after a failed
one too. The new pages are written once instead of twice (WAL, then checkpoint) and there is no WAL to remove;
``synchronous`` is EXTRA meanwhile (the commit, the journal's unlink, is synced with its directory), then FULL again.
What must hold, with real processes where it is about other processes: another process opening the store during the
load waits for it (SQLite answers its ``journal_mode = WAL`` busy at once, without the busy handler) and then sees
all of it, or none after a rollback; a writer killed with SIGKILL mid-load leaves a hot journal that the next open
rolls back, so the store is exactly as before and in WAL mode again; a store above the bound or with another
connection open keeps the WAL.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, nullcontext
from pathlib import Path

import pytest

from kg.models import FactInput
from kg.rdf.importer import RdfDocument, import_documents
from kg.store.sqlite import SqliteGraphStore
from kg.store.sqlite.db import Database
from kg.workspace import DB_FILE, STATE_DIR, Workspace, open_workspace

# A child that opens the store as every mabos process does (Database: pragmas, WAL switch, migration check), saying
# "opening" before and "busy" when SQLite first answers busy; then what it sees. With one retry instead of eight:
# the open must wait for the writer by SQLite's busy timeout, not by the retries' sleeps (4.5 s or more in all).
OPENER = """
import json, sys
import kg.store.sqlite.db as db_module
db_module.RETRIES = 1
busy, is_busy = [0], db_module._is_busy
def noting(exc):
    found = is_busy(exc)
    if found and not busy[0]:
        print("busy", flush=True)
    busy[0] += found
    return found
db_module._is_busy = noting
print("opening", flush=True)
db = db_module.Database(sys.argv[1])
mode = db.conn.execute("PRAGMA journal_mode").fetchone()[0]
facts = db.conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
print(json.dumps({"busy": busy[0], "mode": mode, "facts": facts}), flush=True)
"""

# A child whose open gives up after 2 tries of 0.1 s (instead of 9 of 5 s: 49.6-54.1 s with the backoff): what an
# opener meets when a load outlasts its wait.
IMPATIENT = """
import json, sys
import kg.store.sqlite.db as db_module
from kg.errors import MabosError
db_module.BUSY_TIMEOUT_MS, db_module.RETRIES = 100, 1
try:
    db_module.Database(sys.argv[1])
except MabosError as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
"""

# A child that bulk-loads 3,000 facts with a page cache of 20 pages (so the database file is written before the
# commit), says its journal mode and waits inside the transaction to be killed.
LOADER = """
import sys, time
from kg.models import FactInput
from kg.rdf.importer import RdfDocument, import_documents
from kg.workspace import open_workspace
ws = open_workspace(sys.argv[1])
store = ws._store.facts
ws._store.db.conn.execute("PRAGMA cache_size = 20")
with store.bulk():
    for start in range(0, 3000, 500):
        facts = [FactInput(agent_id="a", subject=f"s{i}", predicate="p", object=f"o{i}")
                 for i in range(start, start + 500)]
        store.assert_prepared(store.prepare(facts, asserted_by="a"))
    print(ws._store.db.conn.execute("PRAGMA journal_mode").fetchone()[0], flush=True)
    time.sleep(600)
"""

CHILD_ENV = {**os.environ, "MABOS_EMBEDDER": "none", "HF_HUB_OFFLINE": "1"}


def _facts(start: int, count: int) -> list[FactInput]:
    return [FactInput(agent_id="a", subject=f"s{i % 13}", predicate=f"p{i % 3}", object=f"o{i}")
            for i in range(start, start + count)]  # fmt: skip


def _write(ws: Workspace, facts: list[FactInput]) -> None:
    store = ws._store.facts
    store.assert_prepared(store.prepare(facts, asserted_by="a"))


def _mode(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _synchronous(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA synchronous").fetchone()[0])


def _header_versions(path: Path) -> tuple[int, int]:
    """The file format's write and read versions (bytes 18 and 19): 2 for WAL, 1 for a rollback journal."""
    with path.open("rb") as file:
        head = file.read(20)
    return head[18], head[19]


@pytest.fixture
def ws(workspace: Workspace) -> Iterator[Workspace]:
    workspace.agents.add("a")
    yield workspace


def _db(ws: Workspace) -> Database:
    assert isinstance(ws._store, SqliteGraphStore)
    return ws._store.db


def _db_path(ws: Workspace) -> Path:
    path = _db(ws).path
    assert path is not None
    return path


def test_a_load_into_a_small_store_alone_uses_a_rollback_journal_and_leaves_wal(ws: Workspace) -> None:
    db, path = _db(ws), _db_path(ws)
    with ws._store.facts.bulk():
        _write(ws, _facts(0, 300))
        assert _mode(db.conn) == "delete"
        assert _synchronous(db.conn) == 3  # EXTRA: the commit's journal unlink is synced (its directory)
        assert not Path(f"{path}-wal").exists()  # checkpointed and removed by the switch
        assert Path(f"{path}-journal").exists()  # the pages the store had before the load
    assert _mode(db.conn) == "wal"
    assert _synchronous(db.conn) == 2  # FULL again, as every other transaction
    assert _header_versions(path) == (2, 2)  # WAL on disk too: the next process opens it as WAL
    assert not Path(f"{path}-journal").exists()
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == 300
    assert db.integrity_ok()
    _write(ws, _facts(300, 10))  # and an ordinary write after it goes to the WAL again
    assert Path(f"{path}-wal").stat().st_size > 0


def test_a_failed_load_is_rolled_back_and_leaves_wal(ws: Workspace) -> None:
    db, path = _db(ws), _db_path(ws)
    _write(ws, _facts(0, 20))
    with pytest.raises(RuntimeError, match="source failed"), ws._store.facts.bulk():
        _write(ws, _facts(20, 200))
        assert _mode(db.conn) == "delete"
        raise RuntimeError("source failed")
    assert _mode(db.conn) == "wal"
    assert _synchronous(db.conn) == 2
    assert _header_versions(path) == (2, 2)
    assert not Path(f"{path}-journal").exists()
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == 20
    assert db.integrity_ok()


def test_another_connection_open_keeps_the_wal_and_its_snapshot(ws: Workspace) -> None:
    db, path = _db(ws), _db_path(ws)
    other = Database(path)
    try:
        assert other.read("SELECT COUNT(*) FROM facts")[0][0] == 0
        with ws._store.facts.bulk():
            _write(ws, _facts(0, 300))
            assert _mode(db.conn) == "wal"  # SQLite refused the switch: the load goes on as before
            assert _synchronous(db.conn) == 2
            assert other.read("SELECT COUNT(*) FROM facts")[0][0] == 0  # its snapshot, not a wait
        assert other.read("SELECT COUNT(*) FROM facts")[0][0] == 300
    finally:
        other.close()


def test_a_store_above_the_bound_keeps_the_wal(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import kg.store.sqlite.facts as fact_store  # noqa: PLC0415

    db = _db(ws)
    monkeypatch.setattr(fact_store, "DEFER_INDEX_MAX_ROWS", 10)
    _write(ws, _facts(0, 10))
    with ws._store.facts.bulk():  # 10 facts: at the bound
        assert _mode(db.conn) == "delete"
        _write(ws, _facts(10, 1))
    with ws._store.facts.bulk():  # 11 facts: above it
        assert _mode(db.conn) == "wal"
        _write(ws, _facts(11, 50))
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == 61


def _import_journal_pragmas(ws: Workspace, first: int, count: int) -> list[str]:
    """Import ``count`` N-Triples through the product path (import_documents -> assert_triples -> bulk); the journal
    mode statements it ran."""
    nt = "".join(f"<http://e.org/s{i}> <http://e.org/p> <http://e.org/o{i}> .\n" for i in range(first, first + count))
    seen: list[str] = []
    conn = _db(ws).conn
    conn.set_trace_callback(lambda sql: seen.append(sql) if "journal_mode" in sql else None)
    try:
        assert import_documents(ws, "a", [RdfDocument(name="x.nt", format="nt", content=nt)]).created == count
    finally:
        conn.set_trace_callback(None)
    return seen


def test_an_import_uses_the_journal_into_a_small_store_and_the_wal_into_a_larger_one(ws: Workspace) -> None:
    assert _import_journal_pragmas(ws, 0, 2_500) == ["PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = WAL"]
    assert _import_journal_pragmas(ws, 2_500, 1) == ["PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = WAL"]
    assert _import_journal_pragmas(ws, 2_501, 10) == []  # 2,501 facts: above the bound, the WAL path as before
    assert _mode(_db(ws).conn) == "wal"
    assert _db(ws).read("SELECT COUNT(*) FROM facts")[0][0] == 2_511


@pytest.mark.parametrize("fail", [False, True], ids=["committed", "rolled-back"])
def test_another_process_opening_the_store_during_the_load_waits_then_sees_all_or_nothing(
    ws: Workspace, fail: bool
) -> None:
    db, path = _db(ws), _db_path(ws)
    child: subprocess.Popen[str] | None = None
    try:
        with pytest.raises(RuntimeError) if fail else nullcontext(), ws._store.facts.bulk():
            _write(ws, _facts(0, 300))
            assert _mode(db.conn) == "delete"
            child = subprocess.Popen([sys.executable, "-c", OPENER, str(path)], stdout=subprocess.PIPE, text=True,
                                     env=CHILD_ENV)  # fmt: skip
            assert child.stdout is not None
            assert child.stdout.readline() == "opening\n"
            assert child.stdout.readline() == "busy\n"  # it reached the store and is held off by the load
            _write(ws, _facts(300, 1200))  # written after the child tried: it can only see them by waiting
            if fail:
                raise RuntimeError("source failed")
        out, _ = child.communicate(timeout=120)
    finally:
        if child is not None and child.poll() is None:
            child.kill()
    assert child.returncode == 0
    seen = json.loads(out)
    assert seen["busy"] >= 1
    assert seen["mode"] == "wal"
    assert seen["facts"] == (0 if fail else 1500)
    assert _mode(db.conn) == "wal"
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == (0 if fail else 1500)


def test_an_open_that_outlasts_its_wait_fails_in_one_line_and_the_load_goes_on(ws: Workspace) -> None:
    db, path = _db(ws), _db_path(ws)
    with ws._store.facts.bulk():
        _write(ws, _facts(0, 300))
        run = subprocess.run([sys.executable, "-c", IMPATIENT, str(path)], capture_output=True, text=True,
                             env=CHILD_ENV, timeout=120, check=True)  # fmt: skip  # the load holds on until it ends
        seen = json.loads(run.stdout)
        assert seen["error"] == "StoreBusyError"
        assert seen["message"] == f"store: {path} stayed locked by another writer; try again"
        assert _mode(db.conn) == "delete"  # the opener changed nothing
        _write(ws, _facts(300, 200))
    assert _mode(db.conn) == "wal"
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == 500
    assert db.integrity_ok()


def _dump(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.iterdump())


def test_a_writer_killed_mid_load_leaves_the_store_as_before_and_in_wal(ws: Workspace) -> None:
    path = _db_path(ws)
    _write(ws, _facts(0, 40))
    ws.close()  # the loader must have the store to itself
    before, size = _dump(path), path.stat().st_size
    loader = subprocess.Popen([sys.executable, "-c", LOADER, str(path.parent.parent)], stdout=subprocess.PIPE,
                              text=True, env=CHILD_ENV)  # fmt: skip
    try:
        assert loader.stdout is not None
        assert loader.stdout.readline() == "delete\n"
        assert Path(f"{path}-journal").exists()
        assert path.stat().st_size > size  # spilled pages are in the database file already
    finally:
        loader.send_signal(signal.SIGKILL)
        loader.communicate(timeout=60)
    assert _header_versions(path) == (1, 1)  # the loader's switch: a rollback-journal store with a hot journal
    reopened = Database(path)  # as every process opens it: the journal is rolled back, then the switch to WAL
    try:
        assert _mode(reopened.conn) == "wal"
        assert reopened.integrity_ok()
        assert not Path(f"{path}-journal").exists()
    finally:
        reopened.close()
    assert _header_versions(path) == (2, 2)
    assert _dump(path) == before
    assert path == path.parent.parent / STATE_DIR / DB_FILE
    with open_workspace(path.parent.parent) as again:  # and the workspace opens and reads it
        assert len(again.facts.query("a", limit=100)) == 40
