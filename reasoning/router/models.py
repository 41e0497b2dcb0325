"""Inputs and outputs of the reasoning-method router: profiles, catalogue entries, results, fusion."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from kg.models import MAX_CONTENT, Model


class Level(StrEnum):
    """A low / medium / high rating of one problem dimension."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """0, 1, 2 for low, medium, high."""
        return _LEVEL_RANK[self]


_LEVEL_RANK = {Level.LOW: 0, Level.MEDIUM: 1, Level.HIGH: 2}


class Domain(StrEnum):
    """Problem domains. ``general`` means no particular domain."""

    FINANCE = "finance"
    OPERATIONS = "operations"
    STRATEGY = "strategy"
    LEGAL = "legal"
    TECHNICAL = "technical"
    MARKETING = "marketing"
    PEOPLE = "people"
    GENERAL = "general"


class Category(StrEnum):
    """The six method categories."""

    FORMAL_LOGICAL = "formal_logical"
    PROBABILISTIC = "probabilistic"
    CAUSAL_SYSTEMS = "causal_systems"
    EXPERIENTIAL = "experiential"
    DECISION_MAKING = "decision_making"
    SOCIAL_ETHICAL_CREATIVE = "social_ethical_creative"

    @property
    def label(self) -> str:
        """Human name of the category."""
        return _CATEGORY_LABELS[self]


_CATEGORY_LABELS = {
    Category.FORMAL_LOGICAL: "Formal and logical",
    Category.PROBABILISTIC: "Probabilistic and statistical",
    Category.CAUSAL_SYSTEMS: "Causal and systems",
    Category.EXPERIENTIAL: "Experiential",
    Category.DECISION_MAKING: "Decision-making",
    Category.SOCIAL_ETHICAL_CREATIVE: "Social, ethical and creative",
}


class ProblemProfile(Model):
    """Where a problem sits on the five dimensions the router scores methods on."""

    uncertainty: Level = Level.MEDIUM
    complexity: Level = Level.MEDIUM
    domain: Domain = Domain.GENERAL
    data_availability: Level = Level.MEDIUM
    stakes: Level = Level.MEDIUM


class IdealProfile(Model):
    """The problems a method suits best: one level per dimension and the domains it fits."""

    model_config = ConfigDict(frozen=True)

    uncertainty: Level
    complexity: Level
    domains: frozenset[Domain] = Field(min_length=1)
    data_availability: Level
    stakes: Level


EngineKind = Literal["builtin", "injected"]


class MethodSpec(Model):
    """One catalogue entry."""

    model_config = ConfigDict(frozen=True)

    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")]
    name: str
    category: Category
    description: str
    profile: IdealProfile
    steps: tuple[str, ...] = Field(min_length=2)
    engine: EngineKind | None = Field(
        default=None,
        description="builtin: computed by the router; injected: computed by an engine the caller passes; "
        "None: the router returns a prompt for the caller's LLM.",
    )


class DimensionScores(Model):
    """How well a method's ideal profile matches the problem on each dimension (0, 0.5 or 1)."""

    uncertainty: float
    complexity: float
    domain: float
    data_availability: float
    stakes: float


class MethodScore(Model):
    """A method's fit for a problem: the weighted sum of its dimension scores, in 0..1."""

    method_id: str
    name: str
    category: Category
    score: float
    breakdown: DimensionScores
    computes: bool = Field(description="Whether the router or an injected engine can compute this method.")


class Problem(Model):
    """What to reason about.

    ``inputs`` holds each method's own inputs under its id, e.g. ``{"expected_utility": {"options": [...]},
    "bayesian_update": {"hypotheses": [...]}, "deductive": {...}}``; engines read their entry.
    """

    text: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    profile: ProblemProfile | None = None
    inputs: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ComputedResult(Model):
    """A result an engine computed."""

    kind: Literal["computed"] = "computed"
    method: str
    answer: str = Field(description="The conclusion in one line; fusion compares methods by it.")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    summary: str = ""
    output: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class PromptResult(Model):
    """Nothing was computed: a structured prompt for the caller's own LLM to apply the method."""

    kind: Literal["llm_prompt"] = "llm_prompt"
    method: str
    prompt: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    response_format: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


#: What running one method gives: a computed result or a prompt, told apart by ``kind``.
MethodResult = Annotated[ComputedResult | PromptResult, Field(discriminator="kind")]


class Position(Model):
    """One distinct answer and the methods that reached it."""

    answer: str
    methods: list[str]


class Disagreement(Model):
    """Two methods that reached different answers."""

    methods: tuple[str, str]
    answers: tuple[str, str]


class FusionReport(Model):
    """How the conclusions of several methods relate."""

    positions: list[Position] = Field(description="Distinct answers, most supported first.")
    agreements: list[Position] = Field(description="Answers reached by two or more methods.")
    disagreements: list[Disagreement] = Field(description="Every pair of methods with different answers.")
    pending: list[str] = Field(description="Methods that returned a prompt and have no answer yet.")
    consensus: str | None = Field(description="The answer of a strict majority of at least two answered methods.")
    summary: str


class RouterResult(Model):
    """What :func:`reasoning.router.reason` did and found."""

    mode: Literal["explicit", "auto", "multi"]
    methods: list[str]
    profile: ProblemProfile | None = None
    scores: list[MethodScore] = Field(default_factory=list)
    results: list[MethodResult]
    fusion: FusionReport | None = None
    notes: list[str] = Field(default_factory=list)
