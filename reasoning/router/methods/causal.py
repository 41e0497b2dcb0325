"""Engines of the causal methods: causal, counterfactual, interventional, root-cause, systems-thinking.

- causal: see :mod:`.causal_effect` (back-door, front-door and the general ID algorithm, and the estimate);
- counterfactual: see :mod:`.counterfactual` (rules) and :mod:`.scm` (probabilistic structural causal models);
- root-cause: see :mod:`.root_cause`;
- interventional: ``{"network": <bayesian network>, "do": {X: value}, "query": Y, "evidence": {..}}`` ->
  ``value.probability`` = P(Y | do(X), evidence) by graph surgery, and ``value.observational`` =
  P(Y | X, evidence) for comparison (their gap is the confounding bias). A Boolean network (``nodes``) is
  read as two-valued (at most ``MAX_NODES`` nodes); a discrete one (``variables``, :mod:`.discrete`) is queried by
  variable elimination, and ``query_value`` names the value asked about (default: the first);
- systems-thinking: ``{"links": [[from, to, "+"|"-"], ..]}`` (else ``increases``/``decreases`` facts) ->
  every feedback loop with its polarity (reinforcing when the number of ``-`` links is even, else
  balancing; Sterman, Business Dynamics, 2000, ch. 5) and leverage points (nodes on the most loops).
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

import networkx as nx
from pydantic import Field

from kg.models import Model
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.bayes_net import MAX_NODES, BayesNetwork, check_network, probability
from reasoning.router.methods.causal_effect import causal
from reasoning.router.methods.counterfactual import counterfactual
from reasoning.router.methods.discrete import DiscreteNetwork, compile_network, query
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.factors import MAX_FACTOR_CELLS, MAX_WORK_CELLS, Budget
from reasoning.router.methods.root_cause import root_cause

_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Value = Annotated[str, Field(min_length=1, max_length=64)]
#: Feedback loops listed, their length, and signed links read.
MAX_LOOPS, MAX_LOOP_LENGTH, MAX_LINKS = 1000, 12, 20_000


class InterventionInput(Model):
    """``interventional`` inputs over a Boolean network."""

    network: BayesNetwork
    do: dict[_Name, bool] = Field(min_length=1)
    query: _Name
    evidence: dict[_Name, bool] = Field(default_factory=dict)


class DiscreteInterventionInput(Model):
    """``interventional`` inputs over a discrete network (multi-valued variables)."""

    network: DiscreteNetwork
    do: dict[_Name, _Value] = Field(min_length=1)
    query: _Name
    query_value: _Value | None = None
    evidence: dict[_Name, _Value] = Field(default_factory=dict)


def _discrete(inputs: dict[str, Any]) -> MethodOutcome:
    data = validate(DiscreteInterventionInput, inputs, "interventional")
    net = compile_network(data.network, "interventional")
    for field, given in (("do", data.do), ("evidence", data.evidence), ("query", {data.query: None})):
        for name, val in given.items():
            if name not in net.domains:
                raise fail("interventional", field, f"unknown variable {name!r}")
            if val is not None and val not in net.domains[name]:
                raise fail("interventional", f"{field}.{name}", f"{val!r} is not a value of {name}")
    wanted = data.query_value or net.domains[data.query][0]
    if wanted not in net.domains[data.query]:
        raise fail("interventional", "query_value", f"{wanted!r} is not a value of {data.query}")
    budget = Budget("interventional", "network")
    done = query(net, [data.query], data.evidence, budget, do=data.do)
    seen = query(net, [data.query], {**data.evidence, **data.do}, budget)
    if done is None:
        raise fail("interventional", "evidence", "has probability 0 after the intervention")
    index = net.domains[data.query].index(wanted)
    p = float(done.table[index])
    observed = None if seen is None else float(seen.table[index])
    act = ", ".join(f"{k} = {v}" for k, v in data.do.items())
    value = {"probability": p, "observational": observed, "distribution": dict(zip(net.domains[data.query],
             done.table.tolist(), strict=True)), "confounding_gap": None if observed is None else observed - p,
             "do": data.do, "query": data.query, "query_value": wanted}  # fmt: skip
    trace = [f"cut the arrows into {', '.join(data.do)} and fixed do({act})", "variable elimination over "
             f"{len(net.order)} variables", f"P({data.query} = {wanted} | do({act})) = {p:.4f}"]  # fmt: skip
    return computed("interventional", f"P({data.query} = {wanted} | do({act})) = {p:.4f}", max(p, 1 - p), value,
                    trace=trace)  # fmt: skip


def interventional(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``interventional``: P(query | do(..)) by truncated factorisation."""
    if "network" not in inputs:
        raise MissingInputs("interventional", "give inputs.interventional.network, do and query")
    if isinstance(inputs["network"], dict) and "variables" in inputs["network"]:
        return _discrete(inputs)
    data = validate(InterventionInput, inputs, "interventional")
    order = check_network(data.network, "interventional")
    for name in [data.query, *data.do, *data.evidence]:
        if name not in data.network.nodes:
            raise fail("interventional", "query" if name == data.query else "do", f"unknown node {name!r}")
    p = probability(data.network, order, data.query, data.evidence, do=data.do, method="interventional")
    seen = probability(data.network, order, data.query, {**data.evidence, **data.do}, method="interventional")
    if p is None:
        raise fail("interventional", "evidence", "has probability 0 after the intervention")
    act = ", ".join(f"{k} = {str(v).lower()}" for k, v in data.do.items())
    value = {"probability": p, "observational": seen, "confounding_gap": None if seen is None else seen - p,
             "do": data.do, "query": data.query}  # fmt: skip
    observed = "impossible" if seen is None else f"P({data.query} | {act}) = {seen:.4f}"
    trace = [f"cut the arrows into {', '.join(data.do)} and fixed do({act})",
             f"P({data.query} | do({act})) = {p:.4f}", f"observing instead: {observed}"]  # fmt: skip
    return computed("interventional", f"P({data.query} = true | do({act})) = {p:.4f}", max(p, 1 - p), value,
                    trace=trace)  # fmt: skip


class SystemsInput(Model):
    """Inputs of ``systems-thinking`` (the signed links of a causal loop diagram)."""

    links: list[tuple[_Name, _Name, Literal["+", "-"]]] = Field(max_length=MAX_LINKS)


def _links(ctx: MethodContext, inputs: dict[str, Any]) -> tuple[list[tuple[str, str, str]], list[str]]:
    raw = inputs.get("links")
    if raw is None:
        facts = [*ctx.facts(predicate="increases"), *ctx.facts(predicate="decreases")][:MAX_LINKS]
        signed = [(f.subject, f.object, "+" if f.predicate == "increases" else "-") for f in facts]
        return signed, [f.uid for f in facts]
    if not isinstance(raw, list) or len(raw) > MAX_LINKS:
        raise fail("systems-thinking", "links", f"must be a list of at most {MAX_LINKS:,} [from, to, '+'|'-']")
    links = []
    for i, link in enumerate(raw):
        if not (isinstance(link, list | tuple) and len(link) == 3 and link[2] in ("+", "-")
                and all(isinstance(n, str) and n for n in link[:2])):  # fmt: skip
            raise fail("systems-thinking", f"links.{i}", "must be [from, to, '+' or '-']")
        links.append((link[0], link[1], link[2]))
    return links, []


def systems_thinking(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``systems-thinking``: feedback loops, their polarity, leverage points."""
    links, used = _links(ctx, inputs)
    if not links:
        raise MissingInputs("systems-thinking", "give inputs.systems-thinking.links (or increases/decreases facts)")
    graph: nx.DiGraph[str] = nx.DiGraph()
    for source, target, sign in links:
        if graph.has_edge(source, target) and graph[source][target]["sign"] != sign:
            raise fail("systems-thinking", "links", f"{source} -> {target} is given as both + and -")
        graph.add_edge(source, target, sign=sign)
    loops: list[dict[str, Any]] = []
    for cycle in nx.simple_cycles(graph, length_bound=MAX_LOOP_LENGTH):
        signs = [graph[a][b]["sign"] for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True)]
        negatives = signs.count("-")
        loops.append({"nodes": cycle, "negative_links": negatives,
                      "polarity": "reinforcing" if negatives % 2 == 0 else "balancing"})  # fmt: skip
        if len(loops) >= MAX_LOOPS:
            break
    loops.sort(key=lambda loop: (len(loop["nodes"]), loop["nodes"]))
    on_loops = Counter(node for loop in loops for node in loop["nodes"])
    leverage = [{"node": n, "loops": c} for n, c in sorted(on_loops.items(), key=lambda kv: (-kv[1], kv[0]))]
    kinds = Counter(loop["polarity"] for loop in loops)
    value = {"loops": loops, "reinforcing": kinds["reinforcing"], "balancing": kinds["balancing"],
             "leverage_points": leverage[:10]}  # fmt: skip
    if not loops:
        conclusion = "no feedback loop: the system is a causal chain"
    else:
        conclusion = (
            f"{len(loops)} feedback loop(s) ({kinds['reinforcing']} reinforcing, {kinds['balancing']} "
            f"balancing); leverage point: {leverage[0]['node']} (on {leverage[0]['loops']} loop(s))"
        )
    trace = [
        f"{graph.number_of_nodes()} variables, {graph.number_of_edges()} signed links",
        *(f"{'R' if lp['polarity'] == 'reinforcing' else 'B'}: {' -> '.join(lp['nodes'])}" for lp in loops[:10]),
    ]
    cut = f"listed the first {MAX_LOOPS} feedback loops only (there are more)" if len(loops) >= MAX_LOOPS else None
    widest = max((len(c) for c in nx.strongly_connected_components(graph)), default=0)
    if cut is None and widest > MAX_LOOP_LENGTH:
        cut = (f"loops longer than {MAX_LOOP_LENGTH} links were not searched (a strongly connected part has {widest} "
               "variables)")  # fmt: skip
    value["complete"] = cut is None
    return computed("systems-thinking", conclusion, 1.0, value, trace=trace, used=used, partial=cut)


DOCS = {
    "interventional": MethodDoc(
        confidence=("max(p, 1 - p) for p = P(query | do(..), evidence), exact over the given network: how sure the "
                    "network is of the query's value under the intervention."),
        bound=(f"A Boolean network (nodes) of at most {MAX_NODES} nodes, or a discrete network (variables), queried "
               f"by variable elimination: tables of at most "
               f"{MAX_FACTOR_CELLS:,} cells, {MAX_WORK_CELLS:,} cells in all; past a bound a one-line error names "
               "inputs.interventional.network."),
        inputs=InterventionInput,
        example={"network": {"nodes": {
            "Large": {"parents": [], "cpt": {"": 0.49}},
            "TreatA": {"parents": ["Large"], "cpt": {"T": 0.7668, "F": 0.2437}},
            "Recovery": {"parents": ["TreatA", "Large"], "cpt": {"T,T": 0.73, "T,F": 0.93, "F,T": 0.69,
                                                                 "F,F": 0.87}}}},
            "do": {"TreatA": True}, "query": "Recovery"},
        extra={"discrete_inputs": "DiscreteInterventionInput: network.variables, do {X: value}, query, query_value"},
    ),
    "systems-thinking": MethodDoc(
        confidence=("1.0: the loops and their polarity are read off the given diagram exactly; a result whose "
                    "search was cut is marked partial (at most 0.8)."),
        bound=(f"At most {MAX_LINKS:,} links; loops of at most {MAX_LOOP_LENGTH} links, the first {MAX_LOOPS:,} "
               "found; a cut search (more loops, or a strongly connected part larger than the loop length) is "
               "marked partial."),
        inputs=SystemsInput,
        example={"links": [["births", "population", "+"], ["population", "births", "+"],
                           ["population", "deaths", "+"], ["deaths", "population", "-"]]},
        graph="Without links: increases (+) and decreases (-) facts, subject -> object.",
    ),
}  # fmt: skip


ENGINES: dict[str, Engine] = {
    "causal": causal,
    "counterfactual": counterfactual,
    "interventional": interventional,
    "root-cause": root_cause,
    "systems-thinking": systems_thinking,
}

__all__ = ["DOCS", "ENGINES", "SystemsInput", "causal", "interventional", "root_cause", "systems_thinking"]
