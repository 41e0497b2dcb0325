"""A bulk transaction into a small store builds two secondary indexes once at its end (issue 33).

``SqliteFactStore.bulk`` drops ``facts_object`` and ``facts_predicate_object`` when the store holds at most
``DEFER_INDEX_MAX_ROWS`` facts and creates them again, from the same SQL, before its commit (sorting with
``temp_store = FILE``, which packs the sort's records, when SQLite allows the switch); it also writes with
``secure_delete`` off and puts both settings back. What must hold: the indexes come back identical and consistent
with the table (``integrity_check`` compares every index entry with its row), the object and predicate queries use
them again, other connections never see them missing, a failed load brings them back, and a store above the bound
keeps them throughout. The live-triple key is not deferred: a stream into an empty store can repeat a live key, and that
row must be upserted. The imported facts themselves are compared with the parse-first path (which writes without
``bulk``) in tests/unit/test_fact_import_paths.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

import kg.store.sqlite.facts as fact_store
from kg.models import FactInput
from kg.rdf import importer
from kg.rdf.importer import RdfDocument, import_documents
from kg.store.sqlite.facts_sql import DEFERRED_INDEXES
from kg.workspace import Workspace

INDEXES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'facts' ORDER BY name"


@pytest.fixture
def ws(workspace: Workspace) -> Iterator[Workspace]:
    workspace.agents.add("a")
    yield workspace


def _facts(start: int, count: int) -> list[FactInput]:
    return [
        FactInput(agent_id="a", subject=f"s{i % 13}", predicate=f"p{i % 3}", object=f"o{i}")
        for i in range(start, start + count)
    ]


def _write(ws: Workspace, facts: list[FactInput]) -> None:
    store = ws._store.facts
    store.assert_prepared(store.prepare(facts, asserted_by="a"))


def _indexes(conn: sqlite3.Connection) -> dict[str, str]:
    return {str(name): str(sql) for name, sql in conn.execute(INDEXES)}


def _plan(ws: Workspace, sql: str, params: tuple[Any, ...]) -> str:
    return " ".join(str(r["detail"]) for r in ws._store.db.read(f"EXPLAIN QUERY PLAN {sql}", params))


def test_a_bulk_load_into_a_small_store_builds_the_deferred_indexes_at_its_end(ws: Workspace) -> None:
    db = ws._store.db
    before = _indexes(db.conn)
    assert set(DEFERRED_INDEXES) <= before.keys()
    with sqlite3.connect(db.path) as reader:
        with ws._store.facts.bulk():
            _write(ws, _facts(0, 300))
            inside = _indexes(db.conn)
            assert int(db.conn.execute("PRAGMA secure_delete").fetchone()[0]) == 0
            assert reader.execute("SELECT COUNT(*) FROM facts").fetchone()[0] == 0  # the reader's own snapshot
            seen_by_reader = _indexes(reader)
            _write(ws, _facts(300, 200))
        assert not set(DEFERRED_INDEXES) & inside.keys()  # built once, at the end
        assert seen_by_reader == before  # another connection never sees them missing
        assert _indexes(reader) == before
    assert _indexes(db.conn) == before  # the same SQL
    assert int(db.conn.execute("PRAGMA secure_delete").fetchone()[0]) == 1
    assert db.integrity_ok()  # every index entry matches its row
    assert "facts_object" in _plan(ws, "SELECT uid FROM facts WHERE object = ?", ("o7",))
    assert "facts_predicate_object" in _plan(ws, "SELECT uid FROM facts WHERE predicate = ? AND object = ?",
                                             ("p1", "o7"))  # fmt: skip
    assert [f.subject for f in ws.facts.query("a", object="o7")] == ["s7"]
    assert len(ws.facts.query("a", predicate="p2", limit=1000)) == 166


def test_an_import_answers_object_and_predicate_queries(ws: Workspace) -> None:
    ttl = "".join(f"<http://e.org/s{i}> <http://e.org/p{i % 4}> <http://e.org/o{i % 50}> .\n" for i in range(400))
    report = import_documents(ws, "a", [RdfDocument(name="x.nt", format="nt", content=ttl)])
    assert report.created == 400
    assert {f.subject for f in ws.facts.query("a", object="http://e.org/o3", limit=100)} == {
        f"http://e.org/s{i}" for i in range(3, 400, 50)
    }
    both = ws.facts.query("a", predicate="http://e.org/p1", object="http://e.org/o5", limit=100)
    assert {f.subject for f in both} == {f"http://e.org/s{i}" for i in range(400) if i % 4 == 1 and i % 50 == 5}
    assert ws._store.db.integrity_ok()


def test_a_failed_bulk_load_brings_the_indexes_and_the_setting_back(ws: Workspace) -> None:
    db = ws._store.db
    _write(ws, _facts(0, 20))
    before = _indexes(db.conn)
    with pytest.raises(RuntimeError, match="source failed"), ws._store.facts.bulk():
        _write(ws, _facts(20, 100))
        assert not set(DEFERRED_INDEXES) & _indexes(db.conn).keys()
        raise RuntimeError("source failed")
    assert _indexes(db.conn) == before
    assert int(db.conn.execute("PRAGMA secure_delete").fetchone()[0]) == 1
    assert db.read("SELECT COUNT(*) FROM facts")[0][0] == 20
    assert db.integrity_ok()


def test_a_store_above_the_bound_keeps_its_indexes(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ws._store.db
    monkeypatch.setattr(fact_store, "DEFER_INDEX_MAX_ROWS", 10)
    _write(ws, _facts(0, 10))
    with ws._store.facts.bulk():  # 10 facts: at the bound, rebuilt
        assert not set(DEFERRED_INDEXES) & _indexes(db.conn).keys()
        _write(ws, _facts(10, 1))
    before = _indexes(db.conn)
    with ws._store.facts.bulk():  # 11 facts: above it, the rows go into the indexes one by one
        assert _indexes(db.conn) == before
        _write(ws, _facts(11, 50))
    assert _indexes(db.conn) == before
    assert db.integrity_ok()
    assert [f.subject for f in ws.facts.query("a", object="o40")] == ["s1"]


# Two RDF triples can be one stored fact: TripleStream merges repeats on (subject, predicate, text, datatype or
# language), the store's live key is (scope, subject, predicate, object). So even a load into an empty store repeats
# live keys inside its one bulk() transaction, and those rows must take the upsert path (the reason the live-triple
# index, the upsert's conflict target, is not deferred: docs/decisions/2026-11-29-lubm-import-speed.md, sixth pass).
REPEATS = """@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://e.org/s> <http://e.org/p> "1"^^xsd:integer .
<http://e.org/s> <http://e.org/p> "01"^^xsd:integer .
<http://e.org/s> <http://e.org/p> "1" .
<http://e.org/s> <http://e.org/q> "x"@en .
<http://e.org/s> <http://e.org/r> <http://e.org/o> .
<http://e.org/s> <http://e.org/q> "x"@fr .
<http://e.org/s> <http://e.org/r> "http://e.org/o" .
<http://e.org/t> <http://e.org/p> "2" .
"""


def test_a_stream_repeating_a_live_key_in_an_empty_store_upserts_it(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "IMPORT_BATCH", 2)  # the repeats fall in later batches of the one transaction
    db = ws._store.db
    assert db.read("SELECT COALESCE(MAX(seq), 0) FROM facts")[0][0] == 0
    report = import_documents(ws, "a", [RdfDocument(name="r.ttl", format="turtle", content=REPEATS)])
    # 7 distinct triples ("01" is "1" once normalised); 4 stored keys: "1" twice (same kind: unchanged), "x" twice
    # (unchanged), o as an entity then as a literal (the kind changes: updated)
    assert (report.triples, report.created, report.unchanged, report.updated) == (7, 4, 2, 1)
    rows = db.read("SELECT subject, predicate, object, object_kind FROM facts WHERE retracted_at IS NULL ORDER BY seq")
    assert [tuple(r) for r in rows] == [
        ("http://e.org/s", "http://e.org/p", "1", "literal"),
        ("http://e.org/s", "http://e.org/q", "x", "literal"),
        ("http://e.org/s", "http://e.org/r", "http://e.org/o", "literal"),
        ("http://e.org/t", "http://e.org/p", "2", "literal"),
    ]
    events = db.read("SELECT op, COUNT(*) FROM outbox WHERE aggregate = 'fact' GROUP BY op")
    assert [tuple(e) for e in events] == [("upsert", 5)]  # four created, one changed
    assert db.integrity_ok()


def test_the_builds_sort_with_temp_store_file_and_set_it_back(ws: Workspace) -> None:
    # temp_store = FILE makes SQLite's sorter pack the builds' records in one buffer (no file below the page
    # cache's size: docs/decisions/2026-11-29-lubm-import-speed.md, eighth pass); MEMORY everywhere else
    db = ws._store.db
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        with ws._store.facts.bulk():
            _write(ws, _facts(0, 300))
    finally:
        db.conn.set_trace_callback(None)
    steps = [s.split(" ON ")[0] for s in statements if s.startswith(("PRAGMA temp_store", "CREATE INDEX", "COMMIT"))]
    assert steps == ["PRAGMA temp_store", "PRAGMA temp_store = FILE", *(f"CREATE INDEX {n}" for n in
                     sorted(DEFERRED_INDEXES)), "PRAGMA temp_store = 2", "COMMIT"]  # fmt: skip
    assert int(db.conn.execute("PRAGMA temp_store").fetchone()[0]) == 2  # MEMORY, as the store opened it
    assert db.integrity_ok()
    assert [f.subject for f in ws.facts.query("a", object="o7")] == ["s7"]


def test_a_connection_with_its_temp_database_open_builds_as_before(ws: Workspace) -> None:
    db = ws._store.db
    db.conn.execute("CREATE TEMP TABLE scratch(x)")  # as the recall's term statistics do on this connection
    db.conn.execute("INSERT INTO scratch VALUES (1)")
    with db.packed_sorts() as packed:  # outside a transaction the switch would drop the TEMP tables
        assert not packed
    assert [tuple(r) for r in db.conn.execute("SELECT x FROM scratch")] == [(1,)]
    with db.write():
        with db.packed_sorts() as packed:  # SQLite refuses the switch inside a transaction now
            assert not packed
        assert int(db.conn.execute("PRAGMA temp_store").fetchone()[0]) == 2
    with ws._store.facts.bulk():
        _write(ws, _facts(0, 300))
    assert int(db.conn.execute("PRAGMA temp_store").fetchone()[0]) == 2
    assert _indexes(db.conn).keys() >= set(DEFERRED_INDEXES)
    assert db.integrity_ok()
    assert len(ws.facts.query("a", predicate="p2", limit=1000)) == 100
