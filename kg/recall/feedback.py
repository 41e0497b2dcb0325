"""Pseudo-relevance feedback for hybrid recall: the words of the first results search BM25 once more.

A question names what it asks about in its own words, and the items that answer it often use others ("What
did Melanie paint?" - "...the sunset piece I did at the lake"). So, in hybrid mode (RM3-style query
expansion, without a language model):

1. the engine fuses the two branches once and takes the ``feedback_docs`` best items (10);
2. :func:`expansion_terms` weighs their words - each item spreads a weight of 1 over its words (stopwords,
   words under 3 letters and numbers left out), summed over the items - and keeps the ``feedback_terms``
   heaviest (5) whose stem is not already in the query;
3. those words search BM25 again (through the store, with the same filters and candidate count), and
   :func:`merge_bm25` adds the second search's scores to the first's at ``feedback_weight`` (0.2):
   ``raw = raw_1 + 0.2 * raw_2`` (FTS5 scores: lower is better, 0 for not found); an item found only by
   the second search enters with ``0.2 * raw_2``;
4. the merged list is fused with the vector branch as usual.

BM25 weighs the expansion words by their own rarity, and a word in more than half of the items is left out
of the search (``kg.store.sqlite.term_stats``). Calibrated on LoCoMo's dev conversations with a split-half
check (docs/recall-scoring.md, "Calibrated fusion and feedback"). Deterministic: ties by stem.
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.text.stem import light_stem
from kg.text.stopwords import STOPWORDS
from kg.text.words import lower_words

#: Shortest word that may expand a query.
MIN_LETTERS = 3


def expansion_terms(query: str, texts: Sequence[str], *, limit: int) -> list[str]:
    """The ``limit`` heaviest words of ``texts`` whose stem is not in ``query`` (see the module docstring).

    Each text spreads a weight of 1 over its words (query words included in the count), so a short text's
    words weigh more than a long one's; a word keeps the form it first had. Ties by stem.
    """
    known = {light_stem(w) for w in lower_words(query)}
    weights: dict[str, float] = {}
    first_form: dict[str, str] = {}
    for text in texts:
        words = [w for w in lower_words(text)
                 if len(w) >= MIN_LETTERS and w not in STOPWORDS and not w.isdigit()]  # fmt: skip
        for word in words:
            stem = light_stem(word)
            if stem in known:
                continue
            first_form.setdefault(stem, word)
            weights[stem] = weights.get(stem, 0.0) + 1.0 / len(words)
    best = sorted(weights.items(), key=lambda pair: (-pair[1], pair[0]))[:limit]
    return [first_form[stem] for stem, _ in best]


def merge_bm25(first: Sequence[tuple[str, float]], second: Sequence[tuple[str, float]],
               weight: float) -> list[tuple[str, float]]:  # fmt: skip
    """``(uid, score)``: ``first``'s score plus ``weight`` times ``second``'s (FTS5 scores, lower is better;
    a uid missing from a list counts 0 there), best first, ties by uid."""
    merged = dict(first)
    for uid, score in second:
        merged[uid] = merged.get(uid, 0.0) + weight * score
    return sorted(merged.items(), key=lambda pair: (pair[1], pair[0]))


__all__ = ["MIN_LETTERS", "expansion_terms", "merge_bm25"]
