"""Fact candidates -> fact inputs: entity resolution, predicate mapping and temporal invalidation.

A new fact on a functional predicate (:meth:`Vocabulary.is_functional`) whose subject has a current fact
of another value in the same scope closes that fact's ``valid_until`` at the new fact's ``valid_from``
instead of leaving two truths. An existing fact that starts *after* the new one (an older statement read
later) closes the new one at its start instead. A fact said again keeps its earliest ``valid_from``.
Nothing is written here: the service writes the result in the window's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kg.extraction.entities import ALIAS_PREDICATES, EntityResolver, Vocabulary, normalise
from kg.extraction.report import EntityMatch, Invalidation, WindowReport
from kg.facts import FactService
from kg.models import Fact, FactCandidate, FactInput, ObjectKind, format_ts

SOURCE = "extraction"


def _escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("*", "\\*")


class FactPlanner:
    """Plans the fact writes of one window for one agent and scope."""

    def __init__(self, facts: FactService, resolver: EntityResolver, vocabulary: Vocabulary) -> None:
        self.facts = facts
        self.resolver = resolver
        self.vocabulary = vocabulary

    def plan(self, agent_id: str, scope: str, candidates: Sequence[FactCandidate], report: WindowReport,
             *, default_start: datetime) -> list[FactInput]:  # fmt: skip
        """The facts to assert for ``candidates`` (closings of older facts included), in order."""
        planned: list[FactInput] = []
        for candidate in sorted(candidates, key=lambda c: c.valid_from or default_start):
            fact = self._input(agent_id, scope, candidate, report, default_start)
            planned = self._place(agent_id, fact, planned, report)
        return planned

    def _resolve(self, name: str, report: WindowReport) -> str:
        found = self.resolver.resolve(name)
        if found.method != "exact":
            match = EntityMatch(name=name, entity=found.entity, method=found.method, similarity=found.similarity)
            if match not in report.entities:
                report.entities.append(match)
        return found.entity

    def _input(self, agent_id: str, scope: str, c: FactCandidate, report: WindowReport, start: datetime) -> FactInput:
        subject = self._resolve(c.subject, report)
        predicate = self.vocabulary.predicate(c.predicate)
        obj = self._resolve(c.object, report) if c.object_is_entity else c.object
        if predicate in ALIAS_PREDICATES and not c.object_is_entity:
            self.resolver.aliases.setdefault(normalise(c.object), subject)
        return FactInput(agent_id=agent_id, subject=subject, predicate=predicate, object=obj, scope=scope,
                         object_kind=ObjectKind.ENTITY if c.object_is_entity else ObjectKind.LITERAL,
                         confidence=c.confidence, source=SOURCE, valid_from=c.valid_from or start,
                         derived_from=list(c.sources))  # fmt: skip

    def _existing(self, agent_id: str, fact: FactInput) -> list[Fact]:
        return self.facts.query(agent_id, subject=_escape(fact.subject), predicate=_escape(fact.predicate),
                                scope=fact.scope, limit=1000)  # fmt: skip

    def _place(self, agent_id: str, new: FactInput, planned: list[FactInput], report: WindowReport) -> list[FactInput]:
        """``planned`` plus ``new``, with the closings the new fact causes."""
        stored = self._existing(agent_id, new)
        same = [f for f in stored if f.object == new.object]
        start = new.valid_from
        if same and same[0].valid_from is not None and start is not None and same[0].valid_from < start:
            new = new.model_copy(update={"valid_from": same[0].valid_from})
        if not self.vocabulary.is_functional(new.predicate):
            return [*planned, new]
        out: list[FactInput] = []
        rivals: list[FactInput] = [_as_input(agent_id, f) for f in stored if f.object != new.object]
        rivals += [p for p in planned if (p.subject, p.predicate) == (new.subject, new.predicate)
                   and p.object != new.object]  # fmt: skip
        closed: dict[int, FactInput] = {}
        for rival in rivals:
            result = _close(rival, new)
            if result is None:
                continue
            rival_closed, new = result
            if rival_closed is not None:
                closed[id(rival)] = rival_closed
                report.facts_invalidated.append(Invalidation(
                    uid=next((f.uid for f in stored if f.object == rival.object), "(this window)"),
                    subject=rival.subject, predicate=rival.predicate, object=rival.object,
                    valid_until=format_ts(rival_closed.valid_until) if rival_closed.valid_until else "",
                    by_object=new.object))  # fmt: skip
        planned_ids = {id(p) for p in planned}
        for p in planned:
            out.append(closed.get(id(p), p))
        out += [c for key, c in closed.items() if key not in planned_ids]
        return [*out, new]


def _as_input(agent_id: str, fact: Fact) -> FactInput:
    return FactInput(agent_id=agent_id, subject=fact.subject, predicate=fact.predicate, object=fact.object,
                     object_kind=fact.object_kind, scope=fact.scope, confidence=fact.confidence, source=fact.source,
                     valid_from=fact.valid_from, valid_until=fact.valid_until)  # fmt: skip


def _close(rival: FactInput, new: FactInput) -> tuple[FactInput | None, FactInput] | None:
    """(the rival closed, or None when it stays) and the new fact (closed when the rival starts later); None when
    the two do not overlap or start at the same moment (then both stay: nothing says which is right)."""
    r_from, n_from = rival.valid_from, new.valid_from
    if n_from is None:
        return None
    if rival.valid_until is not None and rival.valid_until <= n_from:
        return None  # already over when the new value starts
    if r_from is None or r_from < n_from:
        return rival.model_copy(update={"valid_until": n_from}), new
    if r_from > n_from:
        until = min(new.valid_until, r_from) if new.valid_until else r_from
        return None, new.model_copy(update={"valid_until": until})
    return None


__all__ = ["SOURCE", "FactPlanner"]
