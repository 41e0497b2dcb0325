"""Search terms: words case-folded, CJK runs as bigrams, :data:`~kg.text.stopwords.INDEX_STOPWORDS` dropped,
and the light stem (:func:`~kg.text.stem.light_stem`) so that "renewals" finds "renewal"."""

from __future__ import annotations

from kg.text import words  # its CJK patterns compile on first use: ASCII text never needs them
from kg.text.stem import light_stem
from kg.text.stopwords import INDEX_STOPWORDS
from kg.text.words import WORD_CHARS_RE, cjk_ngrams

_TERM_OF: dict[str, str] = {}  # word -> its term ("" for a stopword): stemming is the slow part
_TERM_CACHE_SIZE = 200_000


def _term(word: str) -> str:
    term = _TERM_OF.get(word)
    if term is None:
        if len(_TERM_OF) >= _TERM_CACHE_SIZE:
            _TERM_OF.clear()
        if word in INDEX_STOPWORDS:
            term = ""
        elif len(word) <= 2 or not word.isascii() or not word.isalpha():
            term = word
        else:
            term = light_stem(word)
        _TERM_OF[word] = term
    return term


def search_terms(text: str) -> list[str]:
    """The terms BM25 sees in ``text`` (see the module docstring)."""
    folded = text.casefold()
    known = _TERM_OF.get
    if folded.isascii() or not words.CJK_RE.search(folded):  # the common case, in one comprehension
        return [term for word in WORD_CHARS_RE.findall(folded) if (term := known(word) or _term(word))]
    terms: list[str] = []
    for cjk, word in words.CJK_RUN_OR_WORD_RE.findall(folded):
        if word:
            if term := known(word) or _term(word):
                terms.append(term)
        else:
            terms.extend(cjk_ngrams(cjk))
    return terms


__all__ = ["search_terms"]
