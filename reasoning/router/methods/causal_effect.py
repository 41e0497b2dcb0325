"""The ``causal`` method: is the effect of X on Y identifiable from observations, how, and how large is it.

Inputs ``inputs.causal`` (:class:`CausalInput`): the causal graph (``edges``, else the structure of ``network``,
else the agent's causes/leadsTo/affects/influences/dependsOn facts), ``treatment`` and ``outcome`` (a name or a
list), unobserved nodes (``latent``) or confounded pairs (``bidirected``), and optionally observations (``data``
rows with counts) or a discrete network (``network``, see :mod:`.discrete`) to estimate the effect from.

1. Back-door (Pearl, Causality, 2000, def. 3.3.1): a minimal set Z of observed non-descendants of X that
   d-separates X and Y once X's outgoing edges are cut (networkx ``find_minimal_d_separator``); then
   P(y | do(x)) = Σ_z P(y | x, z) P(z). ``value.backdoor_paths`` lists back-door paths, at most
   :data:`MAX_PATHS` of them, found within :data:`MAX_PATH_STEPS` search steps.
2. Otherwise the ID algorithm (:mod:`.identification`): the front-door formula, the napkin, ... or a hedge
   proving that no formula in the observational distribution exists.
3. With ``data`` or ``network``: P(outcome = outcome_value | do(treatment = x)) for every x (``value.effect``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import networkx as nx
import numpy as np
from pydantic import Field

from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.causal_graph import adjust, backdoor_paths, backdoor_set, graph_from
from reasoning.router.methods.discrete import DiscreteNetwork, compile_network, query
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.factors import MAX_FACTOR_CELLS, MAX_WORK_CELLS, Budget, Factor
from reasoning.router.methods.identification import (
    MAX_CALLS,
    Expr,
    NotIdentifiable,
    effect_table,
    identify,
    joint_from_rows,
    project,
    text,
)

METHOD = "causal"
#: Edges of one causal graph; observation rows; back-door paths listed and the search steps spent listing them.
MAX_EDGES, MAX_ROWS, MAX_PATHS, MAX_PATH_STEPS = 20_000, 100_000, 50, 20_000
#: Pearl, Glymour & Jewell, Causal Inference in Statistics: A Primer (2016), table 3.1 (800 people, front-door):
#: (smoker, tar, cancer, count).
FRONT_DOOR_EXAMPLE = [(True, True, True, 323), (True, True, False, 57), (True, False, True, 18),
                      (True, False, False, 2), (False, True, True, 1), (False, True, False, 19),
                      (False, False, True, 38), (False, False, False, 342)]  # fmt: skip
_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Pair = Annotated[list[_Name], Field(min_length=2, max_length=2)]
_Names = _Name | Annotated[list[_Name], Field(min_length=1, max_length=10)]


class CausalInput(Model):
    """Inputs of ``causal``."""

    edges: list[_Pair] | None = Field(None, max_length=MAX_EDGES)
    treatment: _Names
    outcome: _Names
    latent: list[_Name] = Field(default_factory=new_list, max_length=MAX_EDGES)
    bidirected: list[_Pair] = Field(default_factory=new_list, max_length=MAX_EDGES)
    data: list[dict[str, Any]] | None = Field(None, max_length=MAX_ROWS)
    network: DiscreteNetwork | None = None
    outcome_value: str | int | float | bool = True


def _names(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(dict.fromkeys(value))


def _graph(ctx: MethodContext, data: CausalInput, raw: dict[str, Any]) -> tuple[nx.DiGraph[Any], list[str]]:
    if data.edges is None and data.network is not None:
        graph: nx.DiGraph[Any] = nx.DiGraph()
        graph.add_nodes_from(data.network.variables)
        graph.add_edges_from((p, n) for n, v in data.network.variables.items() for p in v.parents)
        return graph, []
    graph, used = graph_from(ctx, METHOD, raw)
    if graph.number_of_edges() > MAX_EDGES:
        raise fail(METHOD, "edges", f"the causal graph has {graph.number_of_edges():,} edges (at most {MAX_EDGES:,})")
    return graph, used


def _label(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"


def _confidence(effect: dict[str, float], counts: dict[str, float] | None) -> float:
    """How sure "the best treatment value gives the most outcome" is: 1/k for k tied; exact tables: 1; data:
    Φ(gap / standard error of the gap) between the two best, never 1 for a finite sample."""
    ranked = sorted(effect.values(), reverse=True)
    if len(ranked) < 2:
        return 1.0
    tied = sum(1 for v in ranked if v == ranked[0])
    if tied > 1:
        return 1.0 / tied
    if counts is None:
        return 1.0
    best, second = (max(effect, key=lambda k: effect[k]), sorted(effect, key=lambda k: -effect[k])[1])
    var = sum(effect[k] * (1 - effect[k]) / max(counts.get(k, 0.0), 1.0) for k in (best, second))
    total = sum(counts.values())
    z = (effect[best] - effect[second]) / math.sqrt(var) if var > 0 else math.inf
    return min(0.5 * (1 + math.erf(z / math.sqrt(2))), 1 - 1 / (total + 2))


def _effect(table: Factor, domains: dict[str, list[str]], x: list[str], y: str, outcome: str) -> dict[str, float]:
    if outcome not in domains[y]:
        raise fail(METHOD, "outcome_value", f"{outcome!r} is not a value of {y} ({domains[y][:10]})")
    at = table.table[(..., domains[y].index(outcome))]
    effect = {}
    for index in np.ndindex(*at.shape):
        effect[",".join(domains[n][i] for n, i in zip(x, index, strict=True))] = float(at[index])
    return effect


@dataclass
class _Problem:
    data: CausalInput
    graph: nx.DiGraph[Any]
    x: list[str]
    y: list[str]
    latent: list[str]


def _problem(ctx: MethodContext, inputs: dict[str, Any]) -> tuple[_Problem, list[str]]:
    if not inputs.get("treatment") or not inputs.get("outcome"):
        raise MissingInputs(METHOD, "give inputs.causal.treatment and outcome (and edges, or causal facts)")
    data = validate(CausalInput, inputs, METHOD)
    x, y = _names(data.treatment), _names(data.outcome)
    graph, used = _graph(ctx, data, inputs)
    if graph.number_of_nodes() == 0:
        raise MissingInputs(METHOD, "give inputs.causal.edges (or causes/dependsOn facts)")
    for name, field in [*((n, "treatment") for n in x), *((n, "outcome") for n in y)]:
        if name not in graph:
            raise fail(METHOD, field, f"{name!r} is not a node of the causal graph")
    if set(x) & set(y):
        raise fail(METHOD, "outcome", "must not also be a treatment")
    if not nx.is_directed_acyclic_graph(graph):
        raise fail(METHOD, "edges", "the causal graph has a cycle (it must be a DAG)")
    return _Problem(data, graph, x, y, [n for n in data.latent if n in graph]), used


def _identify(problem: _Problem) -> tuple[Expr, list[str]]:
    """The ID expression over the ancestors of treatment and outcome, and their observed nodes in causal order.

    Raises:
        NotIdentifiable: a hedge.
    """
    relevant = set(problem.x) | set(problem.y)
    for name in list(relevant):
        relevant |= nx.ancestors(problem.graph, name)
    sub: nx.DiGraph[str] = nx.DiGraph(problem.graph.subgraph(relevant))
    admg = project(sub, problem.latent, [b for b in problem.data.bidirected if set(b) <= relevant])
    order = [n for n in nx.lexicographical_topological_sort(sub) if n in admg.nodes]
    return identify(admg, problem.y, problem.x, order, METHOD), order


def _counts(rows: list[dict[str, Any]], x: list[str]) -> dict[str, float]:
    """Observations per treatment value, from rows whose counts were checked (by adjust or joint_from_rows)."""
    counts: dict[str, float] = {}
    for row in rows:
        key = ",".join(str(row.get(n)) for n in x)
        counts[key] = counts.get(key, 0.0) + float(row.get("count", 1))
    return counts


def _estimate(problem: _Problem, expr: Expr, observed: list[str],
              z: set[str] | None) -> tuple[dict[str, float], dict[str, float] | None, str]:  # fmt: skip
    """P(outcome = outcome_value | do(x)) per treatment value, the counts per treatment value (None for a network),
    and the step taken."""
    data, x, y = problem.data, problem.x, problem.y
    if len(y) != 1:
        raise fail(METHOD, "outcome", "estimating the effect needs one outcome variable")
    if z is not None and data.network is None and len(x) == 1:
        effect = adjust(data.data or [], x[0], y[0], sorted(z), METHOD, outcome_value=data.outcome_value)
        return effect, _counts(data.data or [], x), "P(Y | do(X = x)) = sum over z of P(Y | x, z) P(z)"
    budget = Budget(METHOD, "data" if data.network is None else "network")
    if data.network is not None:
        net = compile_network(data.network, METHOD)
        missing = [n for n in observed if n not in net.domains]
        if missing:
            raise fail(METHOD, "network", f"has no variable {missing[0]!r} of the causal graph")
        joint = query(net, observed, {}, budget)
        assert joint is not None  # noqa: S101 - no evidence: P(nothing) = 1
        domains, found = net.domains, None
    else:
        joint, domains = joint_from_rows(data.data or [], observed, METHOD, budget)
        found = _counts(data.data or [], x)
    table = effect_table(expr, joint, y, x, budget)
    effect = _effect(table, domains, x, y[0], str(data.outcome_value))
    return effect, found, f"evaluated the formula on the joint table of {', '.join(observed)}"


def causal(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``causal``: back-door or ID identification, and the effect when data or a network are given."""
    problem, used = _problem(ctx, inputs)
    x, y, graph = problem.x, problem.y, problem.graph
    single = len(x) == len(y) == 1
    paths, complete = backdoor_paths(graph, x[0], y[0], MAX_PATHS, MAX_PATH_STEPS) if single else ([], True)
    z = backdoor_set(graph, x, y, problem.latent)
    value: dict[str, Any] = {"treatment": _label(x), "outcome": _label(y), "backdoor_paths": paths,
                             "backdoor_paths_complete": complete,
                             "adjustment_set": None if z is None else sorted(z)}  # fmt: skip
    listed = "" if complete else f" listed (the listing stops at {MAX_PATHS} paths or {MAX_PATH_STEPS:,} steps)"
    trace = [
        f"causal graph: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges, {len(problem.latent)} latent",
        f"{len(paths)} back-door path(s) from {_label(x)} to {_label(y)}{listed}",
    ]
    notes = ["valid only if the causal graph is right (no unmeasured confounder missing from it)"]
    try:
        expr, order = _identify(problem)
    except NotIdentifiable as hedge:
        value["identification"] = {"identifiable": False, "hedge": [sorted(hedge.big), sorted(hedge.small)]}
        trace.append(f"ID algorithm: a hedge for {sorted(hedge.big)} and {sorted(hedge.small)} (Shpitser & Pearl "
                     "2006): no formula in the observed distribution exists")  # fmt: skip
        return computed(METHOD, f"the effect of {_label(x)} on {_label(y)} is not identifiable from observations "
                        f"(a hedge: {', '.join(sorted(hedge.big))})", 1.0, value, trace=trace, used=used,
                        notes=notes)  # fmt: skip
    formula = f"P({', '.join(y)} | do({', '.join(x)})) = {text(expr)}"
    value["identification"] = {"identifiable": True, "by": "back-door" if z is not None else "ID", "formula": formula}
    label = "{" + ", ".join(sorted(z)) + "}" if z is not None else ""
    if z is not None:
        trace.append(f"minimal back-door set {label} (blocks every back-door path, no descendant of {_label(x)})")
        conclusion = (f"adjust for {label} to identify the effect of {_label(x)} on {_label(y)}" if z else
                      f"no adjustment needed: the effect of {_label(x)} on {_label(y)} is P({_label(y)} | "
                      f"{_label(x)}) (no back-door path)")  # fmt: skip
    else:
        trace.append(f"no back-door set; the ID algorithm (Shpitser & Pearl 2006) gives {formula}")
        conclusion = f"the effect of {_label(x)} on {_label(y)} is identifiable: {formula}"
    if problem.data.data is None and problem.data.network is None:
        return computed(METHOD, conclusion, 1.0, value, trace=trace, used=used, notes=notes)
    effect, counts, step = _estimate(problem, expr, order, z)
    value["effect"] = effect
    trace.append(step)
    best = max(effect, key=lambda k: effect[k])
    shown = ", ".join(f"do({_label(x)}={k}): {v:.4f}" for k, v in effect.items())
    how = f"adjusted for {label}" if z is not None else "by the ID formula"
    conclusion = f"{_label(x)} = {best} gives the most {y[0]} ({shown}; {how})"
    return computed(METHOD, conclusion, _confidence(effect, counts), value, trace=trace, used=used, notes=notes)


DOCS = {
    METHOD: MethodDoc(
        confidence=("Identification (back-door set, ID formula or hedge) is a derivation from the graph: 1.0, valid "
                    "only if the graph is right. With an estimate, the confidence that the best treatment value "
                    "gives the most outcome: 1/k for k tied values; exact network tables: 1.0; data: Φ(gap / "
                    "standard error) between the two best values, below 1 for any finite sample."),
        bound=(f"Graphs of at most {MAX_EDGES:,} edges; back-door paths listed up to {MAX_PATHS} paths or "
               f"{MAX_PATH_STEPS:,} search steps (the list is then marked incomplete; the adjustment set does not "
               f"depend on it); the ID algorithm at most {MAX_CALLS:,} recursive calls; {MAX_ROWS:,} data rows; "
               f"estimates build tables of at most {MAX_FACTOR_CELLS:,} cells and {MAX_WORK_CELLS:,} cells in "
               "all; past any bound a one-line error names the field."),
        inputs=CausalInput,
        example={"edges": [["Smoking", "Tar"], ["Tar", "Cancer"], ["Genotype", "Smoking"], ["Genotype", "Cancer"]],
                 "latent": ["Genotype"], "treatment": "Smoking", "outcome": "Cancer",
                 "data": [{"Smoking": s, "Tar": t, "Cancer": c, "count": n} for s, t, c, n in FRONT_DOOR_EXAMPLE]},
        graph=("Without edges or network: causes/leadsTo/affects/influences facts (subject -> object) and "
               "dependsOn facts (object -> subject)."),
    ),
}  # fmt: skip

__all__ = [
    "DOCS",
    "FRONT_DOOR_EXAMPLE",
    "MAX_EDGES",
    "MAX_PATHS",
    "MAX_PATH_STEPS",
    "MAX_ROWS",
    "CausalInput",
    "causal",
]
