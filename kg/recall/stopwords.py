"""The words a recall query searches for: its distinct words without stopwords (:mod:`kg.text.stopwords`).

``STOPWORDS`` is named here only for kg/conversation/extractive.py, which still imports it from here; new code
imports :data:`kg.text.stopwords.STOPWORDS`.
"""

from __future__ import annotations

from kg.text.stopwords import STOPWORDS, content_words
from kg.text.words import words


def query_terms(text: str) -> list[str]:
    """The distinct words of ``text`` (lower-cased, in order) without stopwords; all of them when every
    word is a stopword, so that "what is it" still searches for something."""
    return content_words(words(text))


__all__ = ["STOPWORDS", "query_terms"]
