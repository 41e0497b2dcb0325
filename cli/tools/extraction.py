"""Extraction tools: ``memory_extract`` (conversation -> memories and facts) and ``memory_list`` (an agent's items
with every field). ``mabos memory extract`` and ``mabos memory list`` run them (cli/commands/memory_extract.py)."""

from __future__ import annotations

from typing import Any

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.extraction import ExtractionReport
from kg.extraction.requests import ExtractRequest
from kg.extraction.workspace import extract
from kg.memory.requests import EXTRACTION_CATEGORIES, ListItemsRequest
from kg.models import MemoryItem

GROUP = "memory"
CATEGORIES = EXTRACTION_CATEGORIES


class ExtractInput(ExtractRequest, ToolInput):
    """Arguments of ``memory_extract``."""


class ExtractResult(ToolOutput):
    """The run's report, its totals and the report as Markdown."""

    report: ExtractionReport
    totals: dict[str, Any]
    markdown: str


@tool(
    "memory_extract",
    group=GROUP,
    description="""Turn the agent's conversation messages not yet extracted into memory items (profile,
    preferences, entities, events, cases, patterns; each with a one-line abstract, an overview and the narrative,
    lineage to its messages) and facts (source extraction, valid from the message time; a new value of a
    functional predicate such as livesIn closes the old one). Re-running is idempotent. Returns the report:
    windows, candidates, decisions by kind, facts asserted and invalidated, failures.""",
)
def memory_extract(ctx: ToolContext, args: ExtractInput) -> ExtractResult:
    """Run extraction for the agent."""
    report = extract(ctx.workspace(), ctx.agent_for(args), args)
    return ExtractResult(report=report, totals=report.totals(), markdown=report.markdown())


class ListInput(ListItemsRequest, ToolInput):
    """Arguments of ``memory_list``."""


class ListResult(ToolOutput):
    """The agent's own items, every field (``derived_from`` included), oldest first."""

    items: list[MemoryItem]
    count: int


@tool(
    "memory_list",
    group=GROUP,
    description="""List the agent's own memory items with every field (type, store, importance, tags,
    derived_from lineage, archived_at ...), oldest first, optionally only one store, type, extraction category or
    those created since a time. Use to audit what was stored or extracted; use memory_recall to search.""",
)
def memory_list(ctx: ToolContext, args: ListInput) -> ListResult:
    """List the agent's items."""
    agent = ctx.agent_for(args)
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    items = ws.memory.list_items(agent, args)
    return ListResult(items=items, count=len(items))


__all__ = ["CATEGORIES", "ExtractInput", "ExtractResult", "ListInput", "ListResult", "memory_extract", "memory_list"]
