"""The fact tool fact_explain (over the fact service), in a module of its own so that other fact commands do not
import it (issue 33; the other fact tools: :mod:`cli.tools.facts`)."""

from __future__ import annotations

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.facts import Explanation
from kg.facts_requests import FactExplainRequest


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


__all__ = ["FactExplainInput", "fact_explain"]
