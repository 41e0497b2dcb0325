"""A recall reads; its writes come after the answer (issue 33): access counts in one write, expiry and indexing
elsewhere.

Real workspace, real SQLite, the real FAISS sidecar and the packaged all-MiniLM-L6-v2. "Read-only" is the workspace's
own connection with ``PRAGMA query_only`` and an authorizer that records every statement that would change the
database (the tests run as root here, so a file's permissions would not stop a write).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

import kg
from kg.memory.service import RecallResult
from kg.recall.sidecar import VECTORS_DIR
from kg.workspace import Workspace

CAR = "The car would not start this morning"
JWT = "JWT tokens are signed with RS256"
REFUND = "The refund policy is 30 days for annual plans"
BIKE = "My bicycle has a flat tyre"
#: sqlite3 authorizer actions that change a database (or start a write transaction).
WRITES = {
    sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_TRANSACTION,
}  # fmt: skip


def put(ws: Workspace, content: str, **fields: object) -> str:
    return ws.memory.store_item("a", content, **fields).item.uid


def answer(result: RecallResult) -> list[tuple[str, float, float]]:
    """What a recall answered: each hit's uid, score and vector similarity (notes aside)."""
    return [(h.item.uid, h.score, h.vector) for h in result.hits]


@contextmanager
def read_only(ws: Workspace) -> Iterator[list[int]]:
    """The workspace's own connection refuses writes for the block; yields the write actions SQLite was asked for."""
    conn = ws.ports.memory.db.conn  # type: ignore[attr-defined]  # the SQLite adapter's connection, made read-only
    asked: list[int] = []

    def authorize(action: int, *_: object) -> int:
        if action in WRITES:
            asked.append(action)
        return sqlite3.SQLITE_OK  # query_only refuses the write itself

    conn.execute("PRAGMA query_only = ON")
    conn.set_authorizer(authorize)
    try:
        yield asked
    finally:
        conn.set_authorizer(None)
        conn.execute("PRAGMA query_only = OFF")


@pytest.fixture
def indexed(ws: Workspace) -> dict[str, str]:
    """Three items of agent a, indexed as 'mabos index update' leaves them, and one stored after (queued)."""
    uids = {"car": put(ws, CAR), "jwt": put(ws, JWT, type="decision"), "refund": put(ws, REFUND, type="fact")}
    assert ws.vectors is not None and ws.vectors.sync(save=True).usable
    uids["bike"] = put(ws, BIKE)
    return uids


@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
def test_a_recall_answers_from_a_read_only_store_as_from_a_writable_one(ws, indexed, snapshot, mode):
    query = "my car and my bicycle"
    expected = ws.memory.recall("a", query, mode=mode, touch=False)  # caches the queued item's vector after it
    assert expected.hits and expected.notes == []
    before = snapshot(ws)
    with read_only(ws) as asked:
        result = ws.memory.recall("a", query, mode=mode, touch=False)
    assert asked == [] and snapshot(ws) == before  # the answer path asked for no write at all
    assert answer(result) == answer(expected) and (result.mode, result.notes) == (expected.mode, [])


def test_access_is_written_after_the_answer_and_kept_when_the_store_refuses_it(ws, indexed, monkeypatch):
    expected = ws.memory.recall("a", "refund policy", touch=False)
    with read_only(ws) as asked:
        flush = ws.memory.access.flush
        monkeypatch.setattr(ws.memory.access, "flush", lambda: asked.append(-1) or flush())  # -1: the access write
        result = ws.memory.recall("a", "refund policy")
    assert answer(result) == answer(expected)  # answered all the same
    assert asked[0] == -1 and sqlite3.SQLITE_TRANSACTION in asked  # no write asked for before the access write
    [note] = result.notes
    assert note.startswith("access counts not written yet (1 recalls waiting): store: access counts not written")
    refund = indexed["refund"]
    assert ws.memory.get("a", refund).access_count == 0 and ws.memory.access.waiting == 1
    ws.clock.advance(timedelta(minutes=1))
    again = ws.memory.recall("a", "refund policy")  # writable again: the waiting access goes first
    assert again.notes == [] and ws.memory.access.waiting == 0
    item = ws.memory.get("a", refund)
    assert (item.access_count, item.accessed_at) == (2, ws.clock.now())  # no access lost


def test_a_queued_item_is_found_by_vector_and_its_vector_kept_after_the_answer(ws, indexed):
    cached = ws.ports.embeddings.count()
    with read_only(ws):  # the answer embeds the queued item in memory; keeping it is refused here, and skipped
        first = ws.memory.recall("a", "bike puncture", mode="vector", touch=False)
    assert [h.item.uid for h in first.hits] == [indexed["bike"]] and ws.ports.embeddings.count() == cached
    second = ws.memory.recall("a", "bike puncture", mode="vector", touch=False)
    assert answer(second) == answer(first) and ws.ports.embeddings.count() == cached + 1  # kept after this answer
    calls: list[list[str]] = []
    real = ws.embedder.embedder.embed
    ws.embedder.embedder.embed = lambda texts, batch=False: calls.append(list(texts)) or real(texts, batch=batch)
    third = ws.memory.recall("a", "bike puncture", mode="vector", touch=False)
    assert calls == [] and answer(third) == answer(first)  # read from the cache: nothing embedded again
    assert ws.ports.index_queue.count() == 1  # and still queued: indexing is the next pass's work


def test_expired_items_are_left_out_by_the_read_and_archived_by_a_write(ws, snapshot):
    short = put(ws, JWT)  # short-term: two hours
    kept = put(ws, "JWT rotation happens weekly", store="long_term")
    ws.clock.advance(timedelta(hours=3))
    before = snapshot(ws)
    found = ws.memory.recall("a", "JWT", mode="bm25", touch=False)
    assert [h.item.uid for h in found.hits] == [kept]
    archived = ws.memory.recall("a", "JWT", mode="bm25", touch=False, include_archived=True)
    by_uid = {h.item.uid: h.item for h in archived.hits}
    expires = by_uid[short].expires_at
    assert set(by_uid) == {short, kept} and by_uid[short].archived_at is None  # fields as stored
    assert ws.memory.status("a")["stores"]["short_term"] == {"active": 0, "archived": 1}
    assert snapshot(ws) == before  # nothing written by the reads: the item is archived on disk by a write
    events = ws.ports.outbox.counts()["pending"]
    assert ws.memory.prune_all_expired() == {"a": [short]}  # what idle time (or the nightly job) runs
    assert ws.ports.outbox.counts()["pending"] == events + 1  # with its outbox event
    assert ws.memory.get("a", short).archived_at == expires and ws.memory.prune_all_expired() == {}  # as of expiry
    assert answer(ws.memory.recall("a", "JWT", mode="bm25", touch=False)) == answer(found)  # the same items
    after = ws.memory.recall("a", "JWT", mode="bm25", touch=False, include_archived=True)
    assert answer(after) == answer(archived)


def test_a_short_term_item_written_before_its_expiry_is_archived_by_the_agents_next_write(ws):
    short = put(ws, JWT)
    ws.clock.advance(timedelta(hours=3))
    result = ws.memory.store_item("a", "A later note")
    assert result.archived == [short]
    item = ws.memory.get("a", short)
    assert item.archived_at == item.expires_at  # archived as of its expiry, whenever the write came


def test_the_vectors_folder_is_not_created_or_locked_by_a_recall(ws, indexed):
    lock = ws.path / VECTORS_DIR / "index.lock"
    lock.unlink()
    ws.memory.recall("a", CAR, touch=False)
    assert not lock.exists()  # no lock file: a recall reads the saved files as they are


def test_accesses_a_refused_write_left_waiting_are_written_when_the_workspace_closes(clock, indexed, ws):
    """A CLI process ends after one recall: what the store refused during it is written by ``Workspace.close``."""
    with read_only(ws):
        result = ws.memory.recall("a", "refund policy")
    assert ws.memory.access.waiting == 1 and result.notes
    ws.close()
    with kg.init_workspace(ws.path, clock=clock) as again:
        assert again.memory.get("a", indexed["refund"]).access_count == 1  # not lost with the process


def test_an_idle_index_pass_archives_what_reads_leave_out(ws):
    """The console's and MCP server's idle pass (cli.idle_index) archives expired items: recall never does."""
    from multiprocessing import Pipe  # noqa: PLC0415

    from cli.idle_index import _index_pass  # noqa: PLC0415

    short = put(ws, JWT)  # short-term: two hours after the test clock's T0, long past by the system clock
    ws.close()
    ours, theirs = Pipe()
    _index_pass(theirs, str(ws.path), 10, 10)  # run in this process: the pass opens the workspace itself
    assert ours.recv()[0] in {"progress", "done"}
    with kg.init_workspace(ws.path, clock=ws.clock) as again:
        item = again.memory.get("a", short)
        assert item.archived_at == item.expires_at is not None


@pytest.mark.parametrize(("query", "fields"), [
    ("my car and my bicycle", {"mode": "hybrid", "explain": True}), ("my car and my bicycle", {"mode": "vector"}),
    ("refund policy", {"mode": "bm25", "explain": True, "depth": 1}), ("car", {"mode": "hybrid", "mmr": True}),
    ("", {}),  # no query: the most important items
])  # fmt: skip
def test_the_hits_a_recall_constructs_are_the_hits_validation_makes(ws, indexed, query, fields):
    """:class:`RecallSearch` constructs its hits without validating them again (a recall builds no validator of
    its own for them): each equals, field for field and in its JSON, the hit validated from the same values."""
    from kg.memory.recall_search import RecallHit  # noqa: PLC0415

    result = ws.memory.recall("a", query, touch=False, **fields)
    assert result.hits
    for hit in result.hits:
        validated = RecallHit.model_validate({name: getattr(hit, name) for name in hit.model_fields_set})
        assert validated == hit and validated.model_fields_set == hit.model_fields_set
        assert validated.model_dump_json() == hit.model_dump_json()
        assert all(type(getattr(validated, n)) is type(getattr(hit, n)) for n in RecallHit.model_fields)
    assert RecallResult.model_validate_json(result.model_dump_json()) == result
