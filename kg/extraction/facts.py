"""Fact candidates -> fact inputs: entity resolution, predicate mapping and supersession by meaning.

A new statement closes an old one when they cannot both hold, at the time the text gives (the new fact's
``valid_from``):

- a **functional** predicate (:meth:`Vocabulary.is_functional`: the ontology's ``owl:FunctionalProperty``,
  ``mabos:multi_valued false``, max cardinality 1, or the default list): the subject's current fact with
  another value;
- an **opposite** predicate (:meth:`Vocabulary.opposite`: ``owl:propertyDisjointWith``, or likes/dislikes):
  the subject's current fact with the same object ("I love coffee" then "I can't stand coffee");
- an **ending** (a candidate with ``ends``: "I left Shell in May", "I no longer work at Philips", "Mia and I
  broke up"): the subject's current fact with that object under the predicate or its family
  (:func:`kg.extraction.changes.family`), closed at the candidate's ``valid_until``; when none is stored, the
  fact is recorded already closed.

An existing fact that starts *after* the new one (an older statement read later) closes the new one at its
start instead. A fact said again keeps its earliest ``valid_from``. Only facts of the window's scope are read
and closed (a conversation's facts take the narrowest scope of its messages): a fact of a wider scope is
never closed by a narrower conversation. Hypotheticals, questions, wishes and reported speech give no
candidates at all (:mod:`kg.extraction.clauses`), so they never close anything. Nothing is written here: the
service writes the result in the window's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kg.extraction.changes import family
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
        for candidate in sorted(candidates, key=lambda c: c.valid_from or c.valid_until or default_start):
            fact = self._input(agent_id, scope, candidate, report, default_start)
            if candidate.ends:
                planned = self._end(agent_id, fact, planned, report)
            else:
                planned = self._place(agent_id, fact, planned, report)
        return planned

    def _end(self, agent_id: str, ending: FactInput, planned: list[FactInput],
             report: WindowReport) -> list[FactInput]:  # fmt: skip
        """``planned`` with the subject's current facts that ``ending`` ends closed at its ``valid_until``, or
        the ended fact recorded closed when none is current."""
        until = ending.valid_until
        preds = family(ending.predicate)
        stored = [_as_input(agent_id, f) for f in self.facts.query(agent_id, subject=_escape(ending.subject),
                                                                    object=_escape(ending.object), scope=ending.scope,
                                                                    limit=1000) if f.predicate in preds]  # fmt: skip
        from_store = {id(f) for f in stored}
        hits = [
            p for p in planned if p.subject == ending.subject and p.object == ending.object and p.predicate in preds
        ]
        hits += [s for s in stored if not any(_same(s, p) for p in planned)]
        out = list(planned)
        closed_any = False
        for fact in hits:
            if fact.valid_until is not None and until is not None and fact.valid_until <= until:
                closed_any = True  # already over by then
                continue
            if until is None or (fact.valid_from is not None and fact.valid_from >= until):
                closed_any = True  # said to end before it started: the texts disagree, the record stays
                continue
            done = fact.model_copy(update={"valid_until": until})
            out = [done if p is fact else p for p in out] if fact in out else [*out, done]
            closed_any = True
            report.facts_invalidated.append(Invalidation(
                uid=self._uid(agent_id, fact) if id(fact) in from_store else "(this window)", subject=fact.subject,
                predicate=fact.predicate, object=fact.object, valid_until=format_ts(until),
                by_object="(ended)"))  # fmt: skip
        if not closed_any and until is not None:
            out.append(ending.model_copy(update={"valid_from": None}))
        return out

    def _uid(self, agent_id: str, fact: FactInput) -> str:
        found = self.facts.query(agent_id, subject=_escape(fact.subject), predicate=_escape(fact.predicate),
                                 object=_escape(fact.object), scope=fact.scope, limit=1)  # fmt: skip
        return found[0].uid if found else "(this window)"

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
        valid_from = None if c.ends else c.valid_from or start
        if c.valid_until is not None and valid_from is not None and c.valid_until <= valid_from:
            valid_from = None  # ended before it was said to start: its start is unknown
        return FactInput(agent_id=agent_id, subject=subject, predicate=predicate, object=obj, scope=scope,
                         object_kind=ObjectKind.ENTITY if c.object_is_entity else ObjectKind.LITERAL,
                         confidence=c.confidence, source=SOURCE, valid_from=valid_from, valid_until=c.valid_until,
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
        opposite = self.vocabulary.opposite(new.predicate)
        functional = self.vocabulary.is_functional(new.predicate)
        if not functional and not opposite:
            return [*planned, new]
        out: list[FactInput] = []
        rivals: list[FactInput] = (
            [_as_input(agent_id, f) for f in stored if f.object != new.object] if functional else []
        )
        rivals += [p for p in planned if (p.subject, p.predicate) == (new.subject, new.predicate)
                   and p.object != new.object and functional]  # fmt: skip
        if opposite:
            against = [f for f in self.facts.query(agent_id, subject=_escape(new.subject), object=_escape(new.object),
                                                   scope=new.scope, limit=1000) if f.predicate in opposite]  # fmt: skip
            stored = [*stored, *against]
            rivals += [_as_input(agent_id, f) for f in against]
            rivals += [p for p in planned if p.subject == new.subject and p.object == new.object
                       and p.predicate in opposite]  # fmt: skip
        closed: dict[int, FactInput] = {}
        for rival in rivals:
            result = _close(rival, new)
            if result is None:
                continue
            rival_closed, new = result
            if rival_closed is not None:
                closed[id(rival)] = rival_closed
                report.facts_invalidated.append(Invalidation(
                    uid=next((f.uid for f in stored if (f.predicate, f.object) == (rival.predicate, rival.object)),
                             "(this window)"),
                    subject=rival.subject, predicate=rival.predicate, object=rival.object,
                    valid_until=format_ts(rival_closed.valid_until) if rival_closed.valid_until else "",
                    by_object=new.object))  # fmt: skip
        planned_ids = {id(p) for p in planned}
        for p in planned:
            out.append(closed.get(id(p), p))
        out += [c for key, c in closed.items() if key not in planned_ids]
        return [*out, new]


def _same(a: FactInput, b: FactInput) -> bool:
    return (a.subject, a.predicate, a.object) == (b.subject, b.predicate, b.object)


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
