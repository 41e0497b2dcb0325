"""Patterns with variables for goal-directed reasoning (backward chaining and abduction).

Variables are :class:`Var` objects (a ``str`` subclass), never plain strings, so a fact whose value
happens to start with ``?`` is never mistaken for a variable once it is bound into a subgoal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kg.models import Operator, Rule, RuleConclusion, RuleCondition
from reasoning.rules.checks import is_var
from reasoning.rules.numbers import compare
from reasoning.rules.results import Key, Pattern

#: A term of a goal: a constant (``str``) or a :class:`Var`.
Goal = tuple[str, str, str]


class Var(str):
    """A variable inside a goal pattern (its text is its name, e.g. ``?x``)."""

    __slots__ = ()


#: The object of a comparison's subgoal: any value, compared afterwards.
ANY = Var("?#any")


def goal_of(terms: tuple[str, str, str]) -> Goal:
    """A user's goal: terms written as ``?name`` become variables (any term starting with ``?``)."""
    s, p, o = (Var(t) if t.startswith("?") else t for t in terms)
    return (s, p, o)


def term(text: str, bindings: Mapping[str, str]) -> str:
    """A rule term under bindings: its value, or a :class:`Var` if it is an unbound variable."""
    if is_var(text):
        found = bindings.get(text)
        return Var(text) if found is None else found
    return text


def condition_goal(cond: RuleCondition, bindings: Mapping[str, str]) -> Goal:
    """The subgoal of a condition: its pattern terms bound; a comparison's object is left open."""
    obj = term(cond.object, bindings) if cond.operator is Operator.EQ else ANY
    return (term(cond.subject, bindings), term(cond.predicate, bindings), obj)


def shown(cond: RuleCondition, bindings: Mapping[str, str]) -> Pattern:
    """A condition with the bindings applied, for reports (gaps, missing conditions)."""
    s, p, o = (str(term(t, bindings)) for t in (cond.subject, cond.predicate, cond.object))
    return Pattern(s, p, o, cond.operator)


def _bind(pairs: Iterable[tuple[str, str]], bindings: dict[str, str]) -> dict[str, str] | None:
    """``bindings`` extended so each rule term matches its value (a variable binds, a constant must equal it),
    or ``None`` on a clash."""
    for text, val in pairs:
        if is_var(text):
            if bindings.setdefault(text, val) != val:
                return None
        elif text != val:
            return None
    return bindings


def unify_head(conclusion: RuleConclusion, goal: Goal) -> dict[str, str] | None:
    """Bindings of the rule's variables that make its conclusion match the goal's constants, or ``None``."""
    pairs = zip((conclusion.subject, conclusion.predicate, conclusion.object), goal, strict=True)
    # a variable of the goal is checked on the ground answer by fits()
    return _bind(((concl, wanted) for concl, wanted in pairs if not isinstance(wanted, Var)), {})


def extend(cond: RuleCondition, key: Key, bindings: Mapping[str, str]) -> dict[str, str] | None:
    """``bindings`` plus the condition's variables bound to a matching triple, or ``None`` on a clash."""
    terms = (
        (cond.subject, cond.predicate, cond.object) if cond.operator is Operator.EQ else (cond.subject, cond.predicate)
    )
    return _bind(zip(terms, key, strict=False), dict(bindings))


def fits(goal: Goal, key: Key) -> bool:
    """Whether a ground triple is an answer of the goal (constants equal, a repeated variable consistent)."""
    seen: dict[str, str] = {}
    for wanted, val in zip(goal, key, strict=True):
        if isinstance(wanted, Var):
            if wanted is not ANY and seen.setdefault(wanted, val) != val:
                return False
        elif wanted != val:
            return False
    return True


def canonical(goal: Goal) -> tuple[str, ...]:
    """The goal with its variables renamed by first appearance: equal for goals that are variants."""
    names: dict[str, str] = {}
    return tuple(names.setdefault(t, f"?{len(names)}") if isinstance(t, Var) else "=" + t for t in goal)


def lookup_terms(goal: Goal) -> tuple[str | None, str | None, str | None]:
    """The goal's constants for an index lookup (``None`` for variables)."""
    s, p, o = (None if isinstance(t, Var) else t for t in goal)
    return (s, p, o)


def ready(cond: RuleCondition, bindings: Mapping[str, str]) -> bool:
    """Whether a condition can be evaluated now: an ``eq`` always, a comparison once its object is known."""
    return cond.operator is Operator.EQ or not is_var(cond.object) or cond.object in bindings


def wanted_value(cond: RuleCondition, bindings: Mapping[str, str]) -> str:
    """The value a comparison compares with (its constant, or its bound variable's value)."""
    return bindings[cond.object] if is_var(cond.object) else cond.object


def next_condition(rule: Rule, remaining: tuple[int, ...], bindings: Mapping[str, str]) -> tuple[int, tuple[int, ...]]:
    """The first remaining condition that can be evaluated (comparisons wait for their variable), and the rest."""
    ci = next((i for i in remaining if ready(rule.conditions[i], bindings)), remaining[0])
    return ci, tuple(i for i in remaining if i != ci)


def satisfies(cond: RuleCondition, key: Key, bindings: Mapping[str, str]) -> dict[str, str] | None:
    """``bindings`` extended by a triple that meets the condition (its pattern and, for a comparison, the
    comparison), or ``None``."""
    found = extend(cond, key, bindings)
    if found is None:
        return None
    if cond.operator is not Operator.EQ and not compare(key[2], cond.operator, wanted_value(cond, found)):
        return None
    return found
