"""Fact tools: fact_assert, fact_retract, fact_query, fact_explain and fact_import (over the fact service).

Every handler makes the one service call ``mabos fact ...`` makes; the limits are the service's
(confidence 0..1, explain depth 0..10, query limit 1..100,000 with 100 by default).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from cli.tools.overrides import count_progress, may_tune_process
from cli.tools.registry import ToolContext, ToolInput, tool
from kg.facts import MAX_EXPLAIN_DEPTH, Explanation
from kg.models import MAX_LIST, AssertStatus, Fact, ObjectKind, ObjectText, RecordId, Term, Unit, UtcDatetime
from reasoning.fact_import import ImportReport, RdfDocument, import_documents

MAX_QUERY_LIMIT = 100_000  # the store's own ceiling (kg.models.FactQuery.limit)
DEFAULT_QUERY_LIMIT = 100

_SCOPE = (
    "The scope: 'global', 'agent:<id>' (private to that agent, the default is the acting agent's own), "
    "'project:<name>', 'user:<name>' or 'custom:<name>'; the agent must be allowed to write it."
)


# ---------------------------------------------------------------------------------------------- assert


class FactAssertInput(ToolInput):
    """Arguments of ``fact_assert``."""

    subject: Term = Field(description="The entity the fact is about, e.g. 'acme'.")
    predicate: Term = Field(description="The relation or attribute, e.g. 'hasRevenue' (camelCase by convention).")
    object: ObjectText = Field(description="The value or the other entity, e.g. '$50000' or 'globex'.")
    confidence: Unit = Field(1.0, description="How sure the agent is, 0..1 (default 1).")
    source: str = Field("agent", max_length=256, description="Where the fact comes from, e.g. 'cfo-report'.")
    scope: str | None = Field(None, description=_SCOPE)
    object_kind: ObjectKind | None = Field(
        None, description="Whether the object names an entity or is a literal; guessed from the object when omitted."
    )
    valid_from: UtcDatetime | None = Field(None, description="World time the fact starts to hold (ISO-8601).")
    valid_until: UtcDatetime | None = Field(
        None, description="World time the fact stops holding (ISO-8601); must be later than valid_from."
    )
    derived_from: list[RecordId] = Field(
        default_factory=list, max_length=MAX_LIST, description="Uids (F-...) of facts this one was derived from."
    )
    rule_id: RecordId | None = Field(None, description="The uid (R-...) of the rule that derived this fact.")


class FactAssertResult(BaseModel):
    """What ``fact_assert`` did."""

    uid: str = Field(description="The fact's uid (F-...).")
    status: AssertStatus = Field(description="created, updated (confidence, source or validity changed) or unchanged.")
    fact: Fact = Field(description="The fact as stored.")


@tool(
    "fact_assert",
    group="facts",
    description="""Record a (subject, predicate, object) fact the agent has learned, with a confidence and a source.
    It is an upsert: the same subject, predicate and object in the same scope is updated, never duplicated.
    Use it for structured knowledge that rules and queries should see (use memory_store_item for free text).
    Returns the uid, whether the fact was created, updated or unchanged, and the stored fact.""",
)
def fact_assert(ctx: ToolContext, args: FactAssertInput) -> FactAssertResult:
    """Assert one fact through the fact service."""
    fields = args.model_dump(exclude={"agent_id", "subject", "predicate", "object"})
    fields["derived_from"] = fields["derived_from"] or None
    stored, status = ctx.workspace().facts.assert_fact(
        ctx.agent_for(args), args.subject, args.predicate, args.object, **fields
    )
    return FactAssertResult(uid=stored.uid, status=AssertStatus(status), fact=stored)


# ---------------------------------------------------------------------------------------------- retract


class FactRetractInput(ToolInput):
    """Arguments of ``fact_retract``: ids and/or a subject and/or a predicate (at least one)."""

    fact_ids: list[RecordId] = Field(
        default_factory=list, max_length=MAX_LIST, description="Uids (F-...) of the facts to retract (up to 1000)."
    )
    subject: str | None = Field(None, max_length=1024, description="Retract the live facts with this subject.")
    predicate: str | None = Field(None, max_length=1024, description="Retract the live facts with this predicate.")
    scope: str | None = Field(None, description="Only retract in this one scope (default: every writable scope).")


class FactRetractResult(BaseModel):
    """The facts ``fact_retract`` retracted."""

    retracted: list[str] = Field(description="Uids of the retracted facts.")
    count: int = Field(description="How many facts were retracted.")


@tool(
    "fact_retract",
    group="facts",
    description="""Retract facts that no longer hold, by uid, subject and/or predicate (give at least one; several
    narrow each other). Only facts in scopes the agent may write are touched. History is kept: fact_query with
    as_of still finds them, and the next forward inference retracts what was derived from them.
    Returns the retracted uids and their count.""",
)
def fact_retract(ctx: ToolContext, args: FactRetractInput) -> FactRetractResult:
    """Retract facts through the fact service."""
    uids = ctx.workspace().facts.retract(
        ctx.agent_for(args), uids=args.fact_ids, subject=args.subject, predicate=args.predicate, scope=args.scope
    )
    return FactRetractResult(retracted=uids, count=len(uids))


# ---------------------------------------------------------------------------------------------- query


class FactQueryInput(ToolInput):
    """Arguments of ``fact_query``."""

    subject: str | None = Field(None, max_length=1024, description="Subject; '*' is a wildcard (acme*, *corp).")
    predicate: str | None = Field(None, max_length=1024, description="Predicate; '*' is a wildcard (has*).")
    object: str | None = Field(None, max_length=8192, description="Object; '*' is a wildcard.")
    min_confidence: Unit | None = Field(None, description="Only facts at least this confident (0..1).")
    valid_at: UtcDatetime | None = Field(None, description="Only facts holding at this world time (ISO-8601).")
    as_of: UtcDatetime | None = Field(None, description="The store as it stood at this system time (ISO-8601).")
    include_derived: bool = Field(True, description="Include facts derived by inference (default true).")
    only_derived: bool = Field(False, description="Only facts derived by inference.")
    include_retracted: bool = Field(False, description="Include retracted facts.")
    scope: str | None = Field(None, description="Only this one readable scope (default: every scope the agent reads).")
    limit: int = Field(
        DEFAULT_QUERY_LIMIT, ge=1, le=MAX_QUERY_LIMIT, description="At most this many facts (1..100000, default 100)."
    )


class FactList(BaseModel):
    """Facts found by ``fact_query``."""

    facts: list[Fact] = Field(description="The matching facts, oldest first.")


@tool(
    "fact_query",
    group="facts",
    description="""Look up the facts the agent can see by subject, predicate and/or object pattern ('*' wildcards),
    confidence, world-time validity, derivation, or as the store stood at an earlier time (as_of). Use it to check
    what is known before asserting or reasoning. Returns the matching facts (default at most 100).""",
)
def fact_query(ctx: ToolContext, args: FactQueryInput) -> FactList:
    """Query facts through the fact service."""
    criteria = args.model_dump(exclude={"agent_id"})
    return FactList(facts=ctx.workspace().facts.query(ctx.agent_for(args), **criteria))


# ---------------------------------------------------------------------------------------------- explain


class FactExplainInput(ToolInput):
    """Arguments of ``fact_explain``."""

    fact_id: str = Field(max_length=64, description="The uid (F-...) of the fact to explain.")
    depth: int = Field(
        2, ge=0, le=MAX_EXPLAIN_DEPTH, description="How many levels of supporting facts to follow (0..10, default 2)."
    )


@tool(
    "fact_explain",
    group="facts",
    description="""Explain why a fact holds: the rule that derived it and, recursively, the facts it was derived from
    (depth levels down). Use it to justify a conclusion or to trace a derived fact back to its evidence.
    Returns a tree: fact, rule_id/rule_name, supports; supports the agent cannot see are marked visible=false.""",
)
def fact_explain(ctx: ToolContext, args: FactExplainInput) -> Explanation:
    """Explain a fact through the fact service."""
    return ctx.workspace().facts.explain(ctx.agent_for(args), args.fact_id, depth=args.depth)


# ---------------------------------------------------------------------------------------------- import


class FactImportInput(ToolInput):
    """Arguments of ``fact_import``."""

    documents: list[RdfDocument] = Field(min_length=1, max_length=MAX_LIST, description="The RDF documents.")
    scope: str | None = Field(None, description=_SCOPE)


@tool(
    "fact_import",
    group="facts",
    description="""Import RDF documents (Turtle, N-Triples, JSON-LD or RDF/XML text) as facts: each triple becomes
    a fact (IRIs stay IRIs, rdf:type becomes 'type', literals become literal objects), asserted in batches of
    10,000 with the usual checks. Use it to load an existing knowledge graph or ontology data. Returns the counts
    (created, updated, unchanged, skipped blank literals) and the parse and store times.""",
)
def fact_import(ctx: ToolContext, args: FactImportInput) -> ImportReport:
    """Parse the documents and bulk-assert their triples through the fact service."""
    workspace, agent_id = ctx.workspace(), ctx.agent_for(args)
    return import_documents(workspace, agent_id, args.documents, scope=args.scope, progress=count_progress(ctx),
                            tune_process=may_tune_process(ctx))  # fmt: skip


__all__ = [
    "FactAssertInput",
    "FactAssertResult",
    "FactExplainInput",
    "FactImportInput",
    "FactList",
    "FactQueryInput",
    "FactRetractInput",
    "FactRetractResult",
    "fact_assert",
    "fact_explain",
    "fact_import",
    "fact_query",
    "fact_retract",
]
