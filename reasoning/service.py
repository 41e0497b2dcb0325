"""Rules and inference over a workspace's facts: the services behind ``mabos rule|infer|constraint|policy``.

:class:`RuleService` creates, lists, toggles, deletes, imports and exports rules (scope-checked, validated
by :class:`~kg.models.Rule` and :func:`reasoning.rules.check_rule` before anything is written).
:class:`Reasoner` runs the engine of :mod:`reasoning.rules` over the facts an agent can read:

- **forward**: the closure of the *asserted* live facts under the enabled inference rules. With
  ``persist`` the derived facts are written to the agent's scope (source ``inference``, ``rule_id``,
  ``derived_from`` = the supporting facts) and earlier derived facts that no longer follow are retracted -
  truth maintenance: retracting a supporting fact retracts what was derived only from it on the next run.
  Re-running adds nothing new.
- **backward** / **abduce**: goal-directed proof with knowledge gaps; hypotheses for an observation.
- **constraints** / **policies**: checked against the asserted facts plus their closure.
- **explain**: the derivation tree of a triple (asserted, persisted or only derivable).
- **knowledge_explain**: a question answered by direct facts, the forward closure, backward proofs and
  abduction, saying which method found what.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Literal

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.facts import FactService
from kg.ids import new_id
from kg.models import Model, Rule, RuleType, agent_scope, parse
from kg.ports import GraphStore
from kg.recall.stopwords import STOPWORDS
from kg.scopes import ScopePolicy
from reasoning.rules import (
    Derivation,
    ForwardResult,
    Hypothesis,
    PolicyFiring,
    ProofResult,
    Triple,
    Violation,
    abduce,
    check_constraints,
    check_rule,
    dump_rules,
    evaluate_policies,
    explain,
    forward_chain,
    load_rules,
    prove,
)

#: The source of facts written by forward chaining (and the mark truth maintenance looks for).
INFERENCE_SOURCE = "inference"
MAX_ITERATIONS = 100
MAX_DEPTH = 10
_WORD = re.compile(r"[\w:.-]+", re.UNICODE)


class RuleService:
    """Rules of the agents, scope-checked."""

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock) -> None:
        self.store = store
        self.scopes = scopes
        self.clock = clock

    def _build(self, agent_id: str, data: Mapping[str, Any]) -> Rule:
        self.scopes.require_agent(agent_id)
        fields = {k: v for k, v in data.items() if v is not None}
        for own in ("uid", "agent_id", "created_at"):
            if own in fields and own != "uid":
                raise InputError(own, "is set by mabos, not by the caller")
        rule = parse(Rule, {"uid": fields.pop("uid", None) or new_id("rule"), "agent_id": agent_id,
                            "created_at": self.clock.now(), **fields})  # fmt: skip
        check_rule(rule)
        self.scopes.check_write(agent_id, rule.scope)
        return rule

    def create(self, agent_id: str, **fields: Any) -> Rule:
        """Validate and store one rule; InputError naming the field if it is refused (nothing is stored)."""
        rule = self._build(agent_id, fields)
        if self.store.rules.get_many([rule.uid]):
            raise InputError("uid", f"a rule {rule.uid!r} already exists")
        return self.store.rules.put(rule, now=self.clock.now())

    def import_file(self, agent_id: str, path: Path) -> list[Rule]:
        """Every rule of a JSON or YAML file, all validated before any is stored.

        The file may come from :meth:`export` (of any agent or workspace): each rule gets a new uid, the
        importing agent as owner and the time of import; its scope is kept unless it is another agent's
        private scope (then it becomes the importer's).
        """
        rules = []
        own = agent_scope(agent_id)
        for index, raw in enumerate(load_rules(path)):
            data = {k: v for k, v in raw.items() if k not in ("uid", "agent_id", "created_at")}
            if str(data.get("scope", "")).startswith("agent:") and data["scope"] != own:
                data.pop("scope")
            try:
                rules.append(self._build(agent_id, data))
            except InputError as exc:
                raise InputError(f"rules[{index}].{exc.field}", exc.rule) from None
        return [self.store.rules.put(rule, now=self.clock.now()) for rule in rules]

    def list(self, agent_id: str, *, type: str | None = None, enabled: bool | None = None,
             domain: str | None = None) -> list[Rule]:  # fmt: skip
        """Rules the agent can read, oldest first."""
        kind = _rule_type(type) if type is not None else None
        return self.store.rules.list(scopes=self.scopes.readable(agent_id), type=kind, enabled=enabled, domain=domain)

    def get(self, agent_id: str, uid: str) -> Rule:
        """One rule the agent can read."""
        rule = self.store.rules.get_many([uid]).get(uid)
        if rule is None or rule.scope not in self.scopes.readable(agent_id):
            raise NotFoundError(f"rule: no rule {uid!r} visible to {agent_id!r}")
        return rule

    def toggle(self, agent_id: str, uid: str, *, enabled: bool | None = None) -> Rule:
        """Enable or disable a rule (flip it when ``enabled`` is not given)."""
        rule = self.get(agent_id, uid)
        self.scopes.check_write(agent_id, rule.scope)
        state = (not rule.enabled) if enabled is None else enabled
        return self.store.rules.put(rule.model_copy(update={"enabled": state}), now=self.clock.now(), by=agent_id)

    def delete(self, agent_id: str, uid: str) -> str:
        """Delete a rule the agent can write."""
        rule = self.get(agent_id, uid)
        self.scopes.check_write(agent_id, rule.scope)
        self.store.rules.delete([uid], by=agent_id)
        return uid

    def export(self, agent_id: str, fmt: Literal["json", "yaml"] = "json") -> str:
        """The agent's readable rules as a JSON or YAML document that :meth:`import_file` reads back."""
        if fmt not in ("json", "yaml"):
            raise InputError("format", f"must be json or yaml, got {fmt!r}")
        return dump_rules(self.list(agent_id), fmt)


def _rule_type(value: str) -> RuleType:
    try:
        return RuleType(value)
    except ValueError:
        raise InputError("type", f"must be inference, constraint or policy, got {value!r}") from None


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
    """What ``infer forward`` did."""

    agent_id: str
    facts: int
    rules: int
    derived: list[Derived]
    iterations: int
    fixpoint: bool
    fired: dict[str, int]
    persisted: bool
    created: int = 0
    updated: int = 0  # stored before with another confidence or support
    unchanged: int = 0
    retracted: list[str] = []


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


class Reasoner:
    """The rule engine over the facts and rules an agent can read."""

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock, facts: FactService) -> None:
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.facts = facts

    # ------------------------------------------------------------------ inputs

    def base_facts(self, agent_id: str) -> list[Triple]:
        """The asserted live facts the agent can read, valid now."""
        rows = self.store.facts.live_triples(scopes=self.scopes.readable(agent_id), valid_at=self.clock.now(),
                                             derived=False)  # fmt: skip
        return [Triple(r.subject, r.predicate, r.object, r.confidence, r.uid) for r in rows]

    def rules(self, agent_id: str, kind: RuleType) -> list[Rule]:
        """Enabled rules of one kind the agent can read."""
        return self.store.rules.list(scopes=self.scopes.readable(agent_id), type=kind, enabled=True)

    def closure(self, agent_id: str, *, max_iterations: int = MAX_ITERATIONS) -> tuple[list[Triple], ForwardResult]:
        """The asserted facts and the result of forward chaining over them."""
        base = self.base_facts(agent_id)
        return base, forward_chain(base, self.rules(agent_id, RuleType.INFERENCE), max_iterations=max_iterations)

    # ------------------------------------------------------------------ forward

    def forward(self, agent_id: str, *, persist: bool = False, max_iterations: int = 10) -> ForwardReport:
        """Forward chaining to a fixpoint (or ``max_iterations``); with ``persist``, write and maintain."""
        if not 1 <= max_iterations <= MAX_ITERATIONS:
            raise InputError("max_iterations", f"must be between 1 and {MAX_ITERATIONS}")
        if persist:
            self.scopes.check_write(agent_id, agent_scope(agent_id))
        rules = self.rules(agent_id, RuleType.INFERENCE)
        names = {r.uid: r.name for r in rules}
        base = self.base_facts(agent_id)
        result = forward_chain(base, rules, max_iterations=max_iterations)
        derived = [
            Derived(subject=d.triple.subject, predicate=d.triple.predicate, object=d.triple.object,
                    confidence=d.triple.confidence, rule_id=d.rule_id, rule_name=names.get(d.rule_id, d.rule_id),
                    support=[list(k) for k in d.support])
            for d in result.derived
        ]  # fmt: skip
        report = ForwardReport(agent_id=agent_id, facts=len(base), rules=len(rules), derived=derived,
                               iterations=result.iterations, fixpoint=result.fixpoint, fired=dict(result.fired),
                               persisted=persist)  # fmt: skip
        if persist:
            self._persist(agent_id, base, result.derived, report)
        return report

    def _persist(self, agent_id: str, base: Sequence[Triple], derivations: Sequence[Derivation],
                 report: ForwardReport) -> None:  # fmt: skip
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
        for index, d in enumerate(derivations):
            report.derived[index].uid = uids.get(d.triple.key)
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

    # ------------------------------------------------------------------ other methods

    def backward(self, agent_id: str, subject: str, predicate: str, obj: str, *, max_depth: int = 5) -> ProofResult:
        """Prove ``(subject, predicate, obj)`` (``?variables`` allowed) from the asserted facts and the rules."""
        if not 1 <= max_depth <= MAX_DEPTH:
            raise InputError("max_depth", f"must be between 1 and {MAX_DEPTH}")
        goal = _goal(subject, predicate, obj)
        return prove(goal, self.base_facts(agent_id), self.rules(agent_id, RuleType.INFERENCE), max_depth=max_depth)

    def abduce(self, agent_id: str, subject: str, predicate: str, obj: str) -> list[Hypothesis]:
        """Hypotheses that would explain the observation, best first."""
        observation = _goal(subject, predicate, obj)
        return abduce(observation, self.base_facts(agent_id), self.rules(agent_id, RuleType.INFERENCE))

    def _all_facts(self, agent_id: str) -> list[Triple]:
        base, result = self.closure(agent_id)
        return [*base, *(d.triple for d in result.derived)]

    def constraints(self, agent_id: str) -> list[Violation]:
        """Violations of the enabled constraints by the asserted facts and their closure."""
        return check_constraints(self._all_facts(agent_id), self.rules(agent_id, RuleType.CONSTRAINT))

    def policies(self, agent_id: str, context: Mapping[str, str] | None = None) -> list[PolicyFiring]:
        """Policies that fire on the facts (and closure) plus ``context`` (triples ``context KEY VALUE``)."""
        return evaluate_policies(self._all_facts(agent_id), self.rules(agent_id, RuleType.POLICY), dict(context or {}))

    def explain(self, agent_id: str, subject: str, predicate: str, obj: str) -> dict[str, Any]:
        """The derivation tree of a triple: an asserted fact, or derived with its rules, supports, confidences."""
        base, result = self.closure(agent_id)
        key = (subject, predicate, obj)
        if not any(t.key == key for t in base) and not any(d.triple.key == key for d in result.derived):
            raise NotFoundError(f"fact: ({subject}, {predicate}, {obj}) is neither asserted nor derivable "
                                f"for {agent_id!r}")  # fmt: skip
        return explain(key, base, result)

    def knowledge_explain(self, agent_id: str, question: str, *, limit: int = 20) -> KnowledgeAnswer:
        """Answer a question with every method: direct facts, forward closure, backward proof, abduction."""
        if not question.strip():
            raise InputError("question", "must not be empty")
        base, result = self.closure(agent_id)
        rules = self.rules(agent_id, RuleType.INFERENCE)
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
        for goal in _goals(rules, wanted, unknown):
            proof = prove(goal, base, rules, max_depth=5)
            if proof.proved:
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
        methods = {m: sum(1 for f in findings if f.method == m) for m in ("direct", "forward", "backward", "abduction")}
        return KnowledgeAnswer(agent_id=agent_id, question=question, terms=terms, findings=findings, methods=methods)


def _goal(subject: str, predicate: str, obj: str) -> tuple[str, str, str]:
    for name, value in (("subject", subject), ("predicate", predicate), ("object", obj)):
        if not value.strip():
            raise InputError(name, "must not be empty")
    return (subject, predicate, obj)


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


__all__ = [
    "INFERENCE_SOURCE",
    "Derived",
    "ForwardReport",
    "KnowledgeAnswer",
    "MethodFinding",
    "Reasoner",
    "RuleService",
    "as_data",
]  # fmt: skip
