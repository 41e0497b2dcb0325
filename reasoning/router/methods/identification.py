"""Identification of causal effects beyond the back-door: the ID algorithm, and its estimate from a joint table.

The graph is a DAG whose ``latent`` nodes are unobserved, read as an acyclic directed mixed graph (ADMG) by latent
projection (Verma & Pearl 1990): observed a -> b when a directed path from a to b runs through latent nodes only;
a <-> b when a latent node reaches both through latent nodes only (an unmeasured common cause). ``bidirected``
pairs may also be given directly.

:func:`identify` is the ID algorithm of Shpitser & Pearl ("Identification of Joint Interventional Distributions
in Recursive Semi-Markovian Causal Models", AAAI 2006, fig. 3; after Tian & Pearl 2002). It is complete: it
returns an expression of P(y | do(x)) in the observational distribution P(v) whenever one exists (front-door,
napkin, ...), and otherwise finds a hedge (line 5) — then no method can identify the effect from P(v). It
runs in polynomial time in the graph; :data:`MAX_CALLS` bounds its recursion. :func:`evaluate` computes the
expression from a joint table over the observed variables (:mod:`.factors`, bounded by its cell budget).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from reasoning.router.methods.base import fail
from reasoning.router.methods.factors import Budget, Factor, divide, product, sum_out

#: Recursive calls of the ID algorithm one identification may make.
MAX_CALLS = 10_000


class NotIdentifiable(Exception):
    """A hedge: the effect is not identifiable from the observational distribution."""

    def __init__(self, big: frozenset[str], small: frozenset[str]) -> None:
        self.big, self.small = big, small
        super().__init__(f"hedge: c-forests {_set(big)} and {_set(small)}")


# ---------------------------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class Joint:
    """The observational distribution P(v) over the observed variables."""

    names: frozenset[str]


@dataclass(frozen=True)
class Sum:
    """Σ over ``over`` of ``body``."""

    over: frozenset[str]
    body: Expr


@dataclass(frozen=True)
class Prod:
    """The product of ``terms``."""

    terms: tuple[Expr, ...]


@dataclass(frozen=True)
class Frac:
    """``top / bottom`` (a conditional when both are marginals of one distribution)."""

    top: Expr
    bottom: Expr


Expr = Joint | Sum | Prod | Frac


def free(expr: Expr) -> frozenset[str]:
    """The variables ``expr`` is a function of."""
    if isinstance(expr, Joint):
        return expr.names
    if isinstance(expr, Sum):
        return free(expr.body) - expr.over
    if isinstance(expr, Prod):
        return frozenset().union(*(free(t) for t in expr.terms))
    return free(expr.top) | free(expr.bottom)


def marginal(p: Expr, over: Iterable[str]) -> Expr:
    """Σ_over p (p itself when ``over`` is empty)."""
    over = frozenset(over)
    if not over:
        return p
    return Sum(over | p.over, p.body) if isinstance(p, Sum) else Sum(over, p)


def _set(names: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(names)) + "}"


def text(expr: Expr) -> str:
    """The expression in the usual notation: P(a | b), Σ_{m} ..., products by juxtaposition."""
    if isinstance(expr, Joint):
        return f"P({', '.join(sorted(expr.names))})"
    if isinstance(expr, Sum) and isinstance(expr.body, Joint):
        return f"P({', '.join(sorted(expr.body.names - expr.over))})"
    if isinstance(expr, Sum):
        return f"Σ_{_set(expr.over)} {text(expr.body)}"
    if isinstance(expr, Prod):
        return " ".join(f"[{text(t)}]" if isinstance(t, Sum) and not isinstance(t.body, Joint) else text(t)
                        for t in expr.terms)  # fmt: skip
    top, bottom = free(expr.top), free(expr.bottom)
    plain = all(isinstance(e, Joint) or (isinstance(e, Sum) and isinstance(e.body, Joint))
                for e in (expr.top, expr.bottom))  # fmt: skip
    if plain and bottom <= top:
        given = f" | {', '.join(sorted(bottom))}" if bottom else ""
        return f"P({', '.join(sorted(top - bottom))}{given})"
    return f"({text(expr.top)}) / ({text(expr.bottom)})"


# ---------------------------------------------------------------------------------------------- graphs
@dataclass(frozen=True)
class ADMG:
    """Observed nodes, directed edges among them, and bidirected (confounded) pairs.

    Subgraphs share the whole graph's parent and partner maps and only narrow ``nodes`` (no copies: the ID algorithm
    takes many subgraphs)."""

    nodes: frozenset[str]
    parents: Mapping[str, frozenset[str]]
    partners: Mapping[str, frozenset[str]]

    def sub(self, keep: Iterable[str]) -> ADMG:
        """The subgraph induced by ``keep``."""
        return ADMG(self.nodes & frozenset(keep), self.parents, self.partners)

    def ancestors(self, of: Iterable[str], cut_into: Iterable[str] = ()) -> frozenset[str]:
        """``of`` and their ancestors in this subgraph, after removing the edges into ``cut_into``."""
        cut = frozenset(cut_into)
        found = set(of)
        stack = [n for n in found if n not in cut]
        while stack:
            for parent in self.parents[stack.pop()]:
                if parent in self.nodes and parent not in found:
                    found.add(parent)
                    if parent not in cut:
                        stack.append(parent)
        return frozenset(found)

    def components(self) -> list[frozenset[str]]:
        """The c-components (connected by bidirected edges within this subgraph), ordered by their smallest name."""
        left, found = set(self.nodes), []
        while left:
            start = left.pop()
            part, stack = {start}, [start]
            while stack:
                for other in self.partners[stack.pop()]:
                    if other in left:
                        left.discard(other)
                        part.add(other)
                        stack.append(other)
            found.append(frozenset(part))
        return sorted(found, key=min)


def project(graph: nx.DiGraph[str], latent: Iterable[str], bidirected: Iterable[Sequence[str]] = ()) -> ADMG:
    """The ADMG of a DAG with ``latent`` nodes (latent projection), plus the given bidirected pairs."""
    hidden = set(latent)
    parents: dict[str, set[str]] = {n: set() for n in graph if n not in hidden}

    def reach(start: str) -> set[str]:
        seen, stack, found = set(), [start], set()
        while stack:
            for child in graph.successors(stack.pop()):
                if child in hidden and child not in seen:
                    seen.add(child)
                    stack.append(child)
                elif child not in hidden:
                    found.add(child)
        return found

    partners: dict[str, set[str]] = {n: set() for n in parents}
    for a, b in (pair for pair in bidirected if len(set(pair)) == 2):
        if a in partners and b in partners:
            partners[a].add(b)
            partners[b].add(a)
    for node in graph:
        reached = reach(node)
        for child in reached:
            if node in hidden:
                partners[child] |= reached - {child}
            else:
                parents[child].add(node)
    return ADMG(frozenset(parents), {n: frozenset(p) for n, p in parents.items()},
                {n: frozenset(p) for n, p in partners.items()})  # fmt: skip


# ---------------------------------------------------------------------------------------------- ID
@dataclass
class _Run:
    order: list[str]
    calls: int = 0


def _conditional(p: Expr, nodes: frozenset[str], v: str, given: frozenset[str]) -> Expr:
    """P(v | given) of the distribution ``p`` over ``nodes``."""
    return Frac(marginal(p, nodes - given - {v}), marginal(p, nodes - given))


def _id(y: frozenset[str], x: frozenset[str], p: Expr, g: ADMG, run: _Run) -> Expr:
    run.calls += 1
    if run.calls > MAX_CALLS:
        raise RecursionError
    v = g.nodes
    if not x:  # line 1
        return marginal(p, v - y)
    ancestors = g.ancestors(y)
    if v - ancestors:  # line 2
        return _id(y, x & ancestors, marginal(p, v - ancestors), g.sub(ancestors), run)
    w = (v - x) - g.ancestors(y, cut_into=x)
    if w:  # line 3
        return _id(y, x | w, p, g, run)
    parts = g.sub(v - x).components()
    if len(parts) > 1:  # line 4
        return marginal(Prod(tuple(_id(s, v - s, p, g, run) for s in parts)), v - (y | x))
    [s] = parts
    whole = g.components()
    if whole == [v]:  # line 5
        raise NotIdentifiable(v, s)
    order = [n for n in run.order if n in v]
    before = {n: frozenset(order[: order.index(n)]) for n in order}
    if s in whole:  # line 6
        terms = tuple(_conditional(p, v, n, before[n]) for n in order if n in s)
        return marginal(Prod(terms), s - y)
    [bigger] = [c for c in whole if s < c]  # line 7
    terms = tuple(_conditional(p, v, n, before[n]) for n in order if n in bigger)
    return _id(y, x & bigger, Prod(terms), g.sub(bigger), run)


def identify(g: ADMG, y: Iterable[str], x: Iterable[str], order: Sequence[str], method: str) -> Expr:
    """An expression of P(y | do(x)) in P(v) over the observed nodes of ``g``.

    Raises:
        NotIdentifiable: a hedge exists (no expression in P(v) exists).
        InputError: the recursion went over :data:`MAX_CALLS`.
    """
    try:
        return _id(frozenset(y), frozenset(x), Joint(g.nodes), g, _Run(list(order)))
    except RecursionError:
        raise fail(method, "edges", f"identification needs more than {MAX_CALLS:,} steps: narrow the graph") from None


def evaluate(expr: Expr, joint: Factor, budget: Budget) -> Factor:
    """The expression computed from ``joint`` (a normalised table over the observed variables)."""
    if isinstance(expr, Joint):
        return joint
    if isinstance(expr, Sum):
        return sum_out(evaluate(expr.body, joint, budget), expr.over)
    if isinstance(expr, Prod):
        return product([evaluate(t, joint, budget) for t in expr.terms], budget)
    return divide(evaluate(expr.top, joint, budget), evaluate(expr.bottom, joint, budget), budget)


def effect_table(expr: Expr, joint: Factor, y: Sequence[str], x: Sequence[str], budget: Budget) -> Factor:
    """P(y | do(x)) as a table over ``x`` then ``y`` (variables the expression keeps free but that it does not
    depend on, such as those line 3 adds, are averaged out)."""
    result = evaluate(expr, joint, budget)
    extra = [n for n in result.names if n not in set(y) | set(x)]
    table = result.table.mean(axis=tuple(result.names.index(n) for n in extra)) if extra else result.table
    kept = Factor(tuple(n for n in result.names if n not in extra), table)
    names = [*x, *y]
    shape = [joint.table.shape[joint.names.index(n)] for n in names]
    return Factor(tuple(names), np.broadcast_to(kept.aligned(names), shape).copy())


def joint_from_rows(rows: Sequence[Mapping[str, object]], names: Sequence[str], method: str,
                    budget: Budget) -> tuple[Factor, dict[str, list[str]]]:  # fmt: skip
    """The normalised joint table of weighted observations ``{var: value, ..., "count": n}`` over ``names``.

    Raises:
        InputError: a row without one of ``names``, a bad count, or no observation at all.
    """
    domains: dict[str, list[str]] = {n: [] for n in names}
    cells: list[tuple[list[str], float]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise fail(method, f"data.{i}", "must be an object {variable: value, count: n}")
        count = row.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int | float) or not 0 <= count < float("inf"):
            raise fail(method, f"data.{i}.count", "must be a non-negative number")
        key = []
        for name in names:
            if name not in row or not isinstance(row[name], str | int | float | bool):
                raise fail(method, f"data.{i}.{name}", "is missing (every row needs every observed variable "
                                                        "of the graph that the effect depends on)")  # fmt: skip
            value = str(row[name])
            if value not in domains[name]:
                domains[name].append(value)
            key.append(value)
        cells.append((key, float(count)))
    budget.spend(max(1, math.prod(len(d) for d in domains.values())), "the joint table of the data")
    table = np.zeros([len(domains[n]) for n in names])
    for key, count in cells:
        table[tuple(domains[n].index(v) for n, v in zip(names, key, strict=True))] += count
    if table.sum() <= 0:
        raise fail(method, "data", "holds no observations")
    return Factor(tuple(names), table / table.sum()), domains


__all__ = ["ADMG", "MAX_CALLS", "Expr", "Frac", "Joint", "NotIdentifiable", "Prod", "Sum", "effect_table",
           "evaluate", "free", "identify", "joint_from_rows", "marginal", "project", "text"]  # fmt: skip
