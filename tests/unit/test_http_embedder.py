"""The OpenAI-compatible HTTP embedder against a local stub server (127.0.0.1, started per test)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kg.errors import BackendUnavailableError, InputError
from kg.recall.embedding_cache import CachedEmbedder
from kg.recall.http_embedder import HttpEmbedder, endpoint_url
from kg.store.sqlite.db import Database
from kg.store.sqlite.embeddings import SqliteEmbeddingCache
from tests.stubs.chat_server import ChatStub
from tests.stubs.http_failures import HttpFailureContract, answered


def vector_for(text: str) -> list[float]:
    """The stub's 4-d answer: a function of the text, deliberately not unit length."""
    return [float(len(text)), 1.0, 2.0, float(sum(map(ord, text)) % 7)]


def openai_answer(body: Any, *, shuffle: bool = False) -> tuple[int, bytes]:
    data = [{"object": "embedding", "index": i, "embedding": vector_for(t)} for i, t in enumerate(body["input"])]
    if shuffle:
        data.reverse()
    return 200, json.dumps({"object": "list", "model": body["model"], "data": data}).encode()


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStub]:
    """The shared stub server (tests/stubs/chat_server.py) answering as an embeddings endpoint."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # a proxy configured on the machine must not intercept
    with ChatStub() as server:
        server.responder = openai_answer
        yield server


def ask(url: str, timeout: float) -> list[list[float]]:
    """One embedding from the server at ``url`` (the HTTP failure checks' client)."""
    return HttpEmbedder(url, model="mini", timeout=timeout).embed(["x"])


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


# ------------------------------------------------------------------------------------------ answers


def test_vectors_come_back_normalised_in_input_order(stub):
    stub.responder = lambda body: openai_answer(body, shuffle=True)  # servers may answer out of order
    embedder = HttpEmbedder(stub.url, model="mini")
    texts = ["alpha", "a longer text", "z"]
    vectors = embedder.embed(texts)
    np.testing.assert_allclose(vectors, [unit(vector_for(t)) for t in texts])
    [request] = stub.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "mini", "input": texts}
    assert request.headers["Content-Type"] == "application/json"
    assert "Authorization" not in request.headers


def test_the_dimension_is_learnt_from_the_first_response(stub):
    embedder = HttpEmbedder(stub.url, model="mini")
    embedder.embed(["x"])
    assert embedder.dimension == 4
    assert len(stub.requests) == 1


def test_an_unknown_dimension_is_probed_once(stub):
    embedder = HttpEmbedder(stub.url, model="mini")
    assert embedder.dimension == 4
    assert embedder.dimension == 4
    assert len(stub.requests) == 1


def test_a_configured_dimension_needs_no_request_and_is_enforced(stub):
    embedder = HttpEmbedder(stub.url, model="mini", dimension=8)
    assert embedder.dimension == 8
    assert stub.requests == []
    with pytest.raises(BackendUnavailableError, match=r"length \[4\], expected 8"):
        embedder.embed(["x"])


def test_long_inputs_are_split_into_bounded_requests(stub):
    embedder = HttpEmbedder(stub.url, model="mini", max_batch=4)
    texts = [f"t{i}" for i in range(10)]
    np.testing.assert_allclose(embedder.embed(texts, batch=True), [unit(vector_for(t)) for t in texts])
    assert [len(r.body["input"]) for r in stub.requests] == [4, 4, 2]


def test_empty_input_sends_nothing(stub):
    assert HttpEmbedder(stub.url, model="mini").embed([]) == []
    assert stub.requests == []


def test_the_api_key_comes_from_the_named_environment_variable(stub, monkeypatch):
    monkeypatch.setenv("MABOS_TEST_EMBED_KEY", "s3cret")
    HttpEmbedder(stub.url, model="mini", api_key_env="MABOS_TEST_EMBED_KEY").embed(["x"])
    assert stub.requests[0].headers["Authorization"] == "Bearer s3cret"


def test_an_unset_api_key_variable_is_reported_without_a_request(stub, monkeypatch):
    monkeypatch.delenv("MABOS_TEST_EMBED_KEY", raising=False)
    with pytest.raises(BackendUnavailableError, match="MABOS_TEST_EMBED_KEY is not set"):
        HttpEmbedder(stub.url, model="mini", api_key_env="MABOS_TEST_EMBED_KEY").embed(["x"])
    assert stub.requests == []


def test_it_composes_with_the_cache(stub, tmp_path: Path):
    db = Database(tmp_path / "kg.sqlite")
    try:
        cached = CachedEmbedder(HttpEmbedder(stub.url, model="mini", dimension=4), SqliteEmbeddingCache(db))
        first = cached.embed(["a", "b"])
        assert cached.embed(["b", "a"]) == [first[1], first[0]]
        assert len(stub.requests) == 1
    finally:
        db.close()


# ------------------------------------------------------------------------------------------ failures


class TestEmbedderFailures(HttpFailureContract):
    """The HTTP failure contract (tests/stubs/http_failures.py) for the HTTP embedder."""

    ask = staticmethod(ask)


@pytest.mark.parametrize(
    "payload",
    [
        b"not json at all",
        b'{"data": [{"index": 0, "embedding": [1.0, 2.0]}',  # truncated
        b"[]",
        b'{"object": "list"}',
        b'{"data": "nope"}',
        b'{"data": [{"index": 0}]}',
        b'{"data": [{"index": 0, "embedding": "AAAAAA=="}]}',  # base64 encoding_format
        b'{"data": [{"index": 0, "embedding": []}]}',
        b'{"data": [{"index": 0, "embedding": [1.0, "two"]}]}',
        b'{"data": [{"index": "first", "embedding": [1.0]}]}',
    ],
)
def test_malformed_json_becomes_backend_unavailable(stub, payload):
    answered(stub, ask, 200, payload, "malformed JSON")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "0 vectors for 1 texts"),
        ([{"index": 0, "embedding": [0.0, 0.0]}], "zero or non-finite"),
        ([{"index": 0, "embedding": [1e308, 1e308]}], "zero or non-finite"),
    ],
)
def test_unusable_vectors_become_backend_unavailable(stub, data, message):
    stub.responder = lambda _: (200, json.dumps({"data": data}).encode())
    with pytest.raises(BackendUnavailableError, match=message):
        HttpEmbedder(stub.url, model="mini").embed(["x"])


def test_vectors_of_mixed_lengths_are_refused(stub):
    data = [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0, 0.0]}]
    stub.responder = lambda _: (200, json.dumps({"data": data}).encode())
    with pytest.raises(BackendUnavailableError, match="length"):
        HttpEmbedder(stub.url, model="mini").embed(["x", "y"])


def test_bad_configuration_is_an_input_error():
    with pytest.raises(InputError, match="url"):
        HttpEmbedder("ftp://example.org/v1", model="mini")
    with pytest.raises(InputError, match="model"):
        HttpEmbedder("http://127.0.0.1:1/v1", model="")
    with pytest.raises(InputError, match="dimension"):
        HttpEmbedder("http://127.0.0.1:1/v1", model="mini", dimension=0)


def test_endpoint_urls():
    assert endpoint_url("http://h:8080/v1") == "http://h:8080/v1/embeddings"
    assert endpoint_url("http://h:8080/v1/") == "http://h:8080/v1/embeddings"
    assert endpoint_url("https://api.example.org/v1/embeddings") == "https://api.example.org/v1/embeddings"
