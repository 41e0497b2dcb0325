"""How much of a query an item's own words cover: the relevance gate of lexical-only recall.

BM25 scores are normalised relative to the best hit (:func:`kg.recall.fusion.normalize_bm25`), so without a
vector branch the best keyword match scores 1.0 however weak it is: a query that shares one ordinary word
with an item, or only a word of an item's conversation context, came back scored about 0.5-0.6. Coverage is
an absolute measure next to it::

    coverage = |query terms found in the item's content and tags| / |query terms|

with query terms the query's distinct words without stopwords (:func:`kg.text.stopwords.content_words`),
both sides lightly stemmed (:func:`kg.text.stem.light_stem`), and a term found when the item has
the same stem or one of the two stems starts with the other and the shorter has at least
:data:`PREFIX_MIN` letters ("invoice" / "invoicing"). In lexical-only recall the BM25 score is multiplied by
coverage and items below ``RecallSettings.lexical_min_coverage`` (1/3 by default) are dropped: calibrated
on LoCoMo (docs/recall-scoring.md, "Lexical-only relevance").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kg.text.stem import light_stem
from kg.text.stopwords import content_words
from kg.text.words import lower_words, words

#: Shortest stem that may match a longer one by prefix.
PREFIX_MIN = 4


def content_terms(query: str) -> list[str]:
    """The query's distinct stemmed words without stopwords (all of them when every word is a stopword)."""
    return list(dict.fromkeys(light_stem(w) for w in content_words(words(query))))


def item_terms(texts: Iterable[str]) -> set[str]:
    """The stemmed words of an item's texts (content and tags)."""
    return {light_stem(w) for text in texts for w in lower_words(text)}


def _found(term: str, terms: set[str]) -> bool:
    if term in terms:
        return True
    if len(term) < PREFIX_MIN:
        return False
    return any(len(t) >= PREFIX_MIN and (t.startswith(term) or term.startswith(t)) for t in terms)


def coverage(query: Sequence[str], *texts: str) -> float:
    """Share of the stemmed ``query`` terms (:func:`content_terms`) found in ``texts``; 0.0 for no terms."""
    if not query:
        return 0.0
    terms = item_terms(texts)
    return sum(1 for term in query if _found(term, terms)) / len(query)


__all__ = ["PREFIX_MIN", "content_terms", "coverage", "item_terms"]
