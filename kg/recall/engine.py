"""The hybrid recall engine over memory items: BM25 (FTS5) + vectors (FAISS sidecar) -> :func:`fusion.rank`.

One search, given the filters as a :class:`~kg.models.MemoryQuery`:

1. **BM25 branch** (modes ``hybrid`` and ``bm25``): the store's full-text search over content and tags,
   ``max(20, 4 * limit)`` candidates, filters applied in SQL.
2. **Vector branch** (modes ``hybrid`` and ``vector``): the query embedded on one thread, the
   ``max(20, 4 * limit)`` nearest items that pass the same filters (the index over-fetches until enough
   pass). Before searching, up to ``inline_index_limit`` items waiting in the index queue are embedded
   and added, so a new item is found by vector at the next recall; the rest stay in the backlog
   (``mabos index status``) and are found by BM25 meanwhile.
3. :func:`kg.recall.fusion.rank` fuses, blends importance, applies decay, MMR and the min score.

If no embedder can load, the search runs BM25-only and says ``mode: "bm25"`` (with the reason in
``notes``) - never a fake vector. If the saved vector index is unusable and too large to rebuild inline,
:class:`~kg.recall.sidecar.IndexUnavailableError` tells the caller to answer from the Markdown files.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from kg.errors import BackendUnavailableError, InputError
from kg.models import MemoryItem, MemoryQuery, Model
from kg.ports import Embedder, GraphStore
from kg.recall.decay import DecaySettings
from kg.recall.fusion import DEFAULT_DECAY, DEFAULT_FUSION, FusionMethod, FusionSettings, Ranked, rank
from kg.recall.sidecar import VectorSidecar, embedding_text
from kg.recall.stopwords import query_terms

log = logging.getLogger("mabos.recall")

RecallMode = Literal["hybrid", "bm25", "vector"]
RECALL_MODES: tuple[RecallMode, ...] = ("hybrid", "bm25", "vector")
_MODES: dict[str, RecallMode] = {m: m for m in RECALL_MODES}
#: Items embedded inline by a recall before it searches (the rest wait for ``mabos index``).
INLINE_INDEX_LIMIT = 500


class RecallSettings(Model):
    """Tuning of the engine (defaults from design.md §4 and issue 4)."""

    fusion: FusionSettings = DEFAULT_FUSION
    decay: DecaySettings = DEFAULT_DECAY
    min_candidates: int = 20
    candidate_factor: int = 4
    inline_index_limit: int = INLINE_INDEX_LIMIT
    #: Vector candidates below this cosine are dropped: nearest is not the same as related.
    min_similarity: float = 0.15

    def candidates(self, limit: int) -> int:
        """Candidates per branch: ``max(20, 4 * limit)``."""
        return max(self.min_candidates, self.candidate_factor * limit)


@dataclass
class EngineResult:
    """Ranked items, the mode that actually ran and why it differs from the one asked for."""

    hits: list[tuple[MemoryItem, Ranked]]
    mode: RecallMode
    notes: list[str] = field(default_factory=list)
    backlog: int = 0


def check_mode(mode: str) -> RecallMode:
    """``mode`` if it is hybrid, bm25 or vector; InputError otherwise."""
    if mode in _MODES:
        return _MODES[mode]
    raise InputError("mode", f"must be hybrid, bm25 or vector, got {mode!r}")


class RecallEngine:
    """Hybrid search over one store's memory items."""

    def __init__(self, store: GraphStore, embedder: Embedder | None, sidecar: VectorSidecar | None,
                 settings: RecallSettings | None = None) -> None:  # fmt: skip
        self.store = store
        self.embedder = embedder
        self.sidecar = sidecar
        self.settings = settings or RecallSettings()

    def search(self, text: str, query: MemoryQuery, *, limit: int, now: datetime, mode: RecallMode = "hybrid",
               fusion: FusionMethod = "weighted", mmr: bool = False,
               min_score: float = 0.0) -> EngineResult:  # fmt: skip
        """The best ``limit`` items for ``text`` among those ``query`` admits."""
        mode = check_mode(mode)
        cand = self.settings.candidates(limit)
        notes: list[str] = []
        used: RecallMode = mode
        vector: list[tuple[str, float]] = []
        backlog = 0
        if mode != "bm25":
            try:
                vector, backlog = self._vector_branch(text, query, cand)
            except BackendUnavailableError as exc:
                used = "bm25"
                notes.append(f"vector search unavailable, BM25 only: {exc}")
                log.warning("recall runs BM25-only: %s", exc)
        lexical: list[tuple[MemoryItem, float]] = []
        if used != "vector":
            terms = " ".join(query_terms(text))
            lexical = self.store.memory.search(terms, query.model_copy(update={"limit": cand}))
        items = {item.uid: item for item, _ in lexical}
        missing = [uid for uid, _ in vector if uid not in items]
        items.update(self.store.memory.get_many(missing))
        vectors = self._vectors(items) if mmr and used != "bm25" else None
        ranked = rank(
            [(item.uid, score) for item, score in lexical], vector, items, now=now, limit=limit, fusion=fusion,
            settings=self.settings.fusion, decay=self.settings.decay, mmr=mmr, vectors=vectors, min_score=min_score,
        )  # fmt: skip
        if backlog:
            notes.append(f"{backlog} items are not in the vector index yet (found by BM25 only); "
                         "run 'mabos index rebuild' or recall again")  # fmt: skip
        return EngineResult([(items[r.uid], r) for r in ranked], used, notes, backlog)

    def _vector_branch(self, text: str, query: MemoryQuery, cand: int) -> tuple[list[tuple[str, float]], int]:
        if self.embedder is None or self.sidecar is None:
            raise BackendUnavailableError("embedder: none configured")
        [qvec] = self.embedder.embed([text])  # first: a model that cannot load must not cost an index pass
        report = self.sidecar.sync(limit=self.settings.inline_index_limit)
        index, backlog = self.sidecar.loaded(report), report.backlog
        fetch, total = cand, len(index)
        while True:
            raw = index.search(qvec, min(fetch, total))
            allowed = self.store.memory.filter_uids([u for u, _ in raw], query)
            hits = [(u, s) for u, s in raw if u in allowed and s >= self.settings.min_similarity]
            if len(hits) >= cand or fetch >= total or (raw and raw[-1][1] < self.settings.min_similarity):
                return hits[:cand], backlog
            fetch *= 4

    def _vectors(self, items: dict[str, MemoryItem]) -> dict[str, Sequence[float]]:
        """Embeddings of the candidates for MMR (from the cache: they were embedded when indexed)."""
        if self.embedder is None:
            return {}
        uids = list(items)
        vectors = self.embedder.embed([embedding_text(items[u]) for u in uids], batch=True)
        return dict(zip(uids, vectors, strict=True))
