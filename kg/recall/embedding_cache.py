"""Embeddings cached by (model, SHA-256 of the text): each text is embedded once per model.

:class:`CachedEmbedder` wraps any :class:`~kg.ports.Embedder` and is one itself. It looks every text up
in an :class:`EmbeddingCache` (the store's ``embeddings`` table), embeds only the missing ones in one
call, stores them, and returns the vectors in input order. Vectors are kept as float32, and fresh
vectors are rounded to float32 too, so a text gets the same vector whether it was cached or not.

:meth:`CachedEmbedder.embed_later` does the lookups at once and hands the model's work to an executor,
so a recall can run its BM25 search while the query is embedded; the store is only touched by the
calling thread (the lookups now, the new vectors when the caller collects them).

The cache is derived data (local, not replicated through the outbox): if the store cannot be read or
written right now, the cache is skipped with a warning and the embedder still answers.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from kg.errors import BackendUnavailableError, logger
from kg.ports import Embedder, EmbeddingCache

if TYPE_CHECKING:
    from concurrent.futures import Executor


def content_hash(text: str) -> str:
    """Hex SHA-256 of the UTF-8 text: the cache key next to the model."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def as_float32(vector: Sequence[float]) -> list[float]:
    """The vector rounded to float32, as it reads back from the cache."""
    return array("f", vector).tolist()


class CachedEmbedder:
    """An :class:`~kg.ports.Embedder` that consults an :class:`EmbeddingCache` first.

    Example:
        >>> embedder = CachedEmbedder(SentenceTransformerEmbedder(), store.embeddings)  # doctest: +SKIP
        >>> embedder.embed(["a", "b", "a"], batch=True)  # embeds "a" and "b" once, stores both  # doctest: +SKIP
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.embedder = embedder
        self.cache = cache

    @property
    def model(self) -> str:
        """The wrapped embedder's model."""
        return self.embedder.model

    @property
    def dimension(self) -> int:
        """The wrapped embedder's vector length."""
        return self.embedder.dimension

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        """One float32-exact unit vector per text, in order; only uncached texts reach the embedder.

        Raises:
            BackendUnavailableError: some text is not cached and the embedder cannot run.
        """
        return self.embed_later(texts, batch=batch)()

    def embed_later(
        self, texts: Sequence[str], *, batch: bool = False, executor: Executor | None = None, remember: bool = True
    ) -> Callable[[], list[list[float]]]:
        """Look ``texts`` up now and start embedding the missing ones on ``executor`` (inline without one).

        Returns a call that waits for the model, stores the new vectors (unless ``remember`` is false: a
        recall's query is not written to the store) and returns one vector per text, in order; it raises
        :class:`BackendUnavailableError` if a missing text cannot be embedded. Only the wrapped embedder
        runs on the executor: the cache is read and written by the calling thread.
        """
        if not texts:
            return list
        hashes = [content_hash(t) for t in texts]
        found = self._cached(hashes)
        missing = {h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
        work = list(missing.values())
        pending = executor.submit(self.embedder.embed, work, batch=batch) if work and executor else None

        def collect() -> list[list[float]]:
            if missing:
                fresh = pending.result() if pending is not None else self.embedder.embed(work, batch=batch)
                new = {h: as_float32(v) for h, v in zip(missing, fresh, strict=True)}
                if remember:
                    self._store(new)
                found.update(new)
                missing.clear()
            return [list(found[h]) for h in hashes]

        return collect

    def embed_unsaved(
        self, texts: Sequence[str], *, batch: bool = False
    ) -> tuple[list[list[float]], dict[str, list[float]]]:
        """Like :meth:`embed` but writing nothing: one vector per text, in order, and the vectors the cache lacked
        (embedded now) by content hash, for :meth:`remember` once the caller may write.

        Raises:
            BackendUnavailableError: some text is not cached and the embedder cannot run.
        """
        hashes = [content_hash(t) for t in texts]
        found = self._cached(hashes) if texts else {}
        missing = {h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
        fresh: dict[str, list[float]] = {}
        if missing:
            vectors = self.embedder.embed(list(missing.values()), batch=batch)
            fresh = {h: as_float32(v) for h, v in zip(missing, vectors, strict=True)}
            found.update(fresh)
        return [list(found[h]) for h in hashes], fresh

    def remember(self, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by content hash (from :meth:`embed_unsaved`); best-effort: a store that cannot be written
        is logged and skipped, the texts are embedded again next time."""
        if vectors:
            self._store({h: list(v) for h, v in vectors.items()})

    def _cached(self, hashes: list[str]) -> dict[str, list[float]]:
        try:
            found = self.cache.get_many(self.model, dict.fromkeys(hashes))
        except BackendUnavailableError as exc:
            logger(__name__).warning("embedding cache unreadable, embedding everything: %s", exc)
            return {}
        found = {h: v for h, v in found.items() if math.isfinite(sum(v))}  # NaN or infinity: a damaged row
        try:
            dimension = self.embedder.dimension
        except BackendUnavailableError:  # an HTTP embedder that has not answered yet: trust the cache
            return found
        # A vector of another length (the model changed under the same name) is recomputed and replaced, and so is
        # one holding a NaN or an infinity (filtered above: the index refuses such a vector, a search never finds
        # it; float32 values cannot overflow a Python float's sum, so it is finite exactly when every value is).
        return {h: v for h, v in found.items() if len(v) == dimension}

    def _store(self, vectors: dict[str, list[float]]) -> None:
        try:
            self.cache.put_many(self.model, vectors)
        except BackendUnavailableError as exc:
            logger(__name__).warning("embedding cache not written (%d vectors): %s", len(vectors), exc)


__all__ = ["CachedEmbedder", "EmbeddingCache", "as_float32", "content_hash"]
