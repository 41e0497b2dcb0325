"""Constraints and policies: rules that report instead of deriving.

A constraint is *violated* by every distinct binding of its variables under which all its conditions
hold; a policy *fires* under every such binding, its facts being the given facts plus the context as
``("context", key, value)`` triples. ``?variables`` in a violation message or an action are replaced by
their values (unknown ones are left as written). Disabled rules never report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from kg.models import Rule, RuleType, Severity
from reasoning.rules.index import FactIndex
from reasoning.rules.plans import CompiledRule, LimitReached, MatchBudget, all_matches, compile_rules
from reasoning.rules.results import Key, PolicyFiring, Triple, Violation

#: Subject of the triples a policy's context becomes.
CONTEXT = "context"

_VARIABLE = re.compile(r"\?[A-Za-z_]\w*")
_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}


def substitute(text: str, bindings: Mapping[str, str]) -> str:
    """``text`` with each ``?variable`` replaced by its value (unbound ones kept as written)."""
    return _VARIABLE.sub(lambda m: bindings.get(m.group(0), m.group(0)), text)


def check_constraints(facts: Iterable[Triple], rules: Sequence[Rule]) -> list[Violation]:
    """Every violation of the enabled constraint rules, most severe first (then rule order, match order).

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`.
    """
    return constraint_violations(facts, rules)[0]


def constraint_violations(facts: Iterable[Triple], rules: Sequence[Rule], *, max_join: int | None = None,
                          max_results: int | None = None) -> tuple[list[Violation], str | None]:  # fmt: skip
    """:func:`check_constraints` within bounds: the violations found, and ``None`` or the bound that cut the
    check (``max_join``: candidate facts examined over all rules; ``max_results``: violations returned).

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`.
    """
    index = FactIndex(facts)
    out: list[Violation] = []

    def add(compiled: CompiledRule, values: tuple[str, ...], support: tuple[Key, ...]) -> None:
        rule = compiled.rule
        bindings = compiled.bindings(values)
        template = rule.violation_message or f"constraint {rule.name!r} violated"
        triples = tuple(index.triple(key) for key in support)
        out.append(Violation(rule_id=rule.uid, name=rule.name, bindings=bindings, facts=triples,
                             severity=rule.severity, message=substitute(template, bindings)))  # fmt: skip

    stopped = _matches(index, compile_rules(rules, RuleType.CONSTRAINT), add, max_join, max_results)
    return sorted(out, key=lambda v: _SEVERITY_RANK[v.severity]), stopped


def evaluate_policies(
    facts: Iterable[Triple], rules: Sequence[Rule], context: Mapping[str, str] | None = None
) -> list[PolicyFiring]:
    """Every firing of the enabled policy rules over the facts and the context, in rule then match order.

    Args:
        facts: the known triples.
        rules: rules of any type; enabled policy rules are evaluated. Every rule is checked.
        context: the situation, seen by conditions as ``("context", key, value)`` triples.

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`.
    """
    return policy_firings(facts, rules, context)[0]


def policy_firings(facts: Iterable[Triple], rules: Sequence[Rule], context: Mapping[str, str] | None = None, *,
                   max_join: int | None = None,
                   max_results: int | None = None) -> tuple[list[PolicyFiring], str | None]:  # fmt: skip
    """:func:`evaluate_policies` within bounds (as :func:`constraint_violations`)."""
    situation = [Triple(CONTEXT, key, value) for key, value in (context or {}).items()]
    index = FactIndex([*facts, *situation])
    out: list[PolicyFiring] = []

    def add(compiled: CompiledRule, values: tuple[str, ...], support: tuple[Key, ...]) -> None:
        rule = compiled.rule
        bindings = compiled.bindings(values)
        triples = tuple(index.triple(key) for key in support)
        out.append(PolicyFiring(rule_id=rule.uid, name=rule.name, bindings=bindings, facts=triples,
                                action=substitute(rule.action, bindings), escalate=rule.escalate))  # fmt: skip

    stopped = _matches(index, compile_rules(rules, RuleType.POLICY), add, max_join, max_results)
    return out, stopped


def _matches(index: FactIndex, compiled: Sequence[CompiledRule],
             add: Callable[[CompiledRule, tuple[str, ...], tuple[Key, ...]], None], max_join: int | None,
             max_results: int | None) -> str | None:  # fmt: skip
    """Feed every match of every rule to ``add``, within one join budget and one result cap over all rules;
    ``None``, or the bound that stopped it."""
    budget = MatchBudget(max_work=max_join, max_results=max_results)
    for rule in compiled:
        try:
            found = all_matches(index, rule, budget)
        except LimitReached as reached:
            for values, support in reached.partial:
                add(rule, values, support)
            return reached.reason
        for values, support in found:
            add(rule, values, support)
    return None
