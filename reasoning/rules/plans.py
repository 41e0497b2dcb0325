"""Rules compiled to join plans, and the nested-loop join that runs a plan over a :class:`FactIndex`.

A rule's variables are numbered (slots); a binding is a list of strings indexed by slot that the join
fills in place and overwrites on backtracking, so no binding dictionary is copied in the hot loop.

A plan is the rule's conditions in join order. Each step looks its condition up in the most selective
index for the terms known at that point (constants and variables bound by earlier steps), checks the
known terms the index does not cover, binds the new variables, and runs the comparisons
(``ne``, ``gt``, ``contains`` ...) that have become decidable. A *delta* plan starts from one chosen
condition matched against the triples derived in the previous round (semi-naive evaluation).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from kg.models import Operator, Rule, RuleType
from reasoning.rules.checks import check_rule, is_var
from reasoning.rules.index import FactIndex
from reasoning.rules.numbers import compare
from reasoning.rules.results import Key

#: A term's source in a plan: a variable's slot number, or a constant.
Src = int | str

# Lookup kinds of a step.
BY_SPO, BY_PS, BY_PO, BY_P, BY_S, BY_O, SCAN, DELTA_P, DELTA_ALL = range(9)
_INDEX_OF_KIND = {BY_PS: "ps", BY_PO: "po", BY_P: "p", BY_S: "s", BY_O: "o"}
_NONE: list[Key] = []  # shared "no candidates"; never appended to

#: Called for each complete match: (rule, slot values, supporting keys by condition, min confidence).
Emit = Callable[["CompiledRule", list[str], list[Key], float], None]


@dataclass(frozen=True, slots=True)
class Step:
    """One condition of a plan: how to find candidates and what to do with each."""

    cond: int
    kind: int
    s: Src
    p: Src
    o: Src
    checks: tuple[tuple[int, Src], ...]  # (position, expected) for known terms the lookup does not cover
    binds: tuple[tuple[int, int], ...]  # (position, slot) for variables first bound here
    repeats: tuple[tuple[int, int], ...]  # (position, slot) for a variable repeated within the condition
    filters: tuple[tuple[int, Operator, Src], ...]  # (condition, operator, wanted) now decidable


class CompiledRule:
    """A rule (checked by :func:`check_rule`) with numbered variables, conditions as sources, and plans."""

    __slots__ = ("conclusion", "conds", "factor", "names", "plans", "rule")

    def __init__(self, rule: Rule) -> None:
        self.rule = rule
        self.factor = rule.confidence_factor
        slots: dict[str, int] = {}
        conds: list[tuple[Src, Src, Src, Operator]] = []
        for cond in rule.conditions:
            s, p, o = (_source(t, slots) for t in (cond.subject, cond.predicate, cond.object))
            conds.append((s, p, o, cond.operator))
        self.conds = tuple(conds)
        self.names = tuple(slots)
        concl = rule.conclusion
        self.conclusion: tuple[Src, Src, Src] | None = None
        if concl is not None and rule.type is RuleType.INFERENCE:
            self.conclusion = (
                _source(concl.subject, slots),
                _source(concl.predicate, slots),
                _source(concl.object, slots),
            )
        self.plans: dict[int | None, tuple[Step, ...]] = {}

    def plan(self, first: int | None) -> tuple[Step, ...]:
        """The join plan starting from condition ``first`` matched against the delta (``None``: a full join)."""
        found = self.plans.get(first)
        if found is None:
            found = self.plans[first] = _build_plan(self.conds, first)
        return found

    def bindings(self, values: Sequence[str]) -> dict[str, str]:
        """Variable name -> value for a complete match."""
        return dict(zip(self.names, values, strict=True))


def compile_rules(rules: Sequence[Rule], kind: RuleType) -> list[CompiledRule]:
    """Check every rule and compile the enabled ones of ``kind``, in order."""
    compiled = []
    for rule in rules:
        check_rule(rule)
        if rule.enabled and rule.type is kind:
            compiled.append(CompiledRule(rule))
    return compiled


@dataclass(slots=True)
class MatchBudget:
    """Bounds shared by several :func:`all_matches` calls: candidate facts examined and bindings found."""

    max_work: int | None = None
    max_results: int | None = None
    work: int = 0
    results: int = 0


def all_matches(index: FactIndex, rule: CompiledRule,
                budget: MatchBudget | None = None) -> list[tuple[tuple[str, ...], tuple[Key, ...]]]:  # fmt: skip
    """Every distinct binding of the rule's variables that satisfies all its conditions, with the first
    supporting keys found for it, in join order.

    Raises:
        LimitReached: a bound of ``budget`` was reached (``max_join`` or ``max_results``); ``partial`` holds
            the bindings found so far, which ``budget.results`` counts.
    """
    budget = budget or MatchBudget()
    found: dict[tuple[str, ...], tuple[Key, ...]] = {}
    cap = sys.maxsize if budget.max_results is None else budget.max_results - budget.results

    def emit(_: CompiledRule, slots: list[str], support: list[Key], __: float) -> None:
        values = tuple(slots)
        if values not in found:
            if len(found) >= cap:
                raise LimitReached("max_results")
            found[values] = tuple(support)

    join = Join(index, emit, max_work=None if budget.max_work is None else budget.max_work - budget.work)
    try:
        join.run(rule, rule.plan(None))
    except LimitReached as reached:
        reached.partial = list(found.items())
        raise
    finally:
        budget.work += join.work
        budget.results += len(found)
    return list(found.items())


def needed_indexes(plans: Sequence[tuple[Step, ...]]) -> set[str]:
    """The :class:`FactIndex` kinds the given plans look up."""
    return {_INDEX_OF_KIND[st.kind] for plan in plans for st in plan if st.kind in _INDEX_OF_KIND}


def value(src: Src, slots: Sequence[str]) -> str:
    """A source's value under the slots."""
    return src if isinstance(src, str) else slots[src]


def _source(term: str, slots: dict[str, int]) -> Src:
    if is_var(term):
        return slots.setdefault(term, len(slots))
    return sys.intern(term)


def _pattern_positions(op: Operator) -> tuple[int, ...]:
    return (0, 1, 2) if op is Operator.EQ else (0, 1)


def _pattern_vars(cond: tuple[Src, Src, Src, Operator]) -> set[int]:
    return {t for t in (cond[pos] for pos in _pattern_positions(cond[3])) if isinstance(t, int)}


def _known(cond: tuple[Src, Src, Src, Operator], bound: set[int]) -> set[int]:
    return {pos for pos in _pattern_positions(cond[3]) if isinstance(cond[pos], str) or cond[pos] in bound}


def _build_plan(conds: tuple[tuple[Src, Src, Src, Operator], ...], first: int | None) -> tuple[Step, ...]:
    steps: list[Step] = []
    bound: set[int] = set()
    matched: set[int] = set()
    waiting = [i for i, cond in enumerate(conds) if cond[3] is not Operator.EQ]
    for k, ci in enumerate(_join_order(conds, first)):
        step = _make_step(ci, conds[ci], bound, delta=(k == 0 and first is not None))
        bound |= {slot for _, slot in step.binds}
        matched.add(ci)
        ready = [i for i in waiting if i in matched and (isinstance(conds[i][2], str) or conds[i][2] in bound)]
        waiting = [i for i in waiting if i not in ready]
        steps.append(replace(step, filters=tuple((i, conds[i][3], conds[i][2]) for i in ready)))
    return tuple(steps)


def _join_order(conds: tuple[tuple[Src, Src, Src, Operator], ...], first: int | None) -> list[int]:
    """Greedy order: next the condition with the most known terms (predicate known first), ties by position."""
    left = list(range(len(conds)))
    order: list[int] = []
    bound: set[int] = set()
    if first is not None:
        left.remove(first)
        order.append(first)
        bound |= _pattern_vars(conds[first])
    while left:
        ci = min(left, key=lambda i: (-len(_known(conds[i], bound)), 1 not in _known(conds[i], bound), i))
        left.remove(ci)
        order.append(ci)
        bound |= _pattern_vars(conds[ci])
    return order


def _make_step(ci: int, cond: tuple[Src, Src, Src, Operator], bound: set[int], *, delta: bool) -> Step:
    known = _known(cond, bound)
    if delta:
        kind, covered = (DELTA_P, {1}) if 1 in known else (DELTA_ALL, set())
    else:
        kind, covered = _choose_index(known)
    checks = tuple((pos, cond[pos]) for pos in sorted(known - covered))
    binds: list[tuple[int, int]] = []
    repeats: list[tuple[int, int]] = []
    seen: set[int] = set()
    for pos in _pattern_positions(cond[3]):
        slot = cond[pos]
        if pos in known or isinstance(slot, str):
            continue
        (repeats if slot in seen else binds).append((pos, slot))
        seen.add(slot)
    return Step(ci, kind, cond[0], cond[1], cond[2], checks, tuple(binds), tuple(repeats), ())


def _choose_index(known: set[int]) -> tuple[int, set[int]]:
    if known >= {0, 1, 2}:
        return BY_SPO, {0, 1, 2}
    if 1 in known:
        if 0 in known:
            return BY_PS, {0, 1}
        return (BY_PO, {1, 2}) if 2 in known else (BY_P, {1})
    if 0 in known:
        return BY_S, {0}
    return (BY_O, {2}) if 2 in known else (SCAN, set())


class LimitReached(Exception):  # a signal caught inside reasoning.rules, never seen by the engine's callers
    """Raised inside a run when a bound (``max_join``, ``max_derived``, ``max_results``) is reached.

    ``reason`` names the bound; :func:`all_matches` adds the bindings found so far (``partial``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.partial: list[tuple[tuple[str, ...], tuple[Key, ...]]] = []


class Join:
    """Runs plans over an index (and a delta: the triples new in the previous round).

    One run at a time: the current rule, plan, slots and supports live on the instance so the recursive
    walk passes only the step number and the lowest confidence so far. It holds no reference cycle, so
    it and its index are freed as soon as the caller drops them, even with the cyclic collector paused.

    ``work`` counts the candidate facts examined (the size of every lookup's bucket); past ``max_work`` the
    walk raises :class:`LimitReached` (``max_join``).
    """

    __slots__ = ("_plan", "_rule", "_slots", "_support", "delta_all", "delta_by_p", "emit", "index", "max_work",
                 "work")  # fmt: skip

    def __init__(self, index: FactIndex, emit: Emit, *, max_work: int | None = None) -> None:
        self.index = index
        self.emit = emit
        self.work = 0
        self.max_work = sys.maxsize if max_work is None else max_work
        self.delta_all: list[Key] = []
        self.delta_by_p: dict[str, list[Key]] = {}
        self._rule: CompiledRule | None = None
        self._plan: tuple[Step, ...] = ()
        self._slots: list[str] = []
        self._support: list[Key] = []

    def set_delta(self, keys: list[Key]) -> None:
        """The triples delta plans start from."""
        self.delta_all = keys
        by_p: dict[str, list[Key]] = {}
        for key in keys:
            bucket = by_p.get(key[1])
            if bucket is None:
                by_p[key[1]] = [key]
            else:
                bucket.append(key)
        self.delta_by_p = by_p

    def run(self, rule: CompiledRule, plan: tuple[Step, ...]) -> None:
        """Find every match of the plan (one step per condition: never empty) and emit it."""
        self._rule, self._plan = rule, plan
        self._slots = [""] * len(rule.names)
        self._support = [("", "", "")] * len(rule.conds)
        self._walk(0, math.inf)

    def _walk(self, k: int, low: float) -> None:
        plan, slots, support, rule = self._plan, self._slots, self._support, self._rule
        if rule is None:  # cannot happen: run() sets it
            return
        st = plan[k]
        conf = self.index.conf
        nxt = k + 1
        last = nxt == len(plan)
        emit = self.emit
        candidates = _LOOKUPS[st.kind](self, st, slots)
        self.work += len(candidates)
        if self.work > self.max_work:
            raise LimitReached("max_join")
        for key in candidates:
            if st.checks and not _checked(key, st.checks, slots):
                continue
            for pos, slot in st.binds:
                slots[slot] = key[pos]
            if st.repeats and any(key[pos] != slots[slot] for pos, slot in st.repeats):
                continue
            support[st.cond] = key
            if st.filters and not _filtered(st.filters, support, slots):
                continue
            c = conf[key]
            if last:  # emit here rather than one call deeper: it saves a call per match
                emit(rule, slots, support, c if c < low else low)
            else:
                self._walk(nxt, c if c < low else low)

    def _by_ps(self, st: Step, slots: list[str]) -> Sequence[Key]:
        pred = st.p if isinstance(st.p, str) else slots[st.p]  # value(), inlined: the hottest lookup
        inner = self.index.by_ps.get(pred)
        if inner is None:
            inner = self.index.ps(pred)
        return inner.get(st.s if isinstance(st.s, str) else slots[st.s], _NONE)

    def _by_po(self, st: Step, slots: list[str]) -> Sequence[Key]:
        pred = st.p if isinstance(st.p, str) else slots[st.p]
        inner = self.index.by_po.get(pred)
        if inner is None:
            inner = self.index.po(pred)
        return inner.get(st.o if isinstance(st.o, str) else slots[st.o], _NONE)

    def _by_p(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.index.predicate_index().get(value(st.p, slots), _NONE)

    def _by_spo(self, st: Step, slots: list[str]) -> Sequence[Key]:
        key = (value(st.s, slots), value(st.p, slots), value(st.o, slots))
        return (key,) if key in self.index.conf else ()

    def _by_s(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.index.subject_index().get(value(st.s, slots), _NONE)

    def _by_o(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.index.object_index().get(value(st.o, slots), _NONE)

    def _scan(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.index.order

    def _delta_p(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.delta_by_p.get(value(st.p, slots), _NONE)

    def _delta_all(self, st: Step, slots: list[str]) -> Sequence[Key]:
        return self.delta_all


#: The candidate lookup of each kind (indexed by BY_SPO ... DELTA_ALL): plain functions, not bound
#: methods stored on the instance, which would make a reference cycle.
_LOOKUPS: tuple[Callable[[Join, Step, list[str]], Sequence[Key]], ...] = (
    Join._by_spo,
    Join._by_ps,
    Join._by_po,
    Join._by_p,
    Join._by_s,
    Join._by_o,
    Join._scan,
    Join._delta_p,
    Join._delta_all,
)


def _checked(key: Key, checks: tuple[tuple[int, Src], ...], slots: list[str]) -> bool:
    return all(key[pos] == (src if isinstance(src, str) else slots[src]) for pos, src in checks)


def _filtered(filters: tuple[tuple[int, Operator, Src], ...], support: list[Key], slots: list[str]) -> bool:
    return all(compare(support[ci][2], op, value(wanted, slots)) for ci, op, wanted in filters)
