"""The ontology use cases' requests: what proposing a concept, listing proposals, rejecting one and scaffolding a
domain take, each declared once.

:class:`kg.ontology.proposals.OntologyService` accepts these models; the tools ``ontology_propose_concept``,
``ontology_list_proposals``, ``ontology_validate_proposal``, ``ontology_merge_approved``, ``ontology_reject_proposal``,
``ontology_diff`` and ``ontology_scaffold_domain`` (cli/tools/ontology.py, ontology_admin.py) are these models plus
``agent_id``, and ``mabos ontology ...`` generates its parameters from them
(docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from kg.models import MAX_CONTENT, MAX_NAME, MAX_TAGS, ProposalNodeType, ProposalStatus
from kg.models.base import new_list
from kg.models.request import Request

#: The most proposals one list returns.
MAX_LIST = 10_000

Text = Annotated[str, Field(max_length=MAX_CONTENT)]
ShortText = Annotated[str, Field(max_length=MAX_NAME)]
Uid = Annotated[str, Field(min_length=1, max_length=MAX_NAME, description="The proposal's uid (O-01J...).")]


class ProposeRequest(Request):
    """A class or property proposed for a domain ontology."""

    domain: ShortText = Field(description="The domain ontology to extend (its file is ontologies/<domain>.jsonld).")
    node_type: ProposalNodeType = Field(
        description="class, object_property (links two classes) or datatype_property (a literal value)."
    )
    node_id: ShortText = Field(
        description="The new node's id: <domain prefix>:<LocalName> or <LocalName>; PascalCase for classes, "
        "camelCase for properties (e.g. ecommerce:DropshipFulfillment)."
    )
    label: ShortText = Field(description="Human-readable name (e.g. 'Dropship Fulfillment').")
    parent_class: ShortText | None = Field(default=None, description="Classes: the id of the existing parent class.")
    domain_class: ShortText | None = Field(default=None, description="Properties: the id of the owning class.")
    range: ShortText | None = Field(
        default=None, description="Properties: the target class id, or an xsd: type (xsd:string) for datatypes."
    )
    sbvr_definition: Text = Field(default="", description="The SBVR definition: what the concept is, one sentence.")
    sbvr_synonyms: list[ShortText] = Field(default_factory=new_list, max_length=MAX_TAGS, description="SBVR synonyms.")
    rationale: Text = Field(default="", description="Why the ontology needs it (evidence, use case).")
    multi_valued: bool = Field(default=False, description="Datatype properties: may have several values.")
    scope: ShortText | None = Field(default=None, description="Where the proposal is recorded (default global).")


class ProposalRequest(Request):
    """One proposal, by uid (validate, merge, diff)."""

    uid: Uid


class RejectRequest(ProposalRequest):
    """A proposal to reject and why."""

    reason: str = Field(min_length=1, max_length=MAX_CONTENT, description="Why it is rejected (kept in its history).")

    @field_validator("reason", mode="before")
    @classmethod
    def _said(cls, value: Any) -> Any:
        """Blank is no reason; surrounding blanks are not kept."""
        if isinstance(value, str):
            if not value.strip():
                raise ValueError("say why the proposal is rejected")
            return value.strip()
        return value


class ListRequest(Request):
    """Which proposals to list."""

    status: ProposalStatus | None = Field(default=None, description="Only proposals with this status.")
    domain: ShortText | None = Field(default=None, description="Only proposals for this domain ontology.")
    limit: int = Field(default=100, ge=1, le=MAX_LIST, description=f"At most this many, oldest first (1..{MAX_LIST}).")


class ScaffoldRequest(Request):
    """A new domain ontology and the template it starts from."""

    template: ShortText = Field(description="The template: saas, ecommerce, consulting or agency.")
    domain: ShortText = Field(
        description="The new domain's name; its prefix is the name without hyphens (pet-shop -> petshop)."
    )


__all__ = [
    "MAX_LIST",
    "ListRequest",
    "ProposalRequest",
    "ProposeRequest",
    "RejectRequest",
    "ScaffoldRequest",
    "ShortText",
    "Text",
    "Uid",
]
