"""The ``root-cause`` method: which cause upstream of the symptoms most likely explains them.

Inputs ``inputs.root-cause``: ``edges`` ([[cause, effect], ..], else the agent's causal facts), ``symptoms``
(else the subjects of ``status failing|down|degraded`` facts) and ``evidence`` ({node: 0..1}, how strongly checks
point at a node: 0 = checked and found fine, 1 = confirmed faulty; a node not checked counts
:data:`UNCHECKED`).

Every node with a causal path to a symptom is a candidate; nodes checked and found fine (evidence 0) are ruled
out. A candidate's score is its coverage (share of the symptoms it reaches) times its evidence; ties go to a root
(no cause of its own), then to the shorter mean distance. One breadth-first search per symptom over the reversed
graph finds every candidate's reach and distances: symptoms x (nodes + edges) steps, at most
:data:`MAX_WORK` (else a one-line error asking to narrow the graph).
"""

from __future__ import annotations

from typing import Annotated, Any

import networkx as nx
from pydantic import Field

from kg.models import Model, Unit
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.causal_graph import graph_from
from reasoning.router.methods.docs import MethodDoc

METHOD = "root-cause"
#: Evidence of a node nobody checked; edges of one graph; symptoms; search steps (symptoms x graph size).
UNCHECKED, MAX_EDGES, MAX_SYMPTOMS, MAX_WORK = 0.5, 50_000, 5_000, 5_000_000
#: Candidates whose explained symptoms are listed by name in the value (the others give their count).
LISTED = 20
_Name = Annotated[str, Field(min_length=1, max_length=256)]


class RootCauseInput(Model):
    """Inputs of ``root-cause``."""

    edges: list[Annotated[list[_Name], Field(min_length=2, max_length=2)]] | None = Field(None, max_length=MAX_EDGES)
    symptoms: list[_Name] | None = Field(None, max_length=MAX_SYMPTOMS)
    evidence: dict[_Name, Unit] = Field(default_factory=dict, max_length=MAX_EDGES)


def _symptoms(ctx: MethodContext, data: RootCauseInput, used: list[str]) -> list[str]:
    if data.symptoms is not None:
        return list(dict.fromkeys(data.symptoms))
    failing = [f for status in ("failing", "down", "degraded") for f in ctx.facts(predicate="status", object=status)]
    used += [f.uid for f in failing]
    return sorted({f.subject for f in failing})


def _reach(graph: nx.DiGraph[str], symptoms: list[str]) -> dict[str, dict[str, int]]:
    """For every node upstream of a symptom: the symptoms it reaches (in the symptoms' order) and how far."""
    causes = {node: list(graph.predecessors(node)) for node in graph}
    reach: dict[str, dict[str, int]] = {}
    for symptom in symptoms:
        seen, frontier, distance = {symptom}, [symptom], 0
        while frontier:
            distance += 1
            step = []
            for node in frontier:
                for cause in causes[node]:
                    if cause not in seen:
                        seen.add(cause)
                        step.append(cause)
                        reach.setdefault(cause, {})[symptom] = distance
            frontier = step
    return reach


def root_cause(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``root-cause``."""
    data = validate(RootCauseInput, inputs, METHOD)
    graph, used = graph_from(ctx, METHOD, inputs)
    symptoms = _symptoms(ctx, data, used)
    if not symptoms or graph.number_of_nodes() == 0:
        raise MissingInputs(METHOD, "give inputs.root-cause.edges and symptoms (or causal and status facts)")
    missing = [s for s in symptoms if s not in graph]
    if missing:
        raise fail(METHOD, "symptoms", f"{missing[0]!r} is not a node of the causal graph")
    work = len(symptoms) * (graph.number_of_nodes() + graph.number_of_edges())
    if work > MAX_WORK:
        raise fail(METHOD, "symptoms", f"{len(symptoms)} symptoms over a graph of {graph.number_of_nodes():,} nodes "
                   f"need {work:,} search steps (at most {MAX_WORK:,}): narrow the graph or the symptoms")  # fmt: skip
    reach = _reach(graph, symptoms)
    rows: list[dict[str, Any]] = []
    ruled_out: list[str] = []
    for node, hits in reach.items():
        checked = node in data.evidence
        evidence = data.evidence.get(node, UNCHECKED)
        if checked and evidence == 0:
            ruled_out.append(node)
            continue
        coverage = len(hits) / len(symptoms)
        rows.append({"cause": node, "coverage": coverage, "explains": list(hits),
                     "root": graph.in_degree(node) == 0, "evidence": evidence, "checked": checked,
                     "score": coverage * evidence, "mean_distance": sum(hits.values()) / len(hits)})  # fmt: skip
    value: dict[str, Any] = {"candidates": rows, "symptoms": symptoms, "ruled_out": sorted(ruled_out)}
    if not rows:
        why = "every cause upstream of the symptoms was checked and found fine" if ruled_out else \
              "no node has a causal path to a symptom"  # fmt: skip
        return computed(METHOD, "no candidate cause explains the symptoms", 0.0, value, trace=[why], used=used)
    rows.sort(key=lambda r: (-r["score"], not r["root"], r["mean_distance"], r["cause"]))
    for row in rows[LISTED:]:
        row["explains"] = len(row["explains"])  # the value stays linear in the graph, not nodes x symptoms
    top = rows[0]
    tied = [r for r in rows if (r["score"], r["root"]) == (top["score"], top["root"])]
    trace = [
        f"{len(rows)} candidate cause(s) reach the {len(symptoms)} symptom(s); {len(ruled_out)} ruled out "
        "by evidence 0",
        f"ranked by coverage x evidence (unchecked = {UNCHECKED}), then root, then distance",
    ]
    trace += [f"{r['cause']}: covers {r['coverage']:.2f}, evidence {r['evidence']:.2f}"
              f"{'' if r['checked'] else ' (unchecked)'}, root {r['root']}" for r in rows[:5]]  # fmt: skip
    conclusion = (f"most likely root cause: {top['cause']} (explains {round(top['coverage'] * len(symptoms))} of "
                  f"{len(symptoms)} "
                  f"symptoms, evidence {top['evidence']:.2f}{'' if top['checked'] else ', unchecked'})")  # fmt: skip
    return computed(METHOD, conclusion, top["score"] / len(tied), value, trace=trace, used=used)


DOCS = {
    METHOD: MethodDoc(
        confidence=(f"The top candidate's coverage (share of the symptoms it reaches) times its evidence (a node "
                    f"nobody checked counts {UNCHECKED}), divided by the number of candidates tied with it: 1.0 only "
                    "for a confirmed fault (evidence 1) that explains every symptom alone."),
        bound=(f"Graphs of at most {MAX_EDGES:,} edges and {MAX_SYMPTOMS:,} symptoms; one breadth-first search per "
               f"symptom, symptoms x (nodes + edges) at most {MAX_WORK:,} steps, else a one-line error naming "
               "inputs.root-cause.symptoms."),
        inputs=RootCauseInput,
        example={"edges": [["disk full", "db down"], ["db down", "api errors"], ["api errors", "checkout fails"],
                           ["api errors", "login fails"], ["bad deploy", "checkout fails"]],
                 "symptoms": ["checkout fails", "login fails"], "evidence": {"disk full": 0.9, "bad deploy": 0}},
        graph=("Without edges: causes/leadsTo/affects/influences facts (subject -> object) and dependsOn facts "
               "(object -> subject); without symptoms: subjects of 'status failing|down|degraded' facts."),
    ),
}  # fmt: skip

__all__ = ["DOCS", "MAX_WORK", "UNCHECKED", "RootCauseInput", "root_cause"]
