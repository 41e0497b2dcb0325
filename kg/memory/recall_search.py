"""A recall's hits and result (:meth:`kg.memory.service.MemoryService.recall`) and the searches that find them."""

import builtins
from typing import Literal

from pydantic import Field

from kg.clock import Clock
from kg.models import MemoryItem, MemoryQuery, Model
from kg.models.base import new_list
from kg.ports import MemoryStore
from kg.recall.engine import RecallEngine
from kg.recall.file_hits import FileHit
from kg.recall.fusion_types import FusionMethod, ScoreBreakdown
from kg.recall.modes import RecallMode

#: Weight of importance in the score of an empty-query recall (the fusion blend's weight).
IMPORTANCE_WEIGHT = 0.3
HitMode = Literal["hybrid", "bm25", "vector", "importance"]


class RecallHit(Model):
    """One recalled item: its final score, the main components and (with ``explain``) every component.

    ``mode`` is the search that ran (``bm25`` when no embedder could load, ``importance`` for an empty
    query); ``bm25`` and ``vector`` are the normalised branch scores (0 when that branch did not find it);
    ``depth`` is set only for recursive searches.
    """

    item: MemoryItem
    score: float
    mode: HitMode
    bm25: float
    vector: float
    importance: float
    decay: float
    depth: int | None = None
    query: str
    explain: ScoreBreakdown | None = None


class RecallResult(Model):
    """What a recall found, how, and anything the caller should know.

    ``fallback`` is true when the database or vector index could not answer and ``files`` holds spans of
    the agent's Markdown files instead of ``hits`` (``reason`` says why). ``backlog`` counts items not
    yet in the vector index (found by BM25 only until the next indexing pass).
    """

    agent_id: str
    query: str
    mode: HitMode
    requested_mode: RecallMode
    fusion: FusionMethod
    mmr: bool
    hits: builtins.list[RecallHit] = Field(default_factory=new_list)
    files: builtins.list[FileHit] = Field(default_factory=new_list)
    fallback: bool = False
    reason: str | None = None
    backlog: int = 0
    notes: builtins.list[str] = Field(default_factory=new_list)
    max_tokens: int | None = None
    budget_dropped: int = 0


class RecallSearch:
    """One recall's searches (one per depth) with the settings they share; reads only.

    ``unsaved`` collects the vectors the searches computed (for the embedding cache, once the answer is out). The
    hits are constructed from the engine's values without validating them again (they are the stored items and
    the engine's floats): a recall builds :class:`RecallResult`'s validator and serializer, which cover the hits,
    not a second one for :class:`RecallHit` (tests/unit/test_recall_reads.py checks they equal validated hits).
    """

    def __init__(self, memory: MemoryStore, engine: RecallEngine, clock: Clock, result: RecallResult, *,
                 mode: RecallMode, fusion: FusionMethod, mmr: bool, explain: bool,
                 min_score: float) -> None:  # fmt: skip
        self.memory, self.engine, self.clock = memory, engine, clock
        self.mode, self.fusion, self.mmr = mode, fusion, mmr
        self.explain, self.min_score, self.result = explain, min_score, result
        self.unsaved: dict[str, list[float]] = {}  # vectors computed by the searches, for the embedding cache

    def run(self, text: str, base: MemoryQuery, limit: int, *, depth: int | None) -> builtins.list[RecallHit]:
        """The best ``limit`` hits for ``text`` among the items ``base`` admits (``depth``: the level that asks)."""
        if not text.strip():  # no query: the most important, then the newest
            self.result.mode = "importance"
            items = self.memory.list(base.model_copy(update={"order": "importance"}))
            return [RecallHit.model_construct(item=i, score=round(IMPORTANCE_WEIGHT * i.importance, 6),
                                              mode="importance", bm25=0.0, vector=0.0, importance=i.importance,
                                              decay=1.0, depth=depth, query=text)
                    for i in items[:limit] if IMPORTANCE_WEIGHT * i.importance >= self.min_score]  # fmt: skip
        found = self.engine.search(text, base, limit=limit, now=self.clock.now(), mode=self.mode, fusion=self.fusion,
                                   mmr=self.mmr, min_score=self.min_score)  # fmt: skip
        self.result.mode = found.mode
        self.result.backlog = found.backlog
        self.unsaved.update(found.unsaved)
        self.result.notes.extend(n for n in found.notes if n not in self.result.notes)
        return [
            RecallHit.model_construct(item=item, score=round(r.score, 6), mode=found.mode,
                                      bm25=round(r.breakdown.bm25_norm, 6), vector=round(r.breakdown.vector_norm, 6),
                                      importance=item.importance, decay=round(r.breakdown.decay_boost, 6),
                                      depth=depth, query=text, explain=r.breakdown if self.explain else None)
            for item, r in found.hits
        ]  # fmt: skip


__all__ = ["IMPORTANCE_WEIGHT", "HitMode", "RecallHit", "RecallResult", "RecallSearch"]
