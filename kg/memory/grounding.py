"""Text features of memory admission: content words, ROUGE-L grounding of a candidate in its conversation, and
token Jaccard similarity (:mod:`kg.memory.admission`, :mod:`kg.memory.dedup`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg.text.stem import strip_plural
from kg.text.stopwords import STOPWORDS
from kg.text.words import CJK_WORD_RE

#: Words compared for confidence and Jaccard novelty: at most this many of a candidate.
MAX_CANDIDATE_WORDS = 256
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])|\n+")


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


__all__ = ["MAX_CANDIDATE_WORDS", "grounding", "lcs_f1", "lcs_length", "sentences", "token_jaccard", "words"]
