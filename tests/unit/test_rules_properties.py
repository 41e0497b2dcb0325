"""Invariants of the rule engine over random small knowledge bases (hypothesis).

* semi-naive forward chaining equals a naive fixpoint written here independently (same triples, same
  best confidences);
* forward chaining is idempotent: re-running on facts + derived adds nothing;
* the closure does not depend on the order of the facts, and a run is deterministic;
* every ground goal backward chaining proves lies in the forward closure (or the facts), with a
  confidence no higher than the closure's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.models import Operator, Rule, RuleType
from reasoning.rules import Triple, build_rule, forward_chain, is_var, prove
from reasoning.rules.numbers import compare
from tests.budget import examples

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
ENTITIES = ["a", "b", "c"]
VALUES = ["1", "2", "$3", "50%", "x"]
PREDICATES = ["p", "q", "r"]
VARIABLES = ["?x", "?y", "?z"]
CONFIDENCES = [0.5, 0.8, 1.0]

SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

Key = tuple[str, str, str]


@st.composite
def conditions(draw: st.DrawFn) -> dict[str, str]:
    subject = draw(st.sampled_from([*VARIABLES, *VARIABLES, "a"]))
    predicate = draw(st.sampled_from([*PREDICATES, *PREDICATES, "?p"]))
    op = draw(st.sampled_from([Operator.EQ] * 5 + [Operator.NE, Operator.GT, Operator.LTE, Operator.CONTAINS]))
    if op is Operator.EQ:
        obj = draw(st.sampled_from(VARIABLES * 3 + ENTITIES + VALUES))
    elif op is Operator.CONTAINS:
        obj = draw(st.sampled_from(["A", "x", "$"]))
    elif op is Operator.NE:
        obj = draw(st.sampled_from(VARIABLES + ENTITIES))
    else:
        obj = draw(st.sampled_from([*VARIABLES, "1", "2", "$3"]))
    return {"subject": subject, "predicate": predicate, "object": obj, "operator": op.value}


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    conds = draw(st.lists(conditions(), min_size=1, max_size=3))
    positions = {"eq": ("subject", "predicate", "object")}
    bound = sorted(
        {c[t] for c in conds for t in positions.get(c["operator"], ("subject", "predicate")) if is_var(c[t])}
    )
    conclusion = {
        "subject": draw(st.sampled_from(bound * 3 + ENTITIES)),
        "predicate": draw(st.sampled_from(PREDICATES + [v for v in bound if v == "?p"])),
        "object": draw(st.sampled_from(bound * 3 + ENTITIES + VALUES[:2])),
    }
    factor = draw(st.sampled_from([0.5, 0.9, 1.0]))
    data = {"name": "r", "conditions": conds, "conclusion": conclusion, "confidence_factor": factor}
    try:
        return build_rule(data, agent_id="prop", now=NOW)
    except InputError:
        assume(False)
        raise  # unreachable: assume(False) stops the example


@st.composite
def chain_rules(draw: st.DrawFn) -> Rule:
    """Copy, inverse and composition rules: they feed each other, so closures take several rounds."""
    p1, p2, p3 = (draw(st.sampled_from(PREDICATES)) for _ in range(3))
    shape = draw(st.sampled_from(["copy", "inverse", "compose"]))
    if shape == "compose":
        conds = [{"subject": "?x", "predicate": p1, "object": "?y"}, {"subject": "?y", "predicate": p2, "object": "?z"}]
        conclusion = {"subject": "?x", "predicate": p3, "object": "?z"}
    else:
        conds = [{"subject": "?x", "predicate": p1, "object": "?y"}]
        flip = shape == "inverse"
        conclusion = {"subject": "?y" if flip else "?x", "predicate": p2, "object": "?x" if flip else "?y"}
    factor = draw(st.sampled_from([0.5, 0.9, 1.0]))
    data = {"name": shape, "conditions": conds, "conclusion": conclusion, "confidence_factor": factor}
    return build_rule(data, agent_id="prop", now=NOW)


facts_strategy = st.lists(
    st.builds(
        Triple,
        st.sampled_from(ENTITIES),
        st.sampled_from(PREDICATES),
        st.sampled_from(ENTITIES + VALUES),
        st.sampled_from(CONFIDENCES),
    ),
    min_size=2,
    max_size=12,
)
rules_strategy = st.lists(st.one_of(rules(), chain_rules()), min_size=1, max_size=4)


# ------------------------------------------------------------------------ a naive reference fixpoint


def _unify(cond: Any, key: Key, bindings: dict[str, str]) -> dict[str, str] | None:
    terms = [cond.subject, cond.predicate] + ([cond.object] if cond.operator is Operator.EQ else [])
    out = dict(bindings)
    for term, val in zip(terms, key, strict=False):
        if is_var(term):
            if out.setdefault(term, val) != val:
                return None
        elif term != val:
            return None
    if cond.operator is not Operator.EQ:
        wanted = out[cond.object] if is_var(cond.object) else cond.object
        if not compare(key[2], cond.operator, wanted):
            return None
    return out


def _matches(rule: Rule, known: dict[Key, float]) -> Iterator[tuple[dict[str, str], list[Key]]]:
    """Every (bindings, supports) of the rule's body: eq conditions first, so comparisons see their value."""
    conds = sorted(rule.conditions, key=lambda c: c.operator is not Operator.EQ)
    keys = list(known)
    for combo in itertools.product(keys, repeat=len(conds)):
        bindings: dict[str, str] | None = {}
        for cond, key in zip(conds, combo, strict=True):
            bindings = _unify(cond, key, bindings) if bindings is not None else None
        if bindings is not None:
            yield bindings, list(combo)


def naive_closure(facts: list[Triple], rule_list: list[Rule]) -> dict[Key, float]:
    """Apply every rule to every combination of known triples until nothing changes (max confidences)."""
    known: dict[Key, float] = {}
    for f in facts:
        known[f.key] = max(known.get(f.key, f.confidence), f.confidence)
    inputs = set(known)
    active = [r for r in rule_list if r.enabled and r.type is RuleType.INFERENCE]
    changed = True
    while changed:
        changed = False
        found: dict[Key, float] = {}
        for rule in active:
            assert rule.conclusion is not None
            for bindings, supports in _matches(rule, known):
                c = rule.conclusion
                key = (bindings.get(c.subject, c.subject), bindings.get(c.predicate, c.predicate))
                key3 = (*key, bindings.get(c.object, c.object))
                conf = min(known[s] for s in supports) * rule.confidence_factor
                found[key3] = max(found.get(key3, conf), conf)
        for key, conf in found.items():
            if key not in inputs and conf > known.get(key, -1.0):
                known[key] = conf
                changed = True
    return {k: c for k, c in known.items() if k not in inputs}


def _closure(facts: list[Triple], rule_list: list[Rule]) -> dict[Key, float]:
    result = forward_chain(facts, rule_list, max_iterations=200)
    assert result.fixpoint
    return {d.triple.key: d.triple.confidence for d in result.derived}


# ------------------------------------------------------------------------------------ properties


@SETTINGS
@given(facts=facts_strategy, rule_list=rules_strategy)
def test_semi_naive_equals_naive_fixpoint(facts: list[Triple], rule_list: list[Rule]) -> None:
    ours = _closure(facts, rule_list)
    reference = naive_closure(facts, rule_list)
    assert set(ours) == set(reference)
    for key, conf in reference.items():
        assert abs(ours[key] - conf) < 1e-12, key


@SETTINGS
@given(facts=facts_strategy, rule_list=rules_strategy)
def test_forward_chaining_is_idempotent(facts: list[Triple], rule_list: list[Rule]) -> None:
    first = forward_chain(facts, rule_list, max_iterations=200)
    again = forward_chain([*facts, *first.triples()], rule_list, max_iterations=200)
    assert again.derived == []
    assert again.fixpoint and again.iterations == 1


@SETTINGS
@given(facts=facts_strategy, rule_list=rules_strategy, seed=st.randoms(use_true_random=False))
def test_closure_ignores_fact_order_and_is_deterministic(facts: list[Triple], rule_list: list[Rule], seed: Any) -> None:
    shuffled = list(facts)
    seed.shuffle(shuffled)
    assert _closure(shuffled, rule_list) == _closure(facts, rule_list)
    assert forward_chain(facts, rule_list).derived == forward_chain(facts, rule_list).derived


@SETTINGS
@given(
    facts=facts_strategy,
    rule_list=rules_strategy,
    goals=st.lists(
        st.tuples(
            st.sampled_from(ENTITIES + VALUES[:2]), st.sampled_from(PREDICATES), st.sampled_from(ENTITIES + VALUES)
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_backward_proofs_lie_in_the_forward_closure(
    facts: list[Triple], rule_list: list[Rule], goals: list[Key]
) -> None:
    closure = _closure(facts, rule_list)
    given_conf: dict[Key, float] = {}
    for f in facts:
        given_conf[f.key] = max(given_conf.get(f.key, f.confidence), f.confidence)
    for goal in goals:
        result = prove(goal, facts, rule_list, max_depth=4)
        if not result.proved:
            continue
        assert goal in closure or goal in given_conf
        best = given_conf.get(goal, closure.get(goal, 0.0))
        assert all(p.confidence <= best + 1e-12 for p in result.proofs)


@SETTINGS
@given(facts=facts_strategy, rule_list=rules_strategy)
def test_open_goal_answers_lie_in_the_closure(facts: list[Triple], rule_list: list[Rule]) -> None:
    closure = set(_closure(facts, rule_list)) | {f.key for f in facts}
    for predicate in PREDICATES:
        result = prove(("?s", predicate, "?o"), facts, rule_list, max_depth=3, max_proofs=50)
        assert {p.triple for p in result.proofs} <= closure
