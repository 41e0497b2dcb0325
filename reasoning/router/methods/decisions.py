"""Decision theory: a decision table (acts x states) under the classical criteria, risk attitude, and
decision trees rolled back.

Table ``{"acts": [..], "states": [..], "payoffs": [[..] per act], "probabilities": [..] (optional),
"risk_attitude": "neutral|averse|seeking", "risk_coefficient": r, "hurwicz_alpha": a}``:

- expected monetary value EMV(a) = Σ_s p_s·x(a, s) (needs probabilities);
- expected utility with exponential utility u(x) = (1 - e^{-r·x/R}) / r (R = ``risk_tolerance`` when given, else
  the largest |payoff| of the acts no other act dominates, so r is scale-free and adding a dominated act never
  changes the choice; r > 0 averse, r < 0 seeking, neutral = EMV) and its certainty equivalent;
- maximax, maximin (Wald), minimax regret (Savage), Hurwicz (a·max + (1-a)·min), Laplace (equal weights).

The choice is by expected utility when probabilities are given, else by minimax regret. Tree
``{"tree": node}`` with nodes ``{"decision": name, "options": {label: node}}``, ``{"chance": name,
"branches": [{"p": .., "node": node}]}`` or ``{"payoff": x}`` is rolled back (chance: expectation, decision:
best option). Trees nest at most :data:`MAX_DEPTH` levels and hold at most :data:`MAX_TREE_NODES` nodes.

Confidence (:func:`margin_confidence`): 1/k when k acts tie for best; otherwise 0.5 + 0.5·min(1, margin / stake),
the margin of the choice over the runner-up relative to the largest |payoff| of the undominated acts, times
the share of the classical criteria that agree with the choice (tables). Options within noise of each other
(100 against 99.99) get about 0.5, never 1.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from kg.models import Model, Unit
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed, fail, validate
from reasoning.router.methods.docs import MethodDoc

METHOD = "decision-theory"
#: Nesting levels and nodes of one decision tree.
MAX_DEPTH, MAX_TREE_NODES = 50, 10_000
#: Acts and states of one decision table.
MAX_ACTS, MAX_STATES = 200, 200
#: The largest exponent of the exponential utility (e^700 is about 1e304, within float range).
MAX_EXPONENT = 700.0
_Label = Annotated[str, Field(min_length=1, max_length=256)]
_Number = Annotated[float, Field(allow_inf_nan=False)]


class DecisionTable(Model):
    """Inputs of ``decision-theory`` as a table."""

    acts: list[_Label] = Field(min_length=1, max_length=MAX_ACTS)
    states: list[_Label] = Field(min_length=1, max_length=MAX_STATES)
    payoffs: list[list[_Number]]
    probabilities: list[Unit] | None = None
    risk_attitude: Literal["neutral", "averse", "seeking"] = "neutral"
    risk_coefficient: float = Field(1.0, gt=0, le=50)
    hurwicz_alpha: Unit = 0.5
    risk_tolerance: float | None = Field(None, gt=0, le=1e15, allow_inf_nan=False)

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


def _expected_utility(x: np.ndarray, p: np.ndarray, attitude: str, r: float,
                      scale: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Expected utility and certainty equivalent of each act (rows of ``x``) under u(x) = (1 - e^{-k·x/R}) / k.

    The certainty equivalent -R/k · log Σ_s p_s e^{-k·x_s/R} is computed by log-sum-exp, so a ruinous act gets its
    true (very low) value, never an overflow; the expected utility 1/k · (1 - e^{...}) is clipped at e^700.
    """
    if attitude == "neutral":
        return x @ p, x @ p
    k = r if attitude == "averse" else -r
    with np.errstate(divide="ignore"):
        exponents = -k * x / scale + np.log(p)
    top = exponents.max(axis=1, keepdims=True)
    lse = (top + np.log(np.exp(exponents - top).sum(axis=1, keepdims=True))).ravel()
    return (1.0 - np.exp(np.minimum(lse, MAX_EXPONENT))) / k, -scale * lse / k


def _same(a: float, b: float) -> bool:
    """Equal up to floating-point noise (identical rows can sum in a different order)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def margin_confidence(values: list[float], stake: float, *, lower_better: bool = False) -> float:
    """1/k when k values tie for best; else 0.5 + 0.5·min(1, (best - runner-up) / stake)."""
    ranked = sorted(values, reverse=not lower_better)
    if len(ranked) < 2:
        return 1.0
    tied = sum(1 for v in ranked if _same(v, ranked[0]))
    if tied > 1:
        return 1.0 / tied
    margin = abs(ranked[0] - ranked[1])
    return 0.5 + 0.5 * min(1.0, margin / stake) if stake > 0 else 0.5


def undominated(x: np.ndarray) -> list[int]:
    """Rows of ``x`` that no other row dominates (at least as good in every state, better in one; of equal rows
    the first is kept)."""
    keep = []
    for i in range(len(x)):
        beaten = any(np.all(x[j] >= x[i]) and (np.any(x[j] > x[i]) or j < i) for j in range(len(x)) if j != i)
        if not beaten:
            keep.append(i)
    return keep


def table(data: DecisionTable) -> dict[str, Any]:
    """Every criterion's values and choice for a decision table."""
    x = np.array(data.payoffs, dtype=float)
    acts = data.acts

    def pick(values: np.ndarray, best: str = "max") -> str:
        top = float(values.max() if best == "max" else values.min())
        return acts[next(i for i, v in enumerate(values.tolist()) if _same(v, top))]  # first of equals

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
        scale = data.risk_tolerance or float(np.abs(x[undominated(x)]).max()) or 1.0
        eu, ce = _expected_utility(x, p, data.risk_attitude, data.risk_coefficient, scale)
        crit["expected_utility"] = {"risk_attitude": data.risk_attitude, "values": dict(zip(acts, eu.tolist(),
                                    strict=True)), "certainty_equivalents": dict(zip(acts, ce.tolist(), strict=True)),
                                    "choice": pick(ce)}  # fmt: skip
        crit["evpi"] = {"value": float(x.max(axis=0) @ p - emv.max())}
        chosen_by = "expected_utility"
    return {"criteria": crit, "chosen_by": chosen_by, "choice": crit[chosen_by]["choice"],
            "regret": regret.tolist(), "undominated": [acts[i] for i in undominated(x)]}  # fmt: skip


def tree_size(node: Any, method: str) -> int:
    """Nodes of a decision tree (counted without recursion).

    Raises:
        InputError: naming ``tree``: deeper than :data:`MAX_DEPTH` levels or more than :data:`MAX_TREE_NODES` nodes.
    """
    count, stack = 0, [(node, 0)]
    while stack:
        item, level = stack.pop()
        count += 1
        if level > MAX_DEPTH:
            raise fail(method, "tree", f"nests deeper than {MAX_DEPTH} levels")
        if count > MAX_TREE_NODES:
            raise fail(method, "tree", f"has more than {MAX_TREE_NODES:,} nodes")
        if isinstance(item, dict):
            children = list(item["options"].values()) if isinstance(item.get("options"), dict) else []
            branches = item.get("branches")
            children += [b.get("node") for b in branches if isinstance(b, dict)] if isinstance(branches, list) else []
            stack.extend((child, level + 1) for child in children)
    return count


def rollback(node: Any, method: str, path: str = "tree", depth: int = 0) -> tuple[float, list[str]]:
    """The value of a decision-tree node and the best policy (``decision: option`` lines); call
    :func:`tree_size` first (it bounds the depth and size this recursion meets).

    Raises:
        InputError: a node of no known kind, or branch probabilities not summing to 1.
    """
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


def _payoffs(node: Any) -> list[float]:
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "payoff" in item:
                found.append(float(item["payoff"]))
            stack.extend(item["options"].values() if isinstance(item.get("options"), dict) else [])
            stack.extend(b.get("node") for b in item.get("branches") or [] if isinstance(b, dict))
    return found or [0.0]


def decision_theory(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Engine of ``decision-theory``: a decision table or a decision tree."""
    if "tree" in inputs:
        tree = inputs["tree"]
        nodes = tree_size(tree, METHOD)
        value, policy = rollback(tree, METHOD)
        confidence = 1.0
        if isinstance(tree, dict) and isinstance(tree.get("options"), dict):
            first = [rollback(sub, METHOD)[0] for sub in tree["options"].values()]
            confidence = margin_confidence(first, max(abs(v) for v in _payoffs(tree)) or 1.0)
        return computed(METHOD, f"{policy[0] if policy else 'no decision'} (expected value {value:g})", confidence,
                        {"expected_value": value, "policy": policy, "nodes": nodes},
                        trace=["rolled the tree back: chance nodes by expectation, decision nodes by the best option",
                               *policy])  # fmt: skip
    if "acts" not in inputs:
        raise MissingInputs(METHOD, "give inputs.decision-theory.acts/states/payoffs (a table) or tree")
    data = validate(DecisionTable, inputs, METHOD)
    result = table(data)
    choices = {name: c["choice"] for name, c in result["criteria"].items() if "choice" in c}
    agree = sum(1 for c in choices.values() if c == result["choice"]) / len(choices)
    x = np.array(data.payoffs, dtype=float)
    keep = undominated(x)
    criterion = result["criteria"][result["chosen_by"]]
    chosen = criterion.get("certainty_equivalents", criterion["values"])  # payoff units, as the stake
    values = [chosen[act] for act in data.acts]  # a near-copy of the choice makes it a close call, dominated or not
    stake = float(np.abs(x[keep]).max())
    agree *= margin_confidence(values, stake, lower_better=result["chosen_by"] == "minimax_regret")
    trace = [f"{name}: {c}" for name, c in choices.items()]
    notes = [] if data.probabilities is not None else ["no state probabilities: chose by minimax regret"]
    return computed(METHOD, f"choose {result['choice']} (by {result['chosen_by'].replace('_', ' ')})", agree, result,
                    trace=trace, notes=notes)  # fmt: skip


DOCS = {
    METHOD: MethodDoc(
        confidence=("Table: the share of the classical criteria (maximax, maximin, minimax regret, Hurwicz, Laplace, "
                    "expected value and utility) that agree with the choice, times 1/k for k tied acts or 0.5 + 0.5 x "
                    "min(1, margin / stake) (the choice's lead over the runner-up relative to the largest |payoff| of "
                    "the undominated acts). Tree: the same margin at the first decision."),
        bound=(f"Tables of at most {MAX_ACTS} acts x {MAX_STATES} states (dominance checks: acts² x states); trees at "
               f"most {MAX_DEPTH} levels deep and {MAX_TREE_NODES:,} nodes (else a one-line error naming "
               "inputs.decision-theory.tree)."),
        inputs=DecisionTable,
        example={"acts": ["large plant", "small plant", "do nothing"], "states": ["good market", "poor market"],
                 "payoffs": [[200000, -180000], [100000, -20000], [0, 0]], "probabilities": [0.5, 0.5]},
        extra={"tree_inputs": "tree: {decision, options} | {chance, branches: [{p, node}]} | {payoff}"},
    ),
}  # fmt: skip

__all__ = [
    "DOCS",
    "MAX_DEPTH",
    "MAX_TREE_NODES",
    "DecisionTable",
    "decision_theory",
    "margin_confidence",
    "rollback",
    "table",
    "tree_size",
    "undominated",
]
