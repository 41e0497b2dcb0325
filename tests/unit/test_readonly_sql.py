"""Read-only SQL over the embedded store (kg/store/sqlite/readonly.py) on a real database."""

from __future__ import annotations

import hashlib

import pytest

from kg.errors import InputError
from kg.store.sqlite.readonly import run_readonly


@pytest.fixture
def db(ws):
    for n in range(5):
        ws.facts.assert_fact("a", f"s{n}", "p", f"o{n}")
    return ws._store.db.path


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_select_returns_columns_and_rows(db):
    result = run_readonly(db, "SELECT subject, object FROM facts WHERE predicate = 'p' ORDER BY subject")
    assert result.columns == ["subject", "object"]
    assert result.rows == [[f"s{n}", f"o{n}"] for n in range(5)] and not result.truncated
    counted = run_readonly(db, "WITH t AS (SELECT * FROM facts) SELECT count(*) AS n FROM t")
    assert counted.rows == [[5]]


def test_rows_past_the_limit_are_cut_and_said(db):
    result = run_readonly(db, "SELECT uid FROM facts", limit=2)
    assert len(result.rows) == 2 and result.truncated
    with pytest.raises(InputError, match="limit"):
        run_readonly(db, "SELECT 1", limit=0)


@pytest.mark.parametrize("sql", [
    "DELETE FROM facts",
    "UPDATE facts SET object = 'x'",
    "INSERT INTO agents(agent_id) VALUES ('evil')",
    "DROP TABLE facts",
    "CREATE TABLE t(x)",
    "ATTACH DATABASE ':memory:' AS other",
    "PRAGMA journal_mode = DELETE",
    "BEGIN IMMEDIATE",
    "SELECT 1; DELETE FROM facts",
    "",
])  # fmt: skip
def test_anything_but_reading_is_refused_and_changes_nothing(db, sql):
    before = digest(db)
    with pytest.raises(InputError, match="sql"):
        run_readonly(db, sql)
    assert digest(db) == before
    assert run_readonly(db, "SELECT count(*) FROM facts").rows == [[5]]


def test_blobs_are_described_not_dumped(ws, db):
    ws.ports.embeddings.put_many("m", {hashlib.sha256(b"x").hexdigest(): [1.0, 2.0]})
    assert run_readonly(db, "SELECT vector FROM embeddings").rows == [["<blob 8 bytes>"]]


ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r)"


def test_an_endless_recursive_query_streams_to_the_row_cap(db):
    result = run_readonly(db, f"{ENDLESS} SELECT n FROM r", limit=10)
    assert result.rows == [[n] for n in range(1, 11)] and result.truncated


@pytest.mark.parametrize("tail", ["SELECT max(n) FROM r", "SELECT n FROM r ORDER BY n DESC"])
def test_a_query_that_never_returns_a_row_stops_at_the_deadline(db, tail):
    with pytest.raises(InputError, match=r"^sql: .*timeout of 0.2 s") as caught:
        run_readonly(db, f"{ENDLESS} {tail}", timeout=0.2)
    assert "\n" not in str(caught.value)
    assert run_readonly(db, "SELECT count(*) FROM facts").rows == [[5]]  # the database is still usable


def test_the_deadline_is_checked(db):
    for bad in (0, -1, 301, float("nan")):
        with pytest.raises(InputError, match=r"^timeout: "):
            run_readonly(db, "SELECT 1", timeout=bad)


def test_huge_values_are_refused_not_built(db):
    with pytest.raises(InputError, match=r"^sql: .*too big"):
        run_readonly(db, "SELECT zeroblob(200000000)")
    with pytest.raises(InputError, match=r"^sql: .*too big"):
        run_readonly(db, "SELECT hex(zeroblob(10000000))")  # 20 MB of text


def test_the_result_is_cut_at_its_size_cap(db):
    result = run_readonly(db, f"{ENDLESS} SELECT printf('%.*c', 5000000, 'x') FROM r", limit=100)
    assert 0 < len(result.rows) < 100 and result.truncated
