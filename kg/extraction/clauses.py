"""A message cut into clauses, each with the mode it is said in (English, rule-based; no model).

The deterministic extractor states facts only from clauses said as facts. Per message:

1. **Sentences** at ``.``/``!``/``?`` and line breaks; a sentence ending in ``?`` or opening with an auxiliary
   and ``I`` ("Should I move to Lisbon") is a *question*.
2. **Clauses** at ``;``, before a correction ("…, sorry, I mean …"), before ``and``/``but``/``so``/``while``/
   ``although``/``because`` followed by a subject or by a past-tense verb sharing the subject ("I left Shell and
   joined BP": the second clause becomes "I joined BP"), and at a comma followed by a subject ("I like
   coffee, I drink three cups a day").
3. **First person plural** is the speaker ("we moved" -> "I moved", "our" -> "my"), as is "<someone> and I"
   ("Lena and I broke up" -> "I broke up with Lena").
4. **Mode** of each clause: ``question``; ``hypothetical`` (a sentence opening with ``if``/``unless``/
   ``suppose``/``imagine``, a clause with one of them, or with ``would``/``could``/``might``/``should``/
   ``maybe``/``perhaps``/``one day``);
   ``wish`` ("I wish", "I hope", "I'd love to"); ``reported`` ("She said I live in Oslo", "my boss thinks I
   …": nothing about the speaker); ``negated`` ("I don't live in London"); ``ended`` ("I no longer work at
   Philips", "I don't live in Paris anymore": the clause is rewritten positive and its facts end); and
   ``fact``. "I don't like / can't stand X" is a fact (a dislike), not a negation.
5. **Reported facts about the reporter**: "My friend Anna said she works at Airbus" -> "My friend Anna works at
   Airbus" (the pronoun is the reporter); anything else reported is dropped.
6. **Corrections** ("sorry, I mean X", "actually, I meant X", "no wait, I mean X", "or rather X") replace in
   the previous clause of the message what they correct (the last name, number or words of the same length)
   and are dropped themselves: the corrected statement is never read.
7. **Pronouns** opening a clause ("He works as a pilot") are replaced by the last person of the session that
   fits (:class:`kg.extraction.coref.People`).
8. **Dates**: a clause's own date expression, else its sentence's, resolved against the message time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from kg.extraction.coref import People
from kg.extraction.dates import FoundDate, find_date
from kg.text.contractions import expand_contractions

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SUBJECT = r"(?:I|we|We|he|He|she|She|my|My|our|Our)\b"
_SPLIT = re.compile(
    r"\s*;\s*"
    r"|,\s*(?=(?:sorry|actually|no wait|wait|oops|or rather)\b[^.]*?\b(?:mean|meant|rather)\b)"
    rf"|,?\s+(?:and|but|so|while|although|though|because|whereas)\s+(?={_SUBJECT})"
    rf"|,\s+(?={_SUBJECT})"
    r"|,\s+(?=(?:maybe|perhaps|if|unless|so|but|because|though|although|which)\b)"
    r"|,?\s+and\s+(?=(?:have|had|now|then|later|also|still)\b|[a-z]+ed\b)"
    r"|,\s+(?=(?:working|living|based)\s+(?:at|for|in)\b)",
    re.I,
)
_QUESTION_START = re.compile(r"^(?:do|does|did|should|would|could|can|am|is|are|will|shall|may|might|have)\s+I\b",
                             re.I)  # fmt: skip
_CONDITIONAL = re.compile(r"\b(?:if|unless|suppose|supposing|imagine|whether)\b", re.I)
_HYPOTHETICAL = re.compile(r"\b(?:I|we) (?:would|could|might|should|may|ought to)\b|\b(?:maybe|perhaps|possibly|"
                           r"someday|one day|in theory|hypothetically)\b", re.I)  # fmt: skip
_WISH = re.compile(r"\b(?:I|we) (?:wish|hope|would (?:love|like) to|dream of|fantasi[sz]e)\b", re.I)
_REPORT_VERBS = r"(?:said|says|told me|tells me|told us|thinks|thought|believes|believed|claims|claimed|reckons|" \
                r"mentioned|insists|assumes|assumed|keeps saying)"  # fmt: skip
_REPORTED = re.compile(rf"^(?P<who>.+?)\s+{_REPORT_VERBS}(?:\s+that)?\s+(?P<rest>.+)$", re.I)
_DISLIKE = re.compile(r"\b(?:I|we) (?:really |just |still |actually )*(?:do not|cannot|can not|could not) "
                      r"(?:like|stand|bear|enjoy|tolerate|handle)\b", re.I)  # fmt: skip
_ENDED = re.compile(r"\bno longer\b|\b(?:not|never)\b.*\b(?:anymore|any more|any longer)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|no longer|cannot|nobody|nothing)\b|n't\b", re.I)
_CORRECTION = re.compile(r"^(?:(?:sorry|actually|no|wait|oops|I mean)[,\s]+)*(?:I (?:mean|meant)|or rather)[,:\s]+"
                         r"(?P<new>.+?)\s*$", re.I)  # fmt: skip
_INTERJECTION = re.compile(r"(?:(?:sorry|actually|no|wait|oops|well|um|uh)[,\s]*)+", re.I)
_CAPITALISED = re.compile(r"\b[A-Z][\w'&.-]*(?:\s+(?:de|da|del|of|am|la|le)?\s*[A-Z][\w'&-]*)*")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\b")
_PLURAL = [(r"\bwe are\b", "I am"), (r"\bwe were\b", "I was"), (r"\bwe\b", "I"), (r"\bWe\b", "I"), (r"\bour\b", "my"),
           (r"\bOur\b", "My"), (r"\bourselves\b", "myself")]  # fmt: skip
_WITH_I = re.compile(r"^(?P<x>(?:[Mm]y (?:\w+ )?\w+(?: [A-Z][a-z]+)?)|[A-Z][a-z]+) and I "
                     r"(?P<verb>broke up|split up|separated|got divorced|divorced)\b")  # fmt: skip
_AND_I = re.compile(r"^(?:[Mm]y (?:\w+ )?\w+(?: [A-Z][a-z]+)?|[A-Z][a-z]+) and I\b")


@dataclass
class Clause:
    """One clause: its ``text`` (rewritten as described in the module docstring), the ``sentence`` it comes
    from (as said), its ``mode`` and the date it names (or its sentence names)."""

    text: str
    sentence: str
    mode: str
    date: FoundDate | None = None


def _first_person(text: str) -> str:
    text = _WITH_I.sub(lambda m: f"I {m['verb']} with {m['x']}", text)
    text = _AND_I.sub("I", text)
    for pattern, replacement in _PLURAL:
        text = re.sub(pattern, replacement, text)
    return text


def _mode(text: str, sentence: str) -> str:  # noqa: PLR0911 - one return per mode
    if sentence.rstrip().endswith("?") or _QUESTION_START.match(text):
        return "question"
    if _CONDITIONAL.match(sentence) or _CONDITIONAL.search(text):
        return "hypothetical"  # "If I moved ..., I would ...": the whole sentence; else the clause with the "if"
    if _WISH.search(text):
        return "wish"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if _DISLIKE.search(text):
        return "fact"
    if _ENDED.search(text):
        return "ended"
    if _NEGATED.search(text):
        return "negated"
    return "fact"


def _positive(text: str) -> str:
    """An ended clause said positively: "I no longer work at X" / "I do not work at X anymore" -> "I work at X"."""
    text = re.sub(r"\bno longer\s+", "", text, flags=re.I)
    text = re.sub(r"\b(?:do|does|did|am|is|are|was|have|has) (?:not|never) ", lambda m: m[0].split()[0] + " "
                  if m[0].split()[0] in ("am", "is", "are", "was") else "", text, flags=re.I)  # fmt: skip
    return re.sub(r"\s*\b(?:anymore|any more|any longer)\b", "", text, flags=re.I)


def _corrected(previous: str, new: str) -> str:
    """``previous`` with what ``new`` corrects replaced by it (the last name, number or same-length words)."""
    new = new.strip(" .!,")
    if _NUMBER.fullmatch(new) and (numbers := list(_NUMBER.finditer(previous))):
        last = numbers[-1]
        return previous[: last.start()] + new + previous[last.end() :]
    if new[:1].isupper():
        names = [m for m in _CAPITALISED.finditer(previous) if m[0] not in ("I", "My", "We") and m.start() > 0]
        if names:
            last = names[-1]
            return previous[: last.start()] + new + previous[last.end() :]
    words = previous.rstrip(" .!").split()
    size = len(new.split())
    return " ".join([*words[: max(len(words) - size, 1)], new]) if len(words) > size else previous


def _split(sentence: str) -> list[str]:
    parts = [p.strip(" ,") for p in _SPLIT.split(sentence) if p and p.strip(" ,")]
    out: list[str] = []
    for part in parts:
        text = part
        if out and _INTERJECTION.fullmatch(out[-1]):
            text = out.pop() + ", " + text  # "sorry" | "I mean X" -> "sorry, I mean X"
        if out and re.match(r"^(?:have|had|now|then|later|also|still|[a-z]+ed)\b", text) and \
                re.match(r"^I\b", out[-1]):  # fmt: skip
            text = "I " + text  # "I left Shell and joined BP" -> "I joined BP"
        if re.match(r"^(?:working|living|based)\s", text) and out and re.match(r"^I\b", out[0]):
            text = {"working": "I work", "living": "I live", "based": "I am based"}[text.split()[0]] + \
                text[text.index(" "):]  # fmt: skip
        out.append(text)
    return out


def clauses(text: str, when: datetime, people: People | None = None) -> list[Clause]:
    """The clauses of one message (module docstring), corrections applied, in order."""
    people = people if people is not None else People()
    out: list[Clause] = []
    for raw in _SENTENCE.split(expand_contractions(text)):
        sentence = raw.strip().strip('"').strip()
        if not sentence:
            continue
        sentence_date = find_date(sentence, when)
        for part in _split(_first_person(sentence.rstrip(".!"))):
            text = _first_person(part.rstrip("?").strip())
            fixed = _CORRECTION.match(text)
            if fixed is not None:
                if out and out[-1].mode != "question":
                    out[-1].text = _corrected(out[-1].text, fixed["new"])
                continue
            text, mode = _reported(text, _mode(text, sentence), sentence, people)
            if mode == "ended":
                text = _positive(text)
            text = people.resolve(text)
            people.note(text)
            out.append(Clause(text=text, sentence=sentence, mode=mode, date=find_date(text, when) or sentence_date))
    return out


def _reported(text: str, mode: str, sentence: str, people: People) -> tuple[str, str]:
    """A clause of reported speech: about the reporter when a he/she that fits them says it ("Anna said she works
    at Airbus" -> "Anna works at Airbus"), else mode ``reported``; any other clause unchanged."""
    reported = _REPORTED.match(text)
    if reported is None or re.fullmatch(r"I|me", reported["who"], re.I) or mode == "question":
        return text, mode
    who, rest = reported["who"], reported["rest"]
    pronoun = re.match(r"(he|she)\b\s*", rest, re.I)
    if pronoun is not None and people.fits(who, pronoun[1]):
        return who + " " + rest[pronoun.end() :], _mode(rest[pronoun.end() :], sentence)
    return text, "reported"


__all__ = ["Clause", "clauses"]
