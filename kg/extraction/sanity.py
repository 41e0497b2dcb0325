"""Sanity checks every extracted fact passes before it is planned, whichever extractor proposed it.

A fact is kept only when

- its **predicate** is a property of the workspace's ontology (local name or label), one of the predicates the
  extractors use (:data:`KNOWN_PREDICATES`), a known alias of one (:data:`ALIASES`: ``lives in`` -> ``livesIn``,
  ``loves`` -> ``likes`` ...), ``has<Relation>`` for a relation word of :data:`RELATIONS` or ``favorite<Thing>``
  for a thing the text names; the fact carries the canonical name afterwards;
- its **subject** is the speaker (``I``, ``me``, ``user`` and the speaker's names count), an entity the caller
  already knows, or a name of at most :data:`MAX_NAME_WORDS` words written in the window's text;
- its **object** is written in the window's text (an entity of at most :data:`MAX_NAME_WORDS` words, a value of
  at most :data:`MAX_VALUE_WORDS`), or a known entity, and does not run across a clause (``coffee, I drink three
  cups`` is two statements) nor repeat the subject.

"Written in the text" compares words: case, punctuation and a leading article or possessive are ignored, and a
plural ``s`` matches the singular; the words must be consecutive. Everything else is refused with a one-line
reason (:class:`Refusal`) that the run's report counts. The checks cannot judge whether a statement is true,
hypothetical or reported: they catch invented names, invented predicates and swallowed spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kg.extraction.entities import Vocabulary, camel, normalise
from kg.models import FactCandidate
from kg.text.stem import strip_plural
from kg.text.words import WORD_RE

#: Predicates the extractors use (docs/extraction.md, "Facts").
KNOWN_PREDICATES = frozenset({"name", "age", "livesIn", "comesFrom", "worksAt", "occupation", "likes", "prefers",
                              "dislikes", "plansTo", "decided", "bornIn", "birthday", "marriedTo", "studiesAt",
                              "studies", "speaks", "owns", "visited", "attended", "partnerOf"})  # fmt: skip
#: Other ways of saying a known predicate (normalised phrase -> predicate).
ALIASES = {
    "lives_in": "livesIn", "live_in": "livesIn", "resides_in": "livesIn", "based_in": "livesIn",
    "moved_to": "livesIn", "location": "livesIn", "home": "livesIn", "city": "livesIn", "lives": "livesIn",
    "works_at": "worksAt", "works_for": "worksAt", "work_at": "worksAt", "employer": "worksAt",
    "employed_by": "worksAt", "company": "worksAt", "joined": "worksAt",
    "job": "occupation", "profession": "occupation", "works_as": "occupation", "role": "occupation",
    "is_a": "occupation",
    "comes_from": "comesFrom", "from": "comesFrom", "is_from": "comesFrom", "hometown": "comesFrom",
    "origin": "comesFrom", "born_in": "bornIn", "birthplace": "bornIn",
    "named": "name", "called": "name", "is_called": "name", "is_named": "name", "full_name": "name",
    "years_old": "age",
    "like": "likes", "loves": "likes", "love": "likes", "enjoys": "likes", "enjoy": "likes", "adores": "likes",
    "is_into": "likes", "fan_of": "likes", "prefer": "prefers",
    "hates": "dislikes", "hate": "dislikes", "dislike": "dislikes", "cannot_stand": "dislikes",
    "can_t_stand": "dislikes", "does_not_like": "dislikes", "doesn_t_like": "dislikes",
    "plans_to": "plansTo", "plans": "plansTo", "wants_to": "plansTo", "will": "plansTo", "intends_to": "plansTo",
    "decided_to": "decided", "chose": "decided",
    "married_to": "marriedTo", "spouse": "marriedTo", "studies_at": "studiesAt", "student_at": "studiesAt",
    "speak": "speaks", "languages": "speaks",
}  # fmt: skip
#: Relation words of ``has<Relation>`` facts (``user hasSister user_sister``).
RELATIONS = frozenset({"sister", "brother", "mother", "mom", "mum", "father", "dad", "wife", "husband", "partner",
                       "girlfriend", "boyfriend", "son", "daughter", "friend", "bestFriend", "boss", "colleague",
                       "roommate", "cousin", "aunt", "uncle", "grandmother", "grandma", "grandfather", "grandpa",
                       "kids", "children", "child", "dog", "cat", "pet", "manager", "neighbor", "neighbour",
                       "fiance", "fiancee", "sibling", "parent"})  # fmt: skip
#: The most words of a subject or an entity object; of a literal value.
MAX_NAME_WORDS = 4
MAX_VALUE_WORDS = 12
#: What refers to the speaker as a fact's subject.
SELF = frozenset({"i", "me", "myself", "user", "the_user", "speaker", "the_speaker"})
_ARTICLES = frozenset({"the", "a", "an", "my", "our", "his", "her", "their", "your"})
_PRONOUN_START = frozenset({"i", "im", "i_m", "we", "you", "he", "she", "it", "they", "this", "that", "there"})
_CLAUSE = re.compile(r"[,;:.!?]\s*(?:and\s+|but\s+|so\s+)?(?:i|we|you|he|she|they|it)\b|\b(?:because|which)\b",
                     re.I)  # fmt: skip


@dataclass(frozen=True)
class Refusal:
    """A fact refused and why (one line)."""

    subject: str
    predicate: str
    object: str
    reason: str

    def line(self) -> str:
        """``subject predicate object: reason`` on one line, each term clipped to 80 characters."""
        terms = " ".join(" ".join(t.split())[:80] for t in (self.subject, self.predicate, self.object))
        return f"{terms}: {self.reason}"


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (``New York`` and ``new_york`` give ``new``, ``york``)."""
    return [strip_plural(w) for w in WORD_RE.findall(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text).lower())]


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


class SanityCheck:
    """The checks for one window (module docstring).

    Args:
        vocabulary: the ontology's properties (their names and labels are accepted predicates).
        speakers: the names of the speaker the first person refers to (``user``, a message's ``name``).
        known: entity ids accepted without appearing in the text (the agent's entities, ids the rules derive
            such as ``user_sister``).
    """

    def __init__(self, vocabulary: Vocabulary, *, speakers: Iterable[str] = ("user",), known: Iterable[str] = ()):
        names = [s for s in speakers if s.strip()] or ["user"]
        self.vocabulary = vocabulary
        self.speakers = {normalise(s) for s in names}
        self.speaker = names[0]
        self.known = {normalise(k) for k in known if k.strip()}

    def predicate(self, name: str) -> str | None:
        """The canonical predicate ``name`` stands for, or None when it is unknown."""
        key = normalise(name)
        if not key:
            return None
        if key in self.vocabulary.properties:
            return self.vocabulary.properties[key]
        if key in ALIASES:
            return ALIASES[key]
        as_camel = camel(name)
        if as_camel in KNOWN_PREDICATES or as_camel in self.vocabulary.functional:
            return as_camel
        match = re.fullmatch(r"has_?(\w+)", key)
        if match and camel(match[1]) in RELATIONS:
            return camel(f"has {match[1]}")
        return None

    def check(self, fact: FactCandidate, text: str) -> FactCandidate | Refusal:
        """``fact`` with its canonical predicate (and the speaker as subject when it says ``I``), or why not."""
        return self.check_words(fact, words(text), text)

    def check_words(self, fact: FactCandidate, text_words: Sequence[str], text: str) -> FactCandidate | Refusal:
        """:meth:`check` with the text's :func:`words` computed once."""

        def refuse(reason: str) -> Refusal:
            return Refusal(fact.subject, fact.predicate, fact.object, reason)

        predicate = self.predicate(fact.predicate)
        favorite = re.fullmatch(r"favou?rite_?(\w+)", normalise(fact.predicate))
        if predicate is None and favorite and _contains(text_words, words(favorite[1])):
            predicate = camel(f"favorite {favorite[1]}")
        if predicate is None:
            return refuse(f"predicate {fact.predicate!r} is not in the ontology nor a known alias")
        subject = self._subject(fact.subject, text_words)
        if subject is None:
            return refuse(f"subject {fact.subject!r} is neither the speaker nor a name found in the window")
        problem = self._object(fact, text_words, text)
        if problem:
            return refuse(problem)
        if normalise(fact.object) in ({normalise(subject)} | (self.speakers if subject == self.speaker else set())):
            return refuse("the object repeats the subject")
        return fact.model_copy(update={"subject": subject, "predicate": predicate})

    def split(self, facts: Iterable[FactCandidate], text: str) -> tuple[list[FactCandidate], list[Refusal]]:
        """The facts that pass and the refusals, in order."""
        text_words = words(text)
        kept: list[FactCandidate] = []
        refused: list[Refusal] = []
        for fact in facts:
            result = self.check_words(fact, text_words, text)
            (refused if isinstance(result, Refusal) else kept).append(result)  # type: ignore[arg-type]
        return kept, refused

    def _subject(self, subject: str, text_words: Sequence[str]) -> str | None:
        key = normalise(subject)
        if key in SELF or key in self.speakers:
            return self.speaker
        if key in self.known:
            return subject
        found = _trim(words(subject))
        if not found or len(found) > MAX_NAME_WORDS or found[0] in _PRONOUN_START:
            return None
        return subject if _contains(text_words, found) else None

    def _object(self, fact: FactCandidate, text_words: Sequence[str], text: str) -> str | None:
        """Why the object is refused, or None."""
        obj = fact.object
        if fact.object_is_entity and normalise(obj) in self.known | self.speakers:
            return None
        found = _trim(words(obj))
        limit = MAX_NAME_WORDS if fact.object_is_entity else MAX_VALUE_WORDS
        if not found:
            return f"object {obj[:80]!r} has no words"
        if _CLAUSE.search(obj):
            return f"object {obj[:80]!r} runs across a clause"
        if len(found) > limit:
            return f"object {obj[:80]!r} is longer than {limit} words"
        if not _contains(text_words, found):
            return f"object {obj[:80]!r} is not found in the window"
        return None


def found_in(text_words: Sequence[str], phrase: str) -> bool:
    """Whether ``phrase`` (without a leading article or possessive) is written in the text of ``text_words``."""
    return _contains(text_words, _trim(words(phrase)))


def _trim(found: list[str]) -> list[str]:
    """Without leading articles and possessives (``the Louvre`` = ``Louvre``)."""
    while found and found[0] in _ARTICLES:
        found = found[1:]
    return found


__all__ = ["ALIASES", "KNOWN_PREDICATES", "MAX_NAME_WORDS", "MAX_VALUE_WORDS", "RELATIONS", "SELF", "Refusal",
           "SanityCheck", "found_in", "words"]  # fmt: skip
