"""Case-based reasoning over a workspace (``cbr_store``, ``cbr_retrieve``) and the router's engines.

:class:`CaseService` stores an agent's cases (one per situation and scope: storing an identical situation
again returns the stored case) and prunes the scope past its capacity (default 10,000; failed and old
cases go first, see :func:`reasoning.cbr.prune`). Retrieval ranks the cases the agent can read by
CBR-BDI similarity (:func:`reasoning.cbr.retrieve`), with context similarity through the workspace's
embedder when a context is given.

:func:`router_engines` gives :func:`reasoning.router.reason` the three engines computed here: deductive
(forward closure, or a backward proof of ``inputs.deductive.goal``), abductive (hypotheses for
``inputs.abductive.observation``) and case-based (retrieval for ``inputs.case_based``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kg.clock import Clock
from kg.errors import InputError
from kg.ids import new_id
from kg.models import Case, Model, agent_scope, parse
from kg.ports import Embedder, GraphStore
from kg.scopes import ScopePolicy
from reasoning.cbr import DEFAULT_CAPACITY, CaseQuery, CBRWeights, RetrievalResult, prune, retrieve, situation_key
from reasoning.router import ComputedResult, Engine, MethodResult, Problem, build_prompt
from reasoning.service import Reasoner


class StoredCase(Model):
    """What ``cbr store`` did."""

    case: Case
    created: bool
    pruned: list[str] = []


class CaseService:
    """Cases of the agents, scope-checked."""

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock, embedder: Embedder | None,
                 *, capacity: int = DEFAULT_CAPACITY) -> None:  # fmt: skip
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.embedder = embedder
        self.capacity = capacity

    def store_case(self, agent_id: str, **fields: Any) -> StoredCase:
        """Store a case (situation, solution, outcome); an identical situation in the scope is kept once."""
        self.scopes.require_agent(agent_id)
        for own in ("agent_id", "created_at"):
            if own in fields:
                raise InputError(own, "is set by mabos, not by the caller")
        data = {k: v for k, v in fields.items() if v is not None}
        case = parse(Case, {"uid": data.pop("uid", None) or new_id("case"), "agent_id": agent_id,
                            "created_at": self.clock.now(), **data})  # fmt: skip
        self.scopes.check_write(agent_id, case.scope)
        stored, created = self.store.cases.add(case, situation_key=situation_key(case.situation))
        pruned: list[str] = []
        if created and self.store.cases.count(case.scope) > self.capacity:
            everything = self.store.cases.list(scopes=[case.scope])
            pruned = self.store.cases.delete(prune(everything, self.capacity, now=self.clock.now()))
        return StoredCase(case=stored, created=created, pruned=pruned)

    def retrieve(self, agent_id: str, *, beliefs: Sequence[str] = (), desires: Sequence[str] = (),
                 context: str = "", k: int = 5, weights: CBRWeights | Mapping[str, Any] | None = None,
                 min_score: float = 0.0) -> RetrievalResult:  # fmt: skip
        """The ``k`` cases most similar to the situation, among those the agent can read."""
        if not 1 <= k <= 100:
            raise InputError("k", f"must be between 1 and 100, got {k}")
        query = parse(CaseQuery, {"beliefs": list(beliefs), "desires": list(desires), "context": context})
        cases = self.store.cases.list(scopes=self.scopes.readable(agent_id))
        return retrieve(cases, query, k=k, weights=weights, embedder=self.embedder, min_score=min_score)


def _triple(value: Any, field: str) -> tuple[str, str, str]:
    if isinstance(value, str):
        parts = value.split(maxsplit=2)
    elif isinstance(value, Sequence):
        parts = [str(v) for v in value]
    else:
        parts = []
    if len(parts) != 3 or not all(p.strip() for p in parts):
        raise InputError(field, "must be [subject, predicate, object] or 'SUBJECT PREDICATE OBJECT'")
    return (parts[0], parts[1], parts[2])


def router_engines(reasoner: Reasoner, cases: CaseService, agent_id: str) -> dict[str, Engine]:
    """The deductive, abductive and case-based engines of the router, bound to one agent."""

    def deductive(problem: Problem) -> ComputedResult:
        inputs = problem.inputs.get("deductive", {})
        if "goal" in inputs:
            goal = _triple(inputs["goal"], "inputs.deductive.goal")
            proof = reasoner.backward(agent_id, *goal)
            answer = f"{' '.join(goal)}: {'proved' if proof.proved else 'not proved'}"
            gaps = [str(g) for g in proof.gaps]
            return ComputedResult(method="deductive", answer=answer, confidence=None,
                                  summary="backward chaining over the agent's facts and rules",
                                  output={"proved": proof.proved, "gaps": gaps}, notes=[])  # fmt: skip
        report = reasoner.forward(agent_id)
        derived = [f"{d.subject} {d.predicate} {d.object}" for d in report.derived]
        return ComputedResult(method="deductive", answer=f"{len(derived)} facts follow from the rules",
                              summary="forward chaining over the agent's facts and rules",
                              output={"derived": derived[:50], "iterations": report.iterations})  # fmt: skip

    def abductive(problem: Problem) -> MethodResult:
        raw = problem.inputs.get("abductive", {}).get("observation")
        if raw is None:  # as the built-in engines do: without its input the method becomes a prompt
            note = "not computed: give inputs.abductive.observation to compute it; returned a prompt instead"
            return build_prompt("abductive", problem, notes=[note])
        observation = _triple(raw, "inputs.abductive.observation")
        found = reasoner.abduce(agent_id, *observation)
        best = found[0] if found else None
        answer = f"best explanation: rule {best.rule_id}" if best else "no rule explains the observation"
        return ComputedResult(method="abductive", answer=answer, confidence=best.score if best else None,
                              summary="hypotheses from the rules that conclude the observation",
                              output={"hypotheses": [h.rule_id for h in found][:10]})  # fmt: skip

    def case_based(problem: Problem) -> ComputedResult:
        inputs = problem.inputs.get("case_based", {})
        found = cases.retrieve(agent_id, beliefs=inputs.get("beliefs", []), desires=inputs.get("desires", []),
                               context=inputs.get("context", problem.text))  # fmt: skip
        best = found.matches[0] if found.matches else None
        answer = f"reuse case {best.case_uid}" if best else "no similar case"
        return ComputedResult(method="case_based", answer=answer, confidence=best.score if best else None,
                              summary="the most similar past case and what was done",
                              output={"matches": [m.model_dump(mode="json") for m in found.matches]},
                              notes=found.notes)  # fmt: skip

    return {"deductive": deductive, "abductive": abductive, "case_based": case_based}


__all__ = ["CaseService", "StoredCase", "agent_scope", "router_engines"]
