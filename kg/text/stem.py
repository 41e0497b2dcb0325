"""Stems: a light Porter stemmer for search, and the plural-``s`` rule of the text-overlap checks.

:func:`light_stem` runs Porter's steps 1a, 1b, 1c and 5 (inflections only: "renewals" and "renewal" meet,
"generalization" and "general" do not), the stemming every lexical search of recall and the Markdown index
uses. :func:`strip_plural` only drops a plural ``s``: admission's grounding check and the time-hierarchy
search compare words that closely.
"""

from __future__ import annotations


def strip_plural(word: str) -> str:
    """``word`` without a plural ``s`` (``prefers`` -> ``prefer``; ``class``, ``gas`` and ``is`` unchanged)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


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


__all__ = ["light_stem", "strip_plural"]
