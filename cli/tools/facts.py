"""The fact query tool, fact_query (over the fact service): what ``mabos fact query`` imports of the fact tools.

The other fact tools are in modules of their own, so that a query defines none of their models (issue 33):
fact_assert and fact_retract in :mod:`cli.tools.fact_writes`, fact_explain in :mod:`cli.tools.facts_explain`,
fact_import in :mod:`cli.tools.facts_import`. The handler makes the one service call ``mabos fact query`` makes;
the input is the fact service's request model (:mod:`kg.facts_requests`) plus ``agent_id``.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.facts_requests import FactQueryRequest
from kg.models import Fact


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


__all__ = ["FactList", "FactQueryInput", "fact_query"]
