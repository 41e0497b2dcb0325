"""Engines of the probabilistic methods: bayesian, decision-theory, expected-utility, info-theory, monte-carlo.

bayesian (``inputs.bayesian``), one of:

- ``{"network": {"nodes": {NAME: {"parents": [..], "cpt": {"": p} | {"T,F": p, ..}}}}, "evidence": {NAME: bool},
  "query": NAME}`` -> ``value.probability`` = P(query = true | evidence), exact (:mod:`.bayes_net`);
  confidence max(p, 1 - p): how sure the network is of the query's value;
- ``{"hypotheses": [{"label", "prior", "evidence": [{"p_given_h", "p_given_not_h"}]}]}`` -> sequential updates;
- ``{"fact": uid | "S P O", "evidence": [..]}`` -> the update of a fact of the agent's graph, prior = its
  confidence (``used`` names the fact).

expected-utility: ``{"options": [{"name", "outcomes": [{"probability", "utility"}]}]}`` (confidence 1 / number
of options tied for best). info-theory: ``{"distribution": {outcome: p}}`` -> ``value.entropy_bits``; with
``"joint": {"x,y": p}`` also ``value.mutual_information_bits``; ``{"examples": [{..}], "target": attr}`` ->
the information gain of asking each other attribute (ID3); ``{"distribution", "questions": {name:
{answer: [outcomes]}}}`` -> the expected information gain of each question. From the agent's graph:
``{"subject", "predicate"}`` -> the distribution over the objects of those facts (weighted by confidence);
``{"target": predicate}`` without examples -> one example per subject with that predicate (its facts as
attributes). decision-theory and monte-carlo
live in :mod:`.decisions` and :mod:`.montecarlo`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Annotated, Any

from pydantic import Field

from kg.errors import InputError, NotFoundError
from kg.models import Model, Unit
from reasoning.router.methods.base import Engine, MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.bayes_net import BayesNetwork, check_network, probability
from reasoning.router.methods.decisions import decision_theory
from reasoning.router.methods.montecarlo import monte_carlo
from reasoning.router.updates import Evidence, bayesian_update, decide, hypothesis_from_fact

TOLERANCE = 1e-6
_Name = Annotated[str, Field(min_length=1, max_length=64)]


class NetworkQuery(Model):
    """``bayesian`` over a network."""

    network: BayesNetwork
    evidence: dict[_Name, bool] = Field(default_factory=dict)
    query: _Name


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
                           f"enumerated 2^{len(order)} joint assignments", f"prior P({data.query}) = {prior:.4f}",
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
    return computed("expected-utility", f"choose {result.best} (expected utility {best.expected_utility:.6g})",
                    1.0 / len(result.tied_best), result.model_dump(mode="json"),
                    trace=[f"EU({o.name}) = {o.expected_utility:.6g}" for o in result.options],
                    notes=notes)  # fmt: skip


# ---------------------------------------------------------------------------------------------- info-theory


class InfoInput(Model):
    """``info-theory`` inputs (see the module docstring)."""

    distribution: dict[Annotated[str, Field(max_length=256)], Unit] | None = None
    joint: dict[Annotated[str, Field(max_length=512)], Unit] | None = None
    questions: dict[Annotated[str, Field(max_length=256)], dict[str, list[str]]] | None = None
    examples: list[dict[str, Any]] | None = Field(None, max_length=100_000)
    target: str | None = None
    subject: str | None = None
    predicate: str | None = None


def _from_graph(ctx: MethodContext, data: InfoInput) -> tuple[InfoInput, list[str]]:
    """Without explicit inputs: a distribution over the objects of (subject, predicate) facts, weighted by
    confidence; or, for a target predicate, examples (one per subject having it: its predicate -> object)."""
    if data.distribution is None and data.subject and data.predicate:
        facts = ctx.facts(subject=data.subject, predicate=data.predicate)
        total = math.fsum(f.confidence for f in facts)
        if total > 0:
            weights: dict[str, float] = defaultdict(float)
            for fact in facts:
                weights[fact.object] += fact.confidence / total
            return data.model_copy(update={"distribution": dict(weights)}), [f.uid for f in facts]
    if data.examples is None and data.target:
        rows: dict[str, dict[str, Any]] = defaultdict(dict)
        used = []
        for fact in ctx.facts():
            rows[fact.subject][fact.predicate] = fact.object
            used.append(fact.uid)
        examples = [row for row in rows.values() if data.target in row]
        if any(len(row) > 1 for row in examples):  # something to ask besides the target
            return data.model_copy(update={"examples": examples}), used
    return data, []


def _check_sum(values: dict[str, float], path: str) -> None:
    total = math.fsum(values.values())
    if not values or abs(total - 1.0) > TOLERANCE:
        raise fail("info-theory", path, f"probabilities must sum to 1 (± 1e-6), got {total:.6g}")


def _bits(probabilities: list[float]) -> float:
    from scipy.stats import entropy  # noqa: PLC0415 - scipy.stats takes ~1 s to import: only when used

    return float(entropy(probabilities, base=2)) if any(probabilities) else 0.0


def _mutual(joint: dict[str, float]) -> dict[str, float]:
    px: dict[str, float] = defaultdict(float)
    py: dict[str, float] = defaultdict(float)
    for key, p in joint.items():
        parts = key.split(",")
        if len(parts) != 2:
            raise fail("info-theory", f"joint.{key}", "keys must read 'x,y'")
        px[parts[0].strip()] += p
        py[parts[1].strip()] += p
    hx, hy, hxy = _bits(list(px.values())), _bits(list(py.values())), _bits(list(joint.values()))
    return {"entropy_x_bits": hx, "entropy_y_bits": hy, "joint_entropy_bits": hxy,
            "conditional_x_given_y_bits": hxy - hy, "conditional_y_given_x_bits": hxy - hx,
            "mutual_information_bits": max(0.0, hx + hy - hxy)}  # fmt: skip


def _gains(examples: list[dict[str, Any]], target: str) -> dict[str, float]:
    labels = [str(e.get(target)) for e in examples]
    base = _bits([c / len(labels) for c in Counter(labels).values()])
    attributes = sorted({k for e in examples for k in e} - {target})
    gains = {}
    for attribute in attributes:
        split: dict[str, list[str]] = defaultdict(list)
        for example, label in zip(examples, labels, strict=True):
            split[str(example.get(attribute))].append(label)
        rest = sum(len(v) / len(labels) * _bits([c / len(v) for c in Counter(v).values()]) for v in split.values())
        gains[attribute] = base - rest
    return gains


def info_theory(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``info-theory``."""
    data, used = _from_graph(ctx, validate(InfoInput, inputs, "info-theory"))
    value: dict[str, Any] = {}
    trace: list[str] = []
    conclusion = ""
    if data.examples is not None:
        if not data.target or not data.examples:
            raise fail("info-theory", "target", "examples need a target attribute (and at least one example)")
        gains = _gains(data.examples, data.target)
        if not gains:
            raise fail("info-theory", "examples", "have no attribute besides the target")
        best = max(gains, key=lambda k: gains[k])
        value["information_gain_bits"] = gains
        value["best_question"] = best
        trace.append(f"H({data.target}) minus the expected entropy after splitting on each attribute")
        conclusion = f"ask {best} first (information gain {gains[best]:.3f} bits)"
    if data.distribution is not None:
        _check_sum(data.distribution, "distribution")
        h = _bits(list(data.distribution.values()))
        value["entropy_bits"] = h
        trace.append(f"H = -Σ p log2 p over {len(data.distribution)} outcomes = {h:.4f} bits")
        conclusion = conclusion or f"entropy {h:.4f} bits"
        if data.questions:
            gains = {}
            for name, answers in data.questions.items():
                covered = [o for outcomes in answers.values() for o in outcomes]
                if sorted(covered) != sorted(data.distribution):
                    raise fail("info-theory", f"questions.{name}", "answers must partition the outcomes exactly")
                mass = [math.fsum(data.distribution[o] for o in outcomes) for outcomes in answers.values()]
                after = math.fsum(m * _bits([data.distribution[o] / m for o in outcomes])
                                  for m, outcomes in zip(mass, answers.values(), strict=True) if m > 0)  # fmt: skip
                gains[name] = h - after
            best = max(gains, key=lambda k: gains[k])
            value["information_gain_bits"], value["best_question"] = gains, best
            conclusion = f"ask {best} (expected information gain {gains[best]:.4f} of {h:.4f} bits)"
    if data.joint is not None:
        _check_sum(data.joint, "joint")
        value.update(_mutual(data.joint))
        trace.append("I(X;Y) = H(X) + H(Y) - H(X,Y)")
        mi = value["mutual_information_bits"]
        conclusion = (conclusion + "; " if conclusion else "") + f"mutual information {mi:.4f} bits"
    if not value:
        raise MissingInputs("info-theory", "give inputs.info-theory.distribution, joint, or examples with target")
    return computed("info-theory", conclusion, 1.0, value, trace=trace, used=used)


ENGINES: dict[str, Engine] = {
    "bayesian": bayesian,
    "decision-theory": decision_theory,
    "expected-utility": expected_utility,
    "info-theory": info_theory,
    "monte-carlo": monte_carlo,
}

__all__ = ["ENGINES", "bayesian", "expected_utility", "info_theory"]
