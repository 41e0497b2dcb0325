"""Results of the BDI maintenance cycle (R5), serialised with the seed's camelCase keys.

``CycleResult`` dumps (``model_dump(mode="json")``, aliases are the default) to exactly the seed's
keys — ``agentId``, ``staleIntentionsPruned``, ``desiresPrioritized``, ``conflictsDetected``,
``chunksProcessed``, ``timestamp`` — plus one ``details`` object with what was done to which record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kg.models import UtcDatetime
from kg.models.base import new_list


class CamelModel(BaseModel):
    """Snake_case in Python, camelCase in JSON (both accepted on input); unknown fields refused."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
    )


class ConflictMember(CamelModel):
    """One record taking part in a conflict."""

    uid: str
    text: str = Field(description="The belief's content, or the fact's object.")
    score: float | None = Field(description="The belief's certainty, or the fact's confidence.")
    scope: str
    agent_id: str | None = Field(default=None, description="Whose record it is (the belief's or fact's owner).")
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None


class Conflict(CamelModel):
    """Records that cannot all hold: beliefs about one subject, or facts of one functional predicate.

    ``pairs`` counts the conflicting pairs inside the group (the seed counts conflicts pair by pair);
    ``members`` lists every record that is part of at least one such pair.
    """

    kind: Literal["belief", "fact"]
    subject: str
    predicate: str | None = None
    pairs: int = Field(ge=1)
    members: list[ConflictMember]


class PrunedIntention(CamelModel):
    """An intention the cycle dropped, and why."""

    uid: str
    content: str
    reason: Literal["deadline", "stalled"]
    deadline: UtcDatetime | None = None
    updated_at: UtcDatetime


class DesireChange(CamelModel):
    """A desire whose priority the cycle recomputed to a new value."""

    uid: str
    content: str
    old_priority: int | None
    new_priority: int
    goals: int = Field(description="Open goals the desire motivates that entered the formula.")


class CycleDetails(CamelModel):
    """What the cycle did, record by record."""

    commitment_strategy: str
    beliefs: int = 0
    pruned_intentions: list[PrunedIntention] = Field(default_factory=new_list)
    desire_changes: list[DesireChange] = Field(default_factory=new_list)
    conflicts: list[Conflict] = Field(default_factory=new_list)
    report_path: str | None = None
    hierarchy_built: bool = Field(default=False, description="Whether the weekly hierarchy build ran (Sundays).")
    weekly_summaries: list[str] = Field(default_factory=new_list, description="Weekly summaries it wrote.")


class CycleResult(CamelModel):
    """The outcome of one BDI maintenance cycle for one agent (the seed's ``BdiCycleResult``)."""

    agent_id: str
    stale_intentions_pruned: int = 0
    desires_prioritized: int = 0
    conflicts_detected: int = 0
    chunks_processed: int = 0
    timestamp: UtcDatetime
    details: CycleDetails
