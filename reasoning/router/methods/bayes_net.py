"""Boolean Bayesian networks: validation, and exact inference and graph surgery for do(X = x).

A network is ``{"nodes": {NAME: {"parents": [..], "cpt": {...}}}}`` where ``cpt`` gives P(NAME = true | parents)
keyed by the parents' values in listed order, ``T``/``F`` joined by commas (``"T,F"``); a root node has
``{"": p}``. Every combination must be present. A query is exact: the network is read as a discrete network with
the values ``F`` and ``T`` and queried by variable elimination (:mod:`.discrete`), within its cell budget; at most
:data:`MAX_NODES` nodes::

    P(q | e) = Σ_{hidden} Π_i P(x_i | parents_i) / Σ_{hidden, q} Π_i P(x_i | parents_i)

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
from kg.models.base import new_list
from reasoning.router.methods.base import fail
from reasoning.router.methods.discrete import Compiled
from reasoning.router.methods.discrete import query as discrete_query
from reasoning.router.methods.factors import Budget

MAX_NODES = 200
_Name = Annotated[str, Field(min_length=1, max_length=64)]


class BayesNode(Model):
    """One Boolean variable: its parents (in order) and P(true | parents)."""

    parents: list[_Name] = Field(default_factory=new_list, max_length=10)
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


def compiled(network: BayesNetwork, order: list[str]) -> Compiled:
    """The network as a discrete network over the values ``F`` (index 0) and ``T`` (index 1)."""
    tables = {}
    for name in order:
        node = network.nodes[name]
        p_true = _table(node).reshape([2] * len(node.parents))
        tables[name] = np.stack([1.0 - p_true, p_true], axis=-1)
    return Compiled(domains={n: ["F", "T"] for n in order}, order=order,
                    parents={n: list(network.nodes[n].parents) for n in order}, tables=tables)  # fmt: skip


def probability(network: BayesNetwork, order: list[str], query: str, evidence: Mapping[str, bool],
                do: Mapping[str, bool] | None = None, *, method: str = "bayesian") -> float | None:  # fmt: skip
    """P(query = true | evidence) (in the mutilated network when ``do`` is given); None when P(evidence) = 0.

    Raises:
        InputError: naming ``inputs.<method>.network``: the elimination needs tables over the cell budget.
    """
    net = compiled(network, order)
    code = {True: "T", False: "F"}
    fixed = {k: code[v] for k, v in evidence.items()}
    if query in fixed:
        given = {k: v for k, v in fixed.items() if k != query}
        joint = discrete_query(
            net, [query], given, Budget(method, "network"), {k: code[v] for k, v in (do or {}).items()}
        )
        if joint is None or joint.table[1 if fixed[query] == "T" else 0] == 0:
            return None
        return 1.0 if fixed[query] == "T" else 0.0
    result = discrete_query(net, [query], fixed, Budget(method, "network"), {k: code[v] for k, v in (do or {}).items()})
    return None if result is None else float(result.table[1])


__all__ = ["MAX_NODES", "BayesNetwork", "BayesNode", "check_network", "compiled", "probability"]
