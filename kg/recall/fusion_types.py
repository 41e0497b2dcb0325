"""Settings and result types of the fusion pipeline (:mod:`kg.recall.fusion`).

``FusionSettings`` holds every parameter of fusion, the importance blend and MMR; ``ScoreBreakdown`` is one
result's ``--explain`` view and ``Ranked`` one ranked candidate. docs/recall-scoring.md has the formulas.
"""

from typing import Literal, Self

from pydantic import ConfigDict, Field, model_validator

from kg.errors import InputError
from kg.models import Model, Unit

FusionMethod = Literal["weighted", "rrf"]
Normalization = Literal["zscore", "relative"]
FUSION_METHODS: tuple[FusionMethod, ...] = ("weighted", "rrf")
_METHODS: dict[str, FusionMethod] = {m: m for m in FUSION_METHODS}


def check_fusion(fusion: str) -> FusionMethod:
    """``fusion`` if it is weighted or rrf; InputError otherwise."""
    if fusion in _METHODS:
        return _METHODS[fusion]
    raise InputError("fusion", f"must be weighted or rrf, got {fusion!r}")


class FusionSettings(Model):
    """Parameters of fusion, importance blend and MMR (frozen).

    Attributes:
        vector_weight: Weight of the vector branch in weighted fusion (0.3 with z-scores, measured on
            LoCoMo: docs/recall-scoring.md; design.md's 0.7 favours a weak embedder).
        bm25_weight: Weight of the BM25 branch in weighted fusion (0.7).
        normalization: How weighted fusion puts the two branches on one scale when both have candidates:
            ``zscore`` (per-branch z-scores, then a logistic with ``temperature``) or ``relative`` (BM25
            against the best hit, cosine as it is, with the keyword floor; the default until 2026-11-26).
        temperature: ``fused = 1 / (1 + exp(-s / temperature))`` of the z-score mix ``s`` (2.0).
        zscore_min_candidates: Fewest candidates each branch needs for z-scores (5): two or three hits make
            any difference between them look like a full standard deviation, so fewer get relative scores.
        floor_threshold: ``bm25_norm`` from which the keyword floor applies, inclusive (0.75).
        floor_factor: The floor: ``fused >= floor_factor * bm25_norm`` (0.92).
        rrf_k: The ``k`` of reciprocal rank fusion (60).
        importance_weight: ``blend = (1 - w) * fused + w * importance`` (0.3).
        mmr_lambda: Relevance against diversity in MMR, in (0, 1]; 1 means no diversity (0.7).
    """

    model_config = ConfigDict(frozen=True)

    vector_weight: Unit = 0.3
    bm25_weight: Unit = 0.7
    normalization: Normalization = "zscore"
    temperature: float = Field(default=2.0, gt=0, le=100)
    zscore_min_candidates: int = Field(default=5, ge=2, le=1000)
    floor_threshold: Unit = 0.75
    floor_factor: Unit = 0.92
    rrf_k: int = Field(default=60, ge=0, le=1_000_000)
    importance_weight: Unit = 0.3
    mmr_lambda: float = Field(default=0.7, gt=0, le=1)

    @model_validator(mode="after")
    def _some_weight(self) -> Self:
        if self.vector_weight + self.bm25_weight <= 0:
            raise ValueError("vector_weight + bm25_weight must be positive")
        return self


class ScoreBreakdown(Model):
    """Every component of one result's score (``--explain``); see the module docstring for the formulas.

    ``bm25_raw``/``vector_sim`` and the ranks are ``None`` when that branch did not find the uid
    (its normalised score is then 0). ``bm25_z``/``vector_z`` are the z-scores z-score fusion used
    (``None`` in other fusions, and for a branch that did not find the uid: it got the branch's lowest).
    ``rrf`` is the unscaled RRF sum, ``None`` in weighted fusion.
    ``bonus`` is what the query's names and dates added to ``fused`` in the importance blend.
    ``coverage`` (lexical-only recall) is the share of the query's words in the item's content and tags.
    """

    model_config = ConfigDict(frozen=True)

    uid: str
    fusion: FusionMethod
    bm25_raw: float | None
    bm25_norm: float
    bm25_rank: int | None
    vector_sim: float | None
    vector_norm: float
    vector_rank: int | None
    bm25_z: float | None = None
    vector_z: float | None = None
    rrf: float | None
    fused: float
    floor_applied: bool
    bonus: float
    coverage: float | None
    importance: float
    importance_blend: float
    tier: str
    age_days: float
    half_life_days: float
    recency_raw: float
    recency: float
    frequency: float
    importance_confidence: float
    decay_boost: float
    decayed: float
    mmr_penalty: float
    final: float


class Ranked(Model):
    """One ranked candidate: its uid, final score and breakdown."""

    model_config = ConfigDict(frozen=True)

    uid: str
    score: float
    breakdown: ScoreBreakdown


#: The engine's fusion settings: the model's defaults, constructed, not validated (valid by the model's own defaults;
#: tests/unit/test_default_settings.py compares both constants with the validated settings, types included), so that
#: importing this module, which every recall does, builds no validator (issue 33).
DEFAULT_FUSION = FusionSettings.model_construct()
#: The weighted fusion of 2026-11-22 (0.4 / 0.6, relative scores, keyword floor): for scoring a few texts
#: against a prompt (kg.conversation.relevance), where there is no candidate list to standardise over.
RELATIVE_FUSION = FusionSettings.model_construct(vector_weight=0.4, bm25_weight=0.6, normalization="relative")


__all__ = [
    "DEFAULT_FUSION",
    "FUSION_METHODS",
    "RELATIVE_FUSION",
    "FusionMethod",
    "FusionSettings",
    "Normalization",
    "Ranked",
    "ScoreBreakdown",
    "check_fusion",
]
