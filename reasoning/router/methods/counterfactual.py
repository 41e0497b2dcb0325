"""Counterfactual reasoning over facts and rules: what would (no longer) hold if some facts were false.

Inputs ``{"goal": "S P O", "without": ["S P O", ..], "with": ["S P O", ..]}`` over the agent's asserted facts
and enabled inference rules (or, for a self-contained problem, ``"facts": ["S P O", ..]`` and ``"rules":
[rule objects]``). ``without`` is an intervention do(not fact): the fact is removed if asserted and never
re-derived if derivable; ``with`` adds facts (``without`` + ``with`` = a change). Both worlds are closed
under the rules (forward chaining); the value compares them::

    holds_now, holds_without       the goal in the actual and in the counterfactual world
    lost                           derived facts that hold now and would no longer hold
    gained                         derived facts that would newly hold
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg.models import Rule
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.montecarlo import MAX_DEPTH
from reasoning.router.methods.premises import knowledge, triple
from reasoning.router.methods.scm import MAX_WORLDS, SCMInput, counterfactual_scm
from reasoning.rules.forward import forward_chain
from reasoning.rules.results import ChainLimits, Derivation, Key, Triple

METHOD = "counterfactual"
MAX_ROUNDS = 100
LIMITS = ChainLimits(max_derived=100_000, max_join=5_000_000)


def world(base: Sequence[Triple], rules: Sequence[Rule], blocked: set[Key]) -> tuple[dict[Key, Triple],
                                                                                    dict[Key, Derivation],
                                                                                    str | None]:  # fmt: skip
    """The closure of ``base`` minus ``blocked`` under ``rules``, never deriving a blocked triple; and why it was
    cut (None when it reached its fixpoint): :data:`LIMITS` bound the whole closure, :data:`MAX_ROUNDS` its rounds."""
    facts = {t.key: t for t in base if t.key not in blocked}
    result = forward_chain(list(facts.values()), rules, max_iterations=MAX_ROUNDS, limits=LIMITS)
    if not any(d.triple.key in blocked for d in result.derived):
        derived = {d.triple.key: d for d in result.derived}
        return {**facts, **{k: d.triple for k, d in derived.items()}}, derived, _cut(result.stopped_by,
                                                                                       result.fixpoint)  # fmt: skip
    derived = {}
    work, cut = 0, _cut("max_iterations", False)
    for _ in range(MAX_ROUNDS):  # round by round, dropping blocked triples before they feed anything
        step = forward_chain(list(facts.values()), rules, max_iterations=1, limits=LIMITS)
        work += step.join_work
        new = [d for d in step.derived if d.triple.key not in blocked and d.triple.key not in facts]
        if not new:
            cut = None
            break
        for d in new:
            facts[d.triple.key] = d.triple
            derived[d.triple.key] = d
        stopped = step.stopped_by if step.stopped_by != "max_iterations" else None  # one round is asked for
        if stopped is not None or work > (LIMITS.max_join or 0) or len(derived) > (LIMITS.max_derived or 0):
            cut = _cut(stopped or "max_join", False)
            break
    return facts, derived, cut


def _cut(stopped_by: str | None, fixpoint: bool) -> str | None:
    if fixpoint:
        return None
    bounds = {"max_derived": f"{LIMITS.max_derived:,} derived facts (max_derived)",
              "max_join": f"{LIMITS.max_join:,} candidate facts examined (max_join)"}  # fmt: skip
    return f"stopped at {bounds.get(stopped_by or '', f'{MAX_ROUNDS} rounds (MAX_ROUNDS)')}"


def _text(key: Key) -> str:
    return " ".join(key)


def counterfactual(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``counterfactual``: over a probabilistic SCM (``equations``), else over facts and rules."""
    if "equations" in inputs:
        return counterfactual_scm(inputs)
    if "goal" not in inputs or "without" not in inputs:
        raise MissingInputs(METHOD, "give inputs.counterfactual.goal and without")
    goal = triple(inputs["goal"], METHOD, "goal")
    without_raw, with_raw = inputs["without"], inputs.get("with", [])
    if not isinstance(without_raw, list) or not isinstance(with_raw, list):
        raise fail(METHOD, "without", "without and with must be lists of facts")
    without = {triple(f, METHOD, f"without.{i}") for i, f in enumerate(without_raw)}
    added = [Triple(*triple(f, METHOD, f"with.{i}")) for i, f in enumerate(with_raw)]
    base, rules, records = knowledge(ctx, METHOD, inputs)
    actual, actual_derived, cut_now = world(base, rules, set())
    imagined, imagined_derived, cut_then = world([*base, *added], rules, without)
    lost = sorted(_text(k) for k in actual_derived if k not in imagined)
    gained = sorted(_text(k) for k in imagined_derived if k not in actual)
    holds_now, holds_without = goal in actual, goal in imagined
    # a cut closure is sound but incomplete: a goal found holds; a goal not found is unknown, not false
    known_now, known_then = holds_now or cut_now is None, holds_without or cut_then is None
    asserted = {t.key for t in base}
    value = {"goal": _text(goal), "holds_now": holds_now if known_now else None,
             "holds_without": holds_without if known_then else None, "lost": lost, "gained": gained,
             "removed_asserted": sorted(_text(k) for k in without if k in asserted),
             "blocked_derived": sorted(_text(k) for k in without if k in actual_derived)}  # fmt: skip
    by_key = {t.key: t.uid for t in base if t.uid}
    fired = {d.rule_id for d in actual_derived.values()} | {d.rule_id for d in imagined_derived.values()}
    supports = {k for key in actual_derived if _text(key) in lost for k in actual_derived[key].support}
    used = [by_key[k] for k in sorted(without | supports | {goal}) if k in by_key]
    used += sorted(r.uid for r in rules if r.uid in fired) if records else []
    if not (known_now and known_then):
        conclusion = f"unknown whether {_text(goal)} would hold (a forward closure was cut at its bound)"
    elif holds_now and not holds_without:
        conclusion = f"{_text(goal)} would no longer hold"
    elif holds_without and not holds_now:
        conclusion = f"{_text(goal)} would newly hold"
    else:
        conclusion = f"{_text(goal)} would {'still' if holds_now else 'still not'} hold"
    trace = [f"actual world: {len(base)} asserted facts, {len(actual_derived)} derived with {len(rules)} rules",
             f"counterfactual world: without {len(without)}, with {len(added)}: {len(imagined_derived)} derived",
             f"lost {len(lost)}, gained {len(gained)}"]  # fmt: skip
    cuts = [f"the {name} world's closure {why}: it is incomplete (lost and gained are partial)"
            for name, why in (("actual", cut_now), ("counterfactual", cut_then)) if why]  # fmt: skip
    return computed(METHOD, conclusion, 1.0 if known_now and known_then else 0.5, value, trace=trace, used=used,
                    notes=["rules are read as sufficient conditions: what no rule derives does not hold"],
                    partial=" ".join(cuts) or None)  # fmt: skip


DOCS = {
    METHOD: MethodDoc(
        confidence=("Over a structural causal model (equations): max(p, 1 - p) for p = the counterfactual "
                    "probability, exact over the model. Over facts and rules: 1.0 when both closures are complete "
                    "(a proof under the rules read as sufficient conditions); when a closure is cut at its bound the "
                    "goal not found is unknown, not false: the conclusion says so, confidence 0.5, marked partial."),
        bound=(f"Rules: each world's forward closure at most {LIMITS.max_derived:,} derived facts, "
               f"{LIMITS.max_join:,} candidate facts examined and {MAX_ROUNDS} rounds (then partial). Models: at most "
               f"{MAX_WORLDS:,} exogenous worlds, formulas at most {MAX_DEPTH} levels deep (else a one-line error)."),
        inputs=SCMInput,
        example={"exogenous": {"U": {"values": [0, 1], "probabilities": [0.4, 0.6]},
                               "W": {"values": [0, 1], "probabilities": [0.7, 0.3]}},
                 "equations": {"C": "U", "A": "max(C, W)", "B": "C", "D": "max(A, B)"},
                 "evidence": {"D": 1}, "intervention": {"A": 0}, "query": "D", "query_value": 0},
        graph=("Without equations: {goal, without, with} over the agent's asserted facts and enabled inference "
               "rules (or given facts and rules)."),
        extra={"rules_inputs": "goal 'S P O', without ['S P O', ..], with ['S P O', ..], facts, rules"},
    ),
}  # fmt: skip

__all__ = ["DOCS", "counterfactual", "world"]
