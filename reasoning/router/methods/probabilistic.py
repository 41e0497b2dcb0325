"""Engines of the probabilistic methods: bayesian, decision-theory, expected-utility, info-theory, monte-carlo.

bayesian (``inputs.bayesian``), one of:

- ``{"network": {"nodes": {NAME: {"parents": [..], "cpt": {"": p} | {"T,F": p, ..}}}}, "evidence": {NAME: bool},
  "query": NAME}`` -> ``value.probability`` = P(query = true | evidence), exact by variable elimination
  (:mod:`.bayes_net`, Boolean variables, at most ``MAX_NODES`` of them); confidence max(p, 1 - p);
- ``{"network": {"variables": {NAME: {"values": [..], "parents": [..], "cpt": {ROW: [..]}}}}, "evidence":
  {NAME: value}, "query": NAME}`` -> ``value.distribution`` = P(query | evidence) over its values, by variable
  elimination (:mod:`.discrete`: multi-valued variables, larger networks within its cell budget); confidence =
  the probability of the most probable value;
- ``{"hypotheses": [{"label", "prior", "evidence": [{"p_given_h", "p_given_not_h"}]}]}`` -> sequential updates;
- ``{"fact": uid | "S P O", "evidence": [..]}`` -> the update of a fact of the agent's graph, prior = its
  confidence (``used`` names the fact).

expected-utility: ``{"options": [{"name", "outcomes": [{"probability", "utility"}]}]}``. info-theory, decision-theory
and monte-carlo live in :mod:`.info_theory`, :mod:`.decisions` and :mod:`.montecarlo`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from kg.errors import InputError, NotFoundError
from kg.models import MAX_LIST, Model
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.bayes_net import MAX_NODES, BayesNetwork, check_network, probability
from reasoning.router.methods.decisions import decision_theory, margin_confidence
from reasoning.router.methods.discrete import MAX_VALUES, MAX_VARIABLES, DiscreteNetwork, compile_network, query
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.factors import MAX_FACTOR_CELLS, MAX_WORK_CELLS, Budget
from reasoning.router.methods.info_theory import info_theory
from reasoning.router.methods.montecarlo import monte_carlo
from reasoning.router.updates import DecisionInput, Evidence, bayesian_update, decide, hypothesis_from_fact

_Name = Annotated[str, Field(min_length=1, max_length=64)]
_Value = Annotated[str, Field(min_length=1, max_length=64)] | int | bool


class NetworkQuery(Model):
    """``bayesian`` over a network."""

    network: BayesNetwork
    evidence: dict[_Name, bool] = Field(default_factory=dict)
    query: _Name


class DiscreteQuery(Model):
    """``bayesian`` over a discrete network (multi-valued variables)."""

    network: DiscreteNetwork
    evidence: dict[_Name, _Value] = Field(default_factory=dict)
    query: _Name


def _discrete(data: DiscreteQuery) -> MethodOutcome:
    net = compile_network(data.network, "bayesian")
    evidence = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in data.evidence.items()}
    if data.query not in net.domains:
        raise fail("bayesian", "query", f"unknown variable {data.query!r}")
    for name, val in evidence.items():
        if name not in net.domains:
            raise fail("bayesian", f"evidence.{name}", f"unknown variable {name!r}")
        if val not in net.domains[name]:
            raise fail("bayesian", f"evidence.{name}", f"{val!r} is not a value of {name} ({net.domains[name][:10]})")
    if data.query in evidence:
        raise fail("bayesian", "query", "is also given as evidence")
    budget = Budget("bayesian", "network")
    posterior = query(net, [data.query], evidence, budget)
    if posterior is None:
        raise fail("bayesian", "evidence", "has probability 0 in the network: nothing to condition on")
    prior = query(net, [data.query], {}, budget)
    values = net.domains[data.query]
    dist = dict(zip(values, posterior.table.tolist(), strict=True))
    best = max(values, key=lambda v: dist[v])
    shown = ", ".join(f"{k} = {v}" for k, v in evidence.items()) or "no evidence"
    value = {"distribution": dist, "most_probable": best, "query": data.query, "evidence": evidence,
             "prior": dict(zip(values, prior.table.tolist(), strict=True)) if prior else None,
             "table_cells": budget.spent}  # fmt: skip
    return computed("bayesian", f"{data.query} = {best} is the most probable: P({data.query} = {best} | {shown}) = "
                    f"{dist[best]:.4f}", dist[best], value,
                    trace=[f"checked the network: {len(net.order)} variables", "variable elimination (min-weight "
                           f"order): {budget.spent:,} table cells", *(f"P({data.query} = {v} | {shown}) = {dist[v]:.4f}"
                                                                      for v in values[:20])])  # fmt: skip


def _fmt(evidence: dict[str, bool]) -> str:
    return ", ".join(f"{k} = {str(v).lower()}" for k, v in evidence.items()) or "no evidence"


def _network(data: NetworkQuery) -> MethodOutcome:
    order = check_network(data.network, "bayesian")
    for name in [data.query, *data.evidence]:
        if name not in data.network.nodes:
            raise fail("bayesian", "query" if name == data.query else f"evidence.{name}", f"unknown node {name!r}")
    p = probability(data.network, order, data.query, data.evidence)
    if p is None:
        raise fail("bayesian", "evidence", "has probability 0 in the network: nothing to condition on")
    prior = probability(data.network, order, data.query, {})
    value = {"probability": p, "query": data.query, "evidence": data.evidence, "prior": prior}
    likely = "true" if p >= 0.5 else "false"
    return computed("bayesian", f"{data.query} is likely {likely}: P({data.query} = true | {_fmt(data.evidence)}) "
                    f"= {p:.4f}", max(p, 1 - p), value,
                    trace=[f"checked the network: {len(order)} nodes, topological order {', '.join(order)}",
                           "variable elimination (min-weight order)", f"prior P({data.query}) = {prior:.4f}",
                           f"conditioned on {_fmt(data.evidence)}: {p:.4f}"])  # fmt: skip


def _fact(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    raw = inputs["fact"]
    if not isinstance(raw, str) or not raw.strip():
        raise fail("bayesian", "fact", "must be a fact uid (F-...) or 'SUBJECT PREDICATE OBJECT'")
    if raw.startswith("F-"):
        try:
            fact = ctx.workspace.facts.get(ctx.agent_id, raw) if ctx.workspace else None
        except NotFoundError:
            fact = None
    else:
        parts = raw.split(maxsplit=2)
        found = ctx.facts(subject=parts[0], predicate=parts[1], object=parts[2]) if len(parts) == 3 else []
        fact = found[0] if found else None
    if fact is None:
        raise fail("bayesian", "fact", f"no fact {raw[:80]!r} visible to {ctx.agent_id!r}")
    try:
        evidence = [Evidence.model_validate(e) for e in inputs.get("evidence", [])]
        [result] = bayesian_update({"hypotheses": [hypothesis_from_fact(fact, evidence).model_dump()]})
    except (InputError, ValueError, TypeError) as exc:
        raise fail("bayesian", "evidence", str(exc).split("\n")[0][:300]) from None
    steps = [f"{s.description or 'evidence'}: {s.before:.4g} -> {s.after:.4g}" for s in result.steps]
    return computed("bayesian", f"{result.label}: {result.prior:.4g} -> {result.posterior:.4g}", result.posterior,
                    result.model_dump(mode="json"), trace=[f"prior = confidence of {fact.uid}", *steps],
                    used=[fact.uid])  # fmt: skip


def bayesian(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``bayesian``."""
    if "network" in inputs:
        if isinstance(inputs["network"], dict) and "variables" in inputs["network"]:
            return _discrete(validate(DiscreteQuery, inputs, "bayesian"))
        return _network(validate(NetworkQuery, inputs, "bayesian"))
    if "fact" in inputs:
        return _fact(ctx, inputs)
    if "hypotheses" in inputs:
        try:
            results = bayesian_update(inputs)
        except InputError as exc:
            raise fail("bayesian", exc.field, exc.rule) from None
        best = max(results, key=lambda r: r.posterior)
        return computed("bayesian", f"most probable: {best.label} ({best.posterior:.4g})", best.posterior,
                        {"posteriors": [r.model_dump(mode="json") for r in results]},
                        trace=[f"{r.label}: {r.prior:.4g} -> {r.posterior:.4g}" for r in results])  # fmt: skip
    raise MissingInputs("bayesian", "give inputs.bayesian.network/evidence/query, hypotheses, or fact/evidence")


def expected_utility(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``expected-utility``."""
    if "options" not in inputs:
        raise MissingInputs("expected-utility", "give inputs.expected-utility.options")
    try:
        result = decide(inputs)
    except InputError as exc:
        raise fail("expected-utility", exc.field, exc.rule) from None
    best = next(o for o in result.options if o.name == result.best)
    notes = [f"tie for best: {', '.join(result.tied_best)}"] if len(result.tied_best) > 1 else []
    top = result.ranking[:2]
    options = DecisionInput.model_validate(inputs).options  # decide() checked them
    stake = max(abs(o.utility) for option in options if option.name in top for o in option.outcomes)
    confidence = margin_confidence([o.expected_utility for o in result.options], stake)
    return computed("expected-utility", f"choose {result.best} (expected utility {best.expected_utility:.6g})",
                    confidence, result.model_dump(mode="json"),
                    trace=[f"EU({o.name}) = {o.expected_utility:.6g}" for o in result.options],
                    notes=notes)  # fmt: skip


def _monty_hall() -> dict[str, Any]:
    doors = ["1", "2", "3"]
    host = {f"{car},{pick}": [0.0 if h in (car, pick) else 1.0 / len({*doors} - {car, pick}) for h in doors]
            for car in doors for pick in doors}  # fmt: skip
    uniform = {"": [1 / 3, 1 / 3, 1 / 3]}
    return {"network": {"variables": {"Car": {"values": doors, "cpt": uniform},
                                      "Pick": {"values": doors, "cpt": uniform},
                                      "Host": {"values": doors, "parents": ["Car", "Pick"], "cpt": host}}},
            "evidence": {"Pick": "1", "Host": "3"}, "query": "Car"}  # fmt: skip


DOCS = {
    "bayesian": MethodDoc(
        confidence=("The posterior probability of the conclusion: of the most probable value of the query "
                    "(discrete network), max(p, 1 - p) (Boolean network), or of the most probable hypothesis."),
        bound=(f"Boolean networks (nodes): at most {MAX_NODES} nodes; discrete networks (variables): "
               f"variable elimination over at most {MAX_VARIABLES} variables of at most {MAX_VALUES} values, tables "
               f"of at most {MAX_FACTOR_CELLS:,} cells and {MAX_WORK_CELLS:,} cells in all (a network too densely "
               "connected gets a one-line error naming inputs.bayesian.network)."),
        inputs=DiscreteQuery,
        example=_monty_hall(),
        graph="With fact (a uid or 'S P O') and evidence: the fact's confidence is the prior.",
        extra={"other_inputs": "network.nodes (Boolean); hypotheses [{label, prior, evidence}]; fact + evidence"},
    ),
    "expected-utility": MethodDoc(
        confidence=("1/k when k options tie for the best expected utility; otherwise 0.5 + 0.5 x min(1, margin / "
                    "stake): the best option's lead over the runner-up relative to the largest |utility| of the "
                    "two. Options within noise of each other (100 vs 99.99) get about 0.5."),
        bound=f"At most {MAX_LIST:,} options of at most {MAX_LIST:,} outcomes each (linear work).",
        inputs=DecisionInput,
        example={"options": [{"name": "launch", "outcomes": [{"probability": 0.6, "utility": 100},
                                                             {"probability": 0.4, "utility": -50}]},
                             {"name": "wait", "outcomes": [{"probability": 1.0, "utility": 10}]}]},
    ),
}  # fmt: skip


ENGINES: dict[str, Engine] = {
    "bayesian": bayesian,
    "decision-theory": decision_theory,
    "expected-utility": expected_utility,
    "info-theory": info_theory,
    "monte-carlo": monte_carlo,
}

__all__ = ["DOCS", "ENGINES", "bayesian", "expected_utility", "info_theory"]
