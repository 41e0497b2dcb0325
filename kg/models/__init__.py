"""Pydantic v2 models for every record of design.md §2, shared by every backend.

Conventions:

* every record has ``uid`` (time-ordered, prefixed: ``F-...``), ``agent_id``, ``scope`` and
  ``created_at``;
* timestamps are aware UTC datetimes; a naive input is read as UTC, other offsets are converted,
  and JSON output always uses ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (fixed width, so text order is time
  order);
* unknown fields are refused (``extra="forbid"``) so a typo never silently drops data.

Use :func:`parse` to build a model from untrusted input: it raises :class:`kg.errors.InputError`
naming the field and the rule instead of pydantic's multi-line report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg.faces import lazy_names

if TYPE_CHECKING:
    from kg.models.agents import Agent, CommitmentStrategy, Grant
    from kg.models.base import (
        AGENT_ID_RE,
        MAX_CONTENT,
        MAX_LIST,
        MAX_NAME,
        MAX_OBJECT,
        MAX_TAGS,
        MAX_TERM,
        SCOPE_NAME_RE,
        SCOPE_RE,
        AgentId,
        Model,
        Name,
        ObjectText,
        OptionalLabel,
        Priority,
        Record,
        RecordId,
        Scope,
        Tag,
        Term,
        Text,
        Unit,
        UtcDatetime,
        agent_scope,
        describe_validation_error,
        format_ts,
        new_record_id,
        parse,
        to_utc,
    )
    from kg.models.bdi import (
        GRAPH_NODE_KINDS,
        NODE_MODELS,
        NODE_MUTABLE_FIELDS,
        NODE_STATUSES,
        RELATION_SPECS,
        BDINode,
        Belief,
        Desire,
        Goal,
        GraphPath,
        HierarchyLevel,
        Intention,
        NodeKind,
        Plan,
        PlanStep,
        Relation,
        RelationKind,
        RelationSpec,
        kind_matches,
    )
    from kg.models.extraction import Category, ExtractedMemory, FactCandidate, WindowExtraction
    from kg.models.facts import (
        AssertOutcome,
        AssertStatus,
        Fact,
        FactInput,
        FactQuery,
        LiveTriple,
        ObjectKind,
        infer_object_kind,
        pattern_parts,
    )
    from kg.models.memory import Checkpoint, MemoryItem, MemoryQuery, MemoryStoreKind, MemoryType, Tier
    from kg.models.ontology import (
        OntologyProposal,
        ProposalNodeType,
        ProposalStatus,
        ProposalStatusChange,
        ValidationCheck,
    )
    from kg.models.outbox import OutboxEvent
    from kg.models.reasoning import (
        Case,
        CaseOutcome,
        CaseSituation,
        CaseSolution,
        Operator,
        Rule,
        RuleConclusion,
        RuleCondition,
        RuleType,
        Severity,
    )

#: The exported names by the module that defines them, each imported on first use (:mod:`kg.faces`):
#: ``from kg.models import Fact`` builds the fact models only, not the BDI, conversation or reasoning ones.
_SOURCES = {
    "kg.models.agents": ("Agent", "CommitmentStrategy", "Grant"),
    "kg.models.base": ("AGENT_ID_RE", "MAX_CONTENT", "MAX_LIST", "MAX_NAME", "MAX_OBJECT", "MAX_TAGS", "MAX_TERM",
                       "SCOPE_NAME_RE", "SCOPE_RE", "AgentId", "Model", "Name", "ObjectText", "OptionalLabel",
                       "Priority", "Record", "RecordId", "Scope", "Tag", "Term", "Text", "Unit", "UtcDatetime",
                       "agent_scope", "describe_validation_error", "format_ts", "new_record_id", "parse", "to_utc"),
    "kg.models.bdi": ("GRAPH_NODE_KINDS", "NODE_MODELS", "NODE_MUTABLE_FIELDS", "NODE_STATUSES", "RELATION_SPECS",
                      "BDINode", "Belief", "Desire", "Goal", "GraphPath", "HierarchyLevel", "Intention", "NodeKind",
                      "Plan", "PlanStep", "Relation", "RelationKind", "RelationSpec", "kind_matches"),
    "kg.models.extraction": ("Category", "ExtractedMemory", "FactCandidate", "WindowExtraction"),
    "kg.models.facts": ("AssertOutcome", "AssertStatus", "Fact", "FactInput", "FactQuery", "LiveTriple", "ObjectKind",
                        "infer_object_kind", "pattern_parts"),
    "kg.models.memory": ("Checkpoint", "MemoryItem", "MemoryQuery", "MemoryStoreKind", "MemoryType", "Tier"),
    "kg.models.ontology": ("OntologyProposal", "ProposalNodeType", "ProposalStatus", "ProposalStatusChange",
                           "ValidationCheck"),
    "kg.models.outbox": ("OutboxEvent",),
    "kg.models.reasoning": ("Case", "CaseOutcome", "CaseSituation", "CaseSolution", "Operator", "Rule",
                            "RuleConclusion", "RuleCondition", "RuleType", "Severity"),
}  # fmt: skip
if not TYPE_CHECKING:  # mypy reads the imports above: a misspelt name stays an error
    __getattr__, __dir__ = lazy_names(__name__, _SOURCES)

__all__ = [
    "AGENT_ID_RE",
    "GRAPH_NODE_KINDS",
    "MAX_CONTENT",
    "MAX_LIST",
    "MAX_NAME",
    "MAX_OBJECT",
    "MAX_TAGS",
    "MAX_TERM",
    "NODE_MODELS",
    "NODE_MUTABLE_FIELDS",
    "NODE_STATUSES",
    "RELATION_SPECS",
    "SCOPE_NAME_RE",
    "SCOPE_RE",
    "Agent",
    "AgentId",
    "AssertOutcome",
    "AssertStatus",
    "BDINode",
    "Belief",
    "Case",
    "CaseOutcome",
    "CaseSituation",
    "CaseSolution",
    "Category",
    "Checkpoint",
    "CommitmentStrategy",
    "Desire",
    "ExtractedMemory",
    "Fact",
    "FactCandidate",
    "FactInput",
    "FactQuery",
    "Goal",
    "Grant",
    "GraphPath",
    "HierarchyLevel",
    "Intention",
    "LiveTriple",
    "MemoryItem",
    "MemoryQuery",
    "MemoryStoreKind",
    "MemoryType",
    "Model",
    "Name",
    "NodeKind",
    "ObjectKind",
    "ObjectText",
    "OntologyProposal",
    "Operator",
    "OptionalLabel",
    "OutboxEvent",
    "Plan",
    "PlanStep",
    "Priority",
    "ProposalNodeType",
    "ProposalStatus",
    "ProposalStatusChange",
    "Record",
    "RecordId",
    "Relation",
    "RelationKind",
    "RelationSpec",
    "Rule",
    "RuleConclusion",
    "RuleCondition",
    "RuleType",
    "Scope",
    "Severity",
    "Tag",
    "Term",
    "Text",
    "Tier",
    "Unit",
    "UtcDatetime",
    "ValidationCheck",
    "WindowExtraction",
    "agent_scope",
    "describe_validation_error",
    "format_ts",
    "infer_object_kind",
    "kind_matches",
    "new_record_id",
    "parse",
    "pattern_parts",
    "to_utc",
]
