"""Discrete Bayesian networks with multi-valued variables, queried by variable elimination.

A network is ``{"variables": {NAME: {"values": [v1, v2, ..], "parents": [..], "cpt": {ROW: [p1, p2, ..]}}}}``:
``cpt`` has one row per combination of the parents' values (joined by commas in the parents' order; a root
has the row ``""``), each a distribution over ``values`` (summing to 1). Monty Hall, for instance::

    {"variables": {"Car": {"values": ["1", "2", "3"], "cpt": {"": [1/3, 1/3, 1/3]}},
                   "Pick": {"values": ["1", "2", "3"], "cpt": {"": [1/3, 1/3, 1/3]}},
                   "Host": {"values": ["1", "2", "3"], "parents": ["Car", "Pick"],
                            "cpt": {"1,1": [0, 0.5, 0.5], "1,2": [0, 0, 1], ...}}}}

A query P(Q | evidence) (optionally under do(X = x), Pearl's truncated factorisation) keeps the ancestors of the
query and the evidence, slices the tables at the evidence, and sums the other variables out one at a time,
always the one whose product table is smallest (Koller & Friedman, Probabilistic Graphical Models, 2009,
alg. 9.1 with the min-weight heuristic). The work is bounded by :mod:`.factors` (one table at most
``MAX_FACTOR_CELLS`` cells, all tables together ``MAX_WORK_CELLS``): a network too densely connected to
eliminate within it gets a one-line error, never an unbounded run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

import networkx as nx
import numpy as np
from pydantic import Field

from kg.models import Model, Unit
from kg.models.base import new_list
from reasoning.router.methods.base import fail
from reasoning.router.methods.factors import MAX_FACTOR_CELLS, Budget, Factor, normalised, product, reduce, sum_out

#: Variables one network may have, values one variable may take, parents one variable may have.
MAX_VARIABLES, MAX_VALUES, MAX_PARENTS = 500, 64, 10
TOLERANCE = 1e-6
_Name = Annotated[str, Field(min_length=1, max_length=64)]
_Value = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[^,]+$")]


class DiscreteVariable(Model):
    """One variable: its values, its parents (in order) and a distribution over its values per parent row."""

    values: list[_Value] = Field(min_length=2, max_length=MAX_VALUES)
    parents: list[_Name] = Field(default_factory=new_list, max_length=MAX_PARENTS)
    cpt: dict[Annotated[str, Field(max_length=MAX_PARENTS * 66)], list[Unit]] = Field(max_length=MAX_FACTOR_CELLS)


class DiscreteNetwork(Model):
    """A discrete Bayesian network."""

    variables: dict[_Name, DiscreteVariable] = Field(min_length=1, max_length=MAX_VARIABLES)


@dataclass
class Compiled:
    """A checked network: domains, topological order, and each variable's table (parents first, itself last)."""

    domains: dict[str, list[str]]
    order: list[str]
    parents: dict[str, list[str]]
    tables: dict[str, np.ndarray]


def _row_key(key: str) -> str:
    return ",".join(part.strip() for part in key.split(","))


def _table(name: str, var: DiscreteVariable, domains: Mapping[str, list[str]], method: str, where: str) -> np.ndarray:
    path = f"{where}.variables.{name}.cpt"
    shape = [len(domains[p]) for p in var.parents]
    rows = math.prod(shape)
    if len(var.cpt) != rows:
        raise fail(method, path, f"needs one row per combination of the parents' values ({rows}), got {len(var.cpt)}")
    if rows * len(var.values) > MAX_FACTOR_CELLS:
        raise fail(method, path, f"has {rows * len(var.values):,} cells (at most {MAX_FACTOR_CELLS:,})")
    table = np.zeros([*shape, len(var.values)])
    for key, probabilities in var.cpt.items():
        parts = _row_key(key).split(",") if var.parents else []
        if key.strip() and not var.parents:
            raise fail(method, path, f"a root variable has the one row '' (got {key!r})")
        if len(parts) != len(var.parents):
            raise fail(method, f"{path}.{key}", f"names {len(parts)} parent values, {name} has {len(var.parents)}")
        index = []
        for parent, part in zip(var.parents, parts, strict=True):
            if part not in domains[parent]:
                raise fail(method, f"{path}.{key}", f"{part!r} is not a value of {parent} ({domains[parent]})")
            index.append(domains[parent].index(part))
        if len(probabilities) != len(var.values):
            raise fail(method, f"{path}.{key}", f"needs one probability per value of {name} ({len(var.values)})")
        if abs(math.fsum(probabilities) - 1.0) > TOLERANCE:
            raise fail(method, f"{path}.{key}", f"must sum to 1 (± {TOLERANCE:g}), got {math.fsum(probabilities):.6g}")
        table[tuple(index)] = probabilities
    return table


def compile_network(network: DiscreteNetwork, method: str, where: str = "network") -> Compiled:
    """The network checked (parents known, no cycle, values unique, every table complete and normalised).

    Raises:
        InputError: naming ``inputs.<method>.<where>.variables.<name>...`` and the rule broken.
    """
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(network.variables)
    domains = {}
    for name, var in network.variables.items():
        if len(set(var.values)) != len(var.values):
            raise fail(method, f"{where}.variables.{name}.values", "lists a value twice")
        if len(set(var.parents)) != len(var.parents):
            raise fail(method, f"{where}.variables.{name}.parents", "lists a parent twice")
        for parent in var.parents:
            if parent not in network.variables:
                raise fail(method, f"{where}.variables.{name}.parents", f"unknown variable {parent!r}")
            graph.add_edge(parent, name)
        domains[name] = list(var.values)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = " -> ".join(a for a, _ in nx.find_cycle(graph))
        raise fail(method, f"{where}.variables", f"the network has a cycle ({cycle})")
    tables = {name: _table(name, var, domains, method, where) for name, var in network.variables.items()}
    return Compiled(domains=domains, order=list(nx.lexicographical_topological_sort(graph)),
                    parents={n: list(v.parents) for n, v in network.variables.items()}, tables=tables)  # fmt: skip


def factor_of(net: Compiled, name: str) -> Factor:
    """The table of ``name`` as a factor over its parents and itself."""
    return Factor((*net.parents[name], name), net.tables[name])


def eliminate(factors: list[Factor], hidden: Sequence[str], domains: Mapping[str, list[str]],
              budget: Budget) -> list[Factor]:  # fmt: skip
    """``factors`` with every ``hidden`` variable summed out, cheapest first (min-weight: the smallest product table
    over the variable and its current neighbours), the neighbourhoods kept up to date as variables go."""
    left = set(hidden)
    near: dict[str, set[str]] = {n: set() for f in factors for n in f.names}
    holding: dict[str, list[int]] = {n: [] for n in near}
    for i, f in enumerate(factors):
        for n in f.names:
            near[n] |= set(f.names) - {n}
            holding[n].append(i)
    pool: dict[int, Factor] = dict(enumerate(factors))
    keys = itertools.count(len(factors))
    while left:
        name = min(left, key=lambda n: (len(domains[n]) * math.prod(len(domains[m]) for m in near[n]), n))
        left.discard(name)
        touching = [pool.pop(i) for i in dict.fromkeys(holding[name]) if i in pool]
        merged = sum_out(product(touching, budget), [name])
        index = next(keys)
        pool[index] = merged
        for m in near.pop(name):
            near[m] |= set(merged.names) - {m}
            near[m].discard(name)
            holding[m].append(index)
    return list(pool.values())


def query(net: Compiled, targets: Sequence[str], evidence: Mapping[str, str], budget: Budget,
          do: Mapping[str, str] | None = None) -> Factor | None:  # fmt: skip
    """P(targets | evidence) (in the network cut by ``do``) as a factor over ``targets``; None if P(evidence) = 0.

    Raises:
        InputError: the elimination needs a table over its bound (see :class:`Budget`).
    """
    do = dict(do or {})
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(net.order)
    graph.add_edges_from((p, n) for n in net.order if n not in do for p in net.parents[n])
    keep = set(targets) | set(evidence) | set(do)
    for name in list(keep):
        keep |= nx.ancestors(graph, name)
    factors = []
    for name in (n for n in net.order if n in keep):
        if name in do:
            table = np.zeros(len(net.domains[name]))
            table[net.domains[name].index(do[name])] = 1.0
            factors.append(Factor((name,), table))
        else:
            factors.append(factor_of(net, name))
    fixed = {n: net.domains[n].index(v) for n, v in evidence.items()}
    factors = [reduce(f, fixed) for f in factors]
    hidden = [n for n in net.order if n in keep and n not in targets and n not in evidence]
    whole = product(eliminate(factors, hidden, net.domains, budget), budget)
    result = normalised(sum_out(whole, [n for n in whole.names if n not in targets]))
    if result is None:
        return None
    order = [n for n in targets if n not in evidence]
    return Factor(tuple(order), result.aligned(order).reshape([len(net.domains[n]) for n in order]))


__all__ = ["MAX_PARENTS", "MAX_VALUES", "MAX_VARIABLES", "Compiled", "DiscreteNetwork", "DiscreteVariable",
           "compile_network", "eliminate", "factor_of", "query"]  # fmt: skip
