"""Probabilistic structural causal models: counterfactuals by abduction, action and prediction.

Inputs ``inputs.counterfactual`` with ``equations``::

    {"exogenous": {"U": {"values": [0, 1], "probabilities": [0.4, 0.6]}, "W": {...}},
     "equations": {"C": "U", "A": "max(C, W)", "B": "C", "D": "max(A, B)"},
     "evidence": {"D": 1}, "intervention": {"A": 0}, "query": "D", "query_value": 1}

Each endogenous variable is a function (a formula over numbers, exogenous and endogenous names: ``+ - * / ** %``,
comparisons giving 1 or 0, ``min max abs``; ``max(a, b)`` is "a or b", ``min(a, b)`` "a and b", ``1 - a`` "not
a") of the others, acyclic. The three steps of Pearl (Causality, 2000, §7.1, theorem 7.1.7):

1. abduction: P(u | evidence), over every combination of the exogenous values (each a possible world);
2. action: replace the equations of the intervened variables by their constants (do(A = 0));
3. prediction: the query's value in every world of the modified model, weighted by P(u | evidence).

The answer is P(query = query_value) in the counterfactual world (``value.probability``) and its whole
distribution, beside the factual P(query = query_value | evidence) for comparison. The worlds are enumerated as
numpy vectors: at most :data:`MAX_WORLDS` of them (else a one-line error naming ``exogenous``).
"""

from __future__ import annotations

import ast
import math
from typing import Annotated, Any

import networkx as nx
import numpy as np
from pydantic import Field

from kg.models import Model, Unit
from reasoning.router.methods.base import MethodOutcome, computed, fail, validate
from reasoning.router.methods.montecarlo import MAX_FORMULA, evaluate

METHOD = "counterfactual"
#: Possible worlds (combinations of exogenous values) one model may have; variables; values of one variable.
MAX_WORLDS, MAX_VARIABLES, MAX_VALUES = 1_000_000, 200, 1_000
TOLERANCE = 1e-6
_Ident = Annotated[str, Field(pattern=r"^[A-Za-z_]\w{0,63}$")]
_Number = Annotated[float, Field(allow_inf_nan=False)]


class Exogenous(Model):
    """An exogenous (background) variable: its values and their prior probabilities."""

    values: list[_Number] = Field(min_length=1, max_length=MAX_VALUES)
    probabilities: list[Unit] = Field(min_length=1, max_length=MAX_VALUES)


class SCMInput(Model):
    """``counterfactual`` inputs over a probabilistic structural causal model."""

    exogenous: dict[_Ident, Exogenous] = Field(min_length=1, max_length=MAX_VARIABLES)
    equations: dict[_Ident, Annotated[str, Field(min_length=1, max_length=MAX_FORMULA)]] = Field(
        min_length=1, max_length=MAX_VARIABLES
    )
    evidence: dict[_Ident, _Number] = Field(default_factory=dict, max_length=MAX_VARIABLES)
    intervention: dict[_Ident, _Number] = Field(min_length=1, max_length=MAX_VARIABLES)
    query: _Ident
    query_value: _Number = 1.0


def _order(data: SCMInput) -> list[str]:
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(data.equations)
    for name, formula in data.equations.items():
        if name in data.exogenous:
            raise fail(METHOD, f"equations.{name}", "is also an exogenous variable")
        try:
            names = {n.id for n in ast.walk(ast.parse(formula, mode="eval")) if isinstance(n, ast.Name)}
        except (SyntaxError, RecursionError, MemoryError):
            raise fail(METHOD, f"equations.{name}", "is not a valid expression") from None
        for other in names - set(data.exogenous) - {"min", "max", "abs", "sqrt", "exp", "log"}:
            if other not in data.equations:
                raise fail(METHOD, f"equations.{name}", f"uses {other!r}, neither exogenous nor endogenous")
            graph.add_edge(other, name)
    if not nx.is_directed_acyclic_graph(graph):
        raise fail(METHOD, "equations", "are cyclic (a structural causal model must be recursive)")
    return list(nx.lexicographical_topological_sort(graph))


def _worlds(data: SCMInput) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every combination of exogenous values (one column per world) and its prior probability."""
    count = math.prod(len(u.values) for u in data.exogenous.values())
    if count > MAX_WORLDS:
        raise fail(METHOD, "exogenous", f"give {count:,} combinations of values (at most {MAX_WORLDS:,})")
    for name, u in data.exogenous.items():
        if len(u.values) != len(u.probabilities):
            raise fail(METHOD, f"exogenous.{name}.probabilities", "needs one probability per value")
        if abs(math.fsum(u.probabilities) - 1.0) > TOLERANCE:
            raise fail(METHOD, f"exogenous.{name}.probabilities", "must sum to 1")
    names = sorted(data.exogenous)
    grids = np.meshgrid(*(np.arange(len(data.exogenous[n].values)) for n in names), indexing="ij")
    env, weight = {}, np.ones(count)
    for name, grid in zip(names, grids, strict=True):
        index = grid.ravel()
        env[name] = np.asarray(data.exogenous[name].values)[index]
        weight = weight * np.asarray(data.exogenous[name].probabilities)[index]
    return env, weight


def _solve(data: SCMInput, order: list[str], env: dict[str, np.ndarray], do: dict[str, float]) -> dict[str, Any]:
    size = len(next(iter(env.values())))
    values = {n: np.full(size, do[n]) if n in do else v for n, v in env.items()}
    for name in order:
        if name in do:
            values[name] = np.full(size, do[name])
        else:
            values[name] = evaluate(data.equations[name], values, METHOD)
    return values


def _distribution(values: np.ndarray, weight: np.ndarray) -> dict[str, float]:
    found: dict[str, float] = {}
    for v in np.unique(values):
        found[f"{float(v):g}"] = float(weight[values == v].sum())
    return found


def counterfactual_scm(inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``counterfactual`` over a probabilistic SCM: abduction, action, prediction."""
    data = validate(SCMInput, inputs, METHOD)
    order = _order(data)
    for field, names in (("evidence", data.evidence), ("intervention", data.intervention),
                         ("query", {data.query: 0})):  # fmt: skip
        for name in names:
            if name not in data.equations and name not in data.exogenous:
                raise fail(METHOD, f"{field}.{name}" if field != "query" else field, f"unknown variable {name!r}")
    env, prior = _worlds(data)
    factual = _solve(data, order, env, {})
    mask = np.ones(len(prior), dtype=bool)
    for name, observed in data.evidence.items():
        mask &= np.isclose(factual[name], observed)
    total = float(prior[mask].sum())
    if total <= 0:
        raise fail(METHOD, "evidence", "is impossible in the model (probability 0)")
    posterior = np.where(mask, prior, 0.0) / total
    imagined = _solve(data, order, env, dict(data.intervention))
    dist = _distribution(imagined[data.query], posterior)
    hit = float(posterior[np.isclose(imagined[data.query], data.query_value)].sum())
    seen = float(posterior[np.isclose(factual[data.query], data.query_value)].sum())
    act = ", ".join(f"{k} = {v:g}" for k, v in data.intervention.items())
    given = ", ".join(f"{k} = {v:g}" for k, v in data.evidence.items()) or "nothing observed"
    label = f"P({data.query}_{{{act}}} = {data.query_value:g} | {given})"
    value = {"probability": hit, "distribution": dist, "factual_probability": seen, "worlds": len(prior),
             "worlds_consistent": int(mask.sum()), "query": data.query, "intervention": data.intervention,
             "evidence": data.evidence}  # fmt: skip
    trace = [f"abduction: {int(mask.sum())} of {len(prior)} exogenous worlds agree with {given} (P = {total:.4g})",
             f"action: do({act}) replaces {', '.join(data.intervention)}'s equation(s) by constants",
             f"prediction: {label} = {hit:.4f} (factually P({data.query} = {data.query_value:g} | {given}) = "
             f"{seen:.4f})"]  # fmt: skip
    return computed(
        METHOD,
        f"{label} = {hit:.4f}",
        max(hit, 1 - hit),
        value,
        trace=trace,
        notes=["exact over the model: valid only if the equations and exogenous priors are right"],
    )


__all__ = ["MAX_WORLDS", "SCMInput", "counterfactual_scm"]
