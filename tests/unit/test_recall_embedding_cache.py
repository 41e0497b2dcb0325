"""The embedding cache: the SQLite table (float32 blobs, chunked lookups) and CachedEmbedder over the real model."""

from __future__ import annotations

import logging
import sqlite3
import struct
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import BackendUnavailableError, InputError
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.recall.embedding_cache import CachedEmbedder, EmbeddingCache, as_float32, content_hash
from kg.store.sqlite.db import Database
from kg.store.sqlite.embeddings import CHUNK, SqliteEmbeddingCache

MODEL = "all-MiniLM-L6-v2"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "kg.sqlite")
    yield database
    database.close()


@pytest.fixture
def cache(db: Database) -> SqliteEmbeddingCache:
    return SqliteEmbeddingCache(db)


class Recording:
    """The real embedder, recording which texts reach it (and on which path)."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.calls: list[tuple[list[str], bool]] = []

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        self.calls.append((list(texts), batch))
        return self.inner.embed(texts, batch=batch)


class Unavailable(Recording):
    """An embedder whose model cannot load."""

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        self.calls.append((list(texts), batch))
        raise BackendUnavailableError("embedder: model cannot load")


class BrokenCache:
    """A cache whose store is unavailable."""

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        raise BackendUnavailableError("store: locked")

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        raise BackendUnavailableError("store: locked")

    def count(self, model: str | None = None) -> int:
        raise BackendUnavailableError("store: locked")


def h(i: int) -> str:
    return content_hash(f"text {i}")


# ------------------------------------------------------------------------------------------ the table


def test_the_migration_creates_the_table(db):
    columns = [r["name"] for r in db.read("PRAGMA table_info(embeddings)")]
    assert columns == ["model", "content_hash", "dimension", "vector", "created_at"]


def test_content_hash_is_sha256_of_utf8():
    assert content_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert content_hash("é") != content_hash("e")


def test_vectors_are_stored_as_float32_little_endian(cache, db):
    cache.put_many(MODEL, {h(1): [1.0, -0.5, 0.25]})
    row = db.read("SELECT dimension, vector, created_at FROM embeddings")[0]
    assert row["dimension"] == 3
    assert row["vector"] == struct.pack("<3f", 1.0, -0.5, 0.25)
    assert row["created_at"].endswith("Z")


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(finite32, min_size=1, max_size=400))
def test_float32_vectors_read_back_exactly(cache, vector):
    cache.put_many(MODEL, {h(0): vector})
    assert cache.get_many(MODEL, [h(0)]) == {h(0): vector}


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=50))
def test_float64_vectors_read_back_as_their_float32_rounding(cache, vector):
    cache.put_many(MODEL, {h(0): vector})
    assert cache.get_many(MODEL, [h(0)])[h(0)] == array("f", vector).tolist() == as_float32(vector)


def test_many_hashes_at_once_are_looked_up_in_chunks(cache):
    n = 2 * CHUNK + 137  # several IN lists, each under SQLite's parameter bound
    cache.put_many(MODEL, {h(i): [float(i), 1.0] for i in range(n)})
    wanted = [h(i) for i in range(n + 50)]  # 50 were never stored
    found = cache.get_many(MODEL, wanted)
    assert len(found) == n
    assert all(found[h(i)] == [float(i), 1.0] for i in range(n))
    assert cache.count(MODEL) == cache.count() == n


def test_models_are_kept_apart_and_a_put_replaces(cache):
    cache.put_many(MODEL, {h(1): [1.0, 0.0]})
    cache.put_many("other-model", {h(1): [0.0, 1.0, 0.0]})
    cache.put_many(MODEL, {h(1): [0.5, 0.5]})
    assert cache.get_many(MODEL, [h(1)]) == {h(1): [0.5, 0.5]}
    assert cache.get_many("other-model", [h(1), h(2)]) == {h(1): [0.0, 1.0, 0.0]}
    assert (cache.count(MODEL), cache.count("other-model"), cache.count()) == (1, 1, 2)
    assert cache.get_many(MODEL, []) == {}


def test_bad_keys_are_refused_before_writing(cache):
    with pytest.raises(InputError, match="content_hash"):
        cache.put_many(MODEL, {"not-a-hash": [1.0]})
    with pytest.raises(InputError, match="vector"):
        cache.put_many(MODEL, {h(1): []})
    assert cache.count() == 0


def test_a_broken_table_reads_as_backend_unavailable(cache, db):
    with db.write() as conn:
        conn.execute("DROP TABLE embeddings")
    with pytest.raises(BackendUnavailableError, match="unreadable"):
        cache.get_many(MODEL, [h(1)])
    with pytest.raises(BackendUnavailableError, match="not writable"):
        cache.put_many(MODEL, {h(1): [1.0]})


def test_the_adapter_is_an_embedding_cache(cache):
    port: EmbeddingCache = cache
    assert port.count() == 0


def test_writes_append_no_outbox_event(cache, db):
    cache.put_many(MODEL, {h(1): [1.0]})
    assert db.read("SELECT COUNT(*) FROM outbox")[0][0] == 0


# ------------------------------------------------------------------------------------------ CachedEmbedder


def test_only_uncached_texts_are_embedded_once_in_one_call(model, cache):
    inner = Recording(model)
    cached = CachedEmbedder(inner, cache)
    cached.embed(["alpha", "beta"])
    inner.calls.clear()

    vectors = cached.embed(["gamma", "alpha", "delta", "gamma", "beta"], batch=True)

    assert inner.calls == [(["gamma", "delta"], True)]  # one call, each missing text once, batch path kept
    expected = [as_float32(v) for v in model.embed(["gamma", "alpha", "delta", "gamma", "beta"])]
    assert len(vectors) == 5
    assert vectors[0] == vectors[3]
    for got, want in zip(vectors, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-5)
    assert cache.count(MODEL) == 4


def test_a_cached_vector_equals_the_fresh_one_exactly(model, cache):
    cached = CachedEmbedder(Recording(model), cache)
    fresh = cached.embed(["JWT tokens are signed with RS256"])
    again = cached.embed(["JWT tokens are signed with RS256"])
    assert fresh == again
    assert len(fresh[0]) == 384
    assert fresh[0] == as_float32(model.embed(["JWT tokens are signed with RS256"])[0])


def test_embed_later_looks_up_now_and_embeds_the_rest_on_the_executor(model, cache):
    inner = Recording(model)
    cached = CachedEmbedder(inner, cache)
    [known] = cached.embed(["known text"])
    with ThreadPoolExecutor(max_workers=1) as pool:
        collect = cached.embed_later(["known text", "new text"], executor=pool)
        assert collect() == [known, as_float32(model.embed(["new text"])[0])]
    assert inner.calls == [(["known text"], False), (["new text"], False)]  # the known one never reached it
    assert cache.count() == 2  # stored when collected


def test_embed_later_without_remember_writes_nothing(model, cache):
    cached = CachedEmbedder(Recording(model), cache)
    with ThreadPoolExecutor(max_workers=1) as pool:
        [vector] = cached.embed_later(["a recall's query"], executor=pool, remember=False)()
    assert len(vector) == 384 and cache.count() == 0


def test_embed_later_raises_when_collected(model, cache):
    cached = CachedEmbedder(Unavailable(model), cache)
    with ThreadPoolExecutor(max_workers=1) as pool:
        collect = cached.embed_later(["anything"], executor=pool)  # starting never raises for the model
        with pytest.raises(BackendUnavailableError, match="cannot load"):
            collect()
    assert cache.count() == 0


def test_a_second_pass_reaches_no_model(model, cache):
    texts = [f"memory item number {i} about the deployment" for i in range(40)]
    first = CachedEmbedder(model, cache).embed(texts, batch=True)
    blocked = Unavailable(model)
    assert CachedEmbedder(blocked, cache).embed(texts) == first
    assert blocked.calls == []


def test_an_unavailable_model_still_raises_for_uncached_texts(model, cache):
    with pytest.raises(BackendUnavailableError, match="cannot load"):
        CachedEmbedder(Unavailable(model), cache).embed(["never embedded"])
    assert cache.count() == 0  # never a fake vector, cached or returned


def test_a_vector_of_another_length_is_recomputed(model, cache):
    cache.put_many(MODEL, {content_hash("stale"): [1.0, 0.0]})
    inner = Recording(model)
    [vector] = CachedEmbedder(inner, cache).embed(["stale"])
    assert len(vector) == 384
    assert inner.calls == [(["stale"], False)]
    assert len(cache.get_many(MODEL, [content_hash("stale")])[content_hash("stale")]) == 384


def test_an_unavailable_cache_is_skipped_with_a_warning(model, caplog):
    cached = CachedEmbedder(model, BrokenCache())
    with caplog.at_level(logging.WARNING, logger="kg.recall.embedding_cache"):
        [vector] = cached.embed(["still answers"])
    assert len(vector) == 384
    assert "unreadable" in caplog.text
    assert "not written" in caplog.text


def test_identity_and_empty_input_pass_through(model, cache):
    cached = CachedEmbedder(model, cache)
    assert (cached.model, cached.dimension) == (MODEL, 384)
    assert cached.embed([]) == []


def test_the_store_file_keeps_the_cache_across_connections(tmp_path: Path, model):
    path = tmp_path / "kg.sqlite"
    first = Database(path)
    try:
        vectors = CachedEmbedder(model, SqliteEmbeddingCache(first)).embed(["persisted"])
    finally:
        first.close()
    second = Database(path)
    try:
        blocked = Unavailable(model)
        assert CachedEmbedder(blocked, SqliteEmbeddingCache(second)).embed(["persisted"]) == vectors
    finally:
        second.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT model, dimension FROM embeddings").fetchall() == [(MODEL, 384)]
    finally:
        conn.close()
