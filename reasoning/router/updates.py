"""Sequential Bayesian updating of hypotheses (e.g. fact confidences) and expected utility of options.

Bayes, one piece of evidence ``e`` at a time (pieces are taken as conditionally independent)::

    P(h | e) = P(e|h)·P(h) / (P(e|h)·P(h) + P(e|¬h)·(1 - P(h)))

The prior of a fact is its confidence. Expected utility of an option with outcomes ``(p_i, u_i)``::

    EU = Σ p_i·u_i          with Σ p_i = 1 ± 1e-9 per option

and the best option is the one with the highest EU (the first given wins an exact tie; every tied
option is listed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import Field, field_validator, model_validator

from kg.errors import InputError
from kg.models import MAX_CONTENT, MAX_LIST, Fact, Model, Name, RecordId, Unit, parse
from kg.models.base import new_list

PROBABILITY_TOLERANCE = 1e-9

_Description = Annotated[str, Field(max_length=MAX_CONTENT)]


# --------------------------------------------------------------------------------------------
# Bayesian updating
# --------------------------------------------------------------------------------------------


class Evidence(Model):
    """One observation and how likely it is if the hypothesis is true and if it is false."""

    description: _Description = ""
    p_given_h: Unit = Field(description="P(e|h)")
    p_given_not_h: Unit = Field(description="P(e|not h)")


class BayesHypothesis(Model):
    """A hypothesis (often a fact) with its prior and the evidence bearing on it."""

    label: Name
    prior: Unit
    fact_uid: RecordId | None = None
    evidence: list[Evidence] = Field(default_factory=new_list, max_length=MAX_LIST)


class BayesInput(Model):
    """Inputs of the ``bayesian_update`` method."""

    hypotheses: list[BayesHypothesis] = Field(min_length=1, max_length=MAX_LIST)


class BayesStep(Model):
    """The probability before and after one piece of evidence."""

    description: str
    before: float
    after: float
    likelihood_ratio: float | None = Field(description="P(e|h) / P(e|not h); None when P(e|not h) = 0.")


class BayesPosterior(Model):
    """Where a hypothesis ends up after all its evidence."""

    label: str
    fact_uid: str | None
    prior: float
    posterior: float
    steps: list[BayesStep]


def posterior(prior: float, p_given_h: float, p_given_not_h: float) -> float:
    """P(h|e) from P(h), P(e|h) and P(e|¬h).

    Raises:
        InputError: the evidence is impossible under the model (P(e) = 0), e.g. P(e|h) = 0 with prior 1.
    """
    for name, value in (("prior", prior), ("p_given_h", p_given_h), ("p_given_not_h", p_given_not_h)):
        if not 0.0 <= value <= 1.0:  # also refuses NaN
            raise InputError(name, f"must be a probability from 0 to 1, got {value!r}")
    supporting = p_given_h * prior
    evidence = supporting + p_given_not_h * (1.0 - prior)
    if evidence == 0.0:
        raise InputError("evidence", f"P(e) is 0 at prior {prior}: the evidence is impossible under both h and not h")
    return supporting / evidence


def update_hypothesis(hypothesis: BayesHypothesis, *, field: str = "hypothesis") -> BayesPosterior:
    """Apply each piece of evidence in turn to the hypothesis's prior."""
    current, steps = hypothesis.prior, []
    for index, item in enumerate(hypothesis.evidence):
        try:
            after = posterior(current, item.p_given_h, item.p_given_not_h)
        except InputError as exc:
            raise InputError(f"{field}.evidence.{index}", exc.rule) from None
        ratio = item.p_given_h / item.p_given_not_h if item.p_given_not_h > 0 else None
        steps.append(BayesStep(description=item.description, before=current, after=after, likelihood_ratio=ratio))
        current = after
    return BayesPosterior(label=hypothesis.label, fact_uid=hypothesis.fact_uid, prior=hypothesis.prior,
                          posterior=current, steps=steps)  # fmt: skip


def hypothesis_from_fact(fact: Fact, evidence: Sequence[Evidence]) -> BayesHypothesis:
    """A hypothesis whose prior is the fact's confidence, labelled ``subject predicate object``."""
    label = f"{fact.subject} {fact.predicate} {fact.object}"[:256]
    return BayesHypothesis(label=label, prior=fact.confidence, fact_uid=fact.uid, evidence=list(evidence))


def bayesian_update(data: BayesInput | Mapping[str, Any]) -> list[BayesPosterior]:
    """Posteriors of every hypothesis, in input order.

    Raises:
        InputError: bad probabilities, or evidence that is impossible under the model.
    """
    checked = data if isinstance(data, BayesInput) else parse(BayesInput, dict(data))
    return [update_hypothesis(h, field=f"hypotheses.{i}") for i, h in enumerate(checked.hypotheses)]


# --------------------------------------------------------------------------------------------
# Expected utility
# --------------------------------------------------------------------------------------------


class DecisionOutcome(Model):
    """One possible outcome of an option."""

    description: _Description = ""
    probability: Unit
    utility: float = Field(allow_inf_nan=False)


class DecisionOption(Model):
    """An option and its possible outcomes; the probabilities must sum to 1 (± 1e-9)."""

    name: Name
    outcomes: list[DecisionOutcome] = Field(min_length=1, max_length=MAX_LIST)

    @field_validator("outcomes")
    @classmethod
    def _sum_to_one(cls, outcomes: list[DecisionOutcome]) -> list[DecisionOutcome]:
        total = math.fsum(o.probability for o in outcomes)
        if abs(total - 1.0) > PROBABILITY_TOLERANCE:
            raise ValueError(f"the probabilities of an option's outcomes must sum to 1 (± 1e-9), got {total!r}")
        return outcomes


class DecisionInput(Model):
    """Inputs of the ``expected_utility`` method."""

    options: list[DecisionOption] = Field(min_length=1, max_length=MAX_LIST)

    @model_validator(mode="after")
    def _unique_names(self) -> DecisionInput:
        seen: set[str] = set()
        for option in self.options:
            key = " ".join(option.name.casefold().split())
            if key in seen:
                raise ValueError(f"options: option names must be unique, {option.name!r} appears twice")
            seen.add(key)
        return self


class OptionValue(Model):
    """An option's expected utility."""

    name: str
    expected_utility: float


class DecisionResult(Model):
    """Expected utility of every option (input order), the ranking and the best option."""

    options: list[OptionValue]
    ranking: list[str]
    best: str
    tied_best: list[str]


def expected_utility(option: DecisionOption) -> float:
    """Σ probability·utility over the option's outcomes."""
    return math.fsum(o.probability * o.utility for o in option.outcomes)


def decide(data: DecisionInput | Mapping[str, Any]) -> DecisionResult:
    """Expected utility per option and the best one.

    Raises:
        InputError: no options, bad probabilities (not in 0..1, or not summing to 1 ± 1e-9 per
            option), non-finite utilities or duplicate option names.
    """
    checked = data if isinstance(data, DecisionInput) else parse(DecisionInput, dict(data))
    values = [OptionValue(name=o.name, expected_utility=expected_utility(o)) for o in checked.options]
    ranking = sorted(values, key=lambda v: v.expected_utility, reverse=True)  # stable: input order on ties
    top = ranking[0].expected_utility
    return DecisionResult(options=values, ranking=[v.name for v in ranking], best=ranking[0].name,
                          tied_best=[v.name for v in ranking if v.expected_utility == top])  # fmt: skip


__all__ = [
    "PROBABILITY_TOLERANCE",
    "BayesHypothesis",
    "BayesInput",
    "BayesPosterior",
    "BayesStep",
    "DecisionInput",
    "DecisionOption",
    "DecisionOutcome",
    "DecisionResult",
    "Evidence",
    "OptionValue",
    "bayesian_update",
    "decide",
    "expected_utility",
    "hypothesis_from_fact",
    "posterior",
    "update_hypothesis",
]
