"""The vector branch's candidates: the index's nearest items beside the queued items scored exactly.

A recall searches the vector index as saved (:meth:`kg.recall.sidecar.VectorSidecar.view`); the items queued since
its last save - new ones, changed ones - are scored here by the same measure, the inner product of unit vectors,
and merged with the index's hits as if the index already held them: the same candidates, in the same order (best
first, ties by uid), as after an indexing pass. The index's own vectors of those items (old contents, deleted
items) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kg.models import MemoryItem

if TYPE_CHECKING:
    from kg.recall.vectors import FaissVectorIndex

Hit = tuple[str, float]


def _best_first(hits: list[Hit]) -> list[Hit]:
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


def exact_scores(query: Sequence[float], vectors: Mapping[str, Sequence[float]]) -> list[Hit]:
    """``(uid, inner product with query)`` of every vector, best first, ties by uid (float32, as the index)."""
    if not vectors:
        return []
    from kg.recall.flat_rows import inner_products  # noqa: PLC0415 - NumPy loads with the model, not with bm25

    uids = list(vectors)
    scores = inner_products([vectors[uid] for uid in uids], query)  # as the flat index scores its rows
    return _best_first(list(zip(uids, scores.tolist(), strict=True)))


@dataclass(frozen=True)
class Candidates:
    """The index (None: no usable one) without its ``stale`` uids, and ``exact`` hits scored beside it."""

    index: FaissVectorIndex | None
    stale: frozenset[str]
    exact: list[Hit]

    def total(self) -> int:
        """How many items can be candidates."""
        return self._indexed() + len(self.exact)

    def _indexed(self) -> int:
        if self.index is None:
            return 0
        return len(self.index) - sum(1 for uid in self.stale if uid in self.index)

    def top(self, query: Sequence[float], k: int) -> list[Hit]:
        """The ``k`` best of both, best first, ties by uid."""
        indexed = self._indexed()
        found: list[Hit] = []
        if self.index is not None and indexed and k:
            found = self.index.search(query, min(k, indexed), allowed=lambda uid: uid not in self.stale)
        return _best_first([*found, *self.exact])[:k]


Admit = Callable[[list[str]], dict[str, MemoryItem]]


def nearest(candidates: Candidates, query: Sequence[float], wanted: int, min_similarity: float,
            admit: Admit) -> tuple[list[Hit], dict[str, MemoryItem]]:  # fmt: skip
    """The ``wanted`` nearest candidates that ``admit`` (the recall's filters) keeps and that reach
    ``min_similarity``, and the admitted items by uid; fetching four times more each round until enough pass."""
    fetch, total = wanted, candidates.total()
    while True:
        raw = candidates.top(query, min(fetch, total))
        admitted = admit([uid for uid, _ in raw])
        hits = [(uid, score) for uid, score in raw if uid in admitted and score >= min_similarity]
        if len(hits) >= wanted or fetch >= total or (raw and raw[-1][1] < min_similarity):
            return hits[:wanted], admitted
        fetch *= 4


__all__ = ["Candidates", "exact_scores", "nearest"]
