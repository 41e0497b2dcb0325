"""The people a session mentions, so that "he"/"she" opening a clause can be read as the last one that fits.

A mention is "my <relation> [Name]" ("my brother Tom", "my sister"), "I have a <relation> named Name", "my
<relation> is called Name", or a name that reports something ("Anna said …"). Its gender comes from the
relation word (brother, dad, husband … he; sister, mom, wife … she; friend, cousin, partner … either) and is
unknown for a bare name. A pronoun is replaced by the mention's phrase ("He works as a pilot" -> "my brother
Tom works as a pilot"), so the relation rules read it as a fact about that person, never about the speaker.
A pronoun with no fitting mention is left alone (and the clause states nothing about anyone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HE = frozenset({"brother", "dad", "father", "husband", "boyfriend", "son", "uncle", "grandfather", "grandpa",
                "nephew", "fiance", "stepfather", "stepson"})  # fmt: skip
SHE = frozenset({"sister", "mom", "mum", "mother", "wife", "girlfriend", "daughter", "aunt", "grandmother",
                 "grandma", "niece", "fiancee", "stepmother", "stepdaughter"})  # fmt: skip
EITHER = frozenset({"friend", "best friend", "cousin", "partner", "boss", "colleague", "roommate", "manager",
                    "neighbor", "neighbour", "teacher", "coworker", "doctor", "therapist"})  # fmt: skip
_RELATIONS = "|".join(sorted((r.replace(" ", r"\s+") for r in HE | SHE | EITHER), key=len, reverse=True))
_NAME = r"([A-Z][a-z]+)"
_MENTIONS = (
    re.compile(rf"\b[Mm]y (?:older |younger |little |big |new |twin |old |best )?({_RELATIONS})"
               rf"(?:,?\s+{_NAME}\b)?"),
    re.compile(rf"\bI (?:have|had|adopted|got) an? (?:older |younger |little |big |new )?({_RELATIONS})\s+"
               rf"(?:named|called) {_NAME}"),
    re.compile(rf"\b[Mm]y ({_RELATIONS}) (?:is|was) (?:called|named) {_NAME}"),
)  # fmt: skip
_REPORTER = re.compile(rf"^{_NAME} (?:said|says|told|tells|thinks|mentioned)\b")
_PRONOUN = re.compile(r"^(He|She|he|she)\b")
_NOT_NAMES = frozenset({"I", "My", "We", "The", "This", "That", "It", "He", "She", "They", "You", "Yesterday",
                        "Today", "Tomorrow", "Last", "Next", "And", "But", "So"})  # fmt: skip


@dataclass
class Person:
    """One mention: the phrase that names the person in a clause and its gender (``m``, ``f`` or ``""``)."""

    phrase: str
    gender: str
    name: str = ""


@dataclass
class People:
    """The mentions of one session, most recent last."""

    mentions: list[Person] = field(default_factory=list)

    def note(self, clause: str) -> None:
        """Record the people ``clause`` mentions."""
        for pattern in _MENTIONS:
            for m in pattern.finditer(clause):
                relation = re.sub(r"\s+", " ", m[1].lower())
                name = m[2] if m.lastindex and m.lastindex >= 2 and m[2] not in _NOT_NAMES else ""
                gender = "m" if relation in HE else "f" if relation in SHE else ""
                phrase = f"my {relation} {name}".strip()
                self._add(Person(phrase, gender, name))
        reporter = _REPORTER.match(clause)
        if reporter is not None and reporter[1] not in _NOT_NAMES:
            self._add(Person(reporter[1], "", reporter[1]))

    def _add(self, person: Person) -> None:
        if person.name:  # a name said again keeps its relation ("my girlfriend Mia" ... "Mia")
            known = next((p for p in self.mentions if p.name == person.name and p.phrase != p.name), None)
            if known is not None:
                person = known
        self.mentions = [p for p in self.mentions if p.phrase != person.phrase] + [person]

    def fits(self, who: str, pronoun: str) -> bool:
        """Whether ``pronoun`` can refer to the reporter ``who`` ("my friend Anna", "Omar", "my dad")."""
        want = "m" if pronoun.lower() == "he" else "f"
        words = who.lower().split()
        gender = "m" if HE & set(words) else "f" if SHE & set(words) else ""
        return gender in ("", want) and bool(re.search(r"\b[Mm]y\b|^[A-Z][a-z]+$", who.strip()))

    def resolve(self, clause: str) -> str:
        """``clause`` with an opening he/she replaced by the last fitting mention's phrase."""
        m = _PRONOUN.match(clause)
        if m is None:
            return clause
        want = "m" if m[1].lower() == "he" else "f"
        for person in reversed(self.mentions):
            if person.gender in ("", want):
                return person.phrase + clause[m.end() :]
        return clause


__all__ = ["EITHER", "HE", "SHE", "People", "Person"]
