"""Backward chaining: goal-directed proofs with proof trees, a cycle guard, a depth limit and knowledge gaps.

A goal ``(subject, predicate, object)`` may hold ``?variables``. It is proved by a stored fact that
matches it, or by an enabled inference rule whose conclusion unifies with it and whose conditions are
proved in turn, bindings flowing left to right (a comparison waits until the variable it compares with
is bound). Facts are tried before rules, rules in the order given, so results are deterministic.

* Cycle guard: a goal that is a variant of one already on the current path fails that branch.
* Depth limit: at most ``max_depth`` nested rule applications; deeper goals are matched to facts only.
* Work bound: at most ``max_steps`` steps (a goal opened, or a stored fact tried against one), for the proofs
  and the gaps together. The search is depth-first without tabling, so on a dense graph the goals it opens grow
  as (facts per node) ** ``max_depth``: a complete graph of 16 nodes under a transitive rule took 14 s at depth
  5, and 40 nodes would take hours. Past the bound the result is marked incomplete (``complete`` false, a ``note``):
  the proofs found hold, but "not proved" only means not proved within the bound.
* Gaps: when nothing proves the goal, the search runs again to collect the condition patterns (bindings
  applied) that no fact or rule satisfies, deepest first: a condition that a rule could have proved is
  replaced by the gaps of that rule's body.

A rule node's confidence is min(children) x ``confidence_factor``, as in forward chaining.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from kg.errors import InputError
from kg.models import Rule, RuleType
from reasoning.rules.checks import is_var
from reasoning.rules.index import FactIndex
from reasoning.rules.plans import compile_rules
from reasoning.rules.results import Key, Pattern, ProofNode, ProofResult, Triple
from reasoning.rules.unify import (
    Goal,
    canonical,
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

_MAX_GAPS = 100
_DIAGNOSIS_BUDGET = 20_000  # goals visited while collecting gaps, so a large store cannot stall it
#: Steps of one proof search unless the caller gives fewer (reasoning/bounds.py): about two seconds of search
#: (roughly 100,000 steps a second of CPU, measured on a complete graph under a transitive rule).
MAX_PROOF_STEPS = 200_000
#: The goals open above the current one (their canonical forms): a goal on it is a cycle.
_Trail = tuple[tuple[str, ...], ...]


class _SearchCut(Exception):
    """Raised inside the search when it has taken its steps: unwinds every open generator."""


def prove(
    goal: tuple[str, str, str],
    facts: Iterable[Triple] | FactIndex,
    rules: Sequence[Rule],
    *,
    max_depth: int = 5,
    max_proofs: int = 10,
    max_steps: int = MAX_PROOF_STEPS,
) -> ProofResult:
    """Prove a goal from facts and the enabled inference rules.

    Args:
        goal: ``(subject, predicate, object)``; a term starting with ``?`` is a variable.
        facts: the stored triples (or a :class:`~reasoning.rules.index.FactIndex` of them, to share one).
        rules: rules of any type; only enabled inference rules are used. Every rule is checked.
        max_depth: the most nested rule applications (0: facts only).
        max_proofs: the most answers to return (one proof each: the first found).
        max_steps: the most steps (goals opened and facts tried) for the search and the gaps together.

    Returns:
        ``proved`` and one proof tree per distinct ground answer, or, if unproved, the gaps; ``complete`` false
        and a ``note`` when ``max_steps`` cut the search (what it found holds), and the ``steps`` taken.

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`, or a limit is out of range.
    """
    if max_depth < 0:
        raise InputError("max_depth", f"must be 0 or more, got {max_depth}")
    if max_proofs < 1:
        raise InputError("max_proofs", f"must be at least 1, got {max_proofs}")
    if max_steps < 1:
        raise InputError("max_steps", f"must be at least 1, got {max_steps}")
    index = facts if isinstance(facts, FactIndex) else FactIndex(facts)
    prover = _Prover(index, [c.rule for c in compile_rules(rules, RuleType.INFERENCE)], max_depth, max_steps)
    target = goal_of(goal)
    wanted = max_proofs if any(is_var(term) for term in goal) else 1  # a ground goal has one answer: stop at it
    answers: dict[Key, ProofNode] = {}
    try:
        for key, node in prover.solve(target, 0, ()):
            answers.setdefault(key, node)
            if len(answers) >= wanted:
                break
    except _SearchCut:
        pass
    if answers or prover.cut:
        return prover.result(goal, list(answers.values()), [])
    gaps: list[Pattern] = []
    try:
        gaps = prover.gaps(target, Pattern(*goal), 0, ())
    except _SearchCut:
        gaps = prover.found_gaps
    return prover.result(goal, [], list(dict.fromkeys(gaps))[:_MAX_GAPS])


class _Prover:
    """Proof search over one set of facts and rules."""

    def __init__(self, index: FactIndex, rules: list[Rule], max_depth: int, max_steps: int) -> None:
        self.index = index
        self.rules = rules
        self.max_depth = max_depth
        self.budget = _DIAGNOSIS_BUDGET
        self.max_steps = max_steps
        self.steps = 0
        self.cut = False
        self.found_gaps: list[Pattern] = []  # the gaps of the top goal's rules collected so far (kept on a cut)

    def step(self) -> None:
        """Count one step; past ``max_steps`` the search ends (:class:`_SearchCut`)."""
        self.steps += 1
        if self.steps > self.max_steps:
            self.steps, self.cut = self.max_steps, True
            raise _SearchCut

    def result(self, goal: tuple[str, str, str], proofs: list[ProofNode], gaps: list[Pattern]) -> ProofResult:
        note = None
        if self.cut:
            found = f"{len(proofs)} answer(s) found hold" if proofs else "not proved within it, which is not disproved"
            note = (f"the search stopped after {self.max_steps:,} steps (max_steps): {found}; the proofs and gaps are "
                    "incomplete. Bind more of the goal, or lower max_depth.")  # fmt: skip
        return ProofResult(goal, bool(proofs), proofs, gaps, complete=not self.cut, steps=self.steps, note=note)

    def solve(self, goal: Goal, depth: int, path: _Trail) -> Iterator[tuple[Key, ProofNode]]:
        """Every (answer, proof) of the goal: facts first, then each rule in order."""
        canon = canonical(goal)
        if canon in path:
            return
        self.step()
        for key in self.index.lookup(*lookup_terms(goal)):
            self.step()
            if fits(goal, key):
                yield key, ProofNode(key, self.index.conf[key], uid=self.index.source[key].uid)
        if depth >= self.max_depth:
            return
        inner = (*path, canon)
        for rule in self.rules:
            yield from self._apply(rule, goal, depth, inner)

    def _apply(self, rule: Rule, goal: Goal, depth: int, path: _Trail) -> Iterator[tuple[Key, ProofNode]]:
        concl = rule.conclusion
        head = None if concl is None else unify_head(concl, goal)
        if concl is None or head is None:
            return
        for bindings, children in self._body(rule, tuple(range(len(rule.conditions))), head, depth + 1, path):
            key = (bindings.get(concl.subject, concl.subject), bindings.get(concl.predicate, concl.predicate))
            answer = (*key, bindings.get(concl.object, concl.object))
            if not fits(goal, answer):
                continue
            kids = tuple(children[i] for i in sorted(children))
            confidence = min(k.confidence for k in kids) * rule.confidence_factor
            yield answer, ProofNode(answer, confidence, None, rule.uid, rule.name, bindings, kids)

    def _body(
        self, rule: Rule, remaining: tuple[int, ...], bindings: dict[str, str], depth: int, path: _Trail
    ) -> Iterator[tuple[dict[str, str], dict[int, ProofNode]]]:
        if not remaining:
            yield bindings, {}
            return
        ci, rest = next_condition(rule, remaining, bindings)
        for found, node in self._condition(rule, ci, bindings, depth, path):
            for final, nodes in self._body(rule, rest, found, depth, path):
                yield final, {ci: node, **nodes}

    def _condition(
        self, rule: Rule, ci: int, bindings: dict[str, str], depth: int, path: _Trail
    ) -> Iterator[tuple[dict[str, str], ProofNode]]:
        """The bindings (and proof) of each way condition ``ci`` holds under ``bindings``."""
        cond = rule.conditions[ci]
        for key, node in self.solve(condition_goal(cond, bindings), depth, path):
            found = satisfies(cond, key, bindings)
            if found is not None:
                yield found, node

    # ----------------------------------------------------------------------------------- gaps

    def gaps(self, goal: Goal, display: Pattern, depth: int, path: _Trail) -> list[Pattern]:
        """Why an unprovable goal fails: the gaps of the rules that could prove it, else the goal itself."""
        canon = canonical(goal)
        if canon in path or self.budget <= 0:
            return []  # a cycle is not missing knowledge
        self.budget -= 1
        found: list[Pattern] = []
        if depth < self.max_depth:
            inner = (*path, canon)
            for rule in self.rules:
                head = None if rule.conclusion is None else unify_head(rule.conclusion, goal)
                if head is not None:
                    found += self._body_gaps(rule, tuple(range(len(rule.conditions))), head, depth + 1, inner)
                    if not path:
                        self.found_gaps = list(found)
        return found or [display]

    def _body_gaps(
        self, rule: Rule, remaining: tuple[int, ...], bindings: dict[str, str], depth: int, path: _Trail
    ) -> list[Pattern]:
        if not remaining or self.budget <= 0:
            return []
        ci, rest = next_condition(rule, remaining, bindings)
        out: list[Pattern] = []
        any_solution = False
        for found, _ in self._condition(rule, ci, bindings, depth, path):
            any_solution = True
            out += self._body_gaps(rule, rest, found, depth, path)
            if self.budget <= 0:
                break
            self.budget -= 1
        if any_solution:
            return out
        cond = rule.conditions[ci]
        out = self.gaps(condition_goal(cond, bindings), shown(cond, bindings), depth, path)
        for i in rest:  # the other conditions, under what is known, to report every gap of this branch
            other = rule.conditions[i]
            if not ready(other, bindings):
                continue  # compares with a variable the failed condition should have bound: undecidable
            if next(iter(self._condition(rule, i, bindings, depth, path)), None) is None:
                out += self.gaps(condition_goal(other, bindings), shown(other, bindings), depth, path)
        return out
