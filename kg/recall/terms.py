"""Search terms of the Markdown index: words (CJK runs kept whole), stopwords dropped, and a light Porter-style
stem so that "renewals" finds "renewal"."""

from __future__ import annotations

import re

from kg.recall.chunking import (
    CJK_CHARS,
    CJK_RE,
)

_TERM_RE = re.compile(rf"([{CJK_CHARS}]+)|([^\W{CJK_CHARS}]+)")  # (CJK run, other word)


_WORD_RE = re.compile(r"\w+")


_STOPWORD_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have he her his i if in into is "
    "it its me my no not of on or our she so than that the their them then there these they this those to was "
    "we were what when where which who will with would you your"
)


STOPWORDS = frozenset(_STOPWORD_TEXT.split())


_TERM_OF: dict[str, str] = {}  # word -> its term ("" for a stopword): stemming is the slow part


_TERM_CACHE_SIZE = 200_000


def _term(word: str) -> str:
    term = _TERM_OF.get(word)
    if term is None:
        if len(_TERM_OF) >= _TERM_CACHE_SIZE:
            _TERM_OF.clear()
        if word in STOPWORDS:
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
    if not CJK_RE.search(folded):  # the common case, in one comprehension
        return [term for word in _WORD_RE.findall(folded) if (term := known(word) or _term(word))]
    terms: list[str] = []
    for cjk, word in _TERM_RE.findall(folded):
        if word:
            if term := known(word) or _term(word):
                terms.append(term)
        elif len(cjk) == 1:
            terms.append(cjk)
        else:
            terms.extend([cjk[k : k + 2] for k in range(len(cjk) - 1)])
    return terms


def _consonant(word: str, k: int) -> bool:
    if word[k] in "aeiou":
        return False
    return word[k] != "y" or k == 0 or not _consonant(word, k - 1)


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    m, vowel_before = 0, False
    for k in range(len(stem)):
        vowel = not _consonant(stem, k)
        m += int(vowel_before and not vowel)
        vowel_before = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, k) for k in range(len(stem)))


def _double(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    n = len(word)
    return (n >= 3 and _consonant(word, n - 3) and not _consonant(word, n - 2) and _consonant(word, n - 1)
            and word[-1] not in "wxy")  # fmt: skip


def light_stem(word: str) -> str:
    """Porter's steps 1a, 1b, 1c and 5 on a lowercase ASCII word (inflections only, no derivations)."""
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        word = word[:-1] if _measure(word[:-3]) > 0 else word
    elif (suffix := "ed" if word.endswith("ed") else "ing" if word.endswith("ing") else "") and _has_vowel(
        word[: -len(suffix)]
    ):
        word = word[: -len(suffix)]
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _double(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    if word.endswith("e"):
        m = _measure(word[:-1])
        if m > 1 or (m == 1 and not _cvc(word[:-1])):
            word = word[:-1]
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word
