"""Constraints and policies: rules that report instead of deriving.

A constraint is *violated* by every distinct binding of its variables under which all its conditions
hold; a policy *fires* under every such binding, its facts being the given facts plus the context as
``("context", key, value)`` triples. ``?variables`` in a violation message or an action are replaced by
their values (unknown ones are left as written). Disabled rules never report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from kg.models import Rule, RuleType, Severity
from reasoning.rules.index import FactIndex
from reasoning.rules.plans import all_matches, compile_rules
from reasoning.rules.results import PolicyFiring, Triple, Violation

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
    index = FactIndex(facts)
    out = []
    for compiled in compile_rules(rules, RuleType.CONSTRAINT):
        rule = compiled.rule
        template = rule.violation_message or f"constraint {rule.name!r} violated"
        for values, support in all_matches(index, compiled):
            bindings = compiled.bindings(values)
            triples = tuple(index.triple(key) for key in support)
            out.append(Violation(rule.uid, rule.name, rule.severity, substitute(template, bindings), bindings, triples))
    return sorted(out, key=lambda v: _SEVERITY_RANK[v.severity])


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
    situation = [Triple(CONTEXT, key, value) for key, value in (context or {}).items()]
    index = FactIndex([*facts, *situation])
    out = []
    for compiled in compile_rules(rules, RuleType.POLICY):
        rule = compiled.rule
        for values, support in all_matches(index, compiled):
            bindings = compiled.bindings(values)
            triples = tuple(index.triple(key) for key in support)
            out.append(
                PolicyFiring(rule.uid, rule.name, substitute(rule.action, bindings), rule.escalate, bindings, triples)
            )
    return out
