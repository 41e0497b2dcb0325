"""Causal graphs for the causal methods: reading them from inputs or facts, back-door identification, and
adjustment from data.

Back-door criterion (Pearl, Causality, 2000, def. 3.3.1): a set Z identifies the effect of X on Y when no
node of Z is a descendant of X and Z blocks every path from X to Y that starts with an arrow into X, i.e.
Z d-separates X and Y once X's outgoing edges are removed. networkx finds a minimal such Z
(``find_minimal_d_separator`` restricted to non-descendants of X). The adjustment formula then reads::

    P(Y = y | do(X = x)) = Σ_z P(Y = y | X = x, Z = z) · P(Z = z)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import networkx as nx

from reasoning.router.methods.base import MethodContext, fail

#: Fact predicates read as causal edges: subject -> object, or object -> subject for dependsOn.
FORWARD = ("causes", "leadsTo", "affects", "influences")
BACKWARD = ("dependsOn",)


def graph_from(ctx: MethodContext, method: str, inputs: dict[str, Any]) -> tuple[nx.DiGraph[Any], list[str]]:
    """The causal graph of ``inputs.edges`` ([[cause, effect], ..]), else of the agent's causal facts; used uids."""
    graph: nx.DiGraph[Any] = nx.DiGraph()
    used: list[str] = []
    edges = inputs.get("edges")
    if edges is not None:
        if not isinstance(edges, list):
            raise fail(method, "edges", "must be a list of [cause, effect] pairs")
        for i, edge in enumerate(edges):
            if not (isinstance(edge, list | tuple) and len(edge) >= 2 and all(isinstance(e, str) and e
                                                                              for e in edge[:2])):  # fmt: skip
                raise fail(method, f"edges.{i}", "must be [cause, effect] (two names)")
            graph.add_edge(edge[0], edge[1])
        return graph, used
    for predicate in (*FORWARD, *BACKWARD):
        for fact in ctx.facts(predicate=predicate):
            source, target = (fact.object, fact.subject) if predicate in BACKWARD else (fact.subject, fact.object)
            graph.add_edge(source, target)
            used.append(fact.uid)
    return graph, used


def backdoor_paths(graph: nx.DiGraph[Any], x: str, y: str, limit: int = 50,
                   max_steps: int = 20_000) -> tuple[list[list[str]], bool]:  # fmt: skip
    """Simple paths between x and y (ignoring direction) whose first edge points into x, at most ``limit`` of them
    and at most ``max_steps`` search steps (a complete DAG has factorially many); and whether the list is complete.

    Depth-first from each parent of x, never through x again, each path at most 12 edges long.
    """
    undirected = graph.to_undirected(as_view=True)
    paths: list[list[str]] = []
    steps = 0
    for parent in sorted(graph.predecessors(x)):
        stack: list[tuple[list[str], list[str]]] = [([x, parent], sorted(undirected[parent]))]
        while stack:
            path, todo = stack[-1]
            if path[-1] == y:
                paths.append(list(path))
                stack.pop()
                if len(paths) >= limit:
                    return paths, False
                continue
            if not todo or len(path) > 12:
                stack.pop()
                continue
            steps += 1
            if steps > max_steps:
                return paths, False
            node = todo.pop()
            if node not in path:
                stack.append(([*path, node], sorted(undirected[node])))
    return paths, True


def backdoor_set(graph: nx.DiGraph[Any], x: str | Sequence[str], y: str | Sequence[str],
                 latent: Sequence[str] = ()) -> set[str] | None:  # fmt: skip
    """A minimal back-door adjustment set (of observed nodes) for the effect of x on y, or None if none exists."""
    xs, ys = ({x} if isinstance(x, str) else set(x)), ({y} if isinstance(y, str) else set(y))
    cut = graph.copy()
    cut.remove_edges_from([e for n in xs for e in list(graph.out_edges(n))])
    below = set().union(*(nx.descendants(graph, n) for n in xs))
    allowed = set(graph) - below - xs - ys - set(latent)
    found = nx.find_minimal_d_separator(cut, xs, ys, restricted=allowed)
    return None if found is None else set(found)


def adjust(rows: Sequence[dict[str, Any]], x: str, y: str, z: Sequence[str], method: str, *,
           outcome_value: Any = True) -> dict[str, float]:  # fmt: skip
    """P(y = outcome_value | do(x = v)) for every value v of x, by the adjustment formula over weighted rows.

    Each row is an observation ``{var: value, ..., "count": n}`` (count defaults to 1).

    Raises:
        InputError: a row without x, y or a node of z, or a stratum where some x value never occurs
            (positivity fails: the effect is not estimable from these data).
    """
    strata: dict[tuple[Any, ...], dict[Any, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    total = 0.0
    values: list[Any] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise fail(method, f"data.{i}", "must be an object {variable: value, count: n}")
        for name in (x, y, *z):
            if name not in row:
                raise fail(method, f"data.{i}.{name}", "is missing (every row needs treatment, outcome, adjustment)")
            if not isinstance(row[name], str | int | float | bool):
                raise fail(method, f"data.{i}.{name}", "must be a string, number or boolean")
        count = row.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int | float) or count < 0:
            raise fail(method, f"data.{i}.count", "must be a non-negative number")
        cell = strata[tuple(row[name] for name in z)][row[x]]
        cell[0] += count
        cell[1] += count if row[y] == outcome_value else 0
        total += count
        if row[x] not in values:
            values.append(row[x])
    if total <= 0:
        raise fail(method, "data", "holds no observations")
    effect = {}
    for value in values:
        acc = 0.0
        for key, cells in strata.items():
            weight = sum(c[0] for c in cells.values()) / total
            n, hits = cells.get(value, [0.0, 0.0])
            if n == 0:
                raise fail(method, "data", f"no observation with {x} = {value!r} where {dict(zip(z, key, strict=True))}"
                                           " (positivity fails)")  # fmt: skip
            acc += weight * hits / n
        effect[str(value)] = acc
    return effect


__all__ = ["BACKWARD", "FORWARD", "adjust", "backdoor_paths", "backdoor_set", "graph_from"]
