"""Change words: statements that end a fact ("I left Shell", "I broke up with Luca", "I stopped running").

:func:`endings` gives the facts a clause says have stopped holding, as ``(subject, predicate, object,
object is an entity)``; the planner (:mod:`kg.extraction.supersede`) closes the matching current fact at the
date the text gives (or records it closed when none is stored). The predicate is a best guess: the planner
closes the subject's current fact with that object under any predicate of the same family (:data:`FAMILIES`),
so "I left Berlin" closes ``livesIn berlin`` when that is what is stored. "No longer" / "not … anymore"
clauses end every fact their positive reading states (:mod:`kg.extraction.clauses`, mode ``ended``).
"""

from __future__ import annotations

import re

from kg.extraction.rules import slug

Fact = tuple[str, str, str, bool]

#: Predicates one ending closes together: leaving a place or an employer, ending a relationship, giving up a liking.
FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"worksAt", "livesIn", "studiesAt", "memberOf", "attends"}),
    frozenset({"hasPartner", "hasGirlfriend", "hasBoyfriend", "hasWife", "hasHusband", "hasSpouse", "marriedTo",
               "hasFiance", "hasFiancee", "datingWith"}),
    frozenset({"likes", "prefers", "enjoys"}),
)  # fmt: skip
_ADV = r"(?:(?:just|recently|finally|already|also|officially|eventually) )*"
_ORG = r"([A-Z][\w'&.-]*(?:\s+(?!I\b)[A-Z][\w'&-]*)*)"
_LEFT = re.compile(rf"\bI {_ADV}(?:have |had )?(?:left|quit|resigned from|walked away from|moved out of|moved away "
                   rf"from)(?: my (?:job|position|role|post|team|flat|apartment) (?:at|with|in))? {_ORG}")  # fmt: skip
_STOPPED_WORK = re.compile(rf"\bI {_ADV}(?:have |had )?(?:stopped|quit) (?:working|living) (?:at|for|in) {_ORG}")
_STOPPED = re.compile(
    rf"\bI {_ADV}(?:have |had )?(?:stopped|quit|gave up|have given up) ([a-z]+ing)\b(?! (?:at|for)\b)"
)
_BROKE_UP = re.compile(rf"\bI {_ADV}(?:have |had )?(?:broke up|split up|separated|got divorced|divorced)"
                       r"(?: (?:with|from))?(?: my (?:\w+ )?\w+)? ([A-Z][a-z]+)")  # fmt: skip


def family(predicate: str) -> frozenset[str]:
    """The predicates an ending of ``predicate`` also closes (itself at least)."""
    return next((f for f in FAMILIES if predicate in f), frozenset({predicate}))


def endings(clause: str, who: str) -> list[Fact]:
    """The facts ``clause`` says stopped holding (module docstring)."""
    out: list[Fact] = []
    if m := _STOPPED_WORK.search(clause):
        out.append((who, "livesIn" if "living" in m[0] else "worksAt", m[1], True))
    elif m := _LEFT.search(clause):
        out.append((who, "livesIn" if re.search(r"moved|flat|apartment", m[0]) else "worksAt", m[1], True))
    if (m := _STOPPED.search(clause)) and m[1] not in ("working", "living"):
        out.append((who, "likes", m[1], False))
    if m := _BROKE_UP.search(clause):
        out.append((who, "hasPartner", slug(m[1]), True))
    return out


__all__ = ["FAMILIES", "endings", "family"]
