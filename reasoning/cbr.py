"""Case-based reasoning (CBR-BDI): retrieval, duplicate keys and capacity pruning over stored cases.

Pure functions over :class:`kg.models.Case` lists; the store decides where cases live.

Similarity of a query ``q`` to a case ``c`` (every term in 0..1)::

    Sb = J(beliefs(q), beliefs(c))          J = Jaccard: |A and B| / |A or B|, J(∅, ∅) = 1
    Sd = J(desires(q), desires(c))          strings compared casefolded, whitespace collapsed
    x  = (wb·Sb + wd·Sd) / (wb + wd)        wb = 0.6, wd = 0.4 by default
    Sc = max(0, cos(embed(q.context), embed(c.context)))     0 when the case has no context
    S  = x                                  without context
    S  = (1 - wc)·x + wc·Sc                 with context (wc = 0.2 by default)

Context counts only when the query has a context, ``wc > 0`` and an :class:`~kg.ports.Embedder` is
given and loads; otherwise retrieval carries on with ``S = x`` and the result says why
(``context_used=False`` and a note). There is never a made-up vector.

Pruning keeps the most useful cases: failed cases go before successful ones, and among equals the
oldest (created_at, clamped to ``now``) goes first, then the smaller uid.

Example:
    >>> from reasoning.cbr import CaseQuery, retrieve
    >>> result = retrieve(cases, CaseQuery(beliefs=["stock is low"], desires=["avoid stock-outs"]))  # doctest: +SKIP
    >>> result.matches[0].case_uid  # doctest: +SKIP
    'C-01J...'
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, model_validator

from kg.errors import BackendUnavailableError, InputError
from kg.models import (
    MAX_CONTENT,
    MAX_LIST,
    MAX_NAME,
    Case,
    CaseOutcome,
    CaseSituation,
    CaseSolution,
    Model,
    RecordId,
    Unit,
    parse,
    to_utc,
)
from kg.models.base import new_list
from kg.ports import Embedder

DEFAULT_K = 5
DEFAULT_CAPACITY = 10_000
MAX_K = 10_000

_Item = Annotated[str, Field(max_length=MAX_NAME * 4)]
_Weight = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class CaseQuery(Model):
    """The current situation to find similar cases for."""

    beliefs: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)
    desires: list[_Item] = Field(default_factory=new_list, max_length=MAX_LIST)
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class CBRWeights(Model):
    """Weights of the similarity terms.

    ``beliefs`` and ``desires`` are relative: they are normalised to sum to 1, so only their ratio
    matters (0.6 : 0.4 by default). ``context`` is the share ``wc`` of the context similarity in the
    final score when context is used (0.2 by default; 0 switches context off).
    """

    beliefs: _Weight = 0.6
    desires: _Weight = 0.4
    context: Unit = 0.2

    @model_validator(mode="after")
    def _some_weight(self) -> CBRWeights:
        if not self.beliefs + self.desires > 0:
            raise ValueError("beliefs: beliefs + desires must be greater than 0")
        return self


class CaseMatch(Model):
    """One retrieved case with its score and the terms it came from."""

    case_uid: RecordId
    score: float
    belief_similarity: float
    desire_similarity: float
    context_similarity: float | None = None
    solution: CaseSolution
    outcome: CaseOutcome


class RetrievalResult(Model):
    """Ranked matches (best first) and whether the context took part."""

    matches: list[CaseMatch]
    context_used: bool
    notes: list[str] = Field(default_factory=new_list)


def normalize_text(text: str) -> str:
    """Casefold and collapse whitespace: the form in which beliefs, desires and contexts compare."""
    return " ".join(text.casefold().split())


def normalized_set(items: Iterable[str]) -> frozenset[str]:
    """The distinct normalised, non-empty strings of ``items``."""
    return frozenset(term for term in map(normalize_text, items) if term)


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    """Jaccard overlap: size of the intersection over size of the union; two empty sets give 1.0."""
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def situation_key(situation: CaseSituation | CaseQuery) -> str:
    """A stable key (sha256 hex) equal for situations with the same normalised beliefs, desires and context.

    Order and repetition of beliefs or desires, letter case and whitespace do not change the key.
    """
    canonical = {
        "beliefs": sorted(normalized_set(situation.beliefs)),
        "desires": sorted(normalized_set(situation.desires)),
        "context": normalize_text(situation.context),
    }
    text = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _weights(weights: CBRWeights | Mapping[str, Any] | None) -> CBRWeights:
    if weights is None:
        return CBRWeights()
    if isinstance(weights, CBRWeights):
        return weights
    return parse(CBRWeights, dict(weights))


def _query(query: CaseQuery | Mapping[str, Any]) -> CaseQuery:
    return query if isinstance(query, CaseQuery) else parse(CaseQuery, dict(query))


def _context_similarities(
    cases: Sequence[Case], query: CaseQuery, weights: CBRWeights, embedder: Embedder | None
) -> tuple[dict[str, float] | None, list[str]]:
    """Context similarity by (stripped) case context, or None with the reason context was left out."""
    if not normalize_text(query.context):
        return None, []
    if weights.context == 0:
        return None, ["context not used: weights.context is 0"]
    if embedder is None:
        return None, ["context not used: no embedder given"]
    contexts = list(dict.fromkeys(c.situation.context.strip() for c in cases if normalize_text(c.situation.context)))
    texts = [query.context.strip(), *contexts]
    try:
        vectors = embedder.embed(texts, batch=True)  # one call for the query and every case context
        if len(vectors) != len(texts):
            raise BackendUnavailableError(f"embedder returned {len(vectors)} vectors for {len(texts)} texts")
    except BackendUnavailableError as exc:
        return None, [f"context not used: embedder unavailable ({exc})"]
    query_vector = vectors[0]
    sims = {text: _cosine(query_vector, vector) for text, vector in zip(contexts, vectors[1:], strict=True)}
    return sims, []


def _cosine(left: Sequence[float], right: Sequence[float]) -> float:
    """Cosine of two unit vectors, clamped to 0..1 (opposite contexts are as unlike as unrelated ones)."""
    if len(left) != len(right):
        raise BackendUnavailableError(f"embedder returned vectors of lengths {len(left)} and {len(right)}")
    dot = math.fsum(a * b for a, b in zip(left, right, strict=True))
    return min(1.0, max(0.0, dot))


def _combine(sb: float, sd: float, sc: float | None, weights: CBRWeights) -> float:
    # (wb·Sb + wd·Sd) / (wb + wd) and x + wc·(Sc - x) keep identical situations at exactly 1.0
    x = (weights.beliefs * sb + weights.desires * sd) / (weights.beliefs + weights.desires)
    score = x if sc is None else x + weights.context * (sc - x)
    return min(1.0, max(0.0, score))


def _match(case: Case, beliefs: frozenset[str], desires: frozenset[str], sc: float | None, w: CBRWeights) -> CaseMatch:
    sb = jaccard(beliefs, normalized_set(case.situation.beliefs))
    sd = jaccard(desires, normalized_set(case.situation.desires))
    return CaseMatch(case_uid=case.uid, score=_combine(sb, sd, sc, w), belief_similarity=sb, desire_similarity=sd,
                     context_similarity=sc, solution=case.solution, outcome=case.outcome)  # fmt: skip


def _rank(scored: list[tuple[Case, CaseMatch]]) -> list[CaseMatch]:
    """Best score first, then newer first, then smaller uid (stable sorts, least significant key first)."""
    scored = sorted(scored, key=lambda pair: pair[0].uid)
    scored.sort(key=lambda pair: pair[0].created_at, reverse=True)
    scored.sort(key=lambda pair: pair[1].score, reverse=True)
    return [match for _, match in scored]


def retrieve(
    cases: Sequence[Case],
    query: CaseQuery | Mapping[str, Any],
    *,
    k: int = DEFAULT_K,
    weights: CBRWeights | Mapping[str, Any] | None = None,
    embedder: Embedder | None = None,
    min_score: float = 0.0,
) -> RetrievalResult:
    """The ``k`` cases most similar to ``query`` with a score of at least ``min_score``, best first.

    Args:
        cases: the candidate cases (any order; the result does not depend on it).
        query: the current beliefs, desires and optional context.
        k: how many matches at most (1..10,000).
        weights: see :class:`CBRWeights` (a mapping is validated the same way).
        embedder: compares contexts when given and the query has a context.
        min_score: drop matches scoring below this (0..1).

    Raises:
        InputError: bad ``k``, ``min_score``, weights or query.
    """
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise InputError("k", f"must be an integer from 1 to {MAX_K}, got {k!r}")
    if not isinstance(min_score, int | float) or not 0.0 <= min_score <= 1.0:  # also refuses NaN
        raise InputError("min_score", f"must be a number from 0 to 1, got {min_score!r}")
    w, q = _weights(weights), _query(query)
    sims, notes = _context_similarities(cases, q, w, embedder)
    beliefs, desires = normalized_set(q.beliefs), normalized_set(q.desires)
    scored = []
    for case in cases:
        sc = None if sims is None else sims.get(case.situation.context.strip(), 0.0)
        match = _match(case, beliefs, desires, sc, w)
        if match.score >= min_score:
            scored.append((case, match))
    return RetrievalResult(matches=_rank(scored)[:k], context_used=sims is not None, notes=notes)


def prune(cases: Sequence[Case], capacity: int = DEFAULT_CAPACITY, *, now: datetime) -> list[str]:
    """The uids to drop so that at most ``capacity`` cases remain, least useful first.

    Utility is ordered by ``(outcome.success, min(created_at, now), uid)``: every failed case is
    dropped before any successful one; among cases with the same outcome the oldest goes first (a
    case dated after ``now`` counts as created ``now``), and the smaller uid breaks the last ties.

    Raises:
        InputError: ``capacity`` is negative.
    """
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 0:
        raise InputError("capacity", f"must be a non-negative integer, got {capacity!r}")
    excess = len(cases) - capacity
    if excess <= 0:
        return []
    cutoff = to_utc(now)
    ordered = sorted(cases, key=lambda case: (case.outcome.success, min(case.created_at, cutoff), case.uid))
    return [case.uid for case in ordered[:excess]]


__all__ = [
    "DEFAULT_CAPACITY",
    "DEFAULT_K",
    "CBRWeights",
    "CaseMatch",
    "CaseQuery",
    "RetrievalResult",
    "jaccard",
    "normalize_text",
    "normalized_set",
    "prune",
    "retrieve",
    "situation_key",
]
