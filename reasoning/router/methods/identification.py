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
    """Observed nodes, directed edges among them, and bidirected (confounded) pairs."""

    directed: nx.DiGraph[str]
    bidirected: frozenset[frozenset[str]]

    @property
    def nodes(self) -> frozenset[str]:
        """The observed variables."""
        return frozenset(self.directed)

    def sub(self, keep: Iterable[str]) -> ADMG:
        """The subgraph induced by ``keep``."""
        keep = frozenset(keep)
        return ADMG(nx.DiGraph(self.directed.subgraph(keep)), frozenset(b for b in self.bidirected if b <= keep))

    def ancestors(self, of: Iterable[str], cut_into: Iterable[str] = ()) -> frozenset[str]:
        """``of`` and their ancestors, after removing the edges into ``cut_into``."""
        graph = self.directed
        if cut_into:
            graph = nx.DiGraph(graph)
            graph.remove_edges_from([e for n in cut_into for e in list(graph.in_edges(n))])
        found = set(of)
        for node in of:
            found |= nx.ancestors(graph, node)
        return frozenset(found)

    def components(self) -> list[frozenset[str]]:
        """The c-components (connected by bidirected edges), ordered by their smallest name."""
        graph: nx.Graph[str] = nx.Graph()
        graph.add_nodes_from(self.directed)
        for pair in self.bidirected:
            a, b = sorted(pair)
            graph.add_edge(a, b)
        return sorted((frozenset(c) for c in nx.connected_components(graph)), key=min)


def project(graph: nx.DiGraph[str], latent: Iterable[str], bidirected: Iterable[Sequence[str]] = ()) -> ADMG:
    """The ADMG of a DAG with ``latent`` nodes (latent projection), plus the given bidirected pairs."""
    hidden = set(latent)
    directed: nx.DiGraph[str] = nx.DiGraph()
    directed.add_nodes_from(n for n in graph if n not in hidden)

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

    pairs: set[frozenset[str]] = {frozenset(b) for b in bidirected if len(set(b)) == 2}
    for node in graph:
        reached = reach(node)
        if node in hidden:
            pairs |= {frozenset((a, b)) for a in reached for b in reached if a < b}
        else:
            directed.add_edges_from((node, child) for child in reached)
    return ADMG(directed, frozenset(pairs))


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
