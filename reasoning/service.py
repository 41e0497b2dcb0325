"""Rules and inference over a workspace's facts: the services behind ``mabos rule|infer|constraint|policy``.

:class:`RuleService` (:mod:`reasoning.rule_service`) creates, lists, toggles, deletes, imports and exports
rules. :class:`Reasoner` runs the engine of :mod:`reasoning.rules` over the facts an agent can read, every
forward closure bounded by :attr:`Reasoner.limits` (``[reasoning]`` in ``mabos.toml``, else
:data:`DEFAULT_LIMITS`): past ``max_derived`` derived facts or ``max_join`` candidate facts examined, a
call answers with what it found, ``fixpoint: false`` and a note saying which bound cut it.

- **forward**: the closure of the *asserted* live facts under the enabled inference rules, paged
  (``offset``/``limit``). With ``persist`` the derived facts are written to the agent's scope (source
  ``inference``, ``rule_id``, ``derived_from`` = the supporting facts) and, when the fixpoint was reached,
  earlier derived facts that no longer follow are retracted - truth maintenance: retracting a supporting
  fact retracts what was derived only from it on the next run. Re-running adds nothing new.
- **backward** / **abduce**: goal-directed proof with knowledge gaps; hypotheses for an observation.
- **constraints** / **policies**: checked against the asserted facts plus their closure.
- **explain**: the derivation tree of a triple (asserted, persisted or only derivable).
- **knowledge_explain**: a question answered by direct facts, the forward closure, backward proofs and
  abduction, saying which method found what.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.facts import FactService
from kg.models import Model, Rule, RuleType, agent_scope
from kg.models.request import requested
from kg.ports import GraphStore
from kg.scopes import ScopePolicy
from reasoning.bounds import (
    DEFAULT_LIMITS,
    MAX_RESULTS,
    ClosureStatus,
    check_note,
    complete,
    joined,
    lowered,
    status,
    workspace_limits,
)
from reasoning.knowledge import KnowledgeAnswer, MethodFinding, answer, as_data
from reasoning.requests import (
    MAX_DEPTH,
    MAX_ITERATIONS,
    MAX_PAGE,
    PAGE,
    AbduceRequest,
    BackwardRequest,
    ForwardRequest,
    KnowledgeRequest,
    PolicyEvalRequest,
)
from reasoning.rule_service import RuleService
from reasoning.rules import (
    ChainLimits,
    ForwardResult,
    Hypothesis,
    PolicyFiring,
    ProofResult,
    Triple,
    Violation,
    abduce,
    constraint_violations,
    explain,
    forward_chain,
    policy_firings,
    prove,
)
from reasoning.rules.backward import MAX_PROOF_STEPS

if TYPE_CHECKING:
    from kg.workspace import Workspace

#: The source of facts written by forward chaining (and the mark truth maintenance looks for).
INFERENCE_SOURCE = "inference"


class Derived(Model):
    """A fact derived by forward chaining."""

    subject: str
    predicate: str
    object: str
    confidence: float
    rule_id: str
    rule_name: str
    support: list[list[str]]
    uid: str | None = None  # once persisted


class ForwardReport(Model):
    """What ``infer forward`` did. ``derived`` is one page (``offset``, ``limit``) of the ``total_derived``
    facts, in order of derivation; ``next_offset`` is the next page's offset (None on the last page).
    ``fixpoint`` is false when a bound cut the closure: ``stopped_by`` names it and ``note`` says what to do.
    ``created``/``updated``/``unchanged`` count every persisted fact, not just the page's."""

    agent_id: str
    facts: int
    rules: int
    derived: list[Derived]
    total_derived: int = 0
    offset: int = 0
    limit: int = PAGE
    next_offset: int | None = None
    iterations: int
    fixpoint: bool
    stopped_by: str | None = None
    note: str | None = None
    closure: ClosureStatus | None = None
    fired: dict[str, int]
    persisted: bool
    created: int = 0
    updated: int = 0  # stored before with another confidence or support
    unchanged: int = 0
    retracted: list[str] = []


class Reasoner:
    """The rule engine over the facts and rules an agent can read.

    ``limits`` bound every forward closure it computes (unset bounds: :data:`DEFAULT_LIMITS`);
    :meth:`for_workspace` takes the workspace's ``[reasoning]`` bounds.
    """

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock, facts: FactService, *,
                 limits: ChainLimits | None = None) -> None:  # fmt: skip
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.facts = facts
        self.limits = complete(limits)

    @classmethod
    def for_workspace(cls, ws: Workspace) -> Reasoner:
        """The reasoner of a workspace, bounded by its ``[reasoning]`` section."""
        return cls(ws.ports, ws.scopes, ws.clock, ws.facts, limits=workspace_limits(ws))

    # ------------------------------------------------------------------ inputs

    def base_facts(self, agent_id: str) -> list[Triple]:
        """The asserted live facts the agent can read, valid now."""
        rows = self.store.facts.live_triples(scopes=self.scopes.readable(agent_id), valid_at=self.clock.now(),
                                             derived=False)  # fmt: skip
        return [Triple(r.subject, r.predicate, r.object, r.confidence, r.uid) for r in rows]

    def rules(self, agent_id: str, kind: RuleType) -> list[Rule]:
        """Enabled rules of one kind the agent can read."""
        return self.store.rules.list(scopes=self.scopes.readable(agent_id), type=kind, enabled=True)

    def closure(self, agent_id: str, *, max_iterations: int = MAX_ITERATIONS,
                limits: ChainLimits | None = None) -> tuple[list[Triple], ForwardResult]:  # fmt: skip
        """The asserted facts and the result of forward chaining over them (within ``limits``, default
        :attr:`limits`; ``result.fixpoint`` is false when a bound cut it)."""
        base = self.base_facts(agent_id)
        rules = self.rules(agent_id, RuleType.INFERENCE)
        return base, forward_chain(base, rules, max_iterations=max_iterations, limits=limits or self.limits)

    def closure_status(self, result: ForwardResult) -> ClosureStatus:
        """How complete a closure computed under :attr:`limits` is, with a note when a bound cut it."""
        return status(result, self.limits)

    # ------------------------------------------------------------------ forward

    def forward(self, agent_id: str, request: ForwardRequest | None = None, /, *, tune_process: bool = False,
                **fields: Any) -> ForwardReport:  # fmt: skip
        """Forward chaining to a fixpoint, ``max_iterations`` or a bound; with ``persist``, write and maintain (a
        request, or its fields as keywords).

        ``max_derived``/``max_join`` lower :attr:`limits` for this call (never raise them). The report holds
        the derived facts from ``offset``, at most ``limit`` (1..10,000); persisting writes all of them.
        A cut closure is persisted but retracts nothing (truth maintenance needs the whole closure).
        ``tune_process`` is passed to :func:`~reasoning.rules.forward_chain` (only the process's owner, the CLI,
        sets it).
        """
        given = requested(ForwardRequest, request, fields)
        persist, max_iterations, offset, limit = given.persist, given.max_iterations, given.offset, given.limit
        limits = lowered(self.limits, given.max_derived, given.max_join)
        if persist:
            self.scopes.check_write(agent_id, agent_scope(agent_id))
        rules = self.rules(agent_id, RuleType.INFERENCE)
        base = self.base_facts(agent_id)
        result = forward_chain(base, rules, max_iterations=max_iterations, limits=limits, tune_process=tune_process)
        closure = status(result, limits)
        report = ForwardReport(agent_id=agent_id, facts=len(base), rules=len(rules), derived=[],
                               total_derived=len(result.derived), offset=offset, limit=limit,
                               iterations=result.iterations, fixpoint=result.fixpoint, stopped_by=result.stopped_by,
                               note=closure.note, closure=closure, fired=dict(result.fired),
                               persisted=persist)  # fmt: skip
        uids = self._persist(agent_id, base, result, report) if persist else {}
        names = {r.uid: r.name for r in rules}
        page = result.derived[offset : offset + limit]
        report.derived = [
            Derived(subject=d.triple.subject, predicate=d.triple.predicate, object=d.triple.object,
                    confidence=d.triple.confidence, rule_id=d.rule_id, rule_name=names.get(d.rule_id, d.rule_id),
                    support=[list(k) for k in d.support], uid=uids.get(d.triple.key))
            for d in page
        ]  # fmt: skip
        report.next_offset = offset + limit if offset + limit < len(result.derived) else None
        return report

    def _persist(self, agent_id: str, base: Sequence[Triple], result: ForwardResult,
                 report: ForwardReport) -> dict[tuple[str, str, str], str]:  # fmt: skip
        """Write the derived facts level by level; retract stale ones when the closure is complete."""
        derivations = result.derived
        scope = agent_scope(agent_id)
        uids: dict[tuple[str, str, str], str] = {t.key: t.uid for t in base if t.uid}
        # a derivation's supports come earlier in the list (or are asserted): write level by level
        level: dict[tuple[str, str, str], int] = {}
        for d in derivations:
            level[d.triple.key] = 1 + max((level.get(k, 0) for k in d.support), default=0)
        by_level: dict[int, list[int]] = {}
        for index, d in enumerate(derivations):
            by_level.setdefault(level[d.triple.key], []).append(index)
        for depth in sorted(by_level):
            batch = [derivations[i] for i in by_level[depth]]
            inputs = [
                {"subject": d.triple.subject, "predicate": d.triple.predicate, "object": d.triple.object,
                 "confidence": d.triple.confidence, "source": INFERENCE_SOURCE, "scope": scope, "rule_id": d.rule_id,
                 "derived_from": [uids[k] for k in d.support if k in uids]}
                for d in batch
            ]  # fmt: skip
            written = self.facts.assert_many(agent_id, inputs, keep_uids=True)
            report.created += written.created
            report.updated += written.updated
            report.unchanged += written.unchanged
            for d, uid in zip(batch, written.uids, strict=True):
                uids[d.triple.key] = uid
        if not result.fixpoint:
            report.note = f"{report.note} Nothing was retracted: truth maintenance needs the complete closure."
            return uids
        closure = {d.triple.key for d in derivations}
        candidates = [
            t.uid
            for t in self.store.facts.live_triples(scopes=[scope], valid_at=self.clock.now(), derived=True)
            if (t.subject, t.predicate, t.object) not in closure
        ]
        # only what forward chaining wrote: other derived facts (OWL-RL's, a caller's own) are not ours to retract
        found = self.store.facts.get_many(candidates)
        stale = [uid for uid in candidates if uid in found and found[uid].source == INFERENCE_SOURCE]
        if stale:
            report.retracted = self.facts.retract(agent_id, uids=stale, scope=scope)
        return uids

    # ------------------------------------------------------------------ other methods

    def backward(self, agent_id: str, subject: str | BackwardRequest, predicate: str | None = None,
                 obj: str | None = None, *, max_depth: int | None = None) -> ProofResult:  # fmt: skip
        """Prove a goal (a request, or its subject, predicate, object; ``?variables`` allowed) from the asserted
        facts and the rules, at most ``max_depth`` rules deep and in at most :data:`~reasoning.rules.MAX_PROOF_STEPS`
        steps (``complete`` false and a note past them)."""
        given = requested(BackwardRequest, subject, {"predicate": predicate, "object": obj, "max_depth": max_depth},
                          first="subject")  # fmt: skip
        goal = _goal(given.subject, given.predicate, given.object)
        return prove(goal, self.base_facts(agent_id), self.rules(agent_id, RuleType.INFERENCE),
                     max_depth=given.max_depth, max_steps=MAX_PROOF_STEPS)  # fmt: skip

    def abduce(self, agent_id: str, subject: str | AbduceRequest, predicate: str | None = None,
               obj: str | None = None, *, limit: int | None = None) -> list[Hypothesis]:  # fmt: skip
        """Hypotheses that would explain the observation (a request, or its subject, predicate, object), best
        first, at most ``limit``."""
        given = requested(AbduceRequest, subject, {"predicate": predicate, "object": obj, "limit": limit},
                          first="subject")  # fmt: skip
        observation = _goal(given.subject, given.predicate, given.object)
        return abduce(observation, self.base_facts(agent_id), self.rules(agent_id, RuleType.INFERENCE))[: given.limit]

    def _all_facts(self, agent_id: str) -> tuple[list[Triple], ClosureStatus]:
        base, result = self.closure(agent_id)
        return [*base, *(d.triple for d in result.derived)], self.closure_status(result)

    def constraints(self, agent_id: str) -> list[Violation]:
        """Violations of the enabled constraints by the asserted facts and their closure."""
        return self.constraint_report(agent_id)[0]

    def constraint_report(self, agent_id: str) -> tuple[list[Violation], ClosureStatus]:
        """:meth:`constraints` (at most :data:`MAX_RESULTS`, within ``max_join``), and how complete the closure
        they were checked on is; its note also says when the check itself was cut."""
        facts, closure = self._all_facts(agent_id)
        found, stopped = constraint_violations(facts, self.rules(agent_id, RuleType.CONSTRAINT),
                                               max_join=self.limits.max_join, max_results=MAX_RESULTS)  # fmt: skip
        return found, _with_check(closure, stopped, self.limits, len(found))

    def policies(
        self, agent_id: str, context: Mapping[str, str] | PolicyEvalRequest | None = None
    ) -> list[PolicyFiring]:
        """Policies that fire on the facts (and closure) plus ``context`` (triples ``context KEY VALUE``)."""
        return self.policy_report(agent_id, context)[0]

    def policy_report(
        self, agent_id: str, context: Mapping[str, str] | PolicyEvalRequest | None = None
    ) -> tuple[list[PolicyFiring], ClosureStatus]:
        """:meth:`policies` (a request, or the context; bounded as :meth:`constraint_report`), and how complete
        their closure is."""
        given = requested(PolicyEvalRequest, context, {}, first="context")
        facts, closure = self._all_facts(agent_id)
        fired, stopped = policy_firings(facts, self.rules(agent_id, RuleType.POLICY), dict(given.context),
                                        max_join=self.limits.max_join, max_results=MAX_RESULTS)  # fmt: skip
        return fired, _with_check(closure, stopped, self.limits, len(fired))

    def explain(self, agent_id: str, subject: str, predicate: str, obj: str) -> dict[str, Any]:
        """The derivation tree of a triple: an asserted fact, or derived with its rules, supports, confidences."""
        base, result = self.closure(agent_id)
        key = (subject, predicate, obj)
        if not any(t.key == key for t in base) and not any(d.triple.key == key for d in result.derived):
            cut = "" if result.fixpoint else f" within the bounds ({self.closure_status(result).note})"
            raise NotFoundError(f"fact: ({subject}, {predicate}, {obj}) is neither asserted nor derivable "
                                f"for {agent_id!r}{cut}")  # fmt: skip
        return explain(key, base, result)

    def knowledge_explain(self, agent_id: str, question: str | KnowledgeRequest, *,
                          limit: int | None = None) -> KnowledgeAnswer:  # fmt: skip
        """Answer a question (a request, or its text) with every method: direct facts, forward closure, backward
        proof, abduction; at most ``limit`` findings (:mod:`reasoning.knowledge`)."""
        given = requested(KnowledgeRequest, question, {"limit": limit}, first="question")
        if not given.question.strip():
            raise InputError("question", "must not be empty")
        base, result = self.closure(agent_id)
        return answer(agent_id, given.question, limit=given.limit, base=base, result=result,
                      rules=self.rules(agent_id, RuleType.INFERENCE), closure=self.closure_status(result))  # fmt: skip


def _with_check(closure: ClosureStatus, stopped: str | None, limits: ChainLimits, found: int) -> ClosureStatus:
    """The closure's status, its note extended when the check run on it was cut too (``checked`` false)."""
    if stopped is None:
        return closure
    return closure.model_copy(update={"checked": False, "note": joined(closure.note, check_note(stopped, limits,
                                                                                                 found))})  # fmt: skip


def _goal(subject: str, predicate: str, obj: str) -> tuple[str, str, str]:
    for name, value in (("subject", subject), ("predicate", predicate), ("object", obj)):
        if not value.strip():
            raise InputError(name, "must not be empty")
    return (subject, predicate, obj)


__all__ = [
    "DEFAULT_LIMITS",
    "INFERENCE_SOURCE",
    "MAX_DEPTH",
    "MAX_ITERATIONS",
    "MAX_PAGE",
    "PAGE",
    "ClosureStatus",
    "Derived",
    "ForwardReport",
    "KnowledgeAnswer",
    "MethodFinding",
    "Reasoner",
    "RuleService",
    "as_data",
]  # fmt: skip
