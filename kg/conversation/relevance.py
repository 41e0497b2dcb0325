"""Relevance of older context to a prompt: BM25 over the candidate texts (no index: the candidates are few)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from kg.errors import BackendUnavailableError
from kg.ports import Embedder
from kg.recall.fusion import fuse_weighted, normalize_bm25, normalize_vector
from kg.recall.fusion_types import RELATIVE_FUSION, FusionSettings
from kg.text.terms import search_terms

#: BM25 parameters (Lucene's defaults, as the Markdown index).
BM25_K1 = 1.5


BM25_B = 0.75


def bm25_scores(query: str, texts: Sequence[str], *, k1: float = BM25_K1, b: float = BM25_B) -> list[float]:
    """Okapi BM25 (higher is better) of each text for ``query``, with the Markdown index's terms.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``; a text without any query term scores 0.
    """
    query_set = set(search_terms(query))
    if not query_set or not texts:
        return [0.0] * len(texts)
    docs = [search_terms(text) for text in texts]
    lengths = [len(doc) for doc in docs]
    average = sum(lengths) / len(docs) or 1.0
    counts: list[dict[str, int]] = []
    df = dict.fromkeys(query_set, 0)
    for doc in docs:
        tf: dict[str, int] = {}
        for term in doc:
            if term in query_set:
                tf[term] = tf.get(term, 0) + 1
        counts.append(tf)
        for term in tf:
            df[term] += 1
    n = len(docs)
    idf = {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    scores = []
    for tf, length in zip(counts, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / average)
        scores.append(sum(idf[t] * f * (k1 + 1.0) / (f + norm) for t, f in tf.items()))
    return scores


@dataclass(frozen=True)
class RelevanceScores:
    """Relevance of each candidate (0..1), which branches ran, and why one did not."""

    scores: list[float]
    mode: Literal["bm25", "hybrid"]
    notes: list[str] = field(default_factory=list)


class Relevance:
    """Scores candidates against a prompt: BM25 over their text, fused with embedder cosine when available.

    Fusion is recall's weighted fusion with the keyword floor (:func:`kg.recall.fusion.fuse_weighted`, BM25
    normalised to the best candidate). An embedder that cannot load leaves BM25 alone, with a note.
    """

    def __init__(self, embedder: Embedder | None = None, settings: FusionSettings = RELATIVE_FUSION) -> None:
        self.embedder = embedder
        self.settings = settings

    def score(self, prompt: str, texts: Sequence[str]) -> RelevanceScores:
        """One score in 0..1 per text (0: unrelated)."""
        raw = bm25_scores(prompt, texts)
        bm25 = normalize_bm25({str(i): -s for i, s in enumerate(raw)})
        similarity: list[float] | None = None
        notes: list[str] = []
        if self.embedder is not None and texts:
            try:
                [query, *vectors] = self.embedder.embed([prompt, *texts], batch=True)
                similarity = [sum(q * v for q, v in zip(query, vector, strict=True)) for vector in vectors]
            except BackendUnavailableError as exc:
                notes.append(f"embedder unavailable, relevance by BM25 only: {exc}")
        scores = []
        for i in range(len(texts)):
            fused, _ = fuse_weighted(
                bm25[str(i)], normalize_vector(similarity[i]) if similarity else 0.0, self.settings,
                bm25_present=any(raw), vector_present=similarity is not None,
            )  # fmt: skip
            scores.append(fused)
        return RelevanceScores(scores, "hybrid" if similarity is not None else "bm25", notes)
