"""The facts' full-text index catches up when searched (migration 11, issue 22).

Writers only insert rows; a search first indexes every fact above the index's mark, in one write transaction
with the mark. What must hold: every fact committed before a search is found by it (also facts another
connection wrote), each fact is in the index exactly once (FTS5's own integrity check fails on a missing or a
doubled entry), a failed catch-up changes neither the index nor the mark, and a catch-up that finds the work
done by another connection does nothing.

Also here: the short GIL switch interval a multi-batch assert uses while its helper thread screens the next
batch is restored afterwards, also after an error and when several overlap.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.errors import InputError
from kg.facts_fast import HANDOFF_INTERVAL, quick_handoff
from kg.workspace import Workspace
from tests.fts import check_fts


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def facts(n: int, word: str = "widget", start: int = 0) -> list[dict[str, Any]]:
    return [{"subject": f"item{i}", "predicate": "madeOf", "object": f"{word} part{i}"}
            for i in range(start, start + n)]  # fmt: skip


def indexed(ws: Workspace) -> int:
    """Rows in the index itself (facts_fts reads its content table, facts; the docsize table has a row per entry)."""
    return int(ws._store.db.read("SELECT COUNT(*) FROM facts_fts_docsize")[0][0])


@pytest.fixture
def ws(tmp_path: Path) -> Any:
    with kg.init_workspace(tmp_path / "ws") as workspace:
        workspace.agents.add("a")
        yield workspace


def test_writers_do_not_index_and_the_first_search_finds_every_fact(ws: Workspace) -> None:
    ws.facts.assert_many("a", facts(2500), batch_size=1000)
    assert indexed(ws) == 0 and ws.ports.facts.search_pending() == 2500
    with pytest.raises(sqlite3.DatabaseError):  # the index lags its table until a search: the check says so
        check_fts(ws._store.db)
    found = ws.ports.facts.search("widget", scopes=["agent:a"], limit=5000)
    assert len({f.uid for f in found}) == len(found) == 2500
    assert ws.ports.facts.search_pending() == 0 and indexed(ws) == 2500
    check_fts(ws._store.db)
    ws.facts.assert_fact("a", "gadget", "madeOf", "widget steel")  # a single assert: also found next time
    assert len(ws.ports.facts.search("widget", scopes=["agent:a"], limit=5000)) == 2501
    assert [f.subject for f in ws.ports.facts.search("steel", scopes=["agent:a"])] == ["gadget"]
    check_fts(ws._store.db)


def test_a_search_finds_what_another_connection_committed(ws: Workspace) -> None:
    ws.facts.assert_many("a", facts(10))
    assert len(ws.ports.facts.search("widget", scopes=["agent:a"])) == 10
    with kg.open_workspace(ws.path) as other:  # a second process would use its own connection like this
        other.facts.assert_many("a", facts(30, "sprocket", start=10))
    assert len(ws.ports.facts.search("sprocket", scopes=["agent:a"], limit=50)) == 30
    check_fts(ws._store.db)


def test_a_failed_catch_up_changes_neither_the_index_nor_its_mark(ws: Workspace) -> None:
    ws.facts.assert_many("a", facts(3000), batch_size=1000)
    conn = ws._store.db.conn
    conn.set_progress_handler(lambda: 1, 1000)  # interrupts the indexing statement part way
    try:
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            ws.ports.facts.catch_up_search()
    finally:
        conn.set_progress_handler(None, 0)
    assert indexed(ws) == 0 and ws.ports.facts.search_pending() == 3000
    assert len(ws.ports.facts.search("widget", scopes=["agent:a"], limit=5000)) == 3000
    check_fts(ws._store.db)


def test_a_catch_up_already_done_by_another_connection_does_nothing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.facts.assert_many("a", facts(40))
    stale = ws._store.db.read("SELECT (SELECT seq FROM search_marks), (SELECT MAX(seq) FROM facts)")
    with kg.open_workspace(ws.path) as other:  # does the work between this store's look and its lock
        assert other.ports.facts.catch_up_search() == 40
    monkeypatch.setattr(ws._store.db, "read", lambda sql, params=(): stale)  # the look saw work to do
    assert ws.ports.facts.catch_up_search() == 0  # re-read under the write lock: nothing left
    monkeypatch.undo()
    assert indexed(ws) == 40
    check_fts(ws._store.db)


def test_retracted_facts_stay_out_of_results_after_catch_up(ws: Workspace) -> None:
    ws.facts.assert_many("a", facts(5))
    ws.facts.retract("a", subject="item2", predicate="madeOf")
    assert sorted(f.subject for f in ws.ports.facts.search("widget", scopes=["agent:a"])) == [
        "item0", "item1", "item3", "item4"
    ]  # fmt: skip
    check_fts(ws._store.db)


def test_quick_handoff_restores_the_interval_even_when_blocks_overlap() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.01)
        entered, leave = threading.Event(), threading.Event()

        def other() -> None:
            with quick_handoff():
                entered.set()
                leave.wait(10)

        with quick_handoff():
            assert sys.getswitchinterval() == pytest.approx(HANDOFF_INTERVAL)
            thread = threading.Thread(target=other)
            thread.start()
            assert entered.wait(10)
        assert sys.getswitchinterval() == pytest.approx(HANDOFF_INTERVAL)  # the other block still runs
        leave.set()
        thread.join(10)
        assert sys.getswitchinterval() == pytest.approx(0.01)
        sys.setswitchinterval(0.0001)  # an application's shorter interval is never lengthened
        shorter = sys.getswitchinterval()  # as CPython stores it (whole microseconds)
        with quick_handoff():
            assert sys.getswitchinterval() == shorter
        assert sys.getswitchinterval() == shorter
    finally:
        sys.setswitchinterval(before)


def test_a_multi_batch_assert_restores_the_interval_also_after_an_error(ws: Workspace) -> None:
    before = sys.getswitchinterval()
    ws.facts.assert_many("a", facts(30), batch_size=10)
    assert sys.getswitchinterval() == before
    bad = [*facts(20), {"subject": "x", "predicate": "p", "object": "o", "confidence": 2}]
    with pytest.raises(InputError, match=r"facts\[20\]\.confidence"):
        ws.facts.assert_many("a", bad, batch_size=10)
    assert sys.getswitchinterval() == before
