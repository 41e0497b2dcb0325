"""A message as statement sentences: the step of the deterministic extractor before any rule
(:mod:`kg.extraction.rules`).

A message is split at sentence ends, line breaks and at "and/but/so/while" before a new "I" clause, after its
contractions are expanded. Left out: questions (recall queries such as "do you remember X?" included), greetings,
thanks and other boilerplate, bracketed metadata (``[Subagent Context]``), and sentences of fewer than three words.
"""

from __future__ import annotations

import re

from kg.text.contractions import expand_contractions

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|\s*(?:,\s*)?\b(?:and|but|so|while) (?=I\b)")
_SKIP = re.compile(r"^\s*(?:hi|hello|hey|thanks|thank you|ok|okay|sure|great|cool|bye|goodbye|good morning|"
                   r"good night|nice|wow|lol|yes|no|yeah|yep|nope)\b[\s!.,]*$|^\s*\[[^\]]*\]", re.I)  # fmt: skip
_RECALL = re.compile(r"\b(?:do|did) you (?:remember|recall)\b|\bremind me\b|\bwhat did I (?:say|tell)\b", re.I)


def skipped(sentence: str) -> bool:
    """Whether ``sentence`` is a question, boilerplate, metadata or under three words."""
    return len(sentence.split()) < 3 or sentence.endswith("?") or bool(_SKIP.match(sentence) or
                                                                       _RECALL.search(sentence))  # fmt: skip


def sentences(text: str) -> list[str]:
    """The statement sentences of a message (questions, boilerplate and metadata left out)."""
    out = []
    for raw in _SPLIT.split(expand_contractions(text)):
        sentence = raw.strip().strip('"').strip()
        if not skipped(sentence):
            out.append(sentence)
    return out


__all__ = ["sentences", "skipped"]
