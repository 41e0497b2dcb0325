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

from collections import defaultdict
from typing import Any

from efficient_apriori import apriori

from kg.models import agent_scope
from reasoning.bounds import DEFAULT_LIMITS
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail
from reasoning.router.methods.counterfactual import knowledge, triple
from reasoning.router.methods.norms_time import deontic, temporal
from reasoning.router.methods.structure import analogical, modal
from reasoning.rules.abduction import abduce
from reasoning.rules.backward import prove
from reasoning.rules.forward import forward_chain
from reasoning.rules.results import ProofNode, Triple
from reasoning.service import RuleService

MAX_DEPTH = 8


def _walk(node: ProofNode, used: list[str]) -> None:
    if node.uid:
        used.append(node.uid)
    if node.rule_id:
        used.append(node.rule_id)
    for child in node.children:
        _walk(child, used)


def deductive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``deductive``."""
    base, rules, records = knowledge(ctx, "deductive", inputs)
    if "goal" not in inputs:
        result = forward_chain(base, rules, max_iterations=100, limits=DEFAULT_LIMITS)
        derived = [" ".join(d.triple.key) for d in result.derived]
        every = [t.uid for t in base if t.uid] + ([r.uid for r in rules] if records else [])
        return computed("deductive", f"{len(derived)} fact(s) follow from {len(base)} facts and {len(rules)} rules",
                        1.0, {"derived": derived[:500], "iterations": result.iterations, "fixpoint": result.fixpoint},
                        trace=["forward chaining to a fixpoint", *derived[:20]], used=every)  # fmt: skip
    goal = triple(inputs["goal"], "deductive", "goal")
    proof = prove(goal, base, rules, max_depth=MAX_DEPTH)
    text = " ".join(goal)
    used: list[str] = []
    if proof.proved:
        best = max(proof.proofs, key=lambda p: p.confidence)
        _walk(best, used)
        if not records:
            used = []
        return computed("deductive", f"{text}: proved", best.confidence,
                        {"proved": True, "gaps": [], "proof": best.to_dict()},
                        trace=[f"backward chaining from {text}", f"{len(proof.proofs)} proof(s); best confidence "
                               f"{best.confidence:g}"], used=used)  # fmt: skip
    gaps = [str(g) for g in proof.gaps]
    return computed("deductive", f"{text}: not proved", 1.0, {"proved": False, "gaps": gaps, "proof": None},
                    trace=[f"backward chaining from {text}", f"knowledge gaps: {'; '.join(gaps) or 'none'}"],
                    notes=["closed world: what the facts and rules do not give is not proved"])  # fmt: skip


def abductive(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``abductive``."""
    if "observation" not in inputs:
        raise MissingInputs("abductive", "give inputs.abductive.observation ('S P O')")
    observation = triple(inputs["observation"], "abductive", "observation")
    base, rules, records = knowledge(ctx, "abductive", inputs)
    found = abduce(observation, base, rules)
    rows = [{"rule": h.rule_id, "name": h.name, "score": h.score, "bindings": h.bindings,
             "supported": [" ".join(t.key) for t in h.supported], "missing": [str(p) for p in h.missing]}
            for h in found[:20]]  # fmt: skip
    used = [x for h in found[:20] for x in (h.rule_id, *(t.uid for t in h.supported if t.uid))] if records else []
    text = " ".join(observation)
    if not found:
        return computed("abductive", f"no rule explains {text}", 1.0, {"hypotheses": []},
                        trace=["no rule concludes the observation"])  # fmt: skip
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
    base, _, records = knowledge(ctx, "inductive", inputs)
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
    _, mined = apriori(transactions, min_support=settings["min_support"], min_confidence=settings["min_confidence"],
                       max_length=3)  # fmt: skip
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
        service = RuleService(ctx.workspace.store, ctx.workspace.scopes, ctx.workspace.clock)
        stored = [service.create(ctx.agent_id, scope=agent_scope(ctx.agent_id), **row["rule"]) for row in rows]
        for row, rule in zip(rows, stored, strict=True):
            row["uid"] = rule.uid
        notes.append(f"stored {len(stored)} rule(s) disabled in {agent_scope(ctx.agent_id)} for review")
    value = {"rules": rows, "subjects": len(transactions), "settings": settings}
    if not rows:
        return computed("inductive", "no generalisation reaches the support and confidence thresholds", 1.0, value,
                        trace=[f"{len(transactions)} subjects as transactions", "Apriori found no rule"],
                        used=used, notes=notes)  # fmt: skip
    top = rows[0]
    return computed("inductive", f"{' and '.join(top['if'])} => {top['then']} (support {top['support']:.2f}, "
                    f"confidence {top['confidence']:.2f})", top["confidence"], value,
                    trace=[f"{len(transactions)} subjects as transactions of predicate=object items",
                           f"Apriori: {len(rows)} rule(s) with support >= {settings['min_support']} and confidence "
                           f">= {settings['min_confidence']}"], used=used, notes=notes)  # fmt: skip


ENGINES: dict[str, Engine] = {
    "deductive": deductive,
    "inductive": inductive,
    "abductive": abductive,
    "analogical": analogical,
    "modal": modal,
    "deontic": deontic,
    "temporal": temporal,
}

__all__ = ["ENGINES", "abductive", "deductive", "inductive", "knowledge"]
