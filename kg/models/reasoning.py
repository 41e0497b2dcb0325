"""Rules (inference, constraint, policy) and cases."""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Annotated

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from kg.models.base import (
    MAX_CONTENT,
    MAX_LIST,
    MAX_NAME,
    Model,
    Name,
    ObjectText,
    OptionalLabel,
    Record,
    RecordId,
    Term,
    Unit,
    new_list,
)


class RuleType(StrEnum):
    """Rule kinds."""

    INFERENCE = "inference"
    CONSTRAINT = "constraint"
    POLICY = "policy"


class Operator(StrEnum):
    """Comparison operators of rule conditions."""

    EQ = "eq"
    NE = "ne"
    GT = "gt"
    LT = "lt"
    GTE = "gte"
    LTE = "lte"
    CONTAINS = "contains"


class Severity(StrEnum):
    """Severity of a constraint violation."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"


_VAR = re.compile(r"^\?[A-Za-z_]\w*$")


def _is_var(term: str) -> bool:
    return bool(_VAR.match(term))


class RuleCondition(Model):
    """One condition: a triple pattern (``?var`` subject/object) and an operator on the object."""

    subject: Term
    predicate: Term
    object: ObjectText
    operator: Operator = Operator.EQ


class RuleConclusion(Model):
    """The triple an inference rule concludes."""

    subject: Term
    predicate: Term
    object: ObjectText


class Rule(Record):
    """An inference, constraint or policy rule over the fact store."""

    name: Name
    description: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    type: RuleType = RuleType.INFERENCE
    conditions: list[RuleCondition] = Field(min_length=1, max_length=64)
    conclusion: RuleConclusion | None = None
    violation_message: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    severity: Severity = Severity.WARNING
    action: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    escalate: bool = False
    confidence_factor: Unit = 0.9
    enabled: bool = True
    domain: OptionalLabel = "general"

    @model_validator(mode="after")
    def _conclusion_bound(self) -> Rule:
        if self.type is RuleType.INFERENCE and self.conclusion is None:
            raise ValueError("conclusion: an inference rule needs a conclusion")
        if self.conclusion is not None:
            bound = {t for c in self.conditions for t in (c.subject, c.predicate, c.object) if _is_var(t)}
            for term in (self.conclusion.subject, self.conclusion.predicate, self.conclusion.object):
                if _is_var(term) and term not in bound:
                    raise ValueError(f"conclusion: variable {term} is not bound by any condition")
        return self


class CaseSituation(Model):
    """The situation of a case: what was believed and wanted, and the context."""

    beliefs: list[Annotated[str, Field(max_length=MAX_NAME * 4)]] = Field(
        default_factory=new_list,
        max_length=MAX_LIST,
        description="What was believed: uids (B-...) or short statements.",
    )
    desires: list[Annotated[str, Field(max_length=MAX_NAME * 4)]] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="What was wanted: uids (D-...) or short statements."
    )
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = Field(
        "", description="Free text describing the situation."
    )


class CaseSolution(Model):
    """What was done."""

    plan_id: RecordId | None = Field(None, description="The plan (P-...) that was followed, if any.")
    actions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="What was done, one action per item."
    )


class CaseOutcome(Model):
    """How it went."""

    success: bool = Field(description="Whether it went well (a success) or not (a failure).")
    metrics: dict[str, float] = Field(default_factory=dict, description="Measured results, name -> number.")
    lessons: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="What was learned, one lesson per item."
    )

    @field_validator("metrics")
    @classmethod
    def _finite_metrics(cls, value: dict[str, float]) -> dict[str, float]:
        for key, number in value.items():
            if not math.isfinite(number):
                raise ValueError(f"metric {key!r} must be a finite number")
        return value


class Case(Record):
    """A past case for case-based reasoning."""

    situation: CaseSituation
    solution: CaseSolution
    outcome: CaseOutcome
