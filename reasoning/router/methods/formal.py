"""Engines of the formal methods: deductive, inductive, abductive, analogical, modal, deontic, temporal.

Deductive, abductive and inductive work over the agent's asserted facts and enabled inference rules (what
its scopes allow), or over ``"facts": ["S P O", ..]`` and ``"rules": [rule objects]`` given in the inputs:

- deductive ``{"goal": "S P O"}`` -> a backward proof (``value.proved``, ``value.gaps``, ``value.proof``),
  confidence = the proof's confidence (1 for "not proved": it is certain that it does not follow); without a
  goal, the forward closure (``value.derived``);
- abductive ``{"observation": "S P O"}`` -> hypotheses (rules that conclude it), best first, scored by how much
  of their premise holds (confidence = the best score);
- inductive ``{"min_support": 0.2, "min_confidence": 0.8, "max_rules": 20, "propose": false}`` -> rules
  ``?x p a [and ?x q b] => ?x r c`` mined from the facts as transactions per subject (Apriori, via
  efficient-apriori), with support, confidence and lift; ``propose: true`` stores them **disabled** in the
  agent's own scope for review (``mabos rule toggle`` enables one).

Analogical and modal are in :mod:`.structure`, deontic and temporal in :mod:`.norms_time`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Annotated, Any

from pydantic import Field

from kg.errors import InputError
from kg.models import Model, Rule, agent_scope
from reasoning.bounds import DEFAULT_LIMITS, lowered
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail
from reasoning.router.methods.closure import MAX_PROOF_NODES, close, decide
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import parse_inputs
from reasoning.router.methods.mining import affordable_length
from reasoning.router.methods.modal import modal
from reasoning.router.methods.norms_time import deontic, temporal
from reasoning.router.methods.premises import knowledge, triple
from reasoning.router.methods.structure import analogical
from reasoning.rules.abduction import abduce
from reasoning.rules.results import ChainLimits, Triple
from reasoning.service import RuleService

MAX_FACTS = 100_000  # facts given in the inputs or read from the graph
MAX_RULES = 1_000
MAX_ITEMSET_WORK = 100_000  # itemsets and rules Apriori may count and build (see .mining)
MAX_ITEMSET_LENGTH = 3


_Fact = Annotated[str, Field(min_length=5, max_length=2_048)] | Annotated[list[str], Field(min_length=3, max_length=3)]


class RulesInput(Model):
    """Facts (``"S P O"``) and inference rules (rule objects as ``mabos rule add`` takes them); without both, the
    agent's asserted facts and enabled inference rules."""

    facts: list[_Fact] | None = Field(default=None, max_length=MAX_FACTS)
    rules: list[dict[str, Any]] | None = Field(default=None, max_length=MAX_RULES)


class DeductiveInput(RulesInput):
    """``inputs.deductive``: a goal ``"S P O"`` (``?x`` terms are variables); without it, the closure."""

    goal: _Fact | None = None
    max_derived: Annotated[int, Field(ge=1)] | None = Field(default=None, description="lower the closure's bound")
    max_join: Annotated[int, Field(ge=1)] | None = Field(default=None, description="lower the closure's bound")


class AbductiveInput(RulesInput):
    """``inputs.abductive``: the observation to explain."""

    observation: _Fact


class InductiveInput(RulesInput):
    """``inputs.inductive``: association-rule thresholds, and whether to store the rules (disabled) for review."""

    min_support: Annotated[float, Field(gt=0, le=1)] = 0.2
    min_confidence: Annotated[float, Field(gt=0, le=1)] = 0.8
    max_rules: Annotated[int, Field(gt=0, le=1000)] = 20
    propose: bool = False


def _knowledge(ctx: MethodContext, method: str, inputs: dict[str, Any], *, need_rules: bool) -> tuple[
        list[Triple], list[Rule], bool]:  # fmt: skip
    """Facts and rules (inputs, else the agent's graph), refused past the bounds; MissingInputs when empty."""
    models: dict[str, type[RulesInput]] = {"deductive": DeductiveInput, "abductive": AbductiveInput,
                                           "inductive": InductiveInput}  # fmt: skip
    model = models[method]
    parse_inputs(model, inputs, method)
    if isinstance(inputs.get("facts"), list) and len(inputs["facts"]) > MAX_FACTS:
        raise fail(method, "facts", f"at most {MAX_FACTS} facts (MAX_FACTS), got {len(inputs['facts'])}")
    if isinstance(inputs.get("rules"), list) and len(inputs["rules"]) > MAX_RULES:
        raise fail(method, "rules", f"at most {MAX_RULES} rules (MAX_RULES), got {len(inputs['rules'])}")
    base, rules, records = knowledge(ctx, method, inputs)
    if not base and not rules:
        raise MissingInputs(method, f"no facts and no rules to reason from: give inputs.{method}.facts and rules, "
                                    "or assert facts and add inference rules")  # fmt: skip
    if need_rules and not rules:
        raise MissingInputs(method, f"no inference rules: nothing follows from {len(base)} facts alone; give "
                                    f"inputs.{method}.rules or add inference rules")  # fmt: skip
    if len(base) > MAX_FACTS or len(rules) > MAX_RULES:
        raise fail(method, "facts", f"the graph holds more than {MAX_FACTS} facts or {MAX_RULES} rules (MAX_FACTS, "
                   "MAX_RULES): give the relevant facts and rules in the inputs")  # fmt: skip
    return base, rules, records


def _limits(ctx: MethodContext, inputs: dict[str, Any], records: bool) -> ChainLimits:
    """The closure's bounds: the workspace's (graph) or the defaults, lowered by ``max_derived``/``max_join``."""
    ceiling = ctx.reasoner().limits if records else DEFAULT_LIMITS
    try:
        return lowered(ceiling, inputs.get("max_derived"), inputs.get("max_join"))
    except InputError as exc:
        raise fail("deductive", exc.field, exc.rule) from None


def deductive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``deductive``: the goal decided on the bounded forward closure, or the closure itself."""
    base, rules, records = _knowledge(ctx, "deductive", inputs, need_rules="goal" not in inputs)
    every = [t.uid for t in base if t.uid] + ([r.uid for r in rules] if records else [])
    limits = _limits(ctx, inputs, records)
    if "goal" not in inputs:
        found = close(base, rules, limits)
        derived = [" ".join(k) for k in found.derived]
        cut = found.note()
        how = "forward chaining to a fixpoint" if cut is None else "forward chaining, cut before the fixpoint"
        text = f"{len(derived)} fact(s) follow from {len(base)} facts and {len(rules)} rules"
        return computed("deductive", text + ("" if cut is None else " (at least: the closure was cut)"), 1.0,
                        {"derived": derived[:500], "iterations": found.result.iterations, "fixpoint": cut is None},
                        trace=[how, *derived[:20]], used=every, partial=cut)  # fmt: skip
    goal = triple(inputs["goal"], "deductive", "goal")
    text = " ".join(goal)
    found_goal = decide(goal, base, rules, limits)
    value = {"status": found_goal["status"], "proved": found_goal["status"] == "proved",
             "answers": found_goal["answers"], "gaps": found_goal["gaps"], "proof": found_goal["proof"]}  # fmt: skip
    trace = [f"forward closure of {len(base)} facts under {len(rules)} rules: {found_goal['derived']} derived"]
    if value["proved"]:
        trace.append(f"{text} is in the closure; proof rebuilt from the derivations")
        return computed("deductive", f"{text}: proved", found_goal["confidence"], value, trace=trace,
                        used=found_goal["uses"] if records else [])  # fmt: skip
    trace.append(f"{text} is not in the closure; missing: {'; '.join(value['gaps'][:5])}")
    return computed("deductive", f"{text}: unknown (not provable from the facts and rules; missing "
                    f"{'; '.join(value['gaps'][:3])})", 0.0, value, trace=trace,
                    notes=["not provable is not false: the goal holds or not in ways the facts and rules do not say"],
                    partial=found_goal["partial"])  # fmt: skip


def abductive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``abductive``."""
    if "observation" not in inputs:
        raise MissingInputs("abductive", "give inputs.abductive.observation ('S P O')")
    base, rules, records = _knowledge(ctx, "abductive", inputs, need_rules=True)
    observation = triple(inputs["observation"], "abductive", "observation")
    found = abduce(observation, base, rules)
    rows = [{"rule": h.rule_id, "name": h.name, "score": h.score, "bindings": h.bindings,
             "supported": [" ".join(t.key) for t in h.supported], "missing": [str(p) for p in h.missing]}
            for h in found[:20]]  # fmt: skip
    used = [x for h in found[:20] for x in (h.rule_id, *(t.uid for t in h.supported if t.uid))] if records else []
    text = " ".join(observation)
    if not found:
        return computed("abductive", f"no rule explains {text}", 0.0, {"hypotheses": []},
                        trace=[f"none of the {len(rules)} rule(s) concludes the observation"])  # fmt: skip
    best = found[0]
    missing = "; ".join(str(p) for p in best.missing) or "nothing: its premise holds"
    return computed("abductive", f"best explanation of {text}: rule {best.name} (missing {missing})", best.score,
                    {"hypotheses": rows}, trace=[f"{len(found)} rule(s) conclude {text}",
                    *(f"{r['name']}: score {r['score']:.3f}" for r in rows[:5])], used=used)  # fmt: skip


def _transactions(base: list[Triple]) -> tuple[list[tuple[str, ...]], dict[str, list[str]]]:
    items: dict[str, set[str]] = defaultdict(set)
    uids: dict[str, list[str]] = defaultdict(list)
    for t in base:
        item = f"{t.predicate}={t.object}"
        items[t.subject].add(item)
        if t.uid:
            uids[item].append(t.uid)
    return [tuple(sorted(v)) for _, v in sorted(items.items())], uids


def _condition(item: str) -> dict[str, str]:
    predicate, _, obj = item.partition("=")
    return {"subject": "?x", "predicate": predicate, "object": obj}


def inductive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``inductive``: association rules over the facts, per subject."""
    base, _, records = _knowledge(ctx, "inductive", inputs, need_rules=False)
    settings = {"min_support": 0.2, "min_confidence": 0.8, "max_rules": 20}
    for key, default in settings.items():
        value = inputs.get(key, default)
        limit = 1000 if key == "max_rules" else 1
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= limit:
            raise fail("inductive", key, f"must be a number in (0, {limit}]")
        settings[key] = value
    transactions, uids = _transactions(base)
    if len(transactions) < 2:
        raise MissingInputs("inductive", "needs facts about at least two subjects")
    length = affordable_length(
        transactions,
        MAX_ITEMSET_LENGTH,
        MAX_ITEMSET_WORK,
        max(1, math.ceil(settings["min_support"] * len(transactions))),
    )
    cut = None
    if length < MAX_ITEMSET_LENGTH:
        cut = (f"itemsets searched up to length {length}, not {MAX_ITEMSET_LENGTH}: longer ones would count more than "
               f"{MAX_ITEMSET_WORK} units of itemset and rule work (MAX_ITEMSET_WORK)")  # fmt: skip
    from efficient_apriori import apriori  # noqa: PLC0415 - it imports importlib.metadata: only when mining

    _, mined = apriori(transactions, min_support=settings["min_support"], min_confidence=settings["min_confidence"],
                       max_length=length)  # fmt: skip
    kept = sorted((r for r in mined if len(r.rhs) == 1), key=lambda r: (-r.confidence, -r.support, r.lhs, r.rhs))
    kept = kept[: int(settings["max_rules"])]
    rows = [{"if": list(r.lhs), "then": r.rhs[0], "support": r.support, "confidence": r.confidence, "lift": r.lift,
             "rule": {"name": f"induced: {' & '.join(r.lhs)} => {r.rhs[0]}"[:256], "enabled": False,
                      "conditions": [_condition(i) for i in r.lhs], "conclusion": _condition(r.rhs[0]),
                      "confidence_factor": round(r.confidence, 6)}} for r in kept]  # fmt: skip
    used = sorted({u for r in kept for item in (*r.lhs, *r.rhs) for u in uids.get(item, [])}) if records else []
    notes = []
    if inputs.get("propose") is True and rows:
        if ctx.workspace is None:
            raise fail("inductive", "propose", "needs an agent workspace to store the proposed rules")
        service = RuleService(ctx.workspace.ports, ctx.workspace.scopes, ctx.workspace.clock)
        stored = [service.create(ctx.agent_id, scope=agent_scope(ctx.agent_id), **row["rule"]) for row in rows]
        for row, rule in zip(rows, stored, strict=True):
            row["uid"] = rule.uid
        notes.append(f"stored {len(stored)} rule(s) disabled in {agent_scope(ctx.agent_id)} for review")
    value = {"rules": rows, "subjects": len(transactions), "settings": settings}
    if not rows:
        return computed("inductive", "no generalisation reaches the support and confidence thresholds", 0.0, value,
                        trace=[f"{len(transactions)} subjects as transactions", "Apriori found no rule"],
                        used=used, notes=notes, partial=cut)  # fmt: skip
    top = rows[0]
    return computed("inductive", f"{' and '.join(top['if'])} => {top['then']} (support {top['support']:.2f}, "
                    f"confidence {top['confidence']:.2f})", top["confidence"], value,
                    trace=[f"{len(transactions)} subjects as transactions of predicate=object items",
                           f"Apriori: {len(rows)} rule(s) with support >= {settings['min_support']} and confidence "
                           f">= {settings['min_confidence']}"], used=used, notes=notes, partial=cut)  # fmt: skip


_RULE = {
    "name": "mortal",
    "conditions": [{"subject": "?x", "predicate": "is", "object": "man"}],
    "conclusion": {"subject": "?x", "predicate": "is", "object": "mortal"},
}
_CLOSURE_BOUND = (f"Facts and rules: at most {MAX_FACTS} facts and {MAX_RULES} rules (MAX_FACTS, MAX_RULES; more: a "
                  f"one-line error). The forward closure runs at most {DEFAULT_LIMITS.max_derived} derived facts and "
                  f"{DEFAULT_LIMITS.max_join} examined candidates (reasoning.bounds.DEFAULT_LIMITS; the workspace's "
                  "[reasoning] section may lower them)")  # fmt: skip

DOCS = {
    "deductive": MethodDoc(
        confidence="With a goal: the certainty of the goal, the confidence of its best derivation (the least fact "
        "confidence along it times the rules' certainty factors); 0 when the goal is unknown (not "
        "provable from the facts and rules: that is unknown, not false). Without a goal: 1.0 for a "
        "complete closure (what follows, follows), at most 0.8 when a bound cut it.",
        bound=f"{_CLOSURE_BOUND}; the goal is decided on that closure, not by backward search (which grows "
        f"exponentially with depth). A cut closure: the derived facts hold but more may follow, and an "
        f"unproved goal is marked partial. Proof trees are rebuilt with at most {MAX_PROOF_NODES} nodes.",
        inputs=DeductiveInput,
        example={"facts": ["socrates is man"], "rules": [_RULE], "goal": "socrates is mortal"},
        graph="the agent's asserted facts and enabled inference rules (readable scopes); no rules and no goal, or "
        "no facts and no rules: not computed (a template is returned)",
    ),
    "inductive": MethodDoc(
        confidence="The confidence of the strongest association rule found: the share of subjects with its "
        "conditions that also have its conclusion (P(then | if) in the facts); 0 when none reaches the "
        "thresholds. An induced rule is a generalisation, not a proof.",
        bound=f"At most {MAX_FACTS} facts (MAX_FACTS). Apriori counts itemsets up to length {MAX_ITEMSET_LENGTH}; "
        f"when the transactions would take more than {MAX_ITEMSET_WORK} units of itemset and rule work "
        "(MAX_ITEMSET_WORK, C(size, k) x (1 + 2^k / min count) summed) the length is lowered until they fit, and the "
        "result is marked partial.",
        inputs=InductiveInput,
        example={
            "facts": [
                "acme hasIndustry saas",
                "acme billing monthly",
                "globex hasIndustry saas",
                "globex billing monthly",
                "initech hasIndustry pharma",
            ],
            "min_support": 0.4,
        },
        graph="the agent's asserted facts, one transaction of predicate=object items per subject",
    ),
    "abductive": MethodDoc(
        confidence="The best hypothesis's score: the share of its rule's conditions that the facts already "
        "satisfy (1 when only the observation's own cause is missing, lower when more must be assumed); "
        "0 when no rule concludes the observation.",
        bound=f"{_CLOSURE_BOUND.split('. The', maxsplit=1)[0]}. Every rule concluding the observation is matched "
        "once against the facts (linear in rules x facts); the 20 best hypotheses are returned.",
        inputs=AbductiveInput,
        example={
            "facts": ["sprinkler is on"],
            "observation": "grass is wet",
            "rules": [
                {
                    "name": "sprinkler",
                    "conditions": [
                        {"subject": "?x", "predicate": "exposedTo", "object": "sprinkler"},
                        {"subject": "sprinkler", "predicate": "is", "object": "on"},
                    ],
                    "conclusion": {"subject": "?x", "predicate": "is", "object": "wet"},
                }
            ],
        },
        graph="the agent's asserted facts and enabled inference rules; no rules: not computed",
    ),
}

ENGINES: dict[str, Engine] = {
    "deductive": deductive,
    "inductive": inductive,
    "abductive": abductive,
    "analogical": analogical,
    "modal": modal,
    "deontic": deontic,
    "temporal": temporal,
}

__all__ = [
    "DOCS",
    "ENGINES",
    "AbductiveInput",
    "DeductiveInput",
    "InductiveInput",
    "abductive",
    "deductive",
    "inductive",
]
