"""The hybrid recall engine over memory items: BM25 (FTS5) + vectors (FAISS sidecar) -> :func:`fusion.rank`.

One search, given the filters as a :class:`~kg.models.MemoryQuery`:

1. **BM25 branch** (modes ``hybrid`` and ``bm25``): the store's full-text search over content and tags,
   ``max(20, 4 * limit)`` candidates, filters applied in SQL.
2. **Vector branch** (modes ``hybrid`` and ``vector``): the query embedded on one BLAS thread - on a
   worker thread, while this one runs the BM25 search, so a hybrid recall costs the slower of the two - the
   ``max(20, 4 * limit)`` nearest items that pass the same filters (the index over-fetches until enough
   pass). The search reads the saved index as it is (:meth:`~kg.recall.sidecar.VectorSidecar.view`); up to
   ``inline_index_limit`` items waiting in the index queue are scored exactly beside it, their vectors read
   from the embedding cache or, when not cached yet, embedded in memory - so a new item is found by vector at
   once, with the similarity the index will give it. The rest stay in the backlog (``mabos index status``)
   and are found by BM25 until ``mabos index update``, the idle indexer or the nightly job indexes them.
3. **Feedback** (mode ``hybrid``, when ``feedback_docs`` > 0; off by default): the words of the first
   fusion's best items search BM25 once more and the two BM25 lists are merged (:mod:`kg.recall.feedback`).
4. :func:`kg.recall.fusion.rank` fuses, blends importance, applies decay, MMR and the min score.

A search writes nothing. Vectors it had to compute are handed back (``EngineResult.unsaved``) for the caller
to keep with :meth:`RecallEngine.remember` once the answer is out.

If no embedder can load, or the vector index is missing, unusable or still being built and the store too
large to search without it, the search runs BM25-only over the store and says ``mode: "bm25"`` (with the
reason in ``notes`` and the items still to index in ``backlog``) - never a fake vector, and never the Markdown
files: those answer only when the store itself cannot be read (the caller's decision, see ``memory_recall``).
"""

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pydantic import Field

from kg.errors import BackendUnavailableError, InputError, logger
from kg.models import MemoryItem, MemoryQuery, Model
from kg.ports import Embedder, GraphStore
from kg.recall.boosts import bonuses, without_dates
from kg.recall.decay import DecayComponents, DecaySettings
from kg.recall.embedding_cache import CachedEmbedder
from kg.recall.feedback import expansion_terms, merge_bm25
from kg.recall.fusion import DEFAULT_DECAY, rank
from kg.recall.fusion_types import DEFAULT_FUSION, FusionMethod, FusionSettings, Ranked
from kg.recall.lexical import content_terms, coverage
from kg.recall.modes import RECALL_MODES, RecallMode
from kg.recall.sidecar import IndexUnavailableError, embedding_text
from kg.recall.stopwords import query_terms

if TYPE_CHECKING:  # the vector branch's modules load with its first search: a BM25 recall needs none of them
    from concurrent.futures import ThreadPoolExecutor

    from cachetools import LRUCache

    from kg.recall.sidecar import VectorSidecar


_MODES: dict[str, RecallMode] = {m: m for m in RECALL_MODES}
#: Queued items a recall scores exactly beside the index (the rest wait for ``mabos index update``).
INLINE_INDEX_LIMIT = 500
#: Query vectors remembered per engine (a repeated query skips the model).
QUERY_CACHE_SIZE = 1024

_POOL: "ThreadPoolExecutor | None" = None
_POOL_LOCK = threading.Lock()


def _query_pool() -> "ThreadPoolExecutor":
    """One thread per process for query embeddings (the model itself runs one BLAS thread per query)."""
    global _POOL  # noqa: PLW0603 - created on first use: most commands never embed
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mabos-query-embedding")
        return _POOL


class RecallSettings(Model):
    """Tuning of the engine (defaults from design.md §4 and issue 4)."""

    fusion: FusionSettings = DEFAULT_FUSION
    decay: DecaySettings = DEFAULT_DECAY
    min_candidates: int = 20
    candidate_factor: int = 4
    inline_index_limit: int = INLINE_INDEX_LIMIT
    #: Vector candidates below this cosine are dropped: nearest is not the same as related.
    min_similarity: float = 0.15
    #: Lexical-only recall returns nothing when no candidate holds this share of the query's words
    #: (kg.recall.lexical; calibrated on LoCoMo, docs/recall-scoring.md); 0 keeps every keyword match.
    lexical_min_coverage: float = Field(default=0.34, ge=0.0, le=1.0)
    #: Added to the fused score of an item whose subject (first word: a turn's speaker) is a name the query
    #: names (kg.recall.boosts); ``mention_share`` of it when the item only mentions the name elsewhere.
    entity_boost: float = Field(default=0.2, ge=0.0, le=1.0)
    mention_share: float = Field(default=0.5, ge=0.0, le=1.0)
    #: Added to the fused score of an item created within a date range the query names.
    date_boost: float = Field(default=0.2, ge=0.0, le=1.0)
    #: Added to the fused score of an item that places an event in time ("yesterday", "last Friday") when
    #: the query asks when; 0.15 and mention_share 0.5 chosen on LoCoMo (docs/recall-scoring.md).
    time_boost: float = Field(default=0.15, ge=0.0, le=1.0)
    #: Hybrid recall searches BM25 again with words of the first fusion's best ``feedback_docs`` items
    #: (kg.recall.feedback), the ``feedback_terms`` heaviest, their scores added at ``feedback_weight``.
    #: Off (0) by default: +0.004 recall@10 on LoCoMo for about twice the recall time at 100,000 items
    #: (docs/recall-scoring.md); 10 is the calibrated value.
    feedback_docs: int = Field(default=0, ge=0, le=100)
    feedback_terms: int = Field(default=5, ge=1, le=50)
    feedback_weight: float = Field(default=0.2, ge=0.0, le=1.0)

    def candidates(self, limit: int) -> int:
        """Candidates per branch: ``max(20, 4 * limit)``."""
        return max(self.min_candidates, self.candidate_factor * limit)


class EngineResult(NamedTuple):
    """Ranked items, the mode that actually ran and why it differs from the one asked for (a named tuple: cheaper
    to define than a dataclass, and a search makes one, whole).

    ``unsaved``: vectors computed for this search that the embedding cache did not hold, by content hash
    (:meth:`RecallEngine.remember` keeps them).
    """

    hits: list[tuple[MemoryItem, Ranked]]
    mode: RecallMode
    notes: list[str]
    backlog: int
    unsaved: dict[str, list[float]]


def check_mode(mode: str) -> RecallMode:
    """``mode`` if it is hybrid, bm25 or vector; InputError otherwise."""
    if mode in _MODES:
        return _MODES[mode]
    raise InputError("mode", f"must be hybrid, bm25 or vector, got {mode!r}")


def check_query(text: str) -> str:
    """``text`` if UTF-8 can encode it; InputError naming ``query`` for a lone surrogate (as the tools refuse one):
    the embedding path, the embedding cache's hashes and the files' search encode the query as UTF-8."""
    if not text.isascii() and (bad := next((c for c in text if "\ud800" <= c <= "\udfff"), None)) is not None:
        raise InputError("query", f"must be valid Unicode text; it holds the lone surrogate U+{ord(bad):04X}")
    return text


class RecallEngine:
    """Hybrid search over one store's memory items."""

    def __init__(self, store: GraphStore, embedder: Embedder | None, sidecar: "VectorSidecar | None",
                 settings: RecallSettings | None = None) -> None:  # fmt: skip
        self.store = store
        self.embedder = embedder
        self.sidecar = sidecar
        self.settings = settings or RecallSettings()
        self._queries: LRUCache[str, list[float]] | None = None  # recent query vectors (made by the first query)
        self._queries_lock = threading.Lock()

    def search(self, text: str, query: MemoryQuery, *, limit: int, now: datetime, mode: RecallMode = "hybrid",
               fusion: FusionMethod = "weighted", mmr: bool = False,
               min_score: float = 0.0) -> EngineResult:  # fmt: skip
        """The best ``limit`` items for ``text`` among those ``query`` admits."""
        mode, text = check_mode(mode), check_query(text)
        cand = self.settings.candidates(limit)
        notes: list[str] = []
        used: RecallMode = mode
        vector: list[tuple[str, float]] = []
        admitted: dict[str, MemoryItem] = {}
        backlog = 0
        unsaved: dict[str, list[float]] = {}
        lexical: list[tuple[MemoryItem, float]] | None = None
        if mode != "bm25":
            try:
                # the model works on another thread while this one runs the BM25 search
                query_vector = self._embed_later(text)
                if mode == "hybrid":
                    lexical = self._lexical(text, query, cand)
                vector, admitted, backlog = self._vector_branch(query_vector(), query, cand, unsaved)
            except (BackendUnavailableError, IndexUnavailableError) as exc:
                # one step down, not two: the store is healthy, so BM25 over it answers (never the files)
                used = "bm25"
                notes.append(f"vector search unavailable, BM25 only: {exc}")
                logger("mabos.recall").warning("recall runs BM25-only: %s", exc)
                if isinstance(exc, IndexUnavailableError):
                    backlog = exc.backlog
        if lexical is None and used != "vector":
            lexical = self._lexical(text, query, cand)
        lexical = lexical or []
        items = {item.uid: item for item, _ in lexical}
        for uid, _ in vector:
            items.setdefault(uid, admitted[uid])
        bm25 = [(item.uid, score) for item, score in lexical]
        decays: dict[str, DecayComponents] = {}  # shared by the feedback pass and the final one
        if used == "hybrid" and bm25 and vector and self.settings.feedback_docs:
            bm25 = self._feedback(text, query, cand=cand, bm25=bm25, vector=vector, items=items, now=now,
                                  fusion=fusion, decays=decays)  # fmt: skip
        vectors = self._vectors(items, unsaved) if mmr and used != "bm25" else None
        covered: dict[str, float] | None = None
        terms = content_terms(without_dates(text)) if used == "bm25" else []  # a date is matched by created_at
        if terms and lexical:  # no vector branch: an absolute relevance next to BM25's relative one
            covered = {u: coverage(terms, i.content, *i.tags) for u, i in items.items()}
            best = max(covered.values())
            if best < self.settings.lexical_min_coverage:
                notes.append(f"nothing relevant: no item holds more than {best:.0%} of the query's words "
                             f"(at least {self.settings.lexical_min_coverage:.0%} needed without vectors)")  # fmt: skip
                lexical = []
        ranked = rank(
            bm25 if lexical else [], vector, items, now=now, limit=limit, fusion=fusion,
            settings=self.settings.fusion, decay=self.settings.decay, mmr=mmr, vectors=vectors, min_score=min_score,
            coverage=covered, decays=decays, bonus=self._bonuses(text, items, now),
        )  # fmt: skip
        if backlog and used != "bm25":
            notes.append(f"{backlog} items are not in the vector index yet (found by BM25 only); run 'mabos index "
                         "update' (the idle indexer and the nightly job index them too)")  # fmt: skip
        return EngineResult([(items[r.uid], r) for r in ranked], used, notes, backlog, unsaved)

    def remember(self, vectors: Mapping[str, Sequence[float]]) -> None:
        """Keep ``vectors`` (an :class:`EngineResult`'s ``unsaved``) in the embedding cache, best-effort: the one
        write a search leaves for after its answer, so the next search reads them instead of embedding again."""
        if vectors and isinstance(self.embedder, CachedEmbedder):
            self.embedder.remember(vectors)

    def _feedback(self, text: str, query: MemoryQuery, *, cand: int, bm25: list[tuple[str, float]],
                  vector: list[tuple[str, float]], items: dict[str, MemoryItem], now: datetime,
                  fusion: FusionMethod, decays: dict[str, DecayComponents]) -> list[tuple[str, float]]:  # fmt: skip
        """BM25 merged with a second search for the words of the first fusion's best items (adds the items
        only the second search found to ``items``)."""
        s = self.settings
        bonus = self._bonuses(text, items, now)
        first = rank(bm25, vector, items, now=now, limit=s.feedback_docs, fusion=fusion, settings=s.fusion,
                     decay=s.decay, bonus=bonus, decays=decays)  # fmt: skip
        terms = expansion_terms(text, [items[r.uid].content for r in first], limit=s.feedback_terms)
        if not terms:
            return bm25
        extra = self._lexical(" ".join(terms), query, cand)
        for item, _ in extra:
            items.setdefault(item.uid, item)
        return merge_bm25(bm25, [(item.uid, score) for item, score in extra], s.feedback_weight)

    def _bonuses(self, text: str, items: dict[str, MemoryItem], now: datetime) -> dict[str, float]:
        """What the query's names, dates and "when" add to each item (kg.recall.boosts)."""
        s = self.settings
        return bonuses(text, items, entity_boost=s.entity_boost, date_boost=s.date_boost,
                       mention_share=s.mention_share, time_boost=s.time_boost, now=now)  # fmt: skip

    def _lexical(self, text: str, query: MemoryQuery, cand: int) -> list[tuple[MemoryItem, float]]:
        terms = " ".join(query_terms(text))
        return self.store.memory.search(terms, query.model_copy(update={"limit": cand}))

    def _embed_later(self, text: str) -> Callable[[], list[float]]:
        """Start embedding the query on the engine's thread; the returned call waits for the vector.

        Query vectors are kept in a small in-process cache, not in the store: a recall writes nothing.
        """
        if self.embedder is None or self.sidecar is None:
            raise BackendUnavailableError("embedder: none configured")
        with self._queries_lock:
            if self._queries is None:
                from cachetools import LRUCache  # noqa: PLC0415 - a BM25 recall embeds no query

                self._queries = LRUCache(maxsize=QUERY_CACHE_SIZE)
            queries = self._queries
            known = queries.get(text)  # a hit makes it the most recently used
        if known is not None:
            return lambda: known
        if isinstance(self.embedder, CachedEmbedder):  # the store's cache is read on this thread only
            pending = self.embedder.embed_later([text], executor=_query_pool(), remember=False)
        else:
            pending = _query_pool().submit(self.embedder.embed, [text]).result

        def collect() -> list[float]:
            [vector] = pending()
            with self._queries_lock:
                queries[text] = vector  # the least recently used one goes past QUERY_CACHE_SIZE
            return vector

        return collect

    def _vector_branch(
        self, qvec: list[float], query: MemoryQuery, cand: int, unsaved: dict[str, list[float]]
    ) -> tuple[list[tuple[str, float]], dict[str, MemoryItem], int]:
        """``(uid, similarity)`` of the nearest admitted items, those items by uid, and the index backlog; the
        vectors embedded for queued items go to ``unsaved``."""
        from kg.recall.vector_branch import Candidates, exact_scores, nearest  # noqa: PLC0415

        if self.sidecar is None or self.embedder is None:
            raise BackendUnavailableError("vector index: none configured")
        view = self.sidecar.view(limit=self.settings.inline_index_limit)  # after the model: a model that cannot
        pending = self._embed_items(view.pending, unsaved)  # load must not cost reading the index
        found = Candidates(view.index, view.stale, exact_scores(qvec, pending))
        hits, admitted = nearest(found, qvec, cand, self.settings.min_similarity,
                                 lambda uids: self.store.memory.filter_items(uids, query))  # fmt: skip
        return hits, admitted, view.backlog

    def _embed_items(self, items: Sequence[MemoryItem], unsaved: dict[str, list[float]]) -> dict[str, list[float]]:
        """Vectors of ``items`` by uid: cached ones read, the others embedded now and added to ``unsaved``, not
        stored. On one BLAS thread, as the query: the ingestion path's threads collapse under load (5 items: 0.35 s
        on one thread, 1.5-3 s on two, on the loaded 2-core machine)."""
        if not items or self.embedder is None:
            return {}
        texts = [embedding_text(i) for i in items]
        if isinstance(self.embedder, CachedEmbedder):
            vectors, fresh = self.embedder.embed_unsaved(texts)
            unsaved.update(fresh)
        else:
            vectors = self.embedder.embed(texts)
        return {i.uid: v for i, v in zip(items, vectors, strict=True)}

    def _vectors(self, items: dict[str, MemoryItem], unsaved: dict[str, list[float]]) -> dict[str, Sequence[float]]:
        """Embeddings of the candidates for MMR (from the cache: they were embedded when indexed)."""
        return dict(self._embed_items(list(items.values()), unsaved))
