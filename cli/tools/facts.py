"""Fact tools: fact_assert, fact_retract, fact_query, fact_explain and fact_import (over the fact service).

Every handler makes the one service call ``mabos fact ...`` makes. The inputs are the fact service's request models
(:mod:`kg.facts_requests`) plus ``agent_id``; their fields, limits and descriptions are declared there once.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.overrides import count_progress, may_tune_process
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.facts import Explanation
from kg.facts_requests import (
    FactAssertRequest,
    FactExplainRequest,
    FactImportRequest,
    FactQueryRequest,
    FactRetractRequest,
)
from kg.models import AssertStatus, Fact
from kg.rdf.importer import ImportReport, import_documents

# ---------------------------------------------------------------------------------------------- assert


class FactAssertInput(FactAssertRequest, ToolInput):
    """Arguments of ``fact_assert``."""


class FactAssertResult(ToolOutput):
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
    stored, status = ctx.workspace().facts.assert_fact(ctx.agent_for(args), args)
    return FactAssertResult(uid=stored.uid, status=AssertStatus(status), fact=stored)


# ---------------------------------------------------------------------------------------------- retract


class FactRetractInput(FactRetractRequest, ToolInput):
    """Arguments of ``fact_retract``: ids and/or a subject and/or a predicate (at least one)."""


class FactRetractResult(ToolOutput):
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
    uids = ctx.workspace().facts.retract(ctx.agent_for(args), args)
    return FactRetractResult(retracted=uids, count=len(uids))


# ---------------------------------------------------------------------------------------------- query


class FactQueryInput(FactQueryRequest, ToolInput):
    """Arguments of ``fact_query``."""


class FactList(ToolOutput):
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
    return FactList(facts=ctx.workspace().facts.query(ctx.agent_for(args), args))


# ---------------------------------------------------------------------------------------------- explain


class FactExplainInput(FactExplainRequest, ToolInput):
    """Arguments of ``fact_explain``."""


@tool(
    "fact_explain",
    group="facts",
    description="""Explain why a fact holds: the rule that derived it and, recursively, the facts it was derived from
    (depth levels down). Use it to justify a conclusion or to trace a derived fact back to its evidence.
    Returns a tree: fact, rule_id/rule_name, supports; supports the agent cannot see are marked visible=false.""",
)
def fact_explain(ctx: ToolContext, args: FactExplainInput) -> Explanation:
    """Explain a fact through the fact service."""
    return ctx.workspace().facts.explain(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------------------- import


class FactImportInput(FactImportRequest, ToolInput):
    """Arguments of ``fact_import``."""


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
    return import_documents(workspace, agent_id, args, progress=count_progress(ctx), tune_process=may_tune_process(ctx))


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
