"""What the rule model cannot check on its own, and a helper that builds checked rules from plain data.

:func:`check_rule` refuses, with an :class:`~kg.errors.InputError` naming the field and the rule:

* a term that starts with ``?`` but is not a variable name (``?1x``, ``? x``): almost always a typo;
* a comparison (``ne``, ``gt``, ``lt``, ``gte``, ``lte``, ``contains``) whose object is a variable that
  no ``eq`` condition of the same rule binds: there would be nothing to compare with;
* a numeric comparison with a constant that is not a number: it could never hold;
* a condition with no constant that shares no variable with the other conditions (``?s ?p ?o`` next to
  other conditions): it pairs every fact with every match of the rest, which is never what was meant.
  A rule made of that single condition is accepted (it visits each fact once);
* an inference rule without a conclusion, or whose conclusion uses a variable no condition binds (the
  model checks this too; it is repeated here for rules built without validation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kg.errors import InputError
from kg.ids import new_id
from kg.models import Operator, Rule, RuleCondition, RuleType, parse
from reasoning.rules.numbers import NUMERIC_OPERATORS, parse_number

_VAR = re.compile(r"\A\?[A-Za-z_]\w*\Z")
_POSITIONS = ("subject", "predicate", "object")


def is_var(term: str) -> bool:
    """Whether a term is a ``?variable`` (``?`` then a letter or ``_``, then letters, digits or ``_``)."""
    return _VAR.match(term) is not None


def pattern_terms(cond: RuleCondition) -> tuple[str, ...]:
    """The terms of a condition matched against facts: all three for ``eq``, else subject and predicate."""
    if cond.operator is Operator.EQ:
        return (cond.subject, cond.predicate, cond.object)
    return (cond.subject, cond.predicate)


def check_rule(rule: Rule) -> None:
    """Raise :class:`InputError` if the rule could not be evaluated as written (see the module docstring)."""
    for i, cond in enumerate(rule.conditions):
        _check_terms(rule, i, cond)
    bound = {t for cond in rule.conditions if cond.operator is Operator.EQ for t in pattern_terms(cond) if is_var(t)}
    for i, cond in enumerate(rule.conditions):
        _check_comparison(rule, i, cond, bound)
    if len(rule.conditions) > 1:
        for i in range(len(rule.conditions)):
            _check_connected(rule, i)
    _check_conclusion(rule)


def _fail(rule: Rule, field: str, message: str) -> InputError:
    return InputError(field, f"rule {rule.name!r}: {message}")


def _check_terms(rule: Rule, i: int, cond: RuleCondition) -> None:
    for position, term in zip(_POSITIONS, pattern_terms(cond), strict=False):
        if term.startswith("?") and not is_var(term):
            raise _fail(rule, f"conditions[{i}].{position}", f"{term!r} starts with '?' but is not a variable name")


def _check_comparison(rule: Rule, i: int, cond: RuleCondition, bound: set[str]) -> None:
    op = cond.operator
    if op is Operator.EQ:
        return
    if is_var(cond.object):
        if cond.object not in bound:
            raise _fail(
                rule,
                f"conditions[{i}].object",
                f"{op.value} compares with {cond.object}, which no eq condition of the rule binds",
            )
    elif op in NUMERIC_OPERATORS and parse_number(cond.object) is None:
        raise _fail(
            rule,
            f"conditions[{i}].object",
            f"{op.value} needs a number such as 42, 1.5e3, $50,000 or 15%, got {cond.object[:60]!r}",
        )


def _check_connected(rule: Rule, i: int) -> None:
    cond = rule.conditions[i]
    if not all(is_var(t) for t in pattern_terms(cond)):
        return
    mine = {t for t in (cond.subject, cond.predicate, cond.object) if is_var(t)}
    others = {
        t
        for j, other in enumerate(rule.conditions)
        if j != i
        for t in (other.subject, other.predicate, other.object)
        if is_var(t)
    }
    if not mine & others:
        raise _fail(
            rule,
            f"conditions[{i}]",
            "has no constant and shares no variable with the other conditions, so it would pair every fact "
            "with every match of the rest; add a constant or share a variable",
        )


def _check_conclusion(rule: Rule) -> None:
    if rule.type is not RuleType.INFERENCE:
        return
    if rule.conclusion is None:
        raise _fail(rule, "conclusion", "an inference rule needs a conclusion")
    bound = {t for cond in rule.conditions for t in pattern_terms(cond) if is_var(t)}
    for position in _POSITIONS:
        term = getattr(rule.conclusion, position)
        if term.startswith("?") and not is_var(term):
            raise _fail(rule, f"conclusion.{position}", f"{term!r} starts with '?' but is not a variable name")
        if is_var(term) and term not in bound:
            raise _fail(rule, "conclusion", f"variable {term} is not bound by any condition")


def build_rule(data: Mapping[str, Any], *, agent_id: str = "system", now: datetime | None = None) -> Rule:
    """A checked :class:`Rule` from plain data (a rule file entry); fills ``uid``, ``agent_id``, ``created_at``.

    Raises:
        InputError: the data is not a valid rule (names the field).
    """
    full = {"uid": new_id("rule"), "agent_id": agent_id, "created_at": now or datetime.now(UTC), **data}
    rule = parse(Rule, full)
    check_rule(rule)
    return rule
