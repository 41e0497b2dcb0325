"""Ports of recall: the embedder, the embedding cache and the vector index."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into unit-length vectors (recall's vector branch)."""

    @property
    def model(self) -> str:
        """Model identity, part of every cache key and index manifest (e.g. ``all-MiniLM-L6-v2``)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> builtins.list[builtins.list[float]]:
        """One L2-normalised vector per text; ``batch`` for ingestion (several threads, large batches),
        otherwise the single-query path (one thread). Raises BackendUnavailableError if the model
        cannot load: callers fall back to BM25 and say so, never a fake vector."""
        ...


class EmbeddingCache(Protocol):
    """Stored vectors keyed by (model, content hash); implemented by each store adapter."""

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, builtins.list[float]]:
        """Cached vectors of ``model`` for those hashes that have one."""
        ...

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store (or replace) vectors by content hash, as float32."""
        ...

    def count(self, model: str | None = None) -> int:
        """How many vectors are cached (for one model, or all)."""
        ...


class VectorIndex(Protocol):
    """Nearest neighbours by inner product over unit vectors, keyed by record uid."""

    def add(self, uids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Insert or replace vectors."""
        ...

    def remove(self, uids: Sequence[str]) -> int:
        """Delete vectors; how many existed."""
        ...

    def search(self, vector: Sequence[float], k: int, *,
               allowed: Callable[[str], bool] | None = None) -> builtins.list[tuple[str, float]]:  # fmt: skip
        """Up to ``k`` (uid, similarity) pairs, best first, only uids ``allowed`` accepts."""
        ...

    def __len__(self) -> int:
        """Number of vectors."""
        ...
