"""The vector sidecar (``.mabos/vectors``) kept in step with the store through the ``vector_queue`` table.

Real SQLite triggers fill the queue, the real all-MiniLM-L6-v2 embeds, real FAISS files are written.
Two :class:`VectorSidecar` objects on one directory stand for two processes sharing a workspace.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kg.errors import BackendUnavailableError, InputError
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.recall.sidecar import VECTORS_DIR, IndexUnavailableError, VectorSidecar
from kg.recall.vectors import MANIFEST
from kg.workspace import DB_FILE, STATE_DIR

CAR = "The car would not start this morning"
TEA = "Bob likes green tea"
HOT = "The server room is too hot"


def put(ws, content: str, agent: str = "a"):
    return ws.memory.store_item(agent, content, type="fact").item


def queue_rows(ws) -> list[tuple[int, str]]:
    """The queue table as a separate connection sees it (what another process would find)."""
    conn = sqlite3.connect(f"file:{ws.path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    try:
        return [(int(s), str(u)) for s, u in conn.execute("SELECT seq, uid FROM vector_queue ORDER BY seq")]
    finally:
        conn.close()


def manifest(ws) -> dict:
    return json.loads((ws.path / VECTORS_DIR / MANIFEST).read_text())


def sidecar(ws, embedder=None) -> VectorSidecar:
    """Another sidecar on the workspace's directory: another process."""
    return VectorSidecar(ws.path / VECTORS_DIR, ws.ports, embedder or ws.embedder)


@pytest.fixture
def broken(tmp_path: Path) -> SentenceTransformerEmbedder:
    """The real embedder pointed at an empty folder: same model name and dimension, cannot load."""
    empty = tmp_path / "no-model"
    empty.mkdir()
    return SentenceTransformerEmbedder(model_path=empty)


# ------------------------------------------------------------------------------ the queue


def test_triggers_queue_inserts_and_content_changes_only(ws):
    car = put(ws, CAR)
    assert [uid for _, uid in queue_rows(ws)] == [car.uid]
    ws.memory.update("a", car.uid, importance=0.9, tags=["auto"])  # not the content: nothing to re-embed
    ws.memory.recall("a", "car")  # touching access statistics is not a content change either
    assert [uid for _, uid in queue_rows(ws)] == [car.uid]  # ... and a recall indexes nothing
    ws.vectors.sync(save=True)  # an indexing pass saves, which forgets the row
    assert queue_rows(ws) == []
    ws.ports.memory.update([(car.uid, {"archived_at": ws.clock.now()})], now=ws.clock.now())
    assert queue_rows(ws) == []


def test_queue_rows_are_forgotten_only_after_the_save(ws, broken):
    put(ws, CAR)
    vectors = ws.vectors
    assert vectors.sync().rebuilt is True and queue_rows(ws) == []
    position = manifest(ws)["queue_position"]
    tea = put(ws, TEA)
    [(seq, uid)] = queue_rows(ws)
    assert uid == tea.uid and seq > position

    report = vectors.sync(save=False)
    assert (report.indexed, report.saved, report.backlog) == (1, False, 0)
    assert vectors.backlog() == 0  # the in-memory index has it ...
    assert queue_rows(ws) == [(seq, tea.uid)]  # ... but the queue keeps it until the save
    assert manifest(ws)["queue_position"] == position
    assert vectors.status()["backlog"] == 1 and vectors.status()["indexed"] == 1  # the saved index lacks it

    # a process that died before the save: the next one re-embeds the item from the queue, nothing is lost
    assert sidecar(ws).sync(save=False).indexed == 1

    assert vectors.save() is True and vectors.save() is False  # nothing more to save
    assert queue_rows(ws) == [] and manifest(ws)["queue_position"] == seq
    # the saved files now hold it: a sidecar that cannot embed anything still finds it indexed
    index = sidecar(ws, broken).index(inline_limit=0)
    assert tea.uid in index and len(index) == 2


def test_a_content_change_is_re_embedded(ws):
    car = put(ws, CAR)
    ws.vectors.sync(save=True)
    # content changes go through the store (the service keeps content immutable)
    with ws.ports.memory.db.write() as conn:
        conn.execute("UPDATE memory_items SET content = ? WHERE uid = ?", (TEA, car.uid))
    assert [uid for _, uid in queue_rows(ws)] == [car.uid]
    # a recall scores the new content (the index's old vector of it is left out) ...
    assert ws.memory.recall("a", "vehicle broke down", mode="vector").hits == []
    [hit] = ws.memory.recall("a", "a hot drink Bob enjoys", mode="vector").hits
    assert hit.item.uid == car.uid and hit.vector > 0.3
    assert [uid for _, uid in queue_rows(ws)] == [car.uid]  # ... and leaves the re-embedding to a pass
    report = ws.vectors.sync(save=True)
    assert (report.indexed, queue_rows(ws)) == (1, []) and len(ws.vectors.index(inline_limit=0)) == 1
    [again] = ws.memory.recall("a", "a hot drink Bob enjoys", mode="vector").hits
    assert again.item.uid == car.uid and again.vector == hit.vector


# ------------------------------------------------------------------------------ status, limits, rebuild


def test_status_does_not_load_the_model(ws, broken):
    put(ws, CAR)
    put(ws, TEA)
    status = sidecar(ws, broken).status()  # loading would raise: the folder is empty
    assert (status["state"], status["reason"], status["items"], status["indexed"], status["backlog"]) == (
        "missing", "no manifest", 2, 0, 2)  # fmt: skip
    assert (status["model"], status["dimension"]) == ("all-MiniLM-L6-v2", 384)
    assert ws.vectors.status()["state"] == "missing"  # the workspace's own, before the first indexing pass
    assert not (ws.path / VECTORS_DIR).exists()  # status creates nothing
    with pytest.raises(BackendUnavailableError):
        broken.load()  # it really could not have loaded
    ws.vectors.sync(save=True)  # what 'mabos index update' runs
    status = sidecar(ws, broken).status()
    assert (status["state"], status["indexed"], status["backlog"], status["kind"]) == ("ready", 2, 0, "flat")
    assert status["store_id"] == ws.ports.index_queue.store_id()


def test_inline_limit_of_a_sync_without_an_index(ws):
    for text in (CAR, TEA, HOT):
        put(ws, text)
    report = ws.vectors.sync(limit=2)
    assert report.usable is False and report.backlog == 3
    assert report.reason == (
        "vector index missing: 3 items to index (run 'mabos index update'; the nightly job builds it too)"
    )
    with pytest.raises(IndexUnavailableError, match="3 items to index"):
        ws.vectors.index(inline_limit=2)
    assert not (ws.path / VECTORS_DIR / MANIFEST).exists()
    report = ws.vectors.sync(limit=3)  # exactly the limit: rebuilt inline
    assert (report.usable, report.rebuilt, report.indexed, report.backlog) == (True, True, 3, 0)
    with pytest.raises(InputError) as caught:
        ws.vectors.sync(limit=-1)
    assert caught.value.field == "limit"


def test_rebuild_and_reindex_agent(ws):
    for text in (CAR, TEA):
        put(ws, text)
    put(ws, HOT, agent="b")
    report = ws.vectors.rebuild()
    assert (report.usable, report.rebuilt, report.indexed, report.backlog) == (True, True, 3, 0)
    report = ws.vectors.reindex_agent("b")
    assert (report.indexed, report.saved, report.backlog) == (1, True, 0)
    status = ws.vectors.status()
    assert (status["state"], status["items"], status["indexed"], status["backlog"]) == ("ready", 3, 3, 0)


# ------------------------------------------------------------------------------ two processes


def test_a_second_process_reloads_before_writing_and_keeps_the_first_ones_vectors(ws):
    car = put(ws, CAR)
    first, second = sidecar(ws), sidecar(ws)
    assert first.sync().rebuilt and second.sync().indexed == 0  # the second loads what the first saved
    tea = put(ws, TEA)
    assert first.sync().saved  # the first adds the tea and saves a new generation
    hot = put(ws, HOT)
    report = second.sync()  # stale in memory: reloads the first one's save, then adds its own
    assert (report.indexed, report.saved) == (1, True)
    fresh = sidecar(ws).index(inline_limit=0)
    assert {u for u in (car.uid, tea.uid, hot.uid) if u in fresh} == {car.uid, tea.uid, hot.uid}
    assert queue_rows(ws) == [] and sidecar(ws).status()["indexed"] == 3


def test_save_does_not_lose_what_another_process_saved_meanwhile(ws):
    put(ws, CAR)
    first, second = sidecar(ws), sidecar(ws)
    first.sync()
    second.sync()
    hot = put(ws, HOT)
    second.sync(save=False)  # e.g. a large index: a recall adds inline, Workspace.close() saves later
    tea = put(ws, TEA)
    first.sync()  # the other process indexes hot and tea and saves (forgetting their queue rows)
    assert second.save() is True  # what Workspace.close() does
    status = sidecar(ws).status()
    fresh = sidecar(ws).index(inline_limit=0)
    assert tea.uid in fresh and hot.uid in fresh
    assert status["indexed"] == status["items"] == 3


# ------------------------------------------------------------------------------ building a missing index


class _Counting:
    """The workspace's real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.texts = inner, 0
        self.model, self.dimension = inner.model, inner.dimension

    def embed(self, texts, *, batch=False):
        self.texts += len(texts)
        return self.inner.embed(texts, batch=batch)


class _Killed(Exception):
    """Stands for the process dying in the middle of a build."""


def test_an_interrupted_build_resumes_from_its_last_checkpoint(ws):
    items = [put(ws, f"Note {n}: {text}") for n, text in enumerate((CAR, TEA, HOT, CAR, TEA))]
    counting = _Counting(ws.embedder)
    first = VectorSidecar(ws.path / VECTORS_DIR, ws.ports, counting, save_every=2, batch=2)
    seen: list[tuple[int, int]] = []

    def die_after_four(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 4:
            raise _Killed

    with pytest.raises(_Killed):
        first.sync(progress=die_after_four)
    assert seen == [(2, 5), (4, 5)]
    assert manifest(ws)["build"]["done"] == 4  # the checkpoint at 4 items is on disk
    status = sidecar(ws).status()
    assert (status["state"], status["indexed"], status["items"]) == ("building", 4, 5)
    report = sidecar(ws).sync(limit=0)  # a recall's inline pass does not build: BM25 meanwhile
    assert report.usable is False and report.reason.startswith("vector index being built (4 of 5 items)")
    counting.texts, seen[:] = 0, []
    again = VectorSidecar(ws.path / VECTORS_DIR, ws.ports, counting, save_every=2, batch=2)  # the next process
    report = again.sync(progress=lambda done, total: seen.append((done, total)))
    assert (report.usable, report.rebuilt, report.indexed, report.backlog) == (True, True, 1, 0)
    assert counting.texts == 1 and seen == [(5, 5)]  # only the item after the checkpoint was embedded
    assert "build" not in manifest(ws) and queue_rows(ws) == []
    index = sidecar(ws).index(inline_limit=0)
    assert all(i.uid in index for i in items) and len(index) == 5
    assert sidecar(ws).status()["state"] == "ready"


def test_items_written_during_a_build_are_indexed_by_the_next_pass(ws):
    put(ws, CAR)
    put(ws, TEA)
    building = VectorSidecar(ws.path / VECTORS_DIR, ws.ports, ws.embedder, save_every=1, batch=1)
    late: list = []

    def write_meanwhile(done: int, total: int) -> None:
        if done == 1 and not late:
            late.append(put(ws, HOT))  # another writer adds an item while the build runs

    building.sync(progress=write_meanwhile)
    report = building.sync()
    assert report.usable and report.backlog == 0
    index = sidecar(ws).index(inline_limit=0)
    assert late[0].uid in index and len(index) == 3
