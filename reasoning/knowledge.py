"""``knowledge explain``: a question answered by every method of the rule engine, saying which found what.

:meth:`reasoning.service.Reasoner.knowledge_explain` computes the closure of an agent's facts and hands it here:
the question's known terms select direct facts and derived ones, rule conclusions naming its predicates become
goals proved by backward chaining (one step bound for all of them together) or, when unproved, explained by
abduction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, Literal

from kg.models import Model, Rule
from kg.text.stopwords import STOPWORDS
from reasoning.bounds import ClosureStatus, joined
from reasoning.rules import ForwardResult, Triple, abduce, prove
from reasoning.rules.backward import MAX_PROOF_STEPS
from reasoning.rules.index import FactIndex

_WORD = re.compile(r"[\w:.-]+", re.UNICODE)
_METHODS = ("direct", "forward", "backward", "abduction")


class MethodFinding(Model):
    """One answer to a question, and the method that found it."""

    method: Literal["direct", "forward", "backward", "abduction"]
    subject: str
    predicate: str
    object: str
    confidence: float | None = None
    detail: dict[str, Any] = {}


class KnowledgeAnswer(Model):
    """``knowledge explain``: what each method found for a question."""

    agent_id: str
    question: str
    terms: list[str]
    findings: list[MethodFinding]
    methods: dict[str, int]
    fixpoint: bool = True
    backward_complete: bool = True
    note: str | None = None


def answer(agent_id: str, question: str, *, limit: int, base: Sequence[Triple], result: ForwardResult,
           rules: Sequence[Rule], closure: ClosureStatus) -> KnowledgeAnswer:  # fmt: skip
    """The findings of every method for ``question`` over the asserted facts ``base``, their closure ``result``
    (whose status is ``closure``) and the inference ``rules``; at most ``limit`` findings."""
    terms, unknown = _terms(question, _vocabulary([*base, *(d.triple for d in result.derived)], rules))
    wanted = set(terms)
    findings: list[MethodFinding] = []
    for t in base:
        if _mentions(t, wanted):
            findings.append(MethodFinding(method="direct", subject=t.subject, predicate=t.predicate,
                                          object=t.object, confidence=t.confidence,
                                          detail={"uid": t.uid}))  # fmt: skip
    for d in result.derived:
        if _mentions(d.triple, wanted):
            findings.append(MethodFinding(method="forward", subject=d.triple.subject,
                                          predicate=d.triple.predicate, object=d.triple.object,
                                          confidence=d.triple.confidence,
                                          detail={"rule_id": d.rule_id}))  # fmt: skip
    index, steps, cut = FactIndex(base), MAX_PROOF_STEPS, 0  # one step bound for every goal's proof together
    for goal in _goals(rules, wanted, unknown):
        proof = prove(goal, index, rules, max_depth=5, max_steps=steps) if steps > 0 else None
        steps -= proof.steps if proof is not None else 0
        cut += proof is None or not proof.complete
        if proof is not None and proof.proved:
            for node in proof.proofs[:1]:
                findings.append(MethodFinding(method="backward", subject=goal[0], predicate=goal[1],
                                              object=goal[2], confidence=getattr(node, "confidence", None),
                                              detail={"proof": as_data(node)}))  # fmt: skip
        else:
            for h in abduce(goal, base, rules)[:3]:
                findings.append(MethodFinding(method="abduction", subject=goal[0], predicate=goal[1],
                                              object=goal[2], confidence=h.score,
                                              detail={"hypothesis": as_data(h)}))  # fmt: skip
    findings = findings[:limit]
    methods = {m: sum(1 for f in findings if f.method == m) for m in _METHODS}
    backward = None
    if cut:
        backward = (f"backward chaining stopped at its bound of {MAX_PROOF_STEPS:,} steps for the question "
                    f"(max_steps): {cut} goal(s) not proved within it, which is not disproved.")  # fmt: skip
    return KnowledgeAnswer(agent_id=agent_id, question=question, terms=terms, findings=findings, methods=methods,
                           fixpoint=closure.fixpoint, backward_complete=not cut,
                           note=joined(closure.note, backward))  # fmt: skip


def _vocabulary(facts: Iterable[Triple], rules: Sequence[Rule]) -> set[str]:
    words = {w for t in facts for w in (t.subject, t.predicate, t.object)}
    for rule in rules:
        if rule.conclusion is not None:
            words |= {rule.conclusion.subject, rule.conclusion.predicate, rule.conclusion.object}
    return {w for w in words if not w.startswith("?")}


def _terms(question: str, vocabulary: set[str]) -> tuple[list[str], list[str]]:
    """The known subjects, predicates and objects named in the question (case-insensitive, in order), and the
    other content words (candidate subjects nothing is known about yet: "Is globex taxable?")."""
    lowered = {w.lower(): w for w in vocabulary}
    found: dict[str, None] = {}
    unknown: dict[str, None] = {}
    for token in (t.strip(".,;:?!") for t in _WORD.findall(question)):
        if token.lower() in lowered:
            found[lowered[token.lower()]] = None
            continue
        # "taxable" names isTaxable: a token that is the tail of a camelCase term
        tails = [word for key, word in lowered.items() if len(token) > 3 and key.endswith(token.lower())]
        for word in tails:
            found[word] = None
        if not tails and token.lower() not in STOPWORDS and len(token) > 1:
            unknown[token] = None
    return list(found), list(unknown)


def _mentions(triple: Triple, wanted: set[str]) -> bool:
    return triple.subject in wanted and (triple.predicate in wanted or triple.object in wanted)


def _goals(rules: Sequence[Rule], wanted: set[str], unknown: Sequence[str] = ()) -> list[tuple[str, str, str]]:
    """Rule conclusions whose predicate the question names, with the question's subjects in the variables."""
    goals: dict[tuple[str, str, str], None] = {}
    subjects = [*sorted(wanted), *unknown]
    for rule in rules:
        c = rule.conclusion
        if c is None or c.predicate not in wanted:
            continue
        for s in subjects if c.subject.startswith("?") else [c.subject]:
            if s not in (c.predicate, c.object):
                goals[(s, c.predicate, c.object)] = None
    return list(goals)


def as_data(value: Any) -> Any:
    """A result of the engine (dataclass) or a model as plain JSON-ready data; anything else unchanged."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


__all__ = ["KnowledgeAnswer", "MethodFinding", "answer", "as_data"]
