"""Boolean Bayesian networks: validation, exact inference by enumeration, and graph surgery for do(X = x).

A network is ``{"nodes": {NAME: {"parents": [..], "cpt": {...}}}}`` where ``cpt`` gives P(NAME = true | parents)
keyed by the parents' values in listed order, ``T``/``F`` joined by commas (``"T,F"``); a root node has
``{"": p}``. Every combination must be present. Inference enumerates the joint distribution with numpy
(``2^n`` rows, at most :data:`MAX_NODES` nodes)::

    P(q | e) = Σ_{rows with q, e} Π_i P(x_i | parents_i) / Σ_{rows with e} Π_i P(x_i | parents_i)

``do(X = x)`` replaces X's table by the constant x (Pearl's truncated factorisation), cutting X from its
parents. pgmpy would do the same but pulls pandas, statsmodels and huggingface_hub; see
docs/decisions/2026-11-26-reasoning-methods.md.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Annotated

import networkx as nx
import numpy as np
from pydantic import Field

from kg.models import Model, Unit
from reasoning.router.methods.base import fail

MAX_NODES = 20
_Name = Annotated[str, Field(min_length=1, max_length=64)]


class BayesNode(Model):
    """One Boolean variable: its parents (in order) and P(true | parents)."""

    parents: list[_Name] = Field(default_factory=list, max_length=10)
    cpt: dict[str, Unit]


class BayesNetwork(Model):
    """A Boolean Bayesian network."""

    nodes: dict[_Name, BayesNode] = Field(min_length=1, max_length=MAX_NODES)


def _key(values: tuple[bool, ...]) -> str:
    return ",".join("T" if v else "F" for v in values)


def check_network(network: BayesNetwork, method: str, where: str = "network") -> list[str]:
    """The nodes in topological order, after checking parents, tables and acyclicity.

    Raises:
        InputError: an unknown parent, a missing or extra table row, or a cycle (path ``inputs.<method>...``).
    """
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(network.nodes)
    for name, node in network.nodes.items():
        path = f"{where}.nodes.{name}"
        for parent in node.parents:
            if parent not in network.nodes:
                raise fail(method, f"{path}.parents", f"unknown node {parent!r}")
            graph.add_edge(parent, name)
        if len(set(node.parents)) != len(node.parents):
            raise fail(method, f"{path}.parents", "lists a parent twice")
        wanted = {_key(v) for v in itertools.product((True, False), repeat=len(node.parents))}
        given = {k.replace(" ", "").upper() for k in node.cpt}
        if given != wanted:
            missing = sorted(wanted - given)
            rows = ", ".join(repr(k) for k in sorted(wanted))
            wrong = f"missing {missing[0]!r}" if missing else f"unexpected {sorted(given - wanted)[0]!r}"
            rule = f"needs a row for every parent combination ({rows}); {wrong}"
            raise fail(method, f"{path}.cpt", rule)
    if not nx.is_directed_acyclic_graph(graph):
        cycle = " -> ".join(a for a, _ in nx.find_cycle(graph))
        raise fail(method, f"{where}.nodes", f"the network has a cycle ({cycle})")
    return list(nx.lexicographical_topological_sort(graph))


def _table(node: BayesNode) -> np.ndarray:
    """P(true | parents) indexed by the parents' bits, first parent the most significant, T = 1."""
    table = np.zeros(2 ** len(node.parents))
    for key, p in node.cpt.items():
        bits = [part == "T" for part in key.replace(" ", "").upper().split(",")] if node.parents else []
        index = sum(int(b) << (len(bits) - 1 - i) for i, b in enumerate(bits))
        table[index] = p
    return table


def joint(
    network: BayesNetwork, order: list[str], do: Mapping[str, bool] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every assignment (rows of booleans, columns in ``order``) and its probability, with ``do`` applied."""
    n = len(order)
    column = {name: i for i, name in enumerate(order)}
    rows = ((np.arange(2**n)[:, None] >> np.arange(n)[::-1]) & 1).astype(bool)
    prob = np.ones(2**n)
    for name in order:
        values = rows[:, column[name]]
        if do and name in do:
            prob *= values == do[name]
            continue
        node = network.nodes[name]
        index = np.zeros(2**n, dtype=np.int64)
        for parent in node.parents:
            index = (index << 1) | rows[:, column[parent]]
        p_true = _table(node)[index]
        prob *= np.where(values, p_true, 1.0 - p_true)
    return rows, prob


def probability(network: BayesNetwork, order: list[str], query: str, evidence: Mapping[str, bool],
                do: Mapping[str, bool] | None = None) -> float | None:  # fmt: skip
    """P(query = true | evidence) (in the mutilated network when ``do`` is given); None when P(evidence) = 0."""
    rows, prob = joint(network, order, do)
    column = {name: i for i, name in enumerate(order)}
    mask = np.ones(len(prob), dtype=bool)
    for name, value in evidence.items():
        mask &= rows[:, column[name]] == value
    total = float(prob[mask].sum())
    if total <= 0.0:
        return None
    return float(prob[mask & rows[:, column[query]]].sum()) / total


__all__ = ["MAX_NODES", "BayesNetwork", "BayesNode", "check_network", "joint", "probability"]
