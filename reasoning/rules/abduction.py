"""Abduction: which rules would explain an observation, and how much of each the facts already support.

For every enabled inference rule whose conclusion unifies with the observation, the conditions are
matched against the facts under the bindings of that unification, left to right, each either matched
by a fact (extending the bindings) or left missing. The assignment with the most supported conditions
wins (the first found on a tie: facts are tried in insertion order, matching before skipping).

``score = supported conditions / all conditions x confidence_factor``; hypotheses come best first, ties
in rule order. Only the given facts count as support: pass the forward closure to count derived ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kg.models import Rule, RuleType
from reasoning.rules.index import FactIndex
from reasoning.rules.plans import compile_rules
from reasoning.rules.results import Hypothesis, Key, Triple
from reasoning.rules.unify import (
    condition_goal,
    fits,
    goal_of,
    lookup_terms,
    next_condition,
    ready,
    satisfies,
    shown,
    unify_head,
)

_BUDGET = 10_000  # search steps per rule, so a rule over a large store cannot stall abduction


def abduce(observation: tuple[str, str, str], facts: Iterable[Triple], rules: Sequence[Rule]) -> list[Hypothesis]:
    """Rank the rules that could explain ``observation`` by how much of their body the facts support.

    Args:
        observation: the triple to explain (a term starting with ``?`` is a variable).
        facts: the known triples.
        rules: rules of any type; enabled inference rules are candidates. Every rule is checked.

    Returns:
        One :class:`Hypothesis` per candidate rule, best score first (ties in rule order), each with the
        supporting facts and the missing conditions (bindings applied).

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`.
    """
    index = FactIndex(facts)
    goal = goal_of(observation)
    out: list[Hypothesis] = []
    for compiled in compile_rules(rules, RuleType.INFERENCE):
        rule = compiled.rule
        head = None if rule.conclusion is None else unify_head(rule.conclusion, goal)
        if head is not None:
            out.append(_hypothesis(index, rule, head))
    return sorted(out, key=lambda h: -h.score)  # stable: ties stay in rule order


@dataclass
class _Search:
    """The best assignment found so far for one rule."""

    index: FactIndex
    rule: Rule
    budget: int = _BUDGET
    best: tuple[dict[str, str], dict[int, Key]] | None = None
    best_count: int = -1

    def run(self, remaining: tuple[int, ...], bindings: dict[str, str], matched: dict[int, Key]) -> None:
        if len(matched) + len(remaining) <= self.best_count or self.budget <= 0:
            return
        self.budget -= 1
        if not remaining:
            self.best, self.best_count = (bindings, matched), len(matched)
            return
        ci, rest = next_condition(self.rule, remaining, bindings)
        cond = self.rule.conditions[ci]
        if ready(cond, bindings):
            goal = condition_goal(cond, bindings)
            for key in self.index.lookup(*lookup_terms(goal)):
                found = satisfies(cond, key, bindings) if fits(goal, key) else None
                if found is not None:
                    self.run(rest, found, {**matched, ci: key})
        self.run(rest, bindings, matched)  # or leave it missing


def _hypothesis(index: FactIndex, rule: Rule, head: dict[str, str]) -> Hypothesis:
    search = _Search(index, rule)
    search.run(tuple(range(len(rule.conditions))), head, {})
    bindings, matched = search.best if search.best is not None else (head, {})
    total = len(rule.conditions)
    return Hypothesis(
        rule_id=rule.uid,
        name=rule.name,
        score=len(matched) / total * rule.confidence_factor,
        confidence_factor=rule.confidence_factor,
        bindings=dict(bindings),
        supported=tuple(index.triple(matched[i]) for i in sorted(matched)),
        missing=tuple(shown(rule.conditions[i], bindings) for i in range(total) if i not in matched),
    )
