"""Fusion pipeline of hybrid recall (design.md §4): BM25 + vector candidates -> one ranked, explained list.

Pure and deterministic: no I/O, no store; the recall engine fetches candidates and items and calls
:func:`rank`. Stages, in order (docs/recall-scoring.md has worked examples):

1. **Normalise.** BM25 scores come as SQLite FTS5 returns them: *lower is better* (negative, the
   best hit most negative). ``bm25_norm = raw / best`` with ``best`` the lowest raw score, clamped
   to 0..1 (1.0 for the best hit; all 0 when no score is negative). A higher-is-better scorer
   (e.g. bm25s) passes ``-score``. Cosine similarities (-1..1) map to ``vector_norm = clamp(cos, 0, 1)``:
   a negative cosine says "unrelated", like not being found at all.
2. **Fuse.** A uid found by one branch only gets 0 from the other.

   * ``weighted`` with both branches (``normalization="zscore"``, the default): each branch's scores
     become z-scores over that branch's candidates (``(x - mean) / std``, BM25 negated first; a uid the
     branch did not find gets the branch's lowest z), ``s = (wv * vector_z + wb * bm25_z) / (wv + wb)``
     (0.3 / 0.7) and ``fused = 1 / (1 + exp(-s / T))`` with ``T`` = 2: a hit is rated against the other
     hits of its own branch, so neither branch's scale (BM25's relative one, cosine's narrow band)
     decides the mix. No floor.
   * ``weighted`` with one branch, or ``normalization="relative"``:
     ``fused = (wv * vector_norm + wb * bm25_norm) / (wv + wb)``, then the
     floor for strong exact keyword hits: if ``bm25_norm >= 0.75``, ``fused = max(fused, 0.92 * bm25_norm)``.
     A branch with no candidates at all (BM25-only mode, or no keyword match) has weight 0, so the
     other branch gets the whole weight.
   * ``rrf``: ``rrf = sum over branches of 1 / (k + rank)``, ranks 1-based per branch (best first,
     ties by uid), ``k`` = 60. Scaled to 0..1 as ``fused = rrf * (k + 1) / n`` with ``n`` the number
     of branches that have candidates: 1.0 means first in every branch, 0.5 first in one of two.
   **Lexical-only coverage**: when the vector branch did not run (BM25-only recall), the breakdown also
   carries each item's query coverage (:mod:`kg.recall.lexical`): ``raw / best`` alone makes the best
   keyword match 1.0 however weak it is, so the engine returns nothing when no candidate covers enough
   of the query (its ``lexical_min_coverage``).
3. **Importance blend** (as the lexical recall it replaces), with the bonus the engine found for the
   query's names and dates (:mod:`kg.recall.boosts`; 0 for most items):
   ``blend = min(1, 0.7 * (fused + bonus) + 0.3 * importance)``.
4. **Decay**: ``decayed = blend * boost`` with the boost of :mod:`kg.recall.decay` (0.3..1).
5. **MMR** (optional, lambda 0.7): greedy; each step picks the candidate maximising
   ``lambda * decayed - (1 - lambda) * max_sim`` with ``max_sim`` its highest cosine (clamped to
   0..1) to the items already picked; a candidate without a vector has similarity 0 to every other.
   ``mmr_penalty = (1 - lambda) / lambda * max_sim`` and ``final = decayed - mmr_penalty`` (the
   MMR objective divided by lambda, so the first pick keeps its score and finals never increase
   down the list). Without MMR ``final = decayed``.
6. **min score and top-k**: results with ``final >= min_score``, best first, ties by uid, at most
   ``limit``.

Ranges: every component lies in 0..1 and so does ``final`` without MMR; with MMR ``final`` lies in
``[-(1 - lambda) / lambda, 1]`` (only candidates with ``final >= min_score`` are returned).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from kg.errors import InputError
from kg.recall.decay import DecayComponents, DecaySettings, MemoryLike, check_unit, decay_boost
from kg.recall.fusion_types import (
    DEFAULT_FUSION,
    FUSION_METHODS,
    FusionMethod,
    FusionSettings,
    Ranked,
    ScoreBreakdown,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    from kg.recall.mmr import mmr_select

#: The engine's decay: the parameters of :class:`DecaySettings` at a quarter of their strength, calibrated on
#: LoCoMo's dev conversations (docs/recall-scoring.md, "Why the vector leg lost to plain cosine"). Constructed, not
#: validated (0.25 is a valid strength; tests/unit/test_recall_fusion.py compares it with the validated settings): a
#: recall reads the settings and never builds their validator.
DEFAULT_DECAY = DecaySettings.model_construct(strength=0.25)


# -------------------------------------------------------------------------------------- stages


def best_scores(hits: Iterable[tuple[str, float]], *, lower_is_better: bool, field: str) -> dict[str, float]:
    """One score per uid (the best of duplicates); :class:`InputError` on a non-finite score."""
    best: dict[str, float] = {}
    for uid, score in hits:
        if not math.isfinite(score):
            raise InputError(field, f"score of {uid!r} must be a finite number, got {score!r}")
        old = best.get(uid)
        if old is None or (score < old if lower_is_better else score > old):
            best[uid] = float(score)
    return best


def normalize_bm25(raw: Mapping[str, float]) -> dict[str, float]:
    """FTS5 BM25 (lower is better) -> 0..1 relative to the best hit: ``clamp(raw / min(raw), 0, 1)``."""
    best = min(raw.values(), default=0.0)
    if best >= 0:
        return dict.fromkeys(raw, 0.0)
    return {uid: min(1.0, max(0.0, score / best)) for uid, score in raw.items()}


def zscores(scores: Mapping[str, float], *, lower_is_better: bool) -> dict[str, float]:
    """``(x - mean) / std`` of each score over ``scores`` (negated first when lower is better); all 0 when
    the scores are all equal (or there is one)."""
    sign = -1.0 if lower_is_better else 1.0
    values = [sign * v for v in scores.values()]
    mean = math.fsum(values) / len(values) if values else 0.0
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)) if len(values) > 1 else 0.0
    if std <= 0:
        return dict.fromkeys(scores, 0.0)
    return {uid: (sign * v - mean) / std for uid, v in scores.items()}


def squash(mix: float, temperature: float) -> float:
    """The z-score mix -> 0..1: ``1 / (1 + exp(-mix / temperature))`` (0.5 for an average hit)."""
    return 1.0 / (1.0 + math.exp(-max(-500.0, min(500.0, mix / temperature))))


def normalize_vector(similarity: float) -> float:
    """Cosine similarity (-1..1) -> 0..1: ``clamp(cos, 0, 1)``."""
    return min(1.0, max(0.0, similarity))


def fuse_weighted(
    bm25_norm: float,
    vector_norm: float,
    settings: FusionSettings = DEFAULT_FUSION,
    *,
    bm25_present: bool = True,
    vector_present: bool = True,
) -> tuple[float, bool]:
    """``(fused, floor_applied)`` of weighted fusion with the keyword floor.

    ``*_present`` says whether that branch has any candidates; an absent branch's weight is 0.
    ``floor_applied`` is true when the floor raised the score.
    """
    wb = settings.bm25_weight if bm25_present else 0.0
    wv = settings.vector_weight if vector_present else 0.0
    # min(1, ...): rounding must not push a perfect match past 1
    weighted = min(1.0, (wb * bm25_norm + wv * vector_norm) / (wb + wv)) if wb + wv > 0 else 0.0
    floor = settings.floor_factor * bm25_norm if bm25_norm >= settings.floor_threshold else 0.0
    return max(weighted, floor), floor > weighted


def ranks(scores: Mapping[str, float], *, lower_is_better: bool) -> dict[str, int]:
    """1-based rank per uid, best first, ties by uid."""
    sign = 1.0 if lower_is_better else -1.0
    ordered = sorted(scores, key=lambda uid: (sign * scores[uid], uid))
    return {uid: position for position, uid in enumerate(ordered, start=1)}


def rrf(branch_ranks: Iterable[int | None], k: int) -> float:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over the branches that found the uid."""
    return sum(1.0 / (k + r) for r in branch_ranks if r is not None)


def scale_rrf(score: float, k: int, branches: int) -> float:
    """RRF sum -> 0..1: ``score * (k + 1) / branches`` (1.0 = first in every branch)."""
    return min(1.0, score * (k + 1) / branches) if branches else 0.0


def blend_importance(relevance: float, importance: float, settings: FusionSettings = DEFAULT_FUSION) -> float:
    """``(1 - importance_weight) * relevance + importance_weight * importance``."""
    w = settings.importance_weight
    return min(1.0, (1.0 - w) * relevance + w * importance)


# -------------------------------------------------------------------------------------- pipeline


class _Branches(NamedTuple):
    """The two candidate lists restricted to the admissible uids, with their normal forms and ranks (a named tuple:
    a tenth of a frozen dataclass's cost to define, which every recall pays)."""

    bm25_raw: dict[str, float]
    vector_raw: dict[str, float]
    bm25_norm: dict[str, float]
    bm25_rank: dict[str, int]
    vector_rank: dict[str, int]
    #: z-scores per branch, filled only when the fusion mixes them (:meth:`of`), and each branch's lowest
    bm25_z: dict[str, float]
    vector_z: dict[str, float]
    bm25_low: float = 0.0
    vector_low: float = 0.0

    @classmethod
    def of(cls, bm25: Iterable[tuple[str, float]], vector: Iterable[tuple[str, float]],
           admissible: Mapping[str, object], fusion: FusionMethod, settings: FusionSettings) -> _Branches:  # fmt: skip
        """Deduplicate both lists, drop uids not in ``admissible``, normalise and rank; z-scores when weighted
        fusion uses them (``zscore`` normalisation and ``zscore_min_candidates`` in each branch)."""
        b = {u: s for u, s in best_scores(bm25, lower_is_better=True, field="bm25").items() if u in admissible}
        v = {u: s for u, s in best_scores(vector, lower_is_better=False, field="vector").items() if u in admissible}
        standardise = (fusion == "weighted" and settings.normalization == "zscore"
                       and min(len(b), len(v)) >= settings.zscore_min_candidates)  # fmt: skip
        zb = zscores(b, lower_is_better=True) if standardise else {}
        zv = zscores(v, lower_is_better=False) if standardise else {}
        return cls(b, v, normalize_bm25(b), ranks(b, lower_is_better=True), ranks(v, lower_is_better=False), zb, zv,
                   min(zb.values(), default=0.0), min(zv.values(), default=0.0))  # fmt: skip

    def fuse(self, uid: str, fusion: FusionMethod, settings: FusionSettings) -> tuple[float, float | None, bool]:
        """``(fused, rrf sum or None, floor_applied)`` of one uid."""
        if fusion == "rrf":
            total = rrf((self.bm25_rank.get(uid), self.vector_rank.get(uid)), settings.rrf_k)
            branches = int(bool(self.bm25_raw)) + int(bool(self.vector_raw))
            return scale_rrf(total, settings.rrf_k, branches), total, False
        if self.bm25_z:
            wb, wv = settings.bm25_weight, settings.vector_weight
            zb = self.bm25_z.get(uid, self.bm25_low)
            zv = self.vector_z.get(uid, self.vector_low)
            return squash((wb * zb + wv * zv) / (wb + wv), settings.temperature), None, False
        fused, floored = fuse_weighted(
            self.bm25_norm.get(uid, 0.0),
            normalize_vector(self.vector_raw.get(uid, 0.0)),
            settings,
            bm25_present=bool(self.bm25_raw),
            vector_present=bool(self.vector_raw),
        )
        return fused, None, floored


class _Scored(NamedTuple):
    """Stages 2-4 of one candidate; a :class:`ScoreBreakdown` is built only for the returned ones."""

    uid: str
    item: MemoryLike
    fused: float
    rrf: float | None
    floor_applied: bool
    blend: float
    decay: DecayComponents
    decayed: float
    coverage: float | None
    bonus: float


def _score(uid: str, item: MemoryLike, branches: _Branches, *, fusion: FusionMethod, settings: FusionSettings,
           decay: DecaySettings, now: datetime, coverage: float | None, bonus: float,
           decays: dict[str, DecayComponents]) -> _Scored:  # fmt: skip
    fused, rrf_sum, floored = branches.fuse(uid, fusion, settings)
    blend = blend_importance(fused + bonus, check_unit("importance", item.importance), settings)
    d = decays.get(uid)
    if d is None:
        d = decays[uid] = decay_boost(item, now, decay)
    return _Scored(uid, item, fused, rrf_sum, floored, blend, d, blend * d.boost, coverage, bonus)


def _breakdown(
    s: _Scored, branches: _Branches, fusion: FusionMethod, *, penalty: float, final: float
) -> ScoreBreakdown:
    uid, d = s.uid, s.decay
    # model_construct: every value was computed here from validated inputs
    return ScoreBreakdown.model_construct(
        uid=uid, fusion=fusion, bm25_raw=branches.bm25_raw.get(uid), bm25_norm=branches.bm25_norm.get(uid, 0.0),
        bm25_rank=branches.bm25_rank.get(uid), vector_sim=branches.vector_raw.get(uid),
        vector_norm=normalize_vector(branches.vector_raw.get(uid, 0.0)), vector_rank=branches.vector_rank.get(uid),
        bm25_z=branches.bm25_z.get(uid), vector_z=branches.vector_z.get(uid),
        rrf=s.rrf, fused=s.fused, floor_applied=s.floor_applied, bonus=s.bonus, coverage=s.coverage,
        importance=float(s.item.importance),
        importance_blend=s.blend, tier=str(s.item.tier), age_days=d.age_days, half_life_days=d.half_life_days,
        recency_raw=d.recency_raw, recency=d.recency, frequency=d.frequency,
        importance_confidence=d.importance_confidence, decay_boost=d.boost, decayed=s.decayed,
        mmr_penalty=penalty, final=final,
    )  # fmt: skip


def rank(
    bm25: Iterable[tuple[str, float]],
    vector: Iterable[tuple[str, float]],
    items: Mapping[str, MemoryLike],
    *,
    now: datetime,
    limit: int,
    fusion: FusionMethod = "weighted",
    settings: FusionSettings = DEFAULT_FUSION,
    decay: DecaySettings = DEFAULT_DECAY,
    mmr: bool = False,
    vectors: Mapping[str, npt.ArrayLike] | None = None,
    min_score: float = 0.0,
    coverage: Mapping[str, float] | None = None,
    bonus: Mapping[str, float] | None = None,
    decays: dict[str, DecayComponents] | None = None,
) -> list[Ranked]:
    """Fuse BM25 and vector candidates, blend importance, apply decay, MMR, min score and top-k.

    Args:
        bm25: ``(uid, raw FTS5 BM25)``, lower is better.
        vector: ``(uid, cosine similarity)``, -1..1.
        items: The admissible candidates (filters already applied): a uid missing here is dropped
            before normalising and ranking. Markdown chunks use :class:`kg.recall.decay.ChunkMeta`.
        now: The time decay is measured at.
        limit: Most results returned (>= 1).
        fusion: ``"weighted"`` or ``"rrf"``.
        settings: Fusion, blend and MMR parameters.
        decay: Decay boost parameters.
        mmr: Re-rank for diversity with ``vectors`` (uid -> embedding; missing = similarity 0).
        vectors: Embeddings of the candidates, used by MMR only.
        min_score: Lowest ``final`` score returned (inclusive).
        coverage: Lexical-only recall: each uid's query coverage (0..1), reported in the breakdown.
        bonus: What the query's names and dates add to each uid's fused score in the importance blend
            (:mod:`kg.recall.boosts`).
        decays: Decay components by uid, filled as computed and reused: two ranks of one recall (the
            engine's feedback pass and its final pass) with the same ``items``, ``now`` and ``decay`` share it.

    Returns:
        At most ``limit`` results, best first (MMR picking order with ``mmr``), ties by uid.

    Raises:
        InputError: bad ``limit``, ``fusion`` or ``min_score``, a non-finite score, importance or
            confidence outside 0..1, an unknown tier, or vectors of different dimensions.
    """
    if limit < 1:
        raise InputError("limit", f"must be at least 1, got {limit}")
    if fusion not in FUSION_METHODS:
        raise InputError("fusion", f"must be weighted or rrf, got {fusion!r}")
    if not math.isfinite(min_score):
        raise InputError("min_score", f"must be a finite number, got {min_score!r}")
    branches = _Branches.of(bm25, vector, items, fusion, settings)
    decays = {} if decays is None else decays
    uids = sorted(branches.bm25_raw.keys() | branches.vector_raw.keys())
    scored = {u: _score(u, items[u], branches, fusion=fusion, settings=settings, decay=decay, now=now,
                        coverage=None if coverage is None else coverage.get(u, 0.0),
                        bonus=bonus.get(u, 0.0) if bonus else 0.0, decays=decays) for u in uids}  # fmt: skip
    if mmr:
        from kg.recall.mmr import mmr_select  # noqa: PLC0415 - NumPy: only a recall that asks for MMR pays for it

        eligible = {uid: s.decayed for uid, s in scored.items() if s.decayed >= min_score}
        order = mmr_select(eligible, vectors or {}, lambda_=settings.mmr_lambda, limit=limit, min_score=min_score)
    else:
        best = sorted((s for s in scored.values() if s.decayed >= min_score), key=lambda s: (-s.decayed, s.uid))
        order = [(s.uid, s.decayed, 0.0) for s in best[:limit]]
    results = []
    for uid, final, penalty in order:
        breakdown = _breakdown(scored[uid], branches, fusion, penalty=penalty, final=final)
        results.append(Ranked.model_construct(uid=uid, score=final, breakdown=breakdown))
    return results


def __getattr__(name: str) -> Any:
    """``mmr_select``, re-exported on first use (PEP 562): :mod:`kg.recall.mmr` imports NumPy."""
    if name == "mmr_select":
        from kg.recall.mmr import mmr_select  # noqa: PLC0415

        return mmr_select
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_DECAY",
    "best_scores",
    "blend_importance",
    "fuse_weighted",
    "mmr_select",
    "normalize_bm25",
    "normalize_vector",
    "rank",
    "ranks",
    "rrf",
    "scale_rrf",
    "squash",
    "zscores",
]
