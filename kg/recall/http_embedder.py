"""An :class:`~kg.ports.Embedder` over an OpenAI-compatible ``/v1/embeddings`` endpoint (standard library only).

Request ``{"model": ..., "input": [texts]}``, response ``{"data": [{"index": i, "embedding": [...]}]}``
(OpenAI, vLLM, llama.cpp server, Ollama's OpenAI API, text-embeddings-inference ...). Every failure
(connection refused, timeout, an error status, a body that is not the expected JSON, vectors of the wrong
length) becomes :class:`~kg.errors.BackendUnavailableError` naming the endpoint and the cause, so recall
falls back to BM25 and says so. Vectors are L2-normalised here: not every server normalises.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from kg.errors import BackendUnavailableError, InputError
from kg.recall.openai_http import post_json

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BATCH = 256


def endpoint_url(url: str) -> str:
    """The embeddings endpoint for a base URL (``http://h:8080/v1``) or the endpoint itself."""
    url = url.rstrip("/")
    return url if url.endswith("/embeddings") else f"{url}/embeddings"


def _unit(vector: list[float], where: str) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if not math.isfinite(norm) or norm == 0.0:
        raise BackendUnavailableError(f"embedder: {where} returned a zero or non-finite vector")
    return [x / norm for x in vector]


class HttpEmbedder:
    """Embeddings from an OpenAI-compatible HTTP server.

    Args:
        url: the server's base URL (``http://127.0.0.1:8080/v1``) or its ``.../embeddings`` endpoint.
        model: the model name sent with each request; also the identity in cache keys.
        dimension: the vector length if known; otherwise taken from the first response.
        api_key_env: the name of an environment variable holding a bearer token (read per request).
        timeout: seconds for connecting and for each read.
        max_batch: texts per request; longer inputs are split into several requests.

    Example:
        >>> embedder = HttpEmbedder("http://127.0.0.1:8080/v1", model="all-MiniLM-L6-v2", dimension=384)
        >>> embedder.embed(["JWT tokens are signed with RS256"])  # doctest: +SKIP
    """

    def __init__(
        self,
        url: str,
        *,
        model: str,
        dimension: int | None = None,
        api_key_env: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_batch: int = DEFAULT_MAX_BATCH,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise InputError("url", "must start with http:// or https://")
        if not model:
            raise InputError("model", "must not be empty")
        if dimension is not None and dimension < 1:
            raise InputError("dimension", "must be a positive integer")
        if timeout <= 0 or max_batch < 1:
            raise InputError("timeout/max_batch", "must be positive")
        self.url = endpoint_url(url)
        self._model = model
        self._dimension = dimension
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_batch = max_batch

    @property
    def model(self) -> str:
        """The model name sent to the server."""
        return self._model

    @property
    def dimension(self) -> int:
        """Vector length: configured, else learnt from the first response (one probe request if none yet)."""
        if self._dimension is None:
            self.embed(["dimension probe"])  # a successful response sets it
        if self._dimension is None:  # pragma: no cover - an answer without vectors is rejected above
            raise BackendUnavailableError(f"embedder: {self.url} did not reveal the vector length")
        return self._dimension

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        """One unit vector per text, in order (``batch`` changes nothing: the server decides).

        Raises:
            BackendUnavailableError: the server cannot be reached or answered something unusable.
        """
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.max_batch):
            vectors.extend(self._request(list(texts[start : start + self.max_batch])))
        return vectors

    def _request(self, texts: list[str]) -> list[list[float]]:
        body = json.dumps({"model": self._model, "input": texts}).encode()
        raw = post_json(self.url, body, api_key_env=self.api_key_env, timeout=self.timeout, label="embedder")
        return self._parse(raw, len(texts))

    def _parse(self, raw: bytes, expected: int) -> list[list[float]]:
        try:
            vectors = _vectors(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BackendUnavailableError(
                f"embedder: {self.url} returned malformed JSON ({type(exc).__name__}: {exc})"
            ) from exc
        if len(vectors) != expected:
            raise BackendUnavailableError(f"embedder: {self.url} returned {len(vectors)} vectors for {expected} texts")
        lengths = {len(v) for v in vectors}
        want = self._dimension or max(lengths, default=0)
        if lengths and lengths != {want}:
            raise BackendUnavailableError(
                f"embedder: {self.url} returned vectors of length {sorted(lengths)}, expected {want}"
            )
        if lengths:
            self._dimension = want
        return [_unit(v, self.url) for v in vectors]


def _vectors(payload: Any) -> list[list[float]]:
    """The ``data[*].embedding`` lists in ``index`` order; TypeError/KeyError/ValueError if malformed."""
    rows = payload["data"]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError("data must be a list of objects")
    if all("index" in r for r in rows):
        rows = sorted(rows, key=lambda r: int(r["index"]))
    vectors = []
    for row in rows:
        embedding = row["embedding"]
        if not isinstance(embedding, list) or not embedding:
            raise TypeError("embedding must be a non-empty list of numbers (base64 is not supported)")
        vectors.append([float(x) for x in embedding])
    return vectors


__all__ = ["HttpEmbedder", "endpoint_url"]
