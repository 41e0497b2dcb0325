"""Ontology proposals, their validation checks and status history."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    Field,
    model_validator,
)

from kg.models.base import (
    MAX_CONTENT,
    MAX_NAME,
    MAX_TAGS,
    AgentId,
    Model,
    Name,
    OptionalLabel,
    Record,
    UtcDatetime,
    new_list,
)


class ProposalNodeType(StrEnum):
    """What an ontology proposal adds."""

    CLASS = "class"
    OBJECT_PROPERTY = "object_property"
    DATATYPE_PROPERTY = "datatype_property"


class ProposalStatus(StrEnum):
    """Life cycle of an ontology proposal."""

    PENDING = "pending"
    VALIDATED = "validated"
    INVALID = "invalid"
    APPROVED_MERGED = "approved-merged"
    REJECTED = "rejected"


class ValidationCheck(Model):
    """One check of a proposal validation."""

    check: Name
    ok: bool
    message: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class ProposalStatusChange(Model):
    """One step of a proposal's life: the status it reached, who moved it there, when, and why."""

    status: ProposalStatus
    by: AgentId
    at: UtcDatetime
    note: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class OntologyProposal(Record):
    """A concept or property an agent proposes for the shared ontology.

    ``node_id`` is the local name (``DropshipFulfillment``); the domain file gives the prefix.
    ``parent_class``, ``domain_class`` and ``range`` are CURIEs (``biz:Party``, ``xsd:string``), full IRIs or
    local names of the proposal's own domain. ``history`` holds every status change, oldest first; data
    written before it existed reads back with one ``pending`` entry (the proposer at ``created_at``).
    """

    domain: Name
    node_type: ProposalNodeType
    node_id: Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")]
    label: Name
    parent_class: OptionalLabel | None = None
    domain_class: OptionalLabel | None = None
    range: OptionalLabel | None = None
    sbvr_definition: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    sbvr_synonyms: list[Name] = Field(default_factory=new_list, max_length=MAX_TAGS)
    rationale: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    multi_valued: bool = False  # datatype properties only: several values per owner (TypeQL @card(0..))
    proposed_by: AgentId
    status: ProposalStatus = ProposalStatus.PENDING
    validation_result: list[ValidationCheck] = Field(default_factory=new_list)
    history: list[ProposalStatusChange] = Field(default_factory=new_list)

    @model_validator(mode="before")
    @classmethod
    def _default_history(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("history") and data.get("proposed_by") and data.get("created_at"):
            first = {"status": ProposalStatus.PENDING, "by": data["proposed_by"], "at": data["created_at"]}
            data = {**data, "history": [first]}
        return data

    @property
    def updated_at(self) -> datetime:
        """When the status last changed (``created_at`` without history)."""
        return self.history[-1].at if self.history else self.created_at
