"""Calibration: how well stated probabilities match what happened (Brier 1950; reliability diagrams).

Inputs (``inputs.calibration``)::

    {"predictions": [{"p": 0.8, "outcome": true, "label": "optional"}, ...], "bins": 10}

- ``brier`` = mean of (p - outcome)², outcome 1 or 0 (0 is perfect, 0.25 is always saying 0.5);
- ``bins``: ``bins`` equal-width probability bins (the last one closed at 1), each with ``count``,
  ``mean_p`` and ``observed`` (the share of true outcomes; null in an empty bin): the data of a
  reliability diagram;
- ``ece`` = Σ n_k/N · |mean_p_k - observed_k| (expected calibration error);
- Murphy's decomposition over the bins (1973): ``reliability`` - ``resolution`` + ``uncertainty``,
  equal to the Brier score when the forecasts within each bin are equal;
- ``bias`` = mean p - base rate (> 0: overconfident in "true", < 0: underconfident).

Without ``predictions``, the graph answers: each belief visible to the agent whose outcome is
resolved by a visible fact ``(<belief uid>, outcome, true|false)`` gives (certainty, outcome); each
stored reasoning result (a case written by ``reason --store case``, whose action starts with
``Reasoning (``) gives (its recorded confidence, the case's success).

The verdict reads both parts of Murphy's decomposition, not the mean bias alone:

- calibration (reliability, lower is better): "well calibrated" up to :data:`RELIABLE`, "roughly calibrated" up to
  :data:`FAIR`, else "miscalibrated"; with the direction: too high / too low on average (``bias``), and
  overconfident (forecasts further from the base rate than what happened: ``extremeness`` > 0) or underconfident;
- resolution (how far the outcomes of the bins differ from the base rate), as a share of the uncertainty:
  "good" from :data:`GOOD_RESOLUTION`, "little" below :data:`LOW_RESOLUTION`; and the Brier skill score
  1 - Brier / uncertainty (0: no better than always forecasting the base rate).

A forecaster saying .9 and .1 and right 60% of the time is miscalibrated and overconfident with little resolution,
although its mean bias is 0. The confidence in the verdict is a sampling precision, 1 - 1/√N for N predictions
(0.82 at 30, 0.9 at 100; never 1).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field

from kg.models import MAX_LIST, Model, Unit
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import parse_inputs

METHOD = "calibration"
OUTCOME_PREDICATE = "outcome"
RUN_PREFIX = "Reasoning ("
#: Reliability (mean squared forecast-frequency gap) at most RELIABLE: well calibrated; at most FAIR: roughly.
RELIABLE, FAIR = 0.01, 0.03
#: Resolution as a share of the uncertainty: at least GOOD_RESOLUTION is good, below LOW_RESOLUTION is little.
GOOD_RESOLUTION, LOW_RESOLUTION = 0.3, 0.1
#: Mean bias beyond which forecasts are too high or too low on average.
BIAS = 0.05
#: Reliability bins at most.
MAX_BINS = 100


class Prediction(Model):
    """A stated probability and whether the event happened."""

    p: Unit
    outcome: bool
    label: Annotated[str, Field(max_length=512)] = ""


class CalibrationInput(Model):
    """Inputs of ``calibration``."""

    predictions: list[Prediction] | None = Field(default=None, min_length=1, max_length=MAX_LIST * 10)
    bins: int = Field(default=10, ge=1, le=MAX_BINS)


def score(predictions: list[Prediction], bins: int) -> dict[str, Any]:
    """Brier score, reliability bins, ECE, Murphy's decomposition and bias."""
    n = len(predictions)
    brier = math.fsum((x.p - x.outcome) ** 2 for x in predictions) / n
    base = sum(x.outcome for x in predictions) / n
    groups: list[list[Prediction]] = [[] for _ in range(bins)]
    for x in predictions:
        groups[min(int(x.p * bins + 1e-9), bins - 1)].append(x)  # 1e-9: 0.57 * 100 is 56.99999999999999
    rows, ece, rel, res, extreme = [], 0.0, 0.0, 0.0, 0.0
    for k, group in enumerate(groups):
        row: dict[str, Any] = {"low": round(k / bins, 12), "high": round((k + 1) / bins, 12), "count": len(group),
                               "mean_p": None, "observed": None}  # fmt: skip
        if group:
            mean_p = math.fsum(x.p for x in group) / len(group)
            observed = sum(x.outcome for x in group) / len(group)
            row |= {"mean_p": round(mean_p, 12), "observed": round(observed, 12)}
            ece += len(group) / n * abs(mean_p - observed)
            rel += len(group) * (mean_p - observed) ** 2 / n
            res += len(group) * (observed - base) ** 2 / n
            extreme += len(group) * (mean_p - base) * (mean_p - observed) / n
        rows.append(row)
    mean_p = math.fsum(x.p for x in predictions) / n
    return {"n": n, "brier": round(brier, 12), "base_rate": round(base, 12), "bias": round(mean_p - base, 12),
            "ece": round(ece, 12), "reliability": round(rel, 12), "resolution": round(res, 12),
            "uncertainty": round(base * (1 - base), 12), "extremeness": round(extreme, 12),
            "skill": round(1 - brier / (base * (1 - base)), 12) if 0 < base < 1 else None, "bins": rows}  # fmt: skip


def verdict(value: dict[str, Any]) -> str:
    """The calibration and resolution verdict of a :func:`score` (see the module docstring)."""
    rel, bias, extreme = value["reliability"], value["bias"], value["extremeness"]
    if rel <= RELIABLE:
        calibrated = "well calibrated"
    else:
        leans = ["too high on average" if bias > BIAS else "too low on average" if bias < -BIAS else ""]
        leans.append("overconfident (forecasts more extreme than the outcomes)" if extreme > 0 else
                     "underconfident (forecasts too timid)" if extreme < 0 else "")  # fmt: skip
        calibrated = (
            ("roughly calibrated" if rel <= FAIR else "miscalibrated") + ": " + ", ".join(x for x in leans if x)
        )
    share = value["resolution"] / value["uncertainty"] if value["uncertainty"] > 0 else 0.0
    resolved = "good" if share >= GOOD_RESOLUTION else "some" if share >= LOW_RESOLUTION else "little"
    return f"{calibrated.rstrip(': ')}; {resolved} resolution ({share:.0%} of the uncertainty)"


def from_graph(ctx: MethodContext) -> tuple[list[Prediction], list[str]]:
    """(certainty, outcome) of resolved beliefs and (confidence, success) of stored reasoning results."""
    predictions: list[Prediction] = []
    used: list[str] = []
    beliefs = {b.uid: b for b in ctx.nodes("belief", limit=100_000)}
    for fact in ctx.facts(predicate=OUTCOME_PREDICATE):
        belief = beliefs.get(fact.subject)
        verdict = fact.object.strip().casefold()
        if belief is None or belief.certainty is None or verdict not in ("true", "false"):
            continue
        predictions.append(Prediction(p=belief.certainty, outcome=verdict == "true", label=belief.content[:512]))
        used += [belief.uid, fact.uid]
    for case in ctx.cases():
        actions = case.solution.actions
        confidence = case.outcome.metrics.get("confidence")
        if actions and actions[0].startswith(RUN_PREFIX) and confidence is not None and 0 <= confidence <= 1:
            predictions.append(Prediction(p=confidence, outcome=case.outcome.success, label=actions[0][:512]))
            used.append(case.uid)
    return predictions, used


def calibration(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Brier score and reliability bins of predictions (given, or resolved beliefs and stored results)."""
    data = parse_inputs(CalibrationInput, inputs, METHOD)
    used: list[str] = []
    if data.predictions is not None:
        predictions, origin = data.predictions, "the given predictions"
    else:
        predictions, used = from_graph(ctx)
        origin = "resolved beliefs (fact '<belief uid> outcome true|false') and stored reasoning results"
        if not predictions:
            raise MissingInputs(METHOD, "give inputs.calibration.predictions (no resolved beliefs or stored "
                                        "reasoning results with an outcome are visible)")  # fmt: skip
    value = score(predictions, data.bins)
    text = f"Brier score {value['brier']:.4g} over {value['n']} prediction(s), ECE {value['ece']:.3g}; {verdict(value)}"
    trace = [f"{value['n']} prediction(s) from {origin}",
             f"Brier = mean (p - outcome)^2 = {value['brier']:.6g}; base rate {value['base_rate']:.4g}",
             f"{data.bins} bins: ECE {value['ece']:.4g}; reliability {value['reliability']:.4g}, resolution "
             f"{value['resolution']:.4g}, uncertainty {value['uncertainty']:.4g}; bias {value['bias']:.4g}, "
             f"extremeness {value['extremeness']:.4g}"]  # fmt: skip
    return computed(METHOD, text, 1.0 - 1.0 / math.sqrt(value["n"]), value, trace=trace, used=used)


DOCS = {
    METHOD: MethodDoc(
        confidence=("Sampling precision of the verdict: 1 - 1/√N for N predictions (0.5 at 4, 0.9 at 100; never "
                    "1.0)."),
        bound=(f"At most {MAX_LIST * 10:,} predictions and {MAX_BINS} bins (linear work); from the graph, the beliefs, "
               "outcome facts and cases the agent can read (each list capped by its reader)."),
        inputs=CalibrationInput,
        example={"predictions": [{"p": 0.9, "outcome": True}, {"p": 0.8, "outcome": False},
                                 {"p": 0.3, "outcome": False}, {"p": 0.6, "outcome": True}], "bins": 10},
        graph=("Beliefs with certainty resolved by a fact '<belief uid> outcome true|false', and stored reasoning "
               "results (cases whose action starts with 'Reasoning (') with their recorded confidence and success."),
    ),
}  # fmt: skip

__all__ = ["DOCS", "METHOD", "CalibrationInput", "Prediction", "calibration", "from_graph", "score", "verdict"]
