"""The reason use case's request: what ``reason`` takes (the seed's parameters, plus top, narrate and storing),
declared once, with the seed's problem classification it holds.

:func:`reasoning.router.service.reason_for` accepts it; the tool ``reason`` (cli/tools/cases.py) is it plus
``agent_id``, and ``mabos reason run`` generates its options from it (docs/decisions/2026-11-28-request-models.md).
It lives beside the router package, not in it: the package's ``__init__`` imports every engine (NumPy among them),
and a request module imports pydantic and the models only. :mod:`reasoning.router.models` re-exports the
classification.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field

from kg.models import MAX_CONTENT, Model, Scope
from kg.models.request import Request

#: Methods one multi-method run names at most; best-scored methods one auto run runs at most.
MAX_METHODS = 48
MAX_TOP = 32


class Uncertainty(StrEnum):
    """How uncertain the problem is."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Complexity(StrEnum):
    """How complex the problem is."""

    SIMPLE = "simple"
    MODERATE = "moderate"
    COMPLEX = "complex"


class Domain(StrEnum):
    """The kind of knowledge the problem rests on."""

    FORMAL = "formal"
    EMPIRICAL = "empirical"
    SOCIAL = "social"
    MIXED = "mixed"


class TimePressure(StrEnum):
    """How urgently an answer is needed (not scored by the seed; kept and reported)."""

    NONE = "none"
    MODERATE = "moderate"
    URGENT = "urgent"


class DataAvailability(StrEnum):
    """How much data bears on the problem."""

    RICH = "rich"
    MODERATE = "moderate"
    SPARSE = "sparse"


class Stakes(StrEnum):
    """What is at stake."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class ProblemClassification(Model):
    """The seed's ``ProblemClassification``; a dimension left out matches no method."""

    uncertainty: Uncertainty | None = None
    complexity: Complexity | None = None
    domain: Domain | None = None
    time_pressure: TimePressure | None = None
    data_availability: DataAvailability | None = None
    stakes: Stakes | None = None


class ReasonRequest(Request):
    """A problem and how to reason about it: one method, auto-selection, or several methods fused."""

    problem: str = Field("", max_length=MAX_CONTENT, description="The problem or question in plain words.")
    method: str | None = Field(
        None,
        max_length=64,
        description="One method id (mode 1), e.g. bayesian, decision-theory, game-theory, counterfactual ('_' works "
        "for '-'), or 'auto'. Omit it to auto-select from problem_classification.",
    )
    problem_classification: ProblemClassification | None = Field(
        None,
        description="Mode 2 (auto-select): {uncertainty: low|medium|high, complexity: simple|moderate|complex, "
        "domain: formal|empirical|social|mixed, time_pressure: none|moderate|urgent, data_availability: "
        "rich|moderate|sparse, stakes: low|medium|high}; read from the problem text when omitted.",
    )
    multi_method: bool = Field(False, description="Mode 3: run several methods and fuse their conclusions.")
    methods: list[Annotated[str, Field(max_length=64)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_METHODS,
        description="The method ids for multi_method; without them, the best 3.",
    )
    inputs: dict[str, Any] = Field(
        default_factory=dict,
        description="Inputs per method id, e.g. {bayesian: {network: {nodes: {Rain: {parents: [], cpt: {'': 0.2}}}}, "
        "evidence: {}, query: Rain}}; or one method's own object. Without inputs a method reads the agent's "
        "graph (facts, rules, cases, beliefs, goals) where it can; see docs/reasoning-methods.md.",
    )
    top: int = Field(1, ge=1, le=MAX_TOP, description="Auto mode: how many best-scored methods to run.")
    narrate: bool = Field(False, description="Add a short explanation by the configured chat model (if any).")
    store: Literal["memory", "case"] | None = Field(None, description="Store each result as a memory or a case.")
    store_scope: Scope | None = Field(None, description="Where to store (no wider than the result's sources).")
    success: bool | None = Field(None, description="With store='case': how the decision turned out.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of simulations (monte-carlo).")


__all__ = [
    "MAX_METHODS",
    "MAX_TOP",
    "Complexity",
    "DataAvailability",
    "Domain",
    "ProblemClassification",
    "ReasonRequest",
    "Stakes",
    "TimePressure",
    "Uncertainty",
]
