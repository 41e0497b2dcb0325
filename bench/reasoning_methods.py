"""Reasoning-methods benchmark: the latency of every method of the seed's catalogue on its golden problem.
One JSON line.

    python bench/reasoning_methods.py             # 20 timed calls per method (after one warm-up)
    python bench/reasoning_methods.py --runs 5    # a quick run

Each method runs through the router (``reason(ctx, method=..., inputs=...)``) as a caller would, on
the golden problem of its tests; the graph-reading ones (case-based, heuristic, naturalistic,
meta-cognitive, and deductive over the store) run in a fresh workspace with a few facts, rules and
cases. Reported per method: median and max milliseconds, the kind (every one must be ``computed``)
and the conclusion. Targets (issue 20): under 100 ms each, except the simulation and mining methods
(monte-carlo, inductive, pattern-recognition, learning-to-reason) under 2 s.

Peer, side by side: the Bayesian-network query is also answered by a plain-Python enumeration of the
joint distribution (``itertools.product``, the textbook algorithm; pgmpy is not installed, see
docs/decisions/2026-11-26-reasoning-methods.md), with the same answer checked.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kg
from cli.demo.reasoning import SPRINKLER
from reasoning.router import MethodContext, reason
from reasoning.service import RuleService

SLOW_OK = {"monte-carlo", "inductive", "pattern-recognition", "learning-to-reason"}


def _rule(condition: str, conclusion: str) -> dict[str, Any]:
    keys = ("subject", "predicate", "object")
    return {"name": f"{condition} => {conclusion}", "conditions": [dict(zip(keys, condition.split(), strict=True))],
            "conclusion": dict(zip(keys, conclusion.split(), strict=True))}  # fmt: skip


def _stones() -> list[dict[str, Any]]:
    rows = []
    for t, s, n, k in [("A", "small", 87, 81), ("A", "large", 263, 192), ("B", "small", 270, 234),
                       ("B", "large", 80, 55)]:  # fmt: skip
        rows += [{"Treatment": t, "Size": s, "Recovery": True, "count": k},
                 {"Treatment": t, "Size": s, "Recovery": False, "count": n - k}]  # fmt: skip
    return rows


def golden() -> dict[str, dict[str, Any]]:
    """The golden problem of every method (as in its tests)."""
    baskets = {"T100": "I1 I2 I5", "T200": "I2 I4", "T300": "I2 I3", "T400": "I1 I2 I4", "T500": "I1 I3",
               "T600": "I2 I3", "T700": "I1 I3", "T800": "I1 I2 I3 I5", "T900": "I1 I2 I3"}  # fmt: skip
    squad = [_rule("court orders execution", "captain signals fire"),
             _rule("captain signals fire", "riflemanA shoots prisoner"),
             _rule("captain signals fire", "riflemanB shoots prisoner"),
             _rule("riflemanA shoots prisoner", "prisoner is dead"),
             _rule("riflemanB shoots prisoner", "prisoner is dead")]  # fmt: skip
    stones_net = {"nodes": {
        "Large": {"parents": [], "cpt": {"": 343 / 700}},
        "TreatA": {"parents": ["Large"], "cpt": {"T": 263 / 343, "F": 87 / 357}},
        "Recovery": {"parents": ["TreatA", "Large"],
                     "cpt": {"T,T": 192 / 263, "T,F": 81 / 87, "F,T": 55 / 80, "F,F": 234 / 270}}}}  # fmt: skip
    situation = {"beliefs": ["stock is low", "demand is rising"], "desires": ["avoid stock-outs"]}
    return {
        "deductive": {"goal": "acme isTarget yes"},
        "inductive": {"facts": [f"{t} contains {i}" for t, v in baskets.items() for i in v.split()],
                      "min_support": 0.22, "min_confidence": 0.5},
        "abductive": {"observation": "acme isTarget yes"},
        "analogical": {"source": ["sun attracts planet", "sun moreMassiveThan planet", "planet revolvesAround sun"],
                       "target": ["nucleus attracts electron", "nucleus moreMassiveThan electron"]},
        "modal": {"worlds": {"w1": ["p"], "w2": ["p", "q"], "w3": ["q"]}, "actual": "w1",
                  "access": [["w1", "w1"], ["w1", "w2"], ["w2", "w2"], ["w2", "w3"]], "query": ["box(p)", "dia(q)"]},
        "deontic": {"norms": [{"id": "gdpr", "modality": "obligation", "action": "erase invoices",
                               "when": ["customer requests erasure"]},
                              {"id": "retention", "modality": "prohibition", "action": "erase invoices",
                               "when": ["invoice withinRetention yes"], "priority": 1}],
                    "facts": ["customer requests erasure", "invoice withinRetention yes"]},
        "temporal": {"intervals": {"design": [1, 3], "build": [3, 8], "review": [5, 6]}, "as_of": 5},
        "bayesian": {"network": SPRINKLER, "evidence": {"WetGrass": True}, "query": "Rain"},
        "decision-theory": {"acts": ["large", "small", "none"], "states": ["good", "bad"],
                            "payoffs": [[200000, -180000], [100000, -20000], [0, 0]], "probabilities": [0.5, 0.5]},
        "expected-utility": {"options": [{"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]},
                                         {"name": "B", "outcomes": [{"probability": 0.5, "utility": 20},
                                                                    {"probability": 0.5, "utility": 0}]}]},
        "info-theory": {"distribution": {"a": 0.5, "b": 0.25, "c": 0.25},
                        "joint": {"r,w": 0.3, "r,d": 0.05, "s,w": 0.1, "s,d": 0.55}},
        "monte-carlo": {"variables": {"x": {"dist": "uniform"}, "y": {"dist": "uniform"}},
                        "formula": "(x**2 + y**2 <= 1) * 4", "samples": 200000},
        "causal": {"edges": [["Size", "Treatment"], ["Size", "Recovery"], ["Treatment", "Recovery"]],
                   "treatment": "Treatment", "outcome": "Recovery", "data": _stones()},
        "counterfactual": {"facts": ["court orders execution"], "rules": squad, "goal": "prisoner is dead",
                           "without": ["riflemanA shoots prisoner"]},
        "interventional": {"network": stones_net, "do": {"TreatA": True}, "query": "Recovery"},
        "root-cause": {"edges": [["disk", "db"], ["db", "api"], ["api", "checkout"], ["api", "login"]],
                       "symptoms": ["checkout", "login"]},
        "systems-thinking": {"links": [["births", "population", "+"], ["population", "births", "+"],
                                       ["population", "deaths", "+"], ["deaths", "population", "-"]]},
        "heuristic": situation,
        "case-based": situation,
        "pattern-recognition": {"transactions": [["bread", "milk"], ["bread", "diapers", "beer", "eggs"],
                                                 ["milk", "diapers", "beer", "cola"],
                                                 ["bread", "milk", "diapers", "beer"],
                                                 ["bread", "milk", "diapers", "cola"]],
                                "min_support": 0.4, "min_confidence": 0.6},
        "satisficing": {"options": [{"name": "A", "attributes": {"price": 200, "rating": 4.5}},
                                    {"name": "B", "attributes": {"price": 120, "rating": 3.9}},
                                    {"name": "C", "attributes": {"price": 140, "rating": 4.2}}],
                        "aspirations": {"price": {"max": 150}, "rating": {"min": 4}}},
        "naturalistic": situation,
        "game-theory": {"players": ["him", "her"], "actions": [["bach", "stravinsky"], ["bach", "stravinsky"]],
                        "payoffs": [[[2, 1], [0, 0]], [[0, 0], [1, 2]]]},
        "negotiation": {"parties": {"ann": {"side": "buy", "reservation": 120}, "bob": {"side": "sell",
                                                                                       "reservation": 100}}},
        "social-choice": {"rule": "borda", "candidates": ["memphis", "nashville", "chattanooga", "knoxville"],
                          "ballots": [{"ranking": ["memphis", "nashville", "chattanooga", "knoxville"], "count": 42},
                                      {"ranking": ["nashville", "chattanooga", "knoxville", "memphis"], "count": 26},
                                      {"ranking": ["chattanooga", "knoxville", "nashville", "memphis"], "count": 15},
                                      {"ranking": ["knoxville", "chattanooga", "nashville", "memphis"], "count": 17}]},
        "argumentation": {"arguments": ["a", "b", "c", "d"], "semantics": "preferred",
                          "attacks": [["a", "b"], ["b", "a"], ["a", "c"], ["b", "c"], ["c", "d"]]},
        "stakeholder": {"stakeholders": [{"name": "cfo", "power": 0.9, "interest": 0.3},
                                         {"name": "users", "power": 0.2, "interest": 0.9}]},
        "meta-cognitive": {"goals": ["acme isTarget yes", "globex isTarget yes"]},
        "strategy-selection": {"problem_classification": {"uncertainty": "high", "domain": "social"}},
        "learning-to-reason": {"outcomes": [{"method": "bayesian", "success": True}, {"method": "bayesian",
                               "success": True}, {"method": "causal", "success": False}]},
        "reflection": {"items": [{"name": "launch", "expected": 100, "actual": 80}, {"name": "on time",
                                 "expected": True, "actual": False}]},
        "calibration": {"predictions": [{"p": 0.9, "outcome": True}, {"p": 0.8, "outcome": True},
                                        {"p": 0.3, "outcome": False}, {"p": 0.6, "outcome": False}]},
    }  # fmt: skip


def _workspace(path: Path) -> kg.Workspace:
    ws = kg.init_workspace(path)
    ws.agents.add("bench", name="Bench")
    ws.facts.assert_fact("bench", "acme", "hasIndustry", "saas")
    RuleService(ws.ports, ws.scopes, ws.clock).create("bench", **_rule("?x hasIndustry saas", "?x isTarget yes"))
    cases = [("discount-clearance", ["stock is low", "demand is rising"], True),
             ("reorder", ["stock is low"], True), ("wait", ["demand is falling"], False)]  # fmt: skip
    from reasoning.cases import CaseService  # noqa: PLC0415 - bench setup only

    service = CaseService(ws.ports, ws.scopes, ws.clock, None)
    for action, beliefs, success in cases:
        service.store_case("bench", situation={"beliefs": beliefs, "desires": ["avoid stock-outs"]},
                           solution={"actions": [action]}, outcome={"success": success})  # fmt: skip
    return ws


def naive_posterior(network: dict[str, Any], query: str, evidence: dict[str, bool]) -> float:
    """P(query | evidence) by enumerating the joint in plain Python (the textbook algorithm)."""
    names = list(network["nodes"])
    total = hits = 0.0
    for values in itertools.product((True, False), repeat=len(names)):
        world = dict(zip(names, values, strict=True))
        if any(world[k] != v for k, v in evidence.items()):
            continue
        p = 1.0
        for name, node in network["nodes"].items():
            key = ",".join("T" if world[q] else "F" for q in node["parents"])
            p_true = node["cpt"][key]
            p *= p_true if world[name] else 1 - p_true
        total += p
        hits += p if world[query] else 0.0
    return hits / total


def chain(n: int) -> dict[str, Any]:
    """A chain X0 -> X1 -> ... of ``n`` Boolean nodes (for the peer comparison at a larger size)."""
    nodes: dict[str, Any] = {"X0": {"parents": [], "cpt": {"": 0.3}}}
    for i in range(1, n):
        nodes[f"X{i}"] = {"parents": [f"X{i - 1}"], "cpt": {"T": 0.9, "F": 0.2}}
    return {"nodes": nodes}


def _time(fn: Any, runs: int) -> tuple[list[float], Any]:
    result = fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("MABOS_EMBEDDER", "none")
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mabos-bench-methods-", ignore_cleanup_errors=True) as scratch:
        tmp = Path(scratch)
        with _workspace(tmp / "ws") as ws:
            ctx = MethodContext("bench", ws)
            for method, inputs in golden().items():
                times, result = _time(lambda m=method, i=inputs: reason(ctx, method=m, inputs={m: i}), args.runs)
                outcome = result.results[0]
                limit = 2000 if method in SLOW_OK else 100
                rows[method] = {"median_ms": round(statistics.median(times), 3), "max_ms": round(max(times), 3),
                                "kind": outcome.kind, "limit_ms": limit,
                                "within_limit": max(times) < limit and outcome.kind == "computed",
                                "conclusion": outcome.conclusion[:120]}  # fmt: skip
            ours, answer = _time(lambda: reason(ctx, method="bayesian", inputs=golden()["bayesian"]), args.runs)
            peer, expected = _time(lambda: naive_posterior(SPRINKLER, "Rain", {"WetGrass": True}), args.runs)
            big = {"network": chain(16), "evidence": {"X15": True}, "query": "X0"}
            ours16, answer16 = _time(lambda: reason(ctx, method="bayesian", inputs={"bayesian": big}), args.runs)
            peer16, expected16 = _time(lambda: naive_posterior(big["network"], "X0", {"X15": True}), args.runs)
    computed = sum(r["kind"] == "computed" for r in rows.values())
    print(json.dumps({
        "bench": "reasoning_methods", "runs": args.runs, "methods": len(rows), "computed": computed,
        "all_within_limits": all(r["within_limit"] for r in rows.values()),
        "slowest": max(rows, key=lambda m: rows[m]["median_ms"]),
        "peer_bayesian": {"mabos_numpy_median_ms": round(statistics.median(ours), 3),
                          "plain_python_enumeration_median_ms": round(statistics.median(peer), 3),
                          "same_answer": abs(answer.results[0].value["probability"] - expected) < 1e-12},
        "peer_bayesian_16_node_chain": {"mabos_numpy_median_ms": round(statistics.median(ours16), 3),
                                        "plain_python_enumeration_median_ms": round(statistics.median(peer16), 3),
                                        "same_answer": abs(answer16.results[0].value["probability"] - expected16)
                                        < 1e-9},
        "per_method": rows, "python": platform.python_version(), "cpu": platform.machine(),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
