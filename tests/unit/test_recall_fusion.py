"""Fusion pipeline (kg.recall.fusion): every stage with expected values worked out by hand.

Most tests switch decay off (``boost_min=1.0`` makes every boost 1) to look at one stage at a time;
``test_explain_records_every_component`` runs the whole pipeline with the default decay.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kg.errors import InputError
from kg.ids import new_id
from kg.models import MemoryItem, Tier
from kg.recall.decay import ChunkMeta, DecaySettings
from kg.recall.fusion import (
    DEFAULT_DECAY,
    blend_importance,
    fuse_weighted,
    mmr_select,
    normalize_bm25,
    normalize_vector,
    rank,
    ranks,
    rrf,
    scale_rrf,
    squash,
    zscores,
)
from kg.recall.fusion_types import FusionSettings, Ranked

#: design.md's weights (0.7 vector / 0.3 BM25) with relative scores and the keyword floor: the hand-checked
#: numbers below use them. The shipped default mixes z-scores (0.3 / 0.7, measured on LoCoMo): tested apart.
DESIGN_WEIGHTS = FusionSettings(vector_weight=0.7, bm25_weight=0.3, normalization="relative")
NOW = datetime(2025, 1, 31, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
NO_DECAY = DecaySettings(boost_min=1.0)
RELEVANCE_ONLY = FusionSettings(importance_weight=0.0)


def chunks(*uids: str, importance: float = 0.5) -> dict[str, ChunkMeta]:
    return {uid: ChunkMeta(created_at=NOW, importance=importance) for uid in uids}


def order(results: list[Ranked]) -> list[str]:
    return [r.uid for r in results]


def scores(results: list[Ranked]) -> list[float]:
    return [r.score for r in results]


# ------------------------------------------------------------------------------ normalisation


def test_bm25_is_normalised_against_the_best_hit() -> None:
    # FTS5: lower is better; best = -10 -> raw / -10
    assert normalize_bm25({"A": -10.0, "B": -7.5, "C": -5.0}) == {"A": 1.0, "B": 0.75, "C": 0.5}
    assert normalize_bm25({"A": -2.0, "B": 1.0}) == {"A": 1.0, "B": 0.0}  # a positive raw score counts as no match
    assert normalize_bm25({"A": 0.0}) == {"A": 0.0}
    assert normalize_bm25({}) == {}


@pytest.mark.parametrize(("cos", "norm"), [(-1.0, 0.0), (-0.4, 0.0), (0.0, 0.0), (0.6, 0.6), (1.0, 1.0)])
def test_cosine_is_clamped_to_unit(cos: float, norm: float) -> None:
    assert normalize_vector(cos) == norm


# ------------------------------------------------------------------------------ weighted fusion


@pytest.mark.parametrize(
    ("bm25", "vector", "fused", "floored"),
    [
        (1.0, 0.5, 0.92, True),  # 0.3 + 0.35 = 0.65 < floor 0.92 * 1.0
        (0.75, 0.2, 0.69, True),  # boundary: 0.225 + 0.14 = 0.365 < floor 0.92 * 0.75 = 0.69
        (0.7499, 0.2, 0.36497, False),  # just below: 0.22497 + 0.14, no floor
        (0.8, 0.9, 0.87, False),  # 0.24 + 0.63 = 0.87 > floor 0.736
        (0.0, 0.8, 0.56, False),  # vector only: 0.7 * 0.8
        (0.5, 0.0, 0.15, False),  # BM25 only, weak: 0.3 * 0.5
    ],
)
def test_weighted_fusion_and_keyword_floor(bm25: float, vector: float, fused: float, floored: bool) -> None:
    got, got_floored = fuse_weighted(bm25, vector, DESIGN_WEIGHTS)
    assert got == pytest.approx(fused)
    assert got_floored is floored


def test_an_empty_branch_gives_its_weight_to_the_other() -> None:
    assert fuse_weighted(0.5, 0.0, vector_present=False) == (pytest.approx(0.5), False)  # 0.15 / 0.3
    assert fuse_weighted(0.0, 0.8, bm25_present=False) == (pytest.approx(0.8), False)  # 0.56 / 0.7


def test_weights_are_configurable() -> None:
    even = FusionSettings(vector_weight=0.5, bm25_weight=0.5)
    assert fuse_weighted(0.6, 0.2, even)[0] == pytest.approx(0.4)  # (0.3 + 0.1) / 1.0
    assert fuse_weighted(0.5, 0.2, FusionSettings(vector_weight=0.3, bm25_weight=0.1))[0] == pytest.approx(
        0.275  # (0.05 + 0.06) / 0.4
    )
    with pytest.raises(ValidationError):
        FusionSettings(vector_weight=0.0, bm25_weight=0.0)


def test_rank_with_weighted_fusion() -> None:
    # bm25 norms A 1, B 0.75, C 0.5; cosines A 0.5, C 0.9, D 0.8
    # fused: A max(0.65, 0.92) = 0.92; B max(0.225, 0.69) = 0.69; C 0.15 + 0.63 = 0.78; D 0.56
    # blend with importance 0.5: 0.7 * fused + 0.15 -> A 0.794, C 0.696, B 0.633, D 0.542
    results = rank([("A", -10.0), ("B", -7.5), ("C", -5.0)], [("A", 0.5), ("C", 0.9), ("D", 0.8)],
                   chunks("A", "B", "C", "D"), now=NOW, limit=10, settings=DESIGN_WEIGHTS, decay=NO_DECAY)  # fmt: skip
    assert order(results) == ["A", "C", "B", "D"]
    assert scores(results) == pytest.approx([0.794, 0.696, 0.633, 0.542])
    fused = {r.uid: (r.breakdown.fused, r.breakdown.floor_applied) for r in results}
    assert fused == {"A": (pytest.approx(0.92), True), "B": (pytest.approx(0.69), True),
                     "C": (pytest.approx(0.78), False), "D": (pytest.approx(0.56), False)}  # fmt: skip


def test_rank_with_zscore_fusion() -> None:
    # the default: both branches found something, so each is standardised over its own candidates
    # BM25 (negated) 10, 7.5, 5: mean 7.5, population std 2.041241 -> z A 1.224745, B 0, C -1.224745
    # cosine 0.5, 0.9, 0.8: mean 0.733333, std 0.169967 -> z A -1.372813, C 0.980581, D 0.392232
    # missing: D gets BM25's lowest (-1.224745), B the vector's lowest (-1.372813)
    # s = 0.7 zb + 0.3 zv: A 0.445478, B -0.411844, C -0.563147, D -0.739652
    # fused = 1 / (1 + e^(-s / 2)): A 0.555456, B 0.448701, C 0.430068, D 0.408583
    # blend 0.7 fused + 0.15: A 0.538819, B 0.464090, C 0.451048, D 0.436008
    # (three candidates per branch: the default asks for five, so this example lowers the bar to two)
    z = FusionSettings(zscore_min_candidates=2)
    results = rank([("A", -10.0), ("B", -7.5), ("C", -5.0)], [("A", 0.5), ("C", 0.9), ("D", 0.8)],
                   chunks("A", "B", "C", "D"), now=NOW, limit=10, settings=z, decay=NO_DECAY)  # fmt: skip
    assert order(results) == ["A", "B", "C", "D"]
    assert scores(results) == pytest.approx([0.538819, 0.464090, 0.451048, 0.436008], abs=1e-6)
    b = {r.uid: r.breakdown for r in results}
    assert [b[u].fused for u in "ABCD"] == pytest.approx([0.555456, 0.448701, 0.430068, 0.408583], abs=1e-6)
    assert [b[u].bm25_z for u in "ABCD"] == [pytest.approx(1.224745, abs=1e-6), 0.0,
                                             pytest.approx(-1.224745, abs=1e-6), None]  # fmt: skip
    vector_z = [-1.372813, None, 0.980581, 0.392232]
    assert [b[u].vector_z for u in "ABCD"] == [None if z is None else pytest.approx(z, abs=1e-6) for z in vector_z]
    assert not any(x.floor_applied for x in b.values())
    # relative scores (the 2026-11-22 default): A 0.92 (floor), B 0.69 (floor), C 0.66, D 0.32; no z-scores
    relative = FusionSettings(vector_weight=0.4, bm25_weight=0.6, normalization="relative")
    old = rank([("A", -10.0), ("B", -7.5), ("C", -5.0)], [("A", 0.5), ("C", 0.9), ("D", 0.8)],
               chunks("A", "B", "C", "D"), now=NOW, limit=10, settings=relative, decay=NO_DECAY)  # fmt: skip
    assert [r.breakdown.fused for r in old] == pytest.approx([0.92, 0.69, 0.66, 0.32])
    assert all(r.breakdown.bm25_z is None and r.breakdown.vector_z is None for r in old)


def test_zscores_of_equal_or_single_scores_are_zero() -> None:
    assert zscores({"A": -3.0, "B": -3.0}, lower_is_better=True) == {"A": 0.0, "B": 0.0}
    assert zscores({"A": 0.7}, lower_is_better=False) == {"A": 0.0}
    assert zscores({}, lower_is_better=False) == {}
    assert zscores({"A": 1.0, "B": 3.0}, lower_is_better=False) == {"A": -1.0, "B": 1.0}
    assert zscores({"A": -1.0, "B": -3.0}, lower_is_better=True) == {"A": -1.0, "B": 1.0}
    assert squash(0.0, 2.0) == 0.5 and squash(1e9, 2.0) == 1.0 and squash(-1e9, 2.0) == pytest.approx(0.0)


def test_zscore_fusion_needs_five_candidates_in_each_branch() -> None:
    # two hits 0.0001 apart would be z -1 and +1: with fewer than five candidates the relative scores apply
    # (0.3 / 0.7 and the keyword floor): A max(0.7 + 0.3 * 0.5, 0.92) = 0.92, C 0.7 * 0.5 + 0.3 * 0.9 = 0.62
    results = rank([("A", -10.0), ("C", -5.0)], [("A", 0.5), ("C", 0.9)], chunks("A", "C"), now=NOW, limit=5,
                   decay=NO_DECAY)  # fmt: skip
    assert [r.breakdown.fused for r in results] == pytest.approx([0.92, 0.62])
    assert all(r.breakdown.bm25_z is None for r in results)
    five = [(u, -float(n)) for n, u in enumerate("ABCDE", start=1)]
    cosines = [(u, n / 10) for n, u in enumerate("ABCDE", start=1)]
    results = rank(five, cosines, chunks(*"ABCDE"), now=NOW, limit=5, decay=NO_DECAY)
    assert all(r.breakdown.bm25_z is not None and r.breakdown.vector_z is not None for r in results)


def test_zscore_fusion_needs_both_branches() -> None:
    # one branch only: nothing to put on a common scale, so the relative scores apply (BM25 against the best)
    results = rank([("A", -4.0), ("B", -2.0)], [], chunks("A", "B"), now=NOW, limit=5, decay=NO_DECAY)
    assert [r.breakdown.fused for r in results] == [1.0, 0.5]
    assert all(r.breakdown.bm25_z is None for r in results)
    vector_only = rank([], [("A", 0.6), ("B", 0.3)], chunks("A", "B"), now=NOW, limit=5, decay=NO_DECAY)
    assert [r.breakdown.fused for r in vector_only] == [0.6, 0.3]  # the cosine itself


def test_bm25_only_mode_gives_bm25_the_whole_weight() -> None:
    # no vector candidates: fused = bm25_norm (1.0, 0.5); blend 0.7 * fused + 0.15 -> 0.85, 0.5
    results = rank([("A", -4.0), ("B", -2.0)], [], chunks("A", "B"), now=NOW, limit=5, decay=NO_DECAY)
    assert scores(results) == pytest.approx([0.85, 0.5])


def test_duplicates_keep_their_best_score_and_unknown_uids_are_dropped() -> None:
    # B's best raw is -10 (best hit, norm 1); Z is not admissible, so A (-5) normalises against B: 0.5
    results = rank([("A", -5.0), ("B", -1.0), ("B", -10.0), ("Z", -50.0)], [], chunks("A", "B"),
                   now=NOW, limit=5, settings=RELEVANCE_ONLY, decay=NO_DECAY)  # fmt: skip
    assert [(r.uid, r.breakdown.bm25_raw, r.breakdown.bm25_rank) for r in results] == [("B", -10.0, 1), ("A", -5.0, 2)]
    assert scores(results) == pytest.approx([1.0, 0.5])


# ------------------------------------------------------------------------------ RRF


def test_rrf_with_k_60_on_three_items() -> None:
    # BM25 ranks A 1, B 2, C 3; vector ranks C 1, A 2 (B not found)
    # A = 1/61 + 1/62 = 0.016393 + 0.016129 = 0.032522
    # C = 1/63 + 1/61 = 0.015873 + 0.016393 = 0.032266
    # B = 1/62         = 0.016129
    # scaled by (k + 1) / 2 = 30.5: A 0.991935, C 0.984127, B 0.491935
    results = rank([("A", -10.0), ("B", -8.0), ("C", -6.0)], [("C", 0.9), ("A", 0.8)], chunks("A", "B", "C"),
                   now=NOW, limit=3, fusion="rrf", settings=RELEVANCE_ONLY, decay=NO_DECAY)  # fmt: skip
    assert order(results) == ["A", "C", "B"]
    b = {r.uid: r.breakdown for r in results}
    assert [b[u].rrf for u in "ACB"] == pytest.approx([0.032522, 0.032266, 0.016129], abs=1e-6)
    assert [b[u].fused for u in "ACB"] == pytest.approx([0.991935, 0.984127, 0.491935], abs=1e-6)
    assert [(b[u].bm25_rank, b[u].vector_rank) for u in "ACB"] == [(1, 2), (3, 1), (2, None)]
    assert not any(x.floor_applied for x in b.values())
    assert scores(results) == pytest.approx([0.991935, 0.984127, 0.491935], abs=1e-6)


def test_rrf_helpers() -> None:
    assert rrf((1, None), 60) == pytest.approx(1 / 61)
    assert rrf((1, 1), 0) == 2.0  # k = 0: 1/1 + 1/1
    assert scale_rrf(2 / 61, 60, 2) == pytest.approx(1.0)  # first in both branches
    assert scale_rrf(1 / 61, 60, 1) == pytest.approx(1.0)  # first in the only branch
    assert scale_rrf(0.5, 60, 0) == 0.0
    # ties get consecutive ranks by uid
    assert ranks({"b": -1.0, "a": -1.0, "c": -3.0}, lower_is_better=True) == {"c": 1, "a": 2, "b": 3}
    assert ranks({"b": 0.5, "a": 0.5}, lower_is_better=False) == {"a": 1, "b": 2}


# ------------------------------------------------------------------------------ importance blend


def test_importance_blend() -> None:
    assert blend_importance(0.8, 0.5) == pytest.approx(0.71)  # 0.7 * 0.8 + 0.3 * 0.5 = 0.56 + 0.15
    assert blend_importance(0.0, 1.0) == pytest.approx(0.3)
    assert blend_importance(1.0, 1.0) == 1.0
    assert blend_importance(0.8, 0.5, RELEVANCE_ONLY) == 0.8
    assert blend_importance(0.8, 0.5, FusionSettings(importance_weight=0.5)) == pytest.approx(0.65)  # 0.4 + 0.25


def test_importance_reorders_equally_relevant_items() -> None:
    # both cosine 0.6 (fused 0.6): 0.42 + 0.3 * importance -> A (0.2) 0.48, B (0.9) 0.69
    items = {"A": ChunkMeta(created_at=NOW, importance=0.2), "B": ChunkMeta(created_at=NOW, importance=0.9)}
    results = rank([], [("A", 0.6), ("B", 0.6)], items, now=NOW, limit=2, decay=NO_DECAY)
    assert order(results) == ["B", "A"]
    assert scores(results) == pytest.approx([0.69, 0.48])


# ------------------------------------------------------------------------------ MMR

# Vector-only candidates with importance weight 0 and no decay: every score is the cosine to the query.
# Embeddings: A (1, 0), B (0.8, 0.6), C (0, 1). cos(A, B) = 0.8, cos(B, C) = 0.6, cos(A, C) = 0.
# lambda 0.7: penalty weight (1 - 0.7) / 0.7 = 0.428571.
MMR_HITS = [("A", 0.9), ("B", 0.85), ("C", 0.6)]
MMR_VECTORS = {"A": [1.0, 0.0], "B": [0.8, 0.6], "C": [0.0, 1.0]}


def mmr_rank(hits: list[tuple[str, float]], **kwargs: object) -> list[Ranked]:
    uids = [u for u, _ in hits]
    return rank([], hits, chunks(*uids), now=NOW, settings=RELEVANCE_ONLY, decay=NO_DECAY, **kwargs)  # type: ignore[arg-type]


def test_mmr_picking_order() -> None:
    # 1: A 0.9 (nothing picked yet).  2: B 0.85 - 0.428571 * 0.8 = 0.507143, C 0.6 - 0 = 0.6 -> C.
    # 3: B, max sim to {A, C} = 0.8 -> 0.507143.
    results = mmr_rank(MMR_HITS, limit=3, mmr=True, vectors=MMR_VECTORS)
    assert order(results) == ["A", "C", "B"]
    assert scores(results) == pytest.approx([0.9, 0.6, 0.507143], abs=1e-6)
    assert [r.breakdown.mmr_penalty for r in results] == pytest.approx([0.0, 0.0, 0.342857], abs=1e-6)
    assert [r.breakdown.decayed for r in results] == pytest.approx([0.9, 0.6, 0.85])
    assert order(mmr_rank(MMR_HITS, limit=3)) == ["A", "B", "C"]  # without MMR


def test_mmr_treats_a_missing_vector_as_dissimilar() -> None:
    # D (0.55) has no vector: similarity 0. Step 2: B 0.507143, C 0.6, D 0.55 -> C; step 3: D 0.55 > B.
    results = mmr_rank([*MMR_HITS, ("D", 0.55)], limit=4, mmr=True, vectors=MMR_VECTORS)
    assert order(results) == ["A", "C", "D", "B"]
    assert results[2].breakdown.mmr_penalty == 0.0


def test_mmr_limit_min_score_and_lambda() -> None:
    assert order(mmr_rank(MMR_HITS, limit=2, mmr=True, vectors=MMR_VECTORS)) == ["A", "C"]
    # B's MMR score 0.507143 falls under 0.55 although its relevance (0.85) does not
    assert order(mmr_rank(MMR_HITS, limit=3, mmr=True, vectors=MMR_VECTORS, min_score=0.55)) == ["A", "C"]
    plain = FusionSettings(importance_weight=0.0, mmr_lambda=1.0)  # lambda 1: no penalty
    results = rank([], MMR_HITS, chunks("A", "B", "C"), now=NOW, limit=3, settings=plain, decay=NO_DECAY,
                   mmr=True, vectors=MMR_VECTORS)  # fmt: skip
    assert order(results) == ["A", "B", "C"]
    assert order(mmr_rank(MMR_HITS, limit=3, mmr=True)) == ["A", "B", "C"]  # no vectors at all


def test_mmr_select_directly() -> None:
    # B points the same way as A (similarity 1, lengths do not matter): 0.85 - 0.428571 = 0.421429,
    # still above C (0.3, similarity 0), so B is second.
    picked = mmr_select({"A": 0.9, "B": 0.85, "C": 0.3}, {"A": [2.0, 0.0], "B": [1.0, 0.0], "C": [0.0, 5.0]},
                        lambda_=0.7, limit=3)  # fmt: skip
    assert [(u, round(f, 6), round(p, 6)) for u, f, p in picked] == [
        ("A", 0.9, 0.0), ("B", 0.421429, 0.428571), ("C", 0.3, 0.0),
    ]  # fmt: skip
    with pytest.raises(InputError, match="dimension"):
        mmr_select({"A": 1.0, "B": 0.5}, {"A": [1.0, 0.0], "B": [1.0]}, lambda_=0.7, limit=2)


# ------------------------------------------------------------------------------ min score, top-k, ties


def test_min_score_is_inclusive_and_limit_cuts() -> None:
    assert order(mmr_rank(MMR_HITS, limit=3, min_score=0.85)) == ["A", "B"]
    assert order(mmr_rank(MMR_HITS, limit=3, min_score=0.86)) == ["A"]
    assert order(mmr_rank(MMR_HITS, limit=2)) == ["A", "B"]
    assert mmr_rank(MMR_HITS, limit=3, min_score=0.95) == []


def test_ties_break_by_uid_whatever_the_input_order() -> None:
    hits = [("b", 0.5), ("c", 0.5), ("a", 0.5)]
    assert order(mmr_rank(hits, limit=3)) == ["a", "b", "c"]
    assert order(mmr_rank(hits[::-1], limit=3)) == ["a", "b", "c"]
    assert order(mmr_rank(hits, limit=3, mmr=True, vectors={})) == ["a", "b", "c"]
    assert order(rank([("b", -1.0), ("a", -1.0)], [], chunks("a", "b"), now=NOW, limit=2, fusion="rrf")) == ["a", "b"]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InputError, match="limit"):
        rank([], [], {}, now=NOW, limit=0)
    with pytest.raises(InputError, match="fusion"):
        rank([], [], {}, now=NOW, limit=1, fusion="max")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="min_score"):
        rank([], [], {}, now=NOW, limit=1, min_score=math.nan)
    with pytest.raises(InputError, match="bm25"):
        rank([("A", math.inf)], [], chunks("A"), now=NOW, limit=1)
    assert rank([], [], {}, now=NOW, limit=1) == []


# ------------------------------------------------------------------------------ explain


def test_explain_records_every_component() -> None:
    # A: a memory item, working, 30 d old, importance 0.5, confidence 0.8, 5 accesses, the last 30 d ago.
    #   bm25 -10 (best: norm 1, rank 1), cosine 0.5 (rank 1) -> weighted 0.65, floor 0.92 -> fused 0.92
    #   blend 0.7 * 0.92 + 0.3 * 0.5 = 0.794
    #   half-life 30 e^0.75 = 63.5100 d; raw 2^-(30 / 63.5100) = 2^-0.472367 = 0.720781 (above the 0.7 floor)
    #   frequency (1 - e^-1) * 2^-1 = 0.316060; importance x confidence 0.4
    #   boost 0.4 * 0.720781 + 0.3 * 0.316060 + 0.3 * 0.4 = 0.288313 + 0.094818 + 0.12 = 0.503131
    #   final 0.794 * 0.503131 = 0.399486
    # B: a fresh chunk (importance 0.5, never accessed), bm25 -5 only -> norm 0.5, fused 0.3 * 0.5 = 0.15,
    #   blend 0.105 + 0.15 = 0.255, boost 0.4 + 0.15 = 0.55, final 0.140250
    item = MemoryItem(uid=new_id("memory"), agent_id="a", content="x", created_at=NOW - 30 * DAY, importance=0.5,
                      confidence=0.8, access_count=5, accessed_at=NOW - 30 * DAY, tier=Tier.WORKING)  # fmt: skip
    items = {"A": item, "B": ChunkMeta(created_at=NOW)}
    results = rank(
        [("A", -10.0), ("B", -5.0)],
        [("A", 0.5)],
        items,
        now=NOW,
        limit=5,
        settings=DESIGN_WEIGHTS,
        decay=DecaySettings(),
    )  # the formula at full strength (the engine's default is a quarter)
    a, b = (r.breakdown for r in results)
    engine = rank([("A", -10.0), ("B", -5.0)], [("A", 0.5)], items, now=NOW, limit=5, settings=DESIGN_WEIGHTS)
    quarter = 1 - 0.25 * (1 - 0.503131)  # DEFAULT_DECAY: boost = 1 - strength * (1 - full)
    assert engine[0].breakdown.decay_boost == pytest.approx(quarter, abs=1e-6)
    assert engine[0].score == pytest.approx(0.794 * quarter, abs=1e-6)
    assert a.model_dump() == {
        "uid": "A", "fusion": "weighted", "bm25_raw": -10.0, "bm25_norm": 1.0, "bm25_rank": 1,
        "vector_sim": 0.5, "vector_norm": 0.5, "vector_rank": 1, "bm25_z": None, "vector_z": None, "rrf": None,
        "fused": pytest.approx(0.92), "floor_applied": True, "bonus": 0.0, "coverage": None, "importance": 0.5,
        "importance_blend": pytest.approx(0.794), "tier": "working", "age_days": pytest.approx(30.0),
        "half_life_days": pytest.approx(63.51, abs=1e-4), "recency_raw": pytest.approx(0.720781, abs=1e-6),
        "recency": pytest.approx(0.720781, abs=1e-6), "frequency": pytest.approx(0.316060, abs=1e-6),
        "importance_confidence": pytest.approx(0.4), "decay_boost": pytest.approx(0.503131, abs=1e-6),
        "decayed": pytest.approx(0.399486, abs=1e-6), "mmr_penalty": 0.0, "final": pytest.approx(0.399486, abs=1e-6),
    }  # fmt: skip
    assert results[0].score == a.final
    assert (b.uid, b.vector_sim, b.vector_norm, b.vector_rank, b.bm25_norm, b.floor_applied) == (
        "B", None, 0.0, None, 0.5, False,
    )  # fmt: skip
    assert (b.fused, b.importance_blend, b.decay_boost, b.final) == pytest.approx((0.15, 0.255, 0.55, 0.14025))
    assert a.model_dump_json()  # serialisable for --explain --json


# ------------------------------------------------------------------------------ properties

UIDS = st.sampled_from(["A", "B", "C", "D", "E", "F"])
BM25 = st.lists(st.tuples(UIDS, st.floats(-50.0, 0.0)), max_size=8)
COSINES = st.lists(st.tuples(UIDS, st.floats(-1.0, 1.0)), max_size=8)
METAS = st.builds(
    lambda age, idle, importance, confidence, tier, count: ChunkMeta(
        created_at=NOW - age * DAY, accessed_at=None if idle is None else NOW - idle * DAY, importance=importance,
        confidence=confidence, tier=tier, access_count=count,
    ),
    st.floats(0.0, 3650.0), st.none() | st.floats(0.0, 3650.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0),
    st.sampled_from(["core", "working", "peripheral"]), st.integers(0, 100),
)  # fmt: skip
ITEMS = st.dictionaries(UIDS, METAS, min_size=6)
FUSIONS = st.sampled_from(["weighted", "rrf"])


@settings(max_examples=30)
@given(bm25=BM25, vector=COSINES, items=ITEMS, fusion=FUSIONS, limit=st.integers(1, 8))
def test_scores_are_finite_in_range_and_ordered(bm25, vector, items, fusion, limit) -> None:  # type: ignore[no-untyped-def]
    results = rank(bm25, vector, items, now=NOW, limit=limit, fusion=fusion)
    assert len(results) == min(limit, len({u for u, _ in bm25 + vector}))
    for r in results:
        b = r.breakdown
        values = [v for v in b.model_dump().values() if isinstance(v, float)]
        assert all(math.isfinite(v) for v in values)
        for v in (b.bm25_norm, b.vector_norm, b.fused, b.importance_blend, b.recency_raw, b.frequency,
                  b.importance_confidence, b.final):  # fmt: skip
            assert 0.0 <= v <= 1.0
        assert 0.3 <= b.decay_boost <= 1.0
        assert b.final == b.decayed == r.score
    keys = [(-r.score, r.uid) for r in results]
    assert keys == sorted(keys)


@settings(max_examples=30)
@given(bm25=BM25, vector=COSINES, items=ITEMS, limit=st.integers(1, 8), min_score=st.floats(0.0, 0.5))
def test_mmr_scores_stay_in_range_and_never_increase(bm25, vector, items, limit, min_score) -> None:  # type: ignore[no-untyped-def]
    vectors = {u: [float(i), 1.0, float(i % 2)] for i, u in enumerate(sorted(items))}
    results = rank(bm25, vector, items, now=NOW, limit=limit, mmr=True, vectors=vectors, min_score=min_score)
    finals = [r.score for r in results]
    assert finals == sorted(finals, reverse=True)
    assert len({r.uid for r in results}) == len(results) <= limit
    for r in results:
        assert min_score <= r.breakdown.final <= r.breakdown.decayed <= 1.0
        assert 0.0 <= r.breakdown.mmr_penalty <= 0.3 / 0.7 + 1e-12


@given(b1=st.floats(0.0, 1.0), b2=st.floats(0.0, 1.0), v=st.floats(0.0, 1.0))
def test_higher_bm25_never_lowers_the_fused_score(b1: float, b2: float, v: float) -> None:
    low, high = sorted((b1, b2))
    assert fuse_weighted(low, v)[0] <= fuse_weighted(high, v)[0]


@settings(max_examples=30)
@given(bm25=BM25.filter(bool), vector=COSINES, items=ITEMS, fusion=FUSIONS, better=st.floats(0.0, 50.0))
def test_a_better_bm25_hit_never_loses_fused_score(bm25, vector, items, fusion, better) -> None:  # type: ignore[no-untyped-def]
    uid, raw = bm25[0]
    improved = [(uid, raw - better), *bm25[1:]]

    def fused(hits: list[tuple[str, float]]) -> float:
        results = rank(hits, vector, items, now=NOW, limit=6, fusion=fusion)
        return next(r.breakdown.fused for r in results if r.uid == uid)

    assert fused(improved) >= fused(bm25)


def test_the_engines_default_decay_is_the_validated_settings() -> None:
    """``DEFAULT_DECAY`` is constructed without validation (a recall never builds the settings' validator): it is
    what validating the same value gives."""
    validated = DecaySettings(strength=0.25)
    assert validated == DEFAULT_DECAY and DEFAULT_DECAY.model_dump() == validated.model_dump()
    assert DEFAULT_DECAY.model_fields_set == validated.model_fields_set == {"strength"}
