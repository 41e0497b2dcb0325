"""Admission control for memory candidates (AMAC-style, opt-in): admit, reject, or pass to dedup.

A conversation yields candidate memories; before any is written, each gets five features in [0, 1]:

- ``type_prior``: how much a memory of its type tends to matter later (:data:`TYPE_PRIORS`).
- ``utility``: ``type_prior * importance`` (importance from the candidate, else the type's default).
- ``confidence``: how well the candidate is grounded in the conversation it came from, the best
  LCS-based F1 (ROUGE-L) of its content words against any sentence of that text (words lower-cased,
  stopwords left out, a plural ``s`` dropped). A candidate with no conversation text given is unchecked
  and gets 1.0 (said in its notes).
- ``novelty``: ``1 - max cosine`` to the agent's existing memories through the embedder; without an
  embedder ``1 - max token Jaccard`` instead (``similarity`` in the result says which).
- ``recency``: ``0.5 ** (age / half_life)`` of the moment the candidate was observed (1.0 when unknown).

The weighted sum of the features is the ``score``. The decision, in this order:

1. ``reject`` when confidence is below the preset's ``min_confidence`` (not grounded in the conversation);
2. ``dedup`` when novelty is below ``1 - dedup_similarity`` (a near neighbour exists: the dedup stage of
   :mod:`kg.memory.dedup` decides create / merge / skip / support / ...);
3. ``admit`` when the score reaches ``admit_threshold``, else ``reject``.

Everything is deterministic (the embedder is), nothing is written, and every result carries its feature
values, score, nearest neighbour and a one-line reason. Presets: ``balanced`` (default),
``conservative`` (fewer, better-grounded memories) and ``high-recall`` (keep almost everything
grounded); see :data:`PRESETS` and docs/conversation-admission.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field, model_validator

from kg.errors import InputError
from kg.memory.grounding import grounding, lcs_f1, lcs_length, token_jaccard, words
from kg.memory.neighbours import BULK_TEXTS, Neighbours, SimilarityMethod, bulk, cosine, unit_rows
from kg.memory.service import DEFAULT_IMPORTANCE, FALLBACK_IMPORTANCE
from kg.models import (
    MemoryItem,
    MemoryStoreKind,
    MemoryType,
    Model,
    OptionalLabel,
    Scope,
    Tag,
    Text,
    Unit,
    UtcDatetime,
)
from kg.models.base import new_list
from kg.ports import Embedder

AdmissionDecision = Literal["admit", "reject", "dedup"]

#: How much a memory of each type tends to matter later (identity and preferences most, observations least).
TYPE_PRIORS: dict[MemoryType, float] = {
    MemoryType.IDENTITY: 0.95,
    MemoryType.PREFERENCE: 0.9,
    MemoryType.GOAL: 0.85,
    MemoryType.DECISION: 0.85,
    MemoryType.LESSON: 0.8,
    MemoryType.SKILL: 0.75,
    MemoryType.FACT: 0.7,
    MemoryType.OUTCOME: 0.6,
    MemoryType.EVENT: 0.5,
    MemoryType.OBSERVATION: 0.4,
}


class FeatureWeights(Model):
    """Weights of the five features in the score (they must sum to 1)."""

    utility: Unit
    confidence: Unit
    novelty: Unit
    recency: Unit
    type_prior: Unit

    @model_validator(mode="after")
    def _sum_to_one(self) -> FeatureWeights:
        total = self.utility + self.confidence + self.novelty + self.recency + self.type_prior
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"weights must sum to 1, got {total:.6f}")
        return self


_FEATURES = ("utility", "confidence", "novelty", "recency", "type_prior")


class AdmissionPreset(Model):
    """One admission policy: weights, thresholds and the recency half-life."""

    name: str
    weights: FeatureWeights
    admit_threshold: Unit
    min_confidence: Unit
    dedup_similarity: Unit = 0.7
    recency_half_life_days: float = Field(default=14.0, gt=0)


#: The three presets. ``balanced`` weighs grounding and value alike; ``conservative`` asks for better grounding
#: and a higher score; ``high-recall`` admits anything grounded at all that is not a near duplicate.
PRESETS: dict[str, AdmissionPreset] = {
    "balanced": AdmissionPreset(
        name="balanced",
        weights=FeatureWeights(utility=0.25, confidence=0.25, novelty=0.2, recency=0.1, type_prior=0.2),
        admit_threshold=0.5,
        min_confidence=0.2,
    ),
    "conservative": AdmissionPreset(
        name="conservative",
        weights=FeatureWeights(utility=0.25, confidence=0.3, novelty=0.25, recency=0.05, type_prior=0.15),
        admit_threshold=0.62,
        min_confidence=0.35,
    ),
    "high-recall": AdmissionPreset(
        name="high-recall",
        weights=FeatureWeights(utility=0.2, confidence=0.2, novelty=0.2, recency=0.2, type_prior=0.2),
        admit_threshold=0.35,
        min_confidence=0.1,
    ),
}
DEFAULT_PRESET = "balanced"


class MemoryCandidate(Model):
    """A memory an extractor proposes from a conversation, before admission.

    ``evidence`` holds the conversation text it came from (one string per message); ``observed_at`` when
    it was said. ``key`` is the caller's own label (a message uid, a position) carried into every result.
    """

    content: Text
    type: MemoryType = MemoryType.OBSERVATION
    importance: Unit | None = None
    tags: list[Tag] = Field(default_factory=new_list, max_length=64)
    store: MemoryStoreKind = MemoryStoreKind.SHORT_TERM
    scope: Scope | None = None
    source: OptionalLabel = "conversation"
    evidence: list[str] = Field(default_factory=new_list)
    observed_at: UtcDatetime | None = None
    key: str | None = None

    def effective_importance(self) -> float:
        """The given importance, else the type's default (as :meth:`MemoryService.store_item` would set)."""
        if self.importance is not None:
            return self.importance
        return DEFAULT_IMPORTANCE.get(self.type, FALLBACK_IMPORTANCE)


class AdmissionFeatures(Model):
    """The five feature values of one candidate."""

    utility: float
    confidence: float
    novelty: float
    recency: float
    type_prior: float


class AdmissionResult(Model):
    """The decision on one candidate and everything it was based on."""

    index: int
    key: str | None = None
    decision: AdmissionDecision
    reason: str
    score: float
    features: AdmissionFeatures
    similarity: SimilarityMethod
    nearest_uid: str | None = None
    nearest_similarity: float = 0.0
    preset: str
    notes: list[str] = Field(default_factory=new_list)


def get_preset(name: str | AdmissionPreset) -> AdmissionPreset:
    """A preset by name (``balanced``, ``conservative``, ``high-recall``), or the one given."""
    if isinstance(name, AdmissionPreset):
        return name
    if name not in PRESETS:
        raise InputError("preset", f"must be one of {', '.join(sorted(PRESETS))}, got {name!r}")
    return PRESETS[name]


# ------------------------------------------------------------------------------------------ features
#
# The text features (words, grounding, Jaccard) are in kg.memory.grounding, the similarity to existing items in
# kg.memory.neighbours.


def recency(observed_at: datetime | None, now: datetime, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``; 1.0 for an unknown or future time."""
    if observed_at is None or observed_at >= now:
        return 1.0
    return float(0.5 ** ((now - observed_at) / timedelta(days=half_life_days)))


# ------------------------------------------------------------------------------------------ decisions


def features_of(candidate: MemoryCandidate, *, novelty: float, now: datetime,
                preset: AdmissionPreset) -> AdmissionFeatures:  # fmt: skip
    """The feature values of one candidate, given its novelty."""
    prior = TYPE_PRIORS[candidate.type]
    grounded = grounding(candidate.content, candidate.evidence) if candidate.evidence else 1.0
    return AdmissionFeatures(
        utility=round(prior * candidate.effective_importance(), 6),
        confidence=round(grounded, 6),
        novelty=round(novelty, 6),
        recency=round(recency(candidate.observed_at, now, preset.recency_half_life_days), 6),
        type_prior=prior,
    )


def score_of(features: AdmissionFeatures, weights: FeatureWeights) -> float:
    """The weighted sum of the features."""
    total: float = sum(float(getattr(weights, name)) * float(getattr(features, name)) for name in _FEATURES)
    return round(total, 6)


def decide(features: AdmissionFeatures, score: float, preset: AdmissionPreset) -> tuple[AdmissionDecision, str]:
    """The decision and its reason (the order is documented in the module docstring)."""
    if features.confidence < preset.min_confidence:
        return "reject", (
            f"confidence {features.confidence:.3f} < {preset.min_confidence}: not grounded in the conversation"
        )
    if features.novelty < 1 - preset.dedup_similarity:
        return "dedup", (
            f"novelty {features.novelty:.3f} < {1 - preset.dedup_similarity:.2f}: "
            f"similar to an existing memory, the dedup stage decides"
        )
    if score >= preset.admit_threshold:
        return "admit", f"score {score:.3f} >= {preset.admit_threshold}"
    return "reject", f"score {score:.3f} < {preset.admit_threshold}"


def evaluate(
    candidates: Sequence[MemoryCandidate],
    *,
    existing: Sequence[MemoryItem],
    now: datetime,
    preset: str | AdmissionPreset = DEFAULT_PRESET,
    embedder: Embedder | None = None,
) -> list[AdmissionResult]:
    """One :class:`AdmissionResult` per candidate, in order (nothing is written).

    Args:
        candidates: the proposed memories, each with the conversation text it came from.
        existing: the agent's current memories (novelty is measured against them).
        now: the moment of admission (recency).
        preset: a preset name or an :class:`AdmissionPreset`.
        embedder: for cosine novelty; without one, token Jaccard is used and each result says so.
    """
    policy = get_preset(preset)
    neighbours = Neighbours(existing, embedder)
    vectors = neighbours.embed([c.content for c in candidates])
    results = []
    for index, (candidate, vector) in enumerate(zip(candidates, vectors, strict=True)):
        ranked = neighbours.ranked(candidate.content, vector)
        nearest, similarity = ranked[0] if ranked else (None, 0.0)
        features = features_of(candidate, novelty=1 - similarity, now=now, preset=policy)
        score = score_of(features, policy.weights)
        decision, reason = decide(features, score, policy)
        notes = []
        if neighbours.method == "jaccard":
            notes.append("novelty by token Jaccard: no embedder")
        if not candidate.evidence:
            notes.append("no conversation text given: confidence not checked (1.0)")
        results.append(AdmissionResult(
            index=index, key=candidate.key, decision=decision, reason=reason, score=score, features=features,
            similarity=neighbours.method, nearest_uid=nearest.uid if nearest else None,
            nearest_similarity=round(similarity, 6), preset=policy.name, notes=notes,
        ))  # fmt: skip
    return results


__all__ = [
    "BULK_TEXTS",
    "DEFAULT_PRESET",
    "PRESETS",
    "TYPE_PRIORS",
    "AdmissionDecision",
    "AdmissionFeatures",
    "AdmissionPreset",
    "AdmissionResult",
    "FeatureWeights",
    "MemoryCandidate",
    "Neighbours",
    "bulk",
    "cosine",
    "decide",
    "evaluate",
    "features_of",
    "get_preset",
    "grounding",
    "lcs_f1",
    "lcs_length",
    "recency",
    "score_of",
    "token_jaccard",
    "unit_rows",
    "words",
]
