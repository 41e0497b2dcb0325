"""Similarity of memory candidates to existing items: cosine through an embedder, else token Jaccard
(:class:`Neighbours`), and the vector helpers admission and dedup share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from kg.memory.grounding import token_jaccard
from kg.models import MemoryItem
from kg.ports import Embedder

SimilarityMethod = Literal["cosine", "jaccard"]

#: Above this many texts the embedder's ingestion path (more threads) pays off; below, one thread is faster.
BULK_TEXTS = 64


def bulk(texts: Sequence[object]) -> bool:
    """Whether to embed ``texts`` on the embedder's batch (ingestion) path."""
    return len(texts) > BULK_TEXTS


class Neighbours:
    """Similarities of candidate texts to a fixed set of existing items: cosine with an embedder, else Jaccard.

    The embedder sees each text once (the existing items' vectors come from its cache after the first
    time when it is a :class:`~kg.recall.embedding_cache.CachedEmbedder`).
    """

    def __init__(self, existing: Sequence[MemoryItem], embedder: Embedder | None) -> None:
        self.existing = list(existing)
        self.embedder = embedder
        self.method: SimilarityMethod = "cosine" if embedder is not None else "jaccard"
        self._matrix: npt.NDArray[np.float64] = np.zeros((0, 0), dtype=np.float64)
        if embedder is not None and self.existing:
            self._matrix = unit_rows(embedder.embed([i.content for i in self.existing], batch=bulk(self.existing)))

    def add(self, items: Sequence[MemoryItem]) -> None:
        """Count newly written items as existing too."""
        if not items:
            return
        self.existing += items
        if self.embedder is not None:
            rows = unit_rows(self.embedder.embed([i.content for i in items], batch=bulk(items)))
            self._matrix = np.vstack([self._matrix, rows]) if self._matrix.size else rows

    def remove(self, uids: Sequence[str]) -> None:
        """Stop counting the items of ``uids`` (archived ones)."""
        gone = set(uids)
        keep = [i for i, item in enumerate(self.existing) if item.uid not in gone]
        self.existing = [self.existing[i] for i in keep]
        if self.embedder is not None and self._matrix.size:
            self._matrix = self._matrix[keep]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of ``texts`` (empty lists without an embedder)."""
        if self.embedder is None:
            return [[] for _ in texts]
        return self.embedder.embed(list(texts), batch=bulk(texts))

    def ranked(self, text: str, vector: Sequence[float]) -> list[tuple[MemoryItem, float]]:
        """Every existing item with its similarity to ``text`` (``vector`` its embedding), best first."""
        if self.embedder is not None and self.existing:
            scores = np.clip(self._matrix @ unit_rows([vector])[0], 0.0, 1.0).tolist()
        else:
            scores = [token_jaccard(text, item.content) for item in self.existing]
        pairs = zip(self.existing, scores, strict=True)
        return sorted(pairs, key=lambda p: (-p[1], p[0].created_at, p[0].uid))


def unit_rows(vectors: Sequence[Sequence[float]]) -> npt.NDArray[np.float64]:
    """The vectors as rows of a float64 matrix, each scaled to length 1 (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: npt.NDArray[np.float64] = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors, clamped to [0, 1] (a negative cosine means unrelated here)."""
    left, right = unit_rows([a, b])
    return max(0.0, min(1.0, float(left @ right)))


__all__ = ["BULK_TEXTS", "Neighbours", "SimilarityMethod", "bulk", "cosine", "unit_rows"]
