"""Forward chaining: the semi-naive fixpoint of the inference rules over a set of triples.

Round 1 joins every rule over the input facts. Each later round joins, for every rule and every one of
its conditions, that condition against the triples new in the previous round only (its *delta*) and
the other conditions against everything known, so no round repeats an old x old join. Triples found in
a round become visible in the next one, which makes ``max_iterations`` a clean cut ("what is derivable
in at most N steps") and the result independent of rule order except for ties.

Bounds (:class:`~reasoning.rules.ChainLimits`): ``max_derived`` stops the run before it would add one more
triple, ``max_join`` when the joins have examined that many candidate facts. The run then keeps what it
found (the round in progress included: every triple found has a complete derivation from known triples),
with ``fixpoint`` false and ``stopped_by`` naming the bound: a sound, incomplete part of the closure.

Confidence of a derivation = min(confidences of its supports) x the rule's ``confidence_factor``. When
a triple is derivable several ways the highest confidence is kept (with its support); a raised
confidence counts as new, so it propagates to what was derived from the triple. Input facts are
authoritative: a derivation equal to an input fact is neither reported nor allowed to change it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from contextlib import nullcontext

from kg.errors import InputError
from kg.facts_fast import gc_paused
from kg.models import Rule, RuleType
from reasoning.rules.index import FactIndex
from reasoning.rules.plans import CompiledRule, Join, LimitReached, compile_rules, needed_indexes
from reasoning.rules.results import ChainLimits, Derivation, ForwardResult, Key, Triple

#: A derivation while chaining: (confidence, rule, supports by condition, slot values).
_Entry = tuple[float, CompiledRule, tuple[Key, ...], tuple[str, ...]]


def forward_chain(facts: Iterable[Triple], rules: Sequence[Rule], *, max_iterations: int = 10,
                  limits: ChainLimits | None = None, tune_process: bool = False) -> ForwardResult:  # fmt: skip
    """Derive everything the enabled inference rules entail from ``facts`` (up to ``max_iterations`` rounds).

    Args:
        facts: the asserted triples (a key given twice keeps its highest confidence).
        rules: rules of any type; only enabled inference rules derive. Every rule is checked.
        max_iterations: the most rounds to run (at least 1).
        limits: the most triples to derive and candidate facts to examine (default: unbounded; every
            service call passes bounds, see ``reasoning.service``).
        tune_process: pause the process's cyclic garbage collector for the run (:func:`kg.facts_fast.gc_paused`;
            20-30% faster on large closures). A setting of the whole process: only its owner may ask (the CLI's
            ``mabos infer forward`` does); by default nothing outside the call changes.

    Returns:
        The derived triples (never an input fact), rounds run, whether a fixpoint was reached (and if not,
        which bound stopped it), and per rule how many triples it added or raised.

    Raises:
        InputError: a rule fails :func:`~reasoning.rules.check_rule`, ``max_iterations < 1`` or a limit < 1.

    Example:
        >>> result = forward_chain([Triple("a", "parent", "b"), Triple("b", "parent", "c")], rules)
        >>> [d.triple.key for d in result.derived]          # doctest: +SKIP
        [('a', 'ancestor', 'b'), ('b', 'ancestor', 'c'), ('a', 'ancestor', 'c')]
    """
    if max_iterations < 1:
        raise InputError("max_iterations", f"must be at least 1, got {max_iterations}")
    limits = limits or ChainLimits()
    for name, bound in (("max_derived", limits.max_derived), ("max_join", limits.max_join)):
        if bound is not None and bound < 1:
            raise InputError(name, f"must be at least 1, got {bound}")
    compiled = compile_rules(rules, RuleType.INFERENCE)
    # A run allocates millions of small tuples that form no reference cycles: the collector's passes over them
    # cost 20-30% of the run (LUBM) and reclaim nothing (reference counting still frees everything).
    with gc_paused() if tune_process else nullcontext():
        return _run(facts, compiled, max_iterations, limits)


def _run(facts: Iterable[Triple], compiled: list[CompiledRule], max_iterations: int,
         limits: ChainLimits) -> ForwardResult:  # fmt: skip
    index = FactIndex(facts)
    chain = _Chain(index, compiled, limits.max_derived)
    join = Join(index, chain.emit, max_work=limits.max_join)  # the join refers to the chain, never the other way
    full = [(rule, rule.plan(None)) for rule in compiled]
    deltas = [(rule, rule.plan(i)) for rule in compiled for i in range(len(rule.conds))]
    index.ensure(needed_indexes([plan for _, plan in full + deltas]))
    iterations, stopped_by = 0, "max_iterations"
    plans = full  # round 1: every fact is new, so one full join per rule covers every delta plan
    try:
        while iterations < max_iterations:
            iterations += 1
            for rule, plan in plans:
                join.run(rule, plan)
            if not chain.pending:
                stopped_by = ""
                break
            join.set_delta(chain.merge())
            plans = deltas
    except LimitReached as reached:
        stopped_by = reached.reason
        chain.merge()  # what the interrupted round found is derived soundly: keep it
    return ForwardResult(
        derived=chain.derivations(),
        iterations=iterations,
        fixpoint=not stopped_by,
        fired=chain.counts,
        rules={rule.rule.uid: rule.rule for rule in compiled},
        stopped_by=stopped_by or None,
        join_work=join.work,
    )


class _Chain:
    """The state of one forward chaining run: what was derived, and what the current round found."""

    __slots__ = ("best", "conf", "counts", "index", "max_derived", "pending", "source")

    def __init__(self, index: FactIndex, rules: Sequence[CompiledRule], max_derived: int | None = None) -> None:
        self.index = index
        self.max_derived = sys.maxsize if max_derived is None else max_derived
        self.conf, self.source = index.conf, index.source  # read for every match
        self.counts = {rule.rule.uid: 0 for rule in rules}
        self.best: dict[Key, _Entry] = {}
        self.pending: dict[Key, _Entry] = {}

    def emit(self, rule: CompiledRule, slots: list[str], support: list[Key], low: float) -> None:
        """Record a match's conclusion if it is new or raises a confidence (applied at the round's end)."""
        if rule.conclusion is None:  # cannot happen: inference rules are checked to have one
            return
        cs, cp, co = rule.conclusion
        key = (
            cs if isinstance(cs, str) else slots[cs],
            cp if isinstance(cp, str) else slots[cp],
            co if isinstance(co, str) else slots[co],
        )
        c = low * rule.factor
        old = self.conf.get(key)
        if old is not None and (c <= old or key in self.source):
            return
        seen = self.pending.get(key)
        if seen is not None and c <= seen[0]:
            return
        if old is None and seen is None and len(self.best) + len(self.pending) >= self.max_derived:
            raise LimitReached("max_derived")
        self.pending[key] = (c, rule, tuple(support), tuple(slots))

    def merge(self) -> list[Key]:
        """Make this round's findings known; return them (the next round's delta)."""
        index, best = self.index, self.best
        for key, entry in self.pending.items():
            if key in index.conf:
                index.conf[key] = entry[0]
            else:
                index.add(key, entry[0])
            best[key] = entry
            self.counts[entry[1].rule.uid] += 1
        delta = list(self.pending)
        self.pending = {}
        return delta

    def derivations(self) -> list[Derivation]:
        """The kept derivation of every derived triple, in order of first derivation."""
        return [
            Derivation(Triple(*key, confidence=c), rule.rule.uid, support, rule.bindings(values))
            for key, (c, rule, support, values) in self.best.items()
        ]
