"""Plain English for rule-based readers: curly quotes straightened and common contractions written out.

The deterministic extractor's rules read "I am", "do not" and "we have": :func:`expand_contractions` turns
"I'm", "don't" (any case, curly or straight apostrophe) and "gonna" into those words, so that one rule covers
both spellings. Only unambiguous contractions are expanded: "he's" is "he is" here, never "he has" (the rules
read the present tense), and "'d" only after "I" and "we" ("I would"). Possessives ("Anna's") are left alone.
"""

from __future__ import annotations

import re

#: Contraction -> its words, matched as whole words in any case.
CONTRACTIONS = {
    "I'm": "I am", "I've": "I have", "I'll": "I will", "I'd": "I would", "can't": "cannot", "don't": "do not",
    "doesn't": "does not", "didn't": "did not", "won't": "will not", "isn't": "is not", "wasn't": "was not",
    "aren't": "are not", "we're": "we are", "we've": "we have", "we'd": "we would", "we'll": "we will",
    "gonna": "going to", "wanna": "want to", "she's": "she is", "he's": "he is",
}  # fmt: skip
_PATTERNS = [(re.compile(rf"\b{re.escape(short)}\b", re.IGNORECASE), long) for short, long in CONTRACTIONS.items()]
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def straight_quotes(text: str) -> str:
    """``text`` with curly single and double quotes made straight."""
    return text.translate(_QUOTES)


def expand_contractions(text: str) -> str:
    """``text`` with curly quotes straightened and every contraction of :data:`CONTRACTIONS` written out."""
    text = straight_quotes(text)
    for pattern, words in _PATTERNS:
        text = pattern.sub(words, text)
    return text


__all__ = ["CONTRACTIONS", "expand_contractions", "straight_quotes"]
