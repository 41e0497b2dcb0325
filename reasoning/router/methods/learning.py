"""Learning from outcomes: learning-to-reason (method priors) and reflection (expected vs actual).

**learning-to-reason** (``inputs.learning-to-reason``)::

    {"outcomes": [{"method": "bayesian", "success": true}, ...],
     "prior": {"alpha": 1, "beta": 1}, "methods": ["bayesian", "causal"]}

Each method's success rate has a Beta(alpha, beta) prior (uniform by default), updated by its
recorded outcomes to Beta(alpha + successes, beta + failures) (conjugate updating). Reported per
method: posterior mean, 95% equal-tailed credible interval, and the probability of being the best
method (share of 20,000 seeded joint draws, ``ctx.rng()``); ``methods`` adds methods with no
outcome yet (prior only). Without ``outcomes``, the stored runs are read from the graph:

- cases written by ``reason --store case``: action ``Reasoning (<method>, <kind>): ...`` and the
  case's ``outcome.success``;
- memory items tagged ``reasoning``, ``<method>`` and ``outcome:success`` or ``outcome:failure``
  (a result stored with ``--store memory``, tagged once its outcome is known).

**reflection** (``inputs.reflection``)::

    {"items": [{"name": "launch", "expected": 100, "actual": 80, "better": "higher"},
               {"name": "on time", "expected": true, "actual": false}]}

compares each expectation with what happened: booleans are met when equal; numbers are met when
``actual`` is at least ``expected`` (``better: "lower"``: at most), with the gap ``actual - expected``
and the relative gap. Without ``items``, the graph answers: every visible case (expected: success;
its metrics ``expected_<m>`` or ``target_<m>`` against ``<m>``) and every visible intention
(expected: completed; ``completed`` is met, ``dropped`` is not, an active or suspended one past its
deadline is overdue, others are still open and left out). Failed cases contribute their lessons.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from kg.models import MAX_LIST, MemoryQuery, Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.docs import MethodDoc
from reasoning.router.methods.fields import input_error, parse_inputs

LEARNING, REFLECTION = "learning-to-reason", "reflection"
DRAWS = 20_000
#: Distinct methods one learning run compares (DRAWS x methods joint draws); cases and intentions reflection reads.
MAX_METHODS, MAX_RECORDS = 100, 10_000
RUN = re.compile(r"^Reasoning \(([a-z][a-z0-9-]*), (?:computed|llm|llm_prompt)\)")
RUN_TAG = "reasoning"
OUTCOME_TAGS = {"outcome:success": True, "outcome:failure": False}

_Name = Annotated[str, Field(min_length=1, max_length=256)]
_Positive = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]


def _canonical(method: str) -> str:
    from reasoning.router.catalogue import canonical  # noqa: PLC0415 - the catalogue imports the engines' package

    return canonical(method) or method.strip().casefold().replace("_", "-")


# ----------------------------------------------------------------------------------------------
# learning to reason
# ----------------------------------------------------------------------------------------------


class Outcome(Model):
    """One earlier run of a method and whether it worked out."""

    method: _Name
    success: bool


class Prior(Model):
    """Beta prior of every method's success rate."""

    alpha: _Positive = 1.0
    beta: _Positive = 1.0


class LearningInput(Model):
    """Inputs of ``learning-to-reason``."""

    outcomes: list[Outcome] | None = Field(default=None, min_length=1, max_length=MAX_LIST * 10)
    prior: Prior = Field(default_factory=Prior)
    methods: list[_Name] = Field(default_factory=new_list, max_length=64)


def stored_outcomes(ctx: MethodContext) -> tuple[list[Outcome], list[str]]:
    """Outcomes of earlier runs stored as cases or tagged memory items the agent can read."""
    found: list[Outcome] = []
    used: list[str] = []
    for case in ctx.cases():
        match = RUN.match(case.solution.actions[0]) if case.solution.actions else None
        if match:
            found.append(Outcome(method=_canonical(match.group(1)), success=case.outcome.success))
            used.append(case.uid)
    ws = ctx.workspace
    if ws is not None:
        query = MemoryQuery(scopes=ws.scopes.readable(ctx.agent_id), tags=[RUN_TAG], include_archived=True,
                            limit=100_000)  # fmt: skip
        for item in ws.ports.memory.list(query):
            verdicts = [OUTCOME_TAGS[t] for t in item.tags if t in OUTCOME_TAGS]
            methods = [t for t in item.tags if t != RUN_TAG and t not in OUTCOME_TAGS]
            if len(verdicts) == 1 and methods:
                found.append(Outcome(method=_canonical(methods[0]), success=verdicts[0]))
                used.append(item.uid)
    return found, used


def posteriors(
    outcomes: list[Outcome], prior: Prior, extra: list[str], rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Per method: successes, failures, Beta posterior, mean, 95% interval, P(best); best mean first."""
    wins = Counter(o.method for o in outcomes if o.success)
    losses = Counter(o.method for o in outcomes if not o.success)
    names = sorted({*wins, *losses, *extra})
    from scipy.stats import beta as beta_dist  # noqa: PLC0415 - scipy.stats takes ~1 s to import: only when used

    rows: list[dict[str, Any]] = []
    for name in names:
        a, b = prior.alpha + wins[name], prior.beta + losses[name]
        low, high = beta_dist.ppf([0.025, 0.975], a, b)
        interval = [round(float(low), 6), round(float(high), 6)]
        rows.append({"method": name, "successes": wins[name], "failures": losses[name], "alpha": a, "beta": b,
                     "mean": round(a / (a + b), 9), "interval": interval})  # fmt: skip
    draws = np.column_stack([rng.beta(r["alpha"], r["beta"], DRAWS) for r in rows])
    best = np.bincount(draws.argmax(axis=1), minlength=len(rows)) / DRAWS
    for row, share in zip(rows, best, strict=True):
        row["p_best"] = round(float(share), 4)
    rows.sort(key=lambda r: (-r["mean"], -(r["successes"] + r["failures"]), r["method"]))
    return rows


def learning_to_reason(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Beta-Bernoulli priors of each method's success, updated from recorded outcomes."""
    data = parse_inputs(LearningInput, inputs, LEARNING)
    used: list[str] = []
    if data.outcomes is not None:
        outcomes = [o.model_copy(update={"method": _canonical(o.method)}) for o in data.outcomes]
        origin = "the given outcomes"
    else:
        outcomes, used = stored_outcomes(ctx)
        origin = "stored runs (reasoning cases and memory items tagged outcome:success|failure)"
    extra = [_canonical(m) for m in data.methods]
    if not outcomes and not extra:
        raise MissingInputs(LEARNING, "give inputs.learning-to-reason.outcomes (no stored run outcomes are visible)")
    distinct = len({o.method for o in outcomes} | set(extra))
    if distinct > MAX_METHODS:
        raise input_error(LEARNING, ["outcomes"], f"name {distinct} distinct methods (at most {MAX_METHODS})")
    rows = posteriors(outcomes, data.prior, extra, ctx.rng())
    top = rows[0]
    trace = [f"{len(outcomes)} outcome(s) from {origin}; prior Beta({data.prior.alpha:g}, {data.prior.beta:g})"]
    trace += [f"{r['method']}: {r['successes']} success / {r['failures']} failure -> Beta({r['alpha']:g}, "
              f"{r['beta']:g}), mean {r['mean']:.3g}, P(best) {r['p_best']:.3g}" for r in rows]  # fmt: skip
    text = (f"prefer {top['method']}: posterior success rate {top['mean']:.3g} "
            f"(95% interval {top['interval'][0]:.2g}-{top['interval'][1]:.2g})")  # fmt: skip
    value = {"methods": rows, "best": top["method"], "prior": data.prior.model_dump(), "outcomes": len(outcomes)}
    return computed(LEARNING, text, min(top["p_best"], 1 - 1 / DRAWS), value, trace=trace, used=used,
                    notes=[f"P(best) from {DRAWS} draws seeded with {ctx.seed}"])  # fmt: skip


# ----------------------------------------------------------------------------------------------
# reflection
# ----------------------------------------------------------------------------------------------


class Item(Model):
    """An expectation and what actually happened."""

    name: _Name
    expected: bool | Annotated[float, Field(allow_inf_nan=False)]
    actual: bool | Annotated[float, Field(allow_inf_nan=False)]
    better: Literal["higher", "lower"] = "higher"


class ReflectionInput(Model):
    """Inputs of ``reflection``."""

    items: list[Item] | None = Field(default=None, min_length=1, max_length=MAX_LIST * 10)


def compare(item: Item) -> dict[str, Any]:
    """Whether the expectation was met, and the gap for numbers."""
    row: dict[str, Any] = {"name": item.name, "expected": item.expected, "actual": item.actual}
    if isinstance(item.expected, bool) or isinstance(item.actual, bool):
        met = bool(item.expected) == bool(item.actual)
        return row | {"met": met, "gap": None, "relative_gap": None, "shortfall": None}
    gap = item.actual - item.expected
    met = gap >= 0 if item.better == "higher" else gap <= 0
    relative = round(gap / abs(item.expected), 9) if item.expected else None
    # the size of a miss relative to the larger of target and outcome, 0..1: defined for a target of 0 too
    # (defects 0 -> 5 is a shortfall of 1.0, revenue 100 -> 80 one of 0.2)
    scale = max(abs(item.expected), abs(item.actual))
    shortfall = 0.0 if met or scale == 0 else round(abs(gap) / scale, 9)
    return row | {
        "met": met,
        "gap": round(gap, 9),
        "relative_gap": relative,
        "shortfall": shortfall,
        "better": item.better,
    }


def graph_items(ctx: MethodContext) -> tuple[list[tuple[Item, str, str]], list[str], bool]:
    """(item, source kind, uid) from the visible cases and intentions, the lessons of failed cases, and whether
    either list was cut at :data:`MAX_RECORDS`."""
    found: list[tuple[Item, str, str]] = []
    lessons: list[str] = []
    cases = ctx.cases(limit=MAX_RECORDS)
    intentions = ctx.nodes("intention", limit=MAX_RECORDS)
    for case in cases:
        label = (case.solution.actions[0] if case.solution.actions else case.situation.context or case.uid)[:200]
        found.append((Item(name=f"{label}: success", expected=True, actual=case.outcome.success), "case", case.uid))
        metrics = case.outcome.metrics
        for key, target in metrics.items():
            for prefix in ("expected_", "target_"):
                name = key.removeprefix(prefix)
                if key.startswith(prefix) and name in metrics:
                    found.append((Item(name=f"{label}: {name}", expected=target, actual=metrics[name]), "case",
                                  case.uid))  # fmt: skip
        if not case.outcome.success:
            lessons += case.outcome.lessons
    now = ctx.workspace.clock.now() if ctx.workspace is not None else None
    for node in intentions:
        overdue = node.deadline is not None and now is not None and node.deadline < now
        if node.status in ("completed", "dropped") or (node.status in ("active", "suspended") and overdue):
            actual = node.status == "completed"
            label = f"{node.content[:200]}: " + ("overdue" if node.status not in ("completed", "dropped") else "done")
            found.append((Item(name=label, expected=True, actual=actual), "intention", node.uid))
    return found, list(dict.fromkeys(lessons)), MAX_RECORDS in (len(cases), len(intentions))


def reflection(ctx: MethodContext, inputs: dict[str, Any]) -> MethodOutcome:
    """Expected against actual outcomes: what was met, what fell short, by how much, and the lessons."""
    data = parse_inputs(ReflectionInput, inputs, REFLECTION)
    lessons: list[str] = []
    if data.items is not None:
        rows = [compare(item) for item in data.items]
        used: list[str] = []
        cut = None
    else:
        found, lessons, cut_off = graph_items(ctx)
        cut = f"read the first {MAX_RECORDS:,} cases and intentions only (MAX_RECORDS)" if cut_off else None
        if not found:
            raise MissingInputs(REFLECTION, "give inputs.reflection.items (no cases or finished or overdue "
                                            "intentions are visible)")  # fmt: skip
        rows = [compare(item) | {"source": kind, "uid": uid} for item, kind, uid in found]
        used = [uid for _, _, uid in found]
    met = sum(1 for r in rows if r["met"])
    misses = [r for r in rows if not r["met"]]
    numeric = [r for r in misses if r["shortfall"] is not None]
    worst = max(numeric, key=lambda r: r["shortfall"]) if numeric else (misses[0] if misses else None)
    text = f"{met} of {len(rows)} expectation(s) met ({met / len(rows):.0%})"
    if worst is not None:
        text += f"; largest shortfall: {worst['name']}"
    trace = [f"{r['name']}: expected {r['expected']}, actual {r['actual']} -> {'met' if r['met'] else 'missed'}"
             for r in rows[:50]]  # fmt: skip
    value = {"items": rows, "met": met, "missed": len(misses), "rate": round(met / len(rows), 9),
             "largest_shortfall": worst, "lessons": lessons}  # fmt: skip
    return computed(REFLECTION, text, 1.0, value, trace=trace, used=used, partial=cut)


DOCS = {
    LEARNING: MethodDoc(
        confidence=(f"P(best): the probability that the preferred method has the highest success rate under the Beta "
                    f"posteriors, estimated from {DRAWS:,} seeded joint draws (so at most 1 - 1/{DRAWS:,})."),
        bound=(f"At most {MAX_LIST * 10:,} outcomes and {MAX_METHODS} distinct methods ({DRAWS:,} draws per "
               "method); stored runs from the cases and memory items the agent can read."),
        inputs=LearningInput,
        example={"outcomes": [{"method": "bayesian", "success": True}, {"method": "bayesian", "success": True},
                              {"method": "bayesian", "success": False}, {"method": "causal", "success": False}],
                 "methods": ["causal"]},
        graph=("Cases written by 'reason --store case' (action 'Reasoning (<method>, <kind>)' and their success) and "
               "memory items tagged reasoning, <method> and outcome:success|failure."),
    ),
    REFLECTION: MethodDoc(
        confidence=("1.0: an exact tally of the expectations met; marked partial (at most 0.8) when the graph "
                    "held more cases or intentions than were read."),
        bound=(f"At most {MAX_LIST * 10:,} items; from the graph the first {MAX_RECORDS:,} cases and "
               f"{MAX_RECORDS:,} intentions (more: partial)."),
        inputs=ReflectionInput,
        example={"items": [{"name": "revenue", "expected": 100, "actual": 80},
                           {"name": "defects", "expected": 0, "actual": 5, "better": "lower"},
                           {"name": "on time", "expected": True, "actual": False}]},
        graph=("Cases (expected: success; metrics expected_<m> or target_<m> against <m>) and intentions "
               "(completed met, dropped not, active or suspended past their deadline overdue)."),
    ),
}  # fmt: skip

__all__ = [
    "DOCS",
    "LEARNING",
    "REFLECTION",
    "Item",
    "Outcome",
    "compare",
    "learning_to_reason",
    "posteriors",
    "reflection",
]
