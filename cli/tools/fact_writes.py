"""The fact tools that write: fact_assert and fact_retract (over the fact service).

The fact tools live in four modules so that a command imports the one it runs (issue 33): these two here,
fact_query in :mod:`cli.tools.facts`, fact_explain in :mod:`cli.tools.facts_explain` and fact_import in
:mod:`cli.tools.facts_import`. The modules' names sort in the order the tools are listed (``fact_writes`` before
``facts``), as :data:`cli.tools.tool_table.TOOL_TABLE` requires. Every handler makes the one service call
``mabos fact ...`` makes; the inputs are the fact service's request models (:mod:`kg.facts_requests`) plus
``agent_id``.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.facts_requests import FactAssertRequest, FactRetractRequest
from kg.models import AssertStatus, Fact

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


__all__ = [
    "FactAssertInput",
    "FactAssertResult",
    "FactRetractInput",
    "FactRetractResult",
    "fact_assert",
    "fact_retract",
]
