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

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, model_validator

from kg.errors import InputError
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
from kg.ports import Embedder
from kg.text.stem import strip_plural
from kg.text.stopwords import STOPWORDS
from kg.text.words import CJK_WORD_RE

AdmissionDecision = Literal["admit", "reject", "dedup"]
SimilarityMethod = Literal["cosine", "jaccard"]

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
#: Words compared for confidence and Jaccard novelty: at most this many of a candidate.
MAX_CANDIDATE_WORDS = 256
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])|\n+")


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
    tags: list[Tag] = Field(default_factory=list, max_length=64)
    store: MemoryStoreKind = MemoryStoreKind.SHORT_TERM
    scope: Scope | None = None
    source: OptionalLabel = "conversation"
    evidence: list[str] = Field(default_factory=list)
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
    notes: list[str] = Field(default_factory=list)


def get_preset(name: str | AdmissionPreset) -> AdmissionPreset:
    """A preset by name (``balanced``, ``conservative``, ``high-recall``), or the one given."""
    if isinstance(name, AdmissionPreset):
        return name
    if name not in PRESETS:
        raise InputError("preset", f"must be one of {', '.join(sorted(PRESETS))}, got {name!r}")
    return PRESETS[name]


# ------------------------------------------------------------------------------------------ text features


def words(text: str, *, content: bool = False) -> list[str]:
    """Lower-cased words with a plural ``s`` dropped (``prefers`` -> ``prefer``), in order; ``content`` leaves
    out stopwords (:data:`~kg.text.stopwords.STOPWORDS`); a CJK character counts as one word."""
    out = []
    for word in CJK_WORD_RE.findall(text.lower()):
        if content and word in STOPWORDS:
            continue
        out.append(strip_plural(word))
    return out


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two word lists (two rows of the DP table)."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def lcs_f1(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """ROUGE-L F1: the harmonic mean of LCS/len(candidate) and LCS/len(reference)."""
    if not candidate or not reference:
        return 0.0
    common = lcs_length(candidate, reference)
    if common == 0:
        return 0.0
    precision, recall = common / len(candidate), common / len(reference)
    return 2 * precision * recall / (precision + recall)


def sentences(texts: Sequence[str]) -> list[list[str]]:
    """The content-word lists of every sentence (and line) of ``texts``, empty ones left out."""
    out = []
    for text in texts:
        out += [w for w in (words(s, content=True) for s in _SENTENCE.split(text)) if w]
    return out


def grounding(candidate: str, evidence: Sequence[str]) -> float:
    """The best LCS-based F1 of the candidate's content words against any sentence of ``evidence`` (0 with none).

    Stopwords are left out on both sides: "the", "is", "on" would otherwise ground any sentence a little.
    """
    mine = words(candidate, content=True)[:MAX_CANDIDATE_WORDS]
    vocabulary = set(mine)
    # a sentence sharing no word scores 0: skip the quadratic LCS for it
    return max((lcs_f1(mine, s) for s in sentences(evidence) if vocabulary.intersection(s)), default=0.0)


def token_jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word sets."""
    left, right = set(words(a)), set(words(b))
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def recency(observed_at: datetime | None, now: datetime, half_life_days: float) -> float:
    """``0.5 ** (age / half_life)``; 1.0 for an unknown or future time."""
    if observed_at is None or observed_at >= now:
        return 1.0
    return float(0.5 ** ((now - observed_at) / timedelta(days=half_life_days)))


# ------------------------------------------------------------------------------------------ similarity


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
