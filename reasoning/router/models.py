"""Inputs and outputs of the reasoning-method router: the seed's problem classification, catalogue
entries, scores, fusion and the router's result. The per-method result is
:class:`reasoning.router.methods.base.MethodOutcome`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from kg.models import Model
from kg.models.base import new_list
from reasoning.router.methods.base import MethodOutcome
from reasoning.router_requests import (  # the request module holds the classification (no engine imports there)
    Complexity,
    DataAvailability,
    Domain,
    ProblemClassification,
    Stakes,
    TimePressure,
    Uncertainty,
)


class Category(StrEnum):
    """The seed's six method categories, plus ``extension`` for methods mabos adds beyond the seed."""

    FORMAL = "formal"
    PROBABILISTIC = "probabilistic"
    CAUSAL = "causal"
    EXPERIENCE = "experience"
    SOCIAL = "social"
    META = "meta"
    EXTENSION = "extension"


class IdealProfile(Model):
    """The problem a method suits best, one value per scored dimension (the seed's ``ideal_*``)."""

    model_config = ConfigDict(frozen=True)

    uncertainty: Uncertainty
    complexity: Complexity
    domain: Domain
    data_availability: DataAvailability
    stakes: Stakes


#: builtin: computes from its inputs alone; graph: also reads the agent's knowledge graph; prompt: an LLM prompt.
EngineKind = Literal["builtin", "graph", "prompt"]


class MethodSpec(Model):
    """One catalogue entry."""

    model_config = ConfigDict(frozen=True)

    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")]
    name: str
    category: Category
    description: str
    profile: IdealProfile
    steps: tuple[str, ...] = Field(min_length=2)
    engine: EngineKind = "prompt"
    aliases: tuple[str, ...] = ()


class MethodScore(Model):
    """A method's fit for a classification under the seed's scoring, with the dimensions that matched."""

    method: str
    category: Category
    score: float
    matched: list[str] = Field(description="The dimensions whose ideal value equals the classification's.")
    rank: int = Field(description="1 = best; ties are broken by catalogue order (see tie_break).")
    profile: float = Field(0.0, description="The seed's profile score for the classification (0..1).")
    cue: float = Field(0.0, description="The structural cues' score (see reasoning.router.cues).")
    cues: list[str] = Field(default_factory=new_list, description="The names of the structural cues that matched.")
    semantic: float | None = Field(
        None, description="Cosine similarity to the method's worked problems (None: the embedder was off)."
    )


class Position(Model):
    """One distinct conclusion and the methods that reached it."""

    conclusion: str
    methods: list[str]
    weight: float = Field(description="The sum of the confidences of the methods that reached it.")


class Disagreement(Model):
    """Two methods that reached different conclusions."""

    methods: tuple[str, str]
    conclusions: tuple[str, str]


class FusionReport(Model):
    """Multi-method fusion: the seed's five steps."""

    positions: list[Position] = Field(description="Distinct conclusions, heaviest first.")
    agreements: list[Position] = Field(description="Conclusions reached by two or more methods.")
    disagreements: list[Disagreement]
    pending: list[str] = Field(description="Methods that computed nothing (prompt only).")
    unified_conclusion: str | None
    overall_confidence: float = Field(ge=0.0, le=1.0)
    summary: str


class RouterResult(Model):
    """What :func:`reasoning.router.reason` did and found."""

    mode: Literal["explicit", "auto", "multi"]
    methods: list[str]
    classification: ProblemClassification | None = None
    scores: list[MethodScore] = Field(default_factory=new_list)
    tie_break: str | None = None
    results: list[MethodOutcome]
    fusion: FusionReport | None = None
    narration: dict[str, str] = Field(default_factory=dict, description="method -> explanation by the chat model.")
    stored: list[dict[str, Any]] = Field(default_factory=new_list, description="Records written on request.")
    notes: list[str] = Field(default_factory=new_list)
    router: Literal["explicit", "classification", "text", "llm"] = Field(
        "explicit",
        description="Which path chose the methods: explicit ids, the seed's scoring of a given "
        "classification (text signals only break ties), the problem text (cues, semantic similarity and the "
        "inferred classification's profile score), or the configured chat model.",
    )
    why: dict[str, str] = Field(default_factory=dict, description="method -> why it was chosen.")
    templates: dict[str, Any] = Field(
        default_factory=dict,
        description="method -> a ready-to-fill inputs object "
        "for each method that computed nothing (rerun with --inputs).",
    )


__all__ = [
    "Category",
    "Complexity",
    "DataAvailability",
    "Disagreement",
    "Domain",
    "EngineKind",
    "FusionReport",
    "IdealProfile",
    "MethodScore",
    "MethodSpec",
    "Position",
    "ProblemClassification",
    "RouterResult",
    "Stakes",
    "TimePressure",
    "Uncertainty",
]
