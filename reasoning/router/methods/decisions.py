"""Decision theory: a decision table (acts x states) under the classical criteria, risk attitude, and
decision trees rolled back.

Table ``{"acts": [..], "states": [..], "payoffs": [[..] per act], "probabilities": [..] (optional),
"risk_attitude": "neutral|averse|seeking", "risk_coefficient": r, "hurwicz_alpha": a}``:

- expected monetary value EMV(a) = Σ_s p_s·x(a, s) (needs probabilities);
- expected utility with exponential utility u(x) = (1 - e^{-r·x/R}) / r (R = the largest |payoff|, so r is
  scale-free; r > 0 averse, r < 0 seeking, neutral = EMV) and its certainty equivalent;
- maximax, maximin (Wald), minimax regret (Savage), Hurwicz (a·max + (1-a)·min), Laplace (equal weights).

The choice is by expected utility when probabilities are given, else by minimax regret. Tree
``{"tree": node}`` with nodes ``{"decision": name, "options": {label: node}}``, ``{"chance": name,
"branches": [{"p": .., "node": node}]}`` or ``{"payoff": x}`` is rolled back (chance: expectation, decision:
best option).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from kg.models import Model, Unit
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate

METHOD = "decision-theory"
_Label = Annotated[str, Field(min_length=1, max_length=256)]
_Number = Annotated[float, Field(allow_inf_nan=False)]


class DecisionTable(Model):
    """Inputs of ``decision-theory`` as a table."""

    acts: list[_Label] = Field(min_length=1, max_length=200)
    states: list[_Label] = Field(min_length=1, max_length=200)
    payoffs: list[list[_Number]]
    probabilities: list[Unit] | None = None
    risk_attitude: Literal["neutral", "averse", "seeking"] = "neutral"
    risk_coefficient: float = Field(1.0, gt=0, le=50)
    hurwicz_alpha: Unit = 0.5

    @model_validator(mode="after")
    def _shape(self) -> DecisionTable:
        if len(self.payoffs) != len(self.acts):
            raise ValueError(f"payoffs: needs one row per act ({len(self.acts)}), got {len(self.payoffs)}")
        for i, row in enumerate(self.payoffs):
            if len(row) != len(self.states):
                raise ValueError(f"payoffs.{i}: needs one payoff per state ({len(self.states)}), got {len(row)}")
        if self.probabilities is not None:
            if len(self.probabilities) != len(self.states):
                raise ValueError("probabilities: needs one probability per state")
            if abs(math.fsum(self.probabilities) - 1.0) > 1e-9:
                raise ValueError("probabilities: must sum to 1 (± 1e-9)")
        return self


def _utility(x: np.ndarray, attitude: str, r: float, scale: float) -> np.ndarray:
    if attitude == "neutral":
        return x
    k = r if attitude == "averse" else -r
    return (1.0 - np.exp(-k * x / scale)) / k


def _inverse(u: float, attitude: str, r: float, scale: float) -> float:
    if attitude == "neutral":
        return u
    k = r if attitude == "averse" else -r
    return float(-scale * math.log(1.0 - k * u) / k)


def table(data: DecisionTable) -> dict[str, Any]:
    """Every criterion's values and choice for a decision table."""
    x = np.array(data.payoffs, dtype=float)
    acts = data.acts

    def pick(values: np.ndarray, best: str = "max") -> str:
        return acts[int(np.argmax(values) if best == "max" else np.argmin(values))]  # first of equals

    regret = x.max(axis=0) - x
    a = data.hurwicz_alpha
    crit: dict[str, dict[str, Any]] = {
        "maximax": {"values": dict(zip(acts, x.max(axis=1).tolist(), strict=True)), "choice": pick(x.max(axis=1))},
        "maximin": {"values": dict(zip(acts, x.min(axis=1).tolist(), strict=True)), "choice": pick(x.min(axis=1))},
        "minimax_regret": {"values": dict(zip(acts, regret.max(axis=1).tolist(), strict=True)),
                           "choice": pick(regret.max(axis=1), "min")},
        "hurwicz": {"alpha": a, "values": dict(zip(acts, (a * x.max(axis=1) + (1 - a) * x.min(axis=1)).tolist(),
                                                   strict=True)),
                    "choice": pick(a * x.max(axis=1) + (1 - a) * x.min(axis=1))},
        "laplace": {"values": dict(zip(acts, x.mean(axis=1).tolist(), strict=True)), "choice": pick(x.mean(axis=1))},
    }  # fmt: skip
    chosen_by = "minimax_regret"
    if data.probabilities is not None:
        p = np.array(data.probabilities)
        emv = x @ p
        crit["expected_value"] = {"values": dict(zip(acts, emv.tolist(), strict=True)), "choice": pick(emv)}
        scale = float(np.abs(x).max()) or 1.0
        eu = _utility(x, data.risk_attitude, data.risk_coefficient, scale) @ p
        ce = [_inverse(float(u), data.risk_attitude, data.risk_coefficient, scale) for u in eu]
        crit["expected_utility"] = {"risk_attitude": data.risk_attitude, "values": dict(zip(acts, eu.tolist(),
                                    strict=True)), "certainty_equivalents": dict(zip(acts, ce, strict=True)),
                                    "choice": pick(eu)}  # fmt: skip
        crit["evpi"] = {"value": float(x.max(axis=0) @ p - emv.max())}
        chosen_by = "expected_utility"
    return {"criteria": crit, "chosen_by": chosen_by, "choice": crit[chosen_by]["choice"],
            "regret": regret.tolist()}  # fmt: skip


def rollback(node: Any, method: str, path: str = "tree", depth: int = 0) -> tuple[float, list[str]]:
    """The value of a decision-tree node and the best policy (``decision: option`` lines).

    Raises:
        InputError: a node of no known kind, branch probabilities not summing to 1, or a tree too deep.
    """
    if depth > 50:
        raise fail(method, path, "the tree is deeper than 50 levels")
    if not isinstance(node, dict):
        raise fail(method, path, "must be an object (decision, chance or payoff node)")
    if "payoff" in node:
        value = node["payoff"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise fail(method, f"{path}.payoff", "must be a finite number")
        return float(value), []
    if "chance" in node:
        branches = node.get("branches")
        if not isinstance(branches, list) or not branches:
            raise fail(method, f"{path}.branches", "must be a non-empty list of {p, node}")
        total, mass = 0.0, 0.0
        policy: list[str] = []
        for i, branch in enumerate(branches):
            p = branch.get("p") if isinstance(branch, dict) else None
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
                raise fail(method, f"{path}.branches.{i}.p", "must be a probability from 0 to 1")
            value, sub = rollback(branch.get("node"), method, f"{path}.branches.{i}.node", depth + 1)
            total, mass, policy = total + p * value, mass + p, policy + sub
        if abs(mass - 1.0) > 1e-9:
            raise fail(method, f"{path}.branches", f"probabilities must sum to 1, got {mass:g}")
        return total, policy
    if "decision" in node:
        options = node.get("options")
        if not isinstance(options, dict) or not options:
            raise fail(method, f"{path}.options", "must be a non-empty object {label: node}")
        values = {label: rollback(sub, method, f"{path}.options.{label}", depth + 1) for label, sub in options.items()}
        best = max(values, key=lambda k: values[k][0])  # first of equals
        return values[best][0], [f"{node['decision']}: {best}", *values[best][1]]
    raise fail(method, path, "must have payoff, chance (with branches) or decision (with options)")


def decision_theory(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``decision-theory``: a decision table or a decision tree."""
    if "tree" in inputs:
        value, policy = rollback(inputs["tree"], METHOD)
        return computed(METHOD, f"{policy[0] if policy else 'no decision'} (expected value {value:g})", 1.0,
                        {"expected_value": value, "policy": policy},
                        trace=["rolled the tree back: chance nodes by expectation, decision nodes by the best option",
                               *policy])  # fmt: skip
    if "acts" not in inputs:
        raise MissingInputs(METHOD, "give inputs.decision-theory.acts/states/payoffs (a table) or tree")
    data = validate(DecisionTable, inputs, METHOD)
    result = table(data)
    choices = {name: c["choice"] for name, c in result["criteria"].items() if "choice" in c}
    agree = sum(1 for c in choices.values() if c == result["choice"]) / len(choices)
    trace = [f"{name}: {c}" for name, c in choices.items()]
    notes = [] if data.probabilities is not None else ["no state probabilities: chose by minimax regret"]
    return computed(METHOD, f"choose {result['choice']} (by {result['chosen_by'].replace('_', ' ')})", agree, result,
                    trace=trace, notes=notes)  # fmt: skip


__all__ = ["DecisionTable", "decision_theory", "rollback", "table"]
