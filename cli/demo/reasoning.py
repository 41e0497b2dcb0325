"""The reasoning part of ``mabos demo``: a rule, forward chaining with persistence, the derivation's explanation
tree, a backward proof with a knowledge gap, abduction, a constraint, a policy, a case and the method router."""

from __future__ import annotations

from typing import Any

from cli.demo.report import Section
from cli.tools.registry import ToolContext, run
from kg.workspace import Workspace
from reasoning.cases import CaseService
from reasoning.router import MethodContext, reason


def _tree(out: Section, node: dict[str, Any], depth: int = 1) -> None:
    how = f"by rule {node['rule']['name']}" if node.get("rule") else f"fact {node.get('fact')}"
    out.say(f"{'  ' * depth}{' '.join(node['triple'])}  (confidence {node['confidence']:g}, {how})")
    for child in node.get("children", []):
        _tree(out, child, depth + 1)


def reasoning(ws: Workspace, agent_id: str, out: Section) -> None:
    """Rules over the demo's facts (acme has revenue $50000 and industry saas), through the rule tools (the registry
    that ``mabos rule|infer|policy`` and MCP use)."""
    ctx = ToolContext(workspace_obj=ws)

    def call(tool: str, /, **arguments: Any) -> Any:
        return run(ctx, tool, {"agent_id": agent_id, **arguments})

    ws.facts.assert_fact(agent_id, "acme", "locatedIn", "US")
    target = call("rule_create", name="saas-target", confidence_factor=0.9, conditions=[
        {"subject": "?x", "predicate": "hasIndustry", "object": "saas"},
        {"subject": "?x", "predicate": "hasRevenue", "object": "10000", "operator": "gt"}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "yes"})  # fmt: skip
    call("rule_create", name="us-outreach", conditions=[
        {"subject": "?x", "predicate": "isTarget", "object": "yes"},
        {"subject": "?x", "predicate": "locatedIn", "object": "US"}],
        conclusion={"subject": "?x", "predicate": "assignTo", "object": "us-sales"})  # fmt: skip
    out.say(f"rule {target.uid}: IF ?x hasIndustry saas AND ?x hasRevenue gt 10000 THEN ?x isTarget yes (cf 0.9)")
    out.say("rule us-outreach: IF ?x isTarget yes AND ?x locatedIn US THEN ?x assignTo us-sales")
    report = call("infer_forward", persist=True)
    out.say(f"infer forward --persist: {len(report.derived)} derived in {report.iterations} iterations, "
            f"{report.created} stored: " + "; ".join(f"{d.subject} {d.predicate} {d.object} ({d.confidence:g})"
                                                      for d in report.derived))  # fmt: skip
    again = call("infer_forward", persist=True)
    out.say(f"run again: {again.created} new (idempotent)")
    proof = call("infer_backward", subject="acme", predicate="assignTo", object="us-sales")
    out.say("explanation tree of acme assignTo us-sales:")
    _tree(out, proof.proofs[0].model_dump(mode="json"))
    gap = call("infer_backward", subject="globex", predicate="isTarget", object="yes")
    out.say("infer backward globex isTarget yes: not proved; knowledge gaps: "
            + "; ".join(f"{g.subject} {g.predicate} {g.operator} {g.object}" for g in gap.gaps))  # fmt: skip
    [hypothesis] = call("infer_abductive", subject="acme", predicate="assignTo", object="us-sales", limit=1).hypotheses
    out.say(f"abduce acme assignTo us-sales: rule {hypothesis.name}, score {hypothesis.score:g}")
    discount = {"subject": "context", "predicate": "discount", "object": "20%", "operator": "gte"}
    call("rule_create", name="big-deal", type="policy", action="ask finance to approve ?x", escalate=True,
         conditions=[{"subject": "?x", "predicate": "isTarget", "object": "yes"}, discount])  # fmt: skip
    fired = call("policy_eval", context={"discount": "25%"}).firings
    out.say(f"policy eval --context discount=25%: {'; '.join(f.action for f in fired)} (escalate)")
    cases = CaseService(ws.ports, ws.scopes, ws.clock, None)
    cases.store_case(agent_id, situation={"beliefs": ["price sensitive", "saas"], "desires": ["grow revenue"]},
                     solution={"actions": ["annual plan with 15% discount"]}, outcome={"success": True})  # fmt: skip
    found = cases.retrieve(agent_id, beliefs=["price sensitive"], desires=["grow revenue"])
    best = found.matches[0]
    out.say(f"cbr retrieve: {best.case_uid} score {best.score:g} -> {best.solution.actions[0]}")
    inputs = {"deductive": {"goal": "acme assignTo us-sales"},
              "counterfactual": {"goal": "acme assignTo us-sales", "without": ["acme locatedIn US"]}}  # fmt: skip
    routed = reason(MethodContext(agent_id, ws), "Should acme go to US sales?", methods=["deductive", "counterfactual"],
                    multi_method=True, inputs=inputs)  # fmt: skip
    out.say("reason --methods deductive,counterfactual: " + "; ".join(
        f"{r.method} ({r.kind}): {r.conclusion}" for r in routed.results))  # fmt: skip


#: Murphy's sprinkler network (BNT documentation, "Inference"; also Russell & Norvig ch. 14): the demo's, the
#: bench's and the tests' Bayesian network.
SPRINKLER: dict[str, Any] = {"nodes": {
    "Cloudy": {"parents": [], "cpt": {"": 0.5}},
    "Sprinkler": {"parents": ["Cloudy"], "cpt": {"T": 0.1, "F": 0.5}},
    "Rain": {"parents": ["Cloudy"], "cpt": {"T": 0.8, "F": 0.2}},
    "WetGrass": {"parents": ["Sprinkler", "Rain"], "cpt": {"T,T": 0.99, "T,F": 0.9, "F,T": 0.9, "F,F": 0.0}},
}}  # fmt: skip


def methods(ws: Workspace, agent_id: str, out: Section) -> None:
    """Seven of the seed's reasoning methods computing, on inputs and on the agent's graph, then fusion."""
    ws.facts.assert_fact(agent_id, "api", "dependsOn", "db")
    ws.facts.assert_fact(agent_id, "db", "dependsOn", "disk")
    ws.facts.assert_fact(agent_id, "api", "status", "failing")
    ctx = MethodContext(agent_id, ws)
    inputs = {
        "bayesian": {"network": SPRINKLER, "evidence": {"WetGrass": True}, "query": "Rain"},
        "decision-theory": {"acts": ["large plant", "small plant", "do nothing"], "states": ["good", "bad"],
                            "payoffs": [[200000, -180000], [100000, -20000], [0, 0]], "probabilities": [0.5, 0.5]},
        "game-theory": {"players": ["us", "rival"], "actions": [["cut price", "hold"], ["cut price", "hold"]],
                        "payoffs": [[[1, 1], [5, 0]], [[0, 5], [3, 3]]]},
        "counterfactual": {"goal": "acme assignTo us-sales", "without": ["acme locatedIn US"]},
        "root-cause": {},
        "info-theory": {"distribution": {"win": 0.5, "lose": 0.25, "draw": 0.25}},
        "monte-carlo": {"variables": {"demand": {"dist": "normal", "mean": 1000, "sd": 200},
                                      "price": {"dist": "uniform", "low": 8, "high": 12}},
                        "formula": "demand * price - 9000", "samples": 20000, "threshold": 0},
    }  # fmt: skip
    for method, given in inputs.items():
        result = reason(ctx, method=method, inputs={method: given}).results[0]
        used = f", used {len(result.used)} record(s)" if result.used else ""
        out.say(f"{method} ({result.kind}, confidence {result.confidence:.2f}{used}): {result.conclusion}")
    fused = reason(ctx, multi_method=True, methods=["deductive", "abductive", "counterfactual"], inputs={
        "deductive": {"goal": "acme assignTo us-sales"}, "abductive": {"observation": "acme assignTo us-sales"},
        "counterfactual": {"goal": "acme assignTo us-sales", "without": ["acme hasIndustry saas"]}})  # fmt: skip
    if fused.fusion is not None:
        out.say(f"reason --multi deductive,abductive,counterfactual: {fused.fusion.summary}")
