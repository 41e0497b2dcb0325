"""Conflict detection (R5): contradictory beliefs and contradictory facts, found by grouping.

Two rules, both indexed (a dict keyed by subject), never comparing all pairs:

* **Beliefs** (the seed's rule): two active beliefs with the same subject, both certainty > 0.6,
  different content. A belief has only free text, so its subject is derived deterministically
  (:func:`belief_subject`).
* **Facts** (beyond the seed): two facts with the same subject and the same *functional* predicate
  (one value at a time: ``hasCEO``, ``locatedIn`` ...), different objects, both confidence >= 0.6,
  whose validity intervals overlap. Validity is half-open, ``[valid_from, valid_until)``, ``None``
  meaning unbounded, as in fact queries: a CEO until 2020 and another from 2020 do not conflict.

Conflicts are reported per group (one subject, or one subject and predicate) with the number of
conflicting pairs in it; the cycle's ``conflictsDetected`` is the total of those pairs, as the seed
counted conflicts pair by pair.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from kg.models import BDINode, Fact
from kg.text.words import WORD
from reasoning.bdi.chunking import CHUNK_SIZE, chunked
from reasoning.bdi.models import Conflict, ConflictMember

#: Beliefs conflict only when both are more certain than this (strictly greater, as in the seed).
MIN_BELIEF_CERTAINTY = 0.6
#: Facts conflict only when both are at least this confident.
MIN_FACT_CONFIDENCE = 0.6
#: At most this many words of a belief's leading noun phrase make its subject.
SUBJECT_WORDS = 3

# fmt: off
#: Predicates that hold one value at a time for a subject (override with ``functional_predicates``).
DEFAULT_FUNCTIONAL_PREDICATES: frozenset[str] = frozenset({
    "hasCEO", "hasHeadquarters", "headquarteredIn", "locatedIn", "hasRevenue", "hasEmployeeCount", "foundedIn",
    "foundedOn", "bornIn", "birthDate", "hasCapital", "hasStatus",
})
# fmt: on

_MARKER = re.compile(r"(?:^|[\[(;|])[ \t]*subject[ \t]*:[ \t]*([^\]\n;|)]+)", re.IGNORECASE | re.MULTILINE)
#: A word (:data:`kg.text.words.WORD`) with its joined parts ("e-mail", "v1.2", "o'brien"), or a punctuation mark.
_TOKEN = re.compile(rf"{WORD}(?:[-_.']{WORD})*|[:;,!?()\[\]{{}}\u2013\u2014=]")
_POSSESSIVE = re.compile(r"'s\b")
# fmt: off
_DETERMINERS = frozenset({
    "the", "a", "an", "our", "my", "your", "their", "its", "his", "her", "this", "that", "these", "those", "some",
    "all", "every", "each", "any"
})
#: Words that end a subject: copulas, auxiliaries, negations and a few very common verbs.
_LINKS = frozenset({
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "will", "would", "shall",
    "should", "can", "could", "may", "might", "must", "do", "does", "did", "not", "no", "never", "seems", "seem",
    "seemed", "appears", "appear", "remains", "remain", "becomes", "become", "became", "uses", "use", "used",
    "needs", "need", "wants", "want", "prefers", "prefer", "likes", "like", "costs", "cost", "means", "equals"
})
# fmt: on


def normalize_text(text: str) -> str:
    """Case-folded text with runs of whitespace collapsed: what "same content" compares."""
    return " ".join(text.casefold().split())


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_POSSESSIVE.sub("", text.casefold().replace("\u2019", "'")))


def _words(text: str) -> str:
    return " ".join(t for t in _tokens(text) if t[0].isalnum())


def _phrase(text: str) -> str:
    words: list[str] = []
    for token in _tokens(text):
        is_word = token[0].isalnum()
        if not words and (not is_word or token in _DETERMINERS):
            continue  # leading punctuation and articles are not part of the subject
        if not is_word or token in _LINKS or token.endswith("n't"):
            break
        words.append(token)
        if len(words) == SUBJECT_WORDS:
            break
    return " ".join(words)


def belief_subject(content: str) -> str:
    """The subject of a belief, as a normalized key ("" when none can be found).

    In order:

    1. an explicit marker: ``subject: Acme CEO`` at the start of a line or after ``[``, ``(``,
       ``;`` or ``|`` -> ``acme ceo``;
    2. a title line: in multi-line content the first line is the title (``## Acme CEO`` in a
       cognitive file) and, as in the seed, the whole title is the subject;
    3. the leading noun phrase of one-line content: leading articles dropped, then the words up
       to the first linking word (is, are, has, will, not, uses ...), punctuation or the third
       word: ``The Acme deal will close in Q3`` -> ``acme deal``, ``Acme's revenue is $5M`` ->
       ``acme revenue``, ``Revenue of Acme grows 20%`` -> ``revenue of acme``.

    Keys compare case- and punctuation-insensitively. Rule 3 is a heuristic (it cannot know that
    ``Acme grows`` and ``Acme is shrinking`` share a subject): write a ``subject:`` marker when
    it matters.
    """
    marker = _MARKER.search(content)
    if marker:
        return _words(marker.group(1))
    lines = [line.strip() for line in content.strip().splitlines() if line.strip()]
    if len(lines) > 1:
        return _words(lines[0].lstrip("#"))
    return _phrase(lines[0] if lines else "")


def _belief_member(node: BDINode) -> ConflictMember:
    return ConflictMember(uid=node.uid, text=node.content, score=node.certainty, scope=node.scope,
                          agent_id=node.agent_id)  # fmt: skip


class BeliefConflictIndex:
    """Beliefs grouped by subject, fed chunk by chunk; :meth:`conflicts` reads the groups out."""

    def __init__(self, *, min_certainty: float = MIN_BELIEF_CERTAINTY) -> None:
        self.min_certainty = min_certainty
        self.groups: dict[str, list[BDINode]] = {}
        self.seen = 0

    def add(self, beliefs: Iterable[BDINode]) -> None:
        """Index confident beliefs by subject (others are counted and skipped)."""
        for belief in beliefs:
            self.seen += 1
            if belief.certainty is None or belief.certainty <= self.min_certainty:
                continue
            subject = belief_subject(belief.content)
            if subject:
                self.groups.setdefault(subject, []).append(belief)

    def conflicts(self) -> list[Conflict]:
        """One conflict per subject whose confident beliefs say at least two different things."""
        found = []
        for subject, members in self.groups.items():
            if len(members) < 2:
                continue
            contents = Counter(normalize_text(m.content) for m in members)
            if len(contents) < 2:
                continue  # the same statement repeated is a duplicate, not a conflict
            pairs = len(members) * (len(members) - 1) // 2 - sum(c * (c - 1) // 2 for c in contents.values())
            found.append(
                Conflict(kind="belief", subject=subject, pairs=pairs, members=[_belief_member(m) for m in members])
            )
        return sorted(found, key=lambda c: c.subject)


def detect_belief_conflicts(
    beliefs: Sequence[BDINode], *, min_certainty: float = MIN_BELIEF_CERTAINTY, chunk_size: int = CHUNK_SIZE
) -> list[Conflict]:
    """Conflicting beliefs (seed rule), indexing ``beliefs`` ``chunk_size`` at a time."""
    index = BeliefConflictIndex(min_certainty=min_certainty)
    for chunk in chunked(beliefs, chunk_size):
        index.add(chunk)
    return index.conflicts()


# ------------------------------------------------------------------------------------------ facts


def _start(fact: Fact) -> float:
    return fact.valid_from.timestamp() if fact.valid_from else float("-inf")


def _end(fact: Fact) -> float:
    return fact.valid_until.timestamp() if fact.valid_until else float("inf")


def _overlapping_disagreements(facts: list[Fact]) -> tuple[list[Fact], int]:
    """Facts (one subject, one predicate) overlapping a fact with another object, and the pair count.

    A sweep over validity starts, O(n log n): the active intervals are kept in a heap by end, with
    a count per object, so the pairs a new interval forms with active ones of *other* objects are
    counted without listing them. Each fact is marked at most once, so marking stays linear too.
    """
    order = sorted(facts, key=lambda f: (_start(f), f.uid))
    ending: list[tuple[float, int]] = []
    active: Counter[str] = Counter()
    unmarked: dict[str, set[int]] = {}
    marked: set[int] = set()
    pairs = total = 0
    for i, fact in enumerate(order):
        start = _start(fact)
        while ending and ending[0][0] <= start:  # half-open: ending at our start is no overlap
            j = heapq.heappop(ending)[1]
            active[order[j].object] -= 1
            total -= 1
            waiting = unmarked.get(order[j].object)
            if waiting is not None:
                waiting.discard(j)
                if not waiting:
                    del unmarked[order[j].object]
        others = total - active[fact.object]
        if others:
            pairs += others
            marked.add(i)
            for obj in [o for o in unmarked if o != fact.object]:
                marked.update(unmarked.pop(obj))
        else:
            unmarked.setdefault(fact.object, set()).add(i)
        heapq.heappush(ending, (_end(fact), i))
        active[fact.object] += 1
        total += 1
    return [order[i] for i in sorted(marked)], pairs


def _fact_member(fact: Fact) -> ConflictMember:
    return ConflictMember(uid=fact.uid, text=fact.object, score=fact.confidence, scope=fact.scope,
                          agent_id=fact.agent_id, valid_from=fact.valid_from,
                          valid_until=fact.valid_until)  # fmt: skip


def detect_fact_conflicts(
    facts: Iterable[Fact],
    *,
    functional_predicates: Collection[str] = DEFAULT_FUNCTIONAL_PREDICATES,
    min_confidence: float = MIN_FACT_CONFIDENCE,
) -> list[Conflict]:
    """Facts of a functional predicate giving one subject different objects at overlapping times.

    Retracted facts and facts below ``min_confidence`` are ignored; objects compare exactly.
    """
    groups: dict[tuple[str, str], list[Fact]] = {}
    for fact in facts:
        if fact.predicate in functional_predicates and fact.confidence >= min_confidence and not fact.retracted_at:
            groups.setdefault((fact.subject, fact.predicate), []).append(fact)
    found = []
    for (subject, predicate), members in sorted(groups.items()):
        if len(members) < 2 or len({m.object for m in members}) < 2:
            continue
        involved, pairs = _overlapping_disagreements(members)
        if pairs:
            found.append(Conflict(kind="fact", subject=subject, predicate=predicate, pairs=pairs,
                                  members=[_fact_member(f) for f in involved]))  # fmt: skip
    return found


def conflict_pairs(conflicts: Iterable[Conflict]) -> int:
    """Total conflicting pairs (the seed's ``conflictsDetected``)."""
    return sum(c.pairs for c in conflicts)


def valid_overlap(a_from: datetime | None, a_until: datetime | None, b_from: datetime | None,
                  b_until: datetime | None) -> bool:  # fmt: skip
    """Whether two half-open validity intervals (``None`` = unbounded) share an instant."""
    a_start = a_from.timestamp() if a_from else float("-inf")
    b_start = b_from.timestamp() if b_from else float("-inf")
    a_end = a_until.timestamp() if a_until else float("inf")
    b_end = b_until.timestamp() if b_until else float("inf")
    return a_start < b_end and b_start < a_end
