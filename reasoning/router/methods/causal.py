"""Engines of the causal methods: causal, counterfactual, interventional, root-cause, systems-thinking.

- causal: ``{"edges": [[cause, effect], ..] (else the agent's causes/leadsTo/affects/influences/dependsOn
  facts), "treatment": X, "outcome": Y, "latent": [unobserved nodes], "data": [{X: .., Y: .., Z: ..,
  "count": n}, ..] (optional), "outcome_value": true}`` -> ``value.adjustment_set`` (minimal back-door set, or
  null when none exists), ``value.backdoor_paths``, and with data ``value.effect`` = P(Y | do(X = x)) per value of X;
- interventional: ``{"network": <bayesian network>, "do": {X: bool}, "query": Y, "evidence": {..}}`` ->
  ``value.probability`` = P(Y | do(X), evidence) by graph surgery, and ``value.observational`` =
  P(Y | X, evidence) for comparison (their gap is the confounding bias);
- counterfactual: see :mod:`.counterfactual`;
- root-cause: ``{"edges": [[cause, effect], ..] (else causal facts), "symptoms": [..] (else subjects of
  ``status failing|down|degraded`` facts), "evidence": {node: 0..1}}`` -> candidates ranked by coverage
  (share of symptoms they reach), then being a root (no cause of their own), then evidence, then distance;
- systems-thinking: ``{"links": [[from, to, "+"|"-"], ..]}`` (else ``increases``/``decreases`` facts) ->
  every feedback loop with its polarity (reinforcing when the number of ``-`` links is even, else
  balancing; Sterman, Business Dynamics, 2000, ch. 5) and leverage points (nodes on the most loops).
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import networkx as nx
from pydantic import Field

from kg.models import Model
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.bayes_net import BayesNetwork, check_network, probability
from reasoning.router.methods.causal_graph import adjust, backdoor_paths, backdoor_set, graph_from
from reasoning.router.methods.counterfactual import counterfactual

_Name = Annotated[str, Field(min_length=1, max_length=256)]
MAX_LOOPS = 1000


def causal(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``causal``: back-door identification, and the adjusted effect when data are given."""
    x, y = inputs.get("treatment"), inputs.get("outcome")
    if not x or not y:
        raise MissingInputs("causal", "give inputs.causal.treatment and outcome (and edges, or causal facts)")
    if not isinstance(x, str) or not isinstance(y, str):
        raise fail("causal", "treatment", "treatment and outcome must be node names")
    graph, used = graph_from(ctx, "causal", inputs)
    if graph.number_of_nodes() == 0:
        raise MissingInputs("causal", "give inputs.causal.edges (or causes/dependsOn facts)")
    for name, field in ((x, "treatment"), (y, "outcome")):
        if name not in graph:
            raise fail("causal", field, f"{name!r} is not a node of the causal graph")
    if not nx.is_directed_acyclic_graph(graph):
        raise fail("causal", "edges", "the causal graph has a cycle (it must be a DAG)")
    latent = inputs.get("latent", [])
    if not isinstance(latent, list) or not all(isinstance(n, str) for n in latent):
        raise fail("causal", "latent", "must be a list of node names (unobserved variables)")
    paths = backdoor_paths(graph, x, y)
    z = backdoor_set(graph, x, y, latent)
    value: dict[str, Any] = {"treatment": x, "outcome": y, "backdoor_paths": paths,
                             "adjustment_set": None if z is None else sorted(z)}  # fmt: skip
    trace = [f"causal graph: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges",
             f"{len(paths)} back-door path(s) from {x} to {y}"]  # fmt: skip
    notes = ["valid only if the causal graph is right (no unmeasured confounder missing from it)"]
    if z is None:
        return computed("causal", f"the effect of {x} on {y} is not identifiable by back-door adjustment", 1.0,
                        value, trace=trace, used=used, notes=notes)  # fmt: skip
    label = "{" + ", ".join(sorted(z)) + "}"
    trace.append(f"minimal back-door set {label} (blocks every back-door path, no descendant of {x})")
    conclusion = f"adjust for {label} to identify the effect of {x} on {y}"
    if "data" in inputs:
        rows = inputs["data"]
        if not isinstance(rows, list):
            raise fail("causal", "data", "must be a list of observations")
        effect = adjust(rows, x, y, sorted(z), "causal", outcome_value=inputs.get("outcome_value", True))
        value["effect"] = effect
        trace.append("P(Y | do(X = x)) = sum over z of P(Y | x, z) P(z)")
        best = max(effect, key=lambda k: effect[k])
        shown = ", ".join(f"do({x}={k}): {v:.4f}" for k, v in effect.items())
        conclusion = f"{x} = {best} gives the most {y} ({shown}; adjusted for {label})"
    return computed("causal", conclusion, 1.0, value, trace=trace, used=used, notes=notes)


class InterventionInput(Model):
    """``interventional`` inputs."""

    network: BayesNetwork
    do: dict[_Name, bool] = Field(min_length=1)
    query: _Name
    evidence: dict[_Name, bool] = Field(default_factory=dict)


def interventional(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``interventional``: P(query | do(..)) by truncated factorisation."""
    if "network" not in inputs:
        raise MissingInputs("interventional", "give inputs.interventional.network, do and query")
    data = validate(InterventionInput, inputs, "interventional")
    order = check_network(data.network, "interventional")
    for name in [data.query, *data.do, *data.evidence]:
        if name not in data.network.nodes:
            raise fail("interventional", "query" if name == data.query else "do", f"unknown node {name!r}")
    p = probability(data.network, order, data.query, data.evidence, do=data.do)
    seen = probability(data.network, order, data.query, {**data.evidence, **data.do})
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


def root_cause(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``root-cause``."""
    graph, used = graph_from(ctx, "root-cause", inputs)
    symptoms = inputs.get("symptoms")
    if symptoms is None:
        statuses = ("failing", "down", "degraded")
        failing = [f for status in statuses for f in ctx.facts(predicate="status", object=status)]
        symptoms = sorted({f.subject for f in failing})
        used += [f.uid for f in failing]
    if not isinstance(symptoms, list) or not all(isinstance(s, str) for s in symptoms):
        raise fail("root-cause", "symptoms", "must be a list of node names")
    if not symptoms or graph.number_of_nodes() == 0:
        raise MissingInputs("root-cause", "give inputs.root-cause.edges and symptoms (or causal and status facts)")
    missing = [s for s in symptoms if s not in graph]
    if missing:
        raise fail("root-cause", "symptoms", f"{missing[0]!r} is not a node of the causal graph")
    evidence = inputs.get("evidence", {})
    if not isinstance(evidence, dict) or not all(isinstance(v, int | float) and 0 <= v <= 1 for v in evidence.values()):
        raise fail("root-cause", "evidence", "must map nodes to numbers from 0 to 1")
    rows = []
    for node in graph:
        reached = [s for s in symptoms if s != node and nx.has_path(graph, node, s)]
        if not reached:
            continue
        distance = sum(nx.shortest_path_length(graph, node, s) for s in reached) / len(reached)
        rows.append({"cause": node, "coverage": len(reached) / len(symptoms), "explains": reached,
                     "root": graph.in_degree(node) == 0, "evidence": float(evidence.get(node, 1.0)),
                     "mean_distance": distance})  # fmt: skip
    if not rows:
        return computed("root-cause", "no candidate cause reaches the symptoms", 0.0, {"candidates": []},
                        trace=["no node has a causal path to a symptom"], used=used)  # fmt: skip
    rows.sort(key=lambda r: (-r["coverage"], not r["root"], -r["evidence"], r["mean_distance"], r["cause"]))
    top = rows[0]
    tied = [r for r in rows if (r["coverage"], r["root"], r["evidence"]) == (top["coverage"], top["root"],
                                                                              top["evidence"])]  # fmt: skip
    confidence = top["coverage"] * top["evidence"] / len(tied)
    trace = [
        f"{len(rows)} candidate cause(s) reach the {len(symptoms)} symptom(s)",
        "ranked by coverage, root, evidence, mean distance",
    ]
    trace += [
        f"{r['cause']}: covers {r['coverage']:.2f}, root {r['root']}, evidence {r['evidence']:.2f}" for r in rows[:5]
    ]
    return computed("root-cause", f"most likely root cause: {top['cause']} (explains {len(top['explains'])} of "
                    f"{len(symptoms)} symptoms)", confidence, {"candidates": rows, "symptoms": symptoms},
                    trace=trace, used=used)  # fmt: skip


def _links(ctx: MethodContext, inputs: dict[str, Any]) -> tuple[list[tuple[str, str, str]], list[str]]:
    raw = inputs.get("links")
    if raw is None:
        facts = [*ctx.facts(predicate="increases"), *ctx.facts(predicate="decreases")]
        signed = [(f.subject, f.object, "+" if f.predicate == "increases" else "-") for f in facts]
        return signed, [f.uid for f in facts]
    if not isinstance(raw, list):
        raise fail("systems-thinking", "links", "must be a list of [from, to, '+'|'-']")
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
    for cycle in nx.simple_cycles(graph, length_bound=12):
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
    notes = [f"stopped after {MAX_LOOPS} loops"] if len(loops) >= MAX_LOOPS else []
    return computed("systems-thinking", conclusion, 1.0, value, trace=trace, used=used, notes=notes)


ENGINES: dict[str, Engine] = {
    "causal": causal,
    "counterfactual": counterfactual,
    "interventional": interventional,
    "root-cause": root_cause,
    "systems-thinking": systems_thinking,
}

__all__ = ["ENGINES", "causal", "interventional", "root_cause", "systems_thinking"]
