"""Extraction tools: ``memory_extract`` (conversation -> memories and facts) and ``memory_list`` (an agent's items
with every field). ``mabos memory extract`` and ``mabos memory list`` run them (cli/commands/memory_extract.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.extraction import WINDOW, ExtractionReport, extraction_service
from kg.memory.admission import PRESETS
from kg.models import MemoryItem, MemoryStoreKind, MemoryType, UtcDatetime

GROUP = "memory"
CATEGORIES = ("profile", "preferences", "entities", "events", "cases", "patterns")


class ExtractInput(ToolInput):
    """Arguments of ``memory_extract``."""

    session: str | None = Field(default=None, description="One conversation (session key or uid); default all.")
    since: int | None = Field(
        default=None, ge=0, description="Start at this message seq when it is past the mark (never re-reads)."
    )
    extractor: Literal["auto", "deterministic", "llm"] = Field(
        default="auto", description="auto: the configured LLM if any, else the deterministic sentence rules."
    )
    admission: str = Field(default="balanced", description=f"Admission preset ({', '.join(sorted(PRESETS))}) or off.")
    window: int = Field(default=WINDOW, ge=1, le=200, description="Messages per extraction window.")


class ExtractResult(BaseModel):
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
    agent = ctx.agent_for(args)
    ws = ctx.workspace()
    admission = None if args.admission == "off" else args.admission
    service = extraction_service(ws, extractor=args.extractor, admission=admission, window=args.window)
    report = service.extract(agent, session=args.session, since=args.since)
    return ExtractResult(report=report, totals=report.totals(), markdown=report.markdown())


class ListInput(ToolInput):
    """Arguments of ``memory_list``."""

    store: MemoryStoreKind | None = Field(default=None, description="Only this store.")
    type: MemoryType | None = Field(default=None, description="Only this memory type.")
    category: Literal["profile", "preferences", "entities", "events", "cases", "patterns"] | None = Field(
        default=None, description="Only extracted items of this category."
    )
    since: UtcDatetime | None = Field(default=None, description="Only items created at or after this time.")
    include_archived: bool = Field(default=True, description="Archived (merged, superseded ...) items too.")
    limit: int = Field(default=1_000, ge=1, le=100_000, description="At most this many items (oldest first).")


class ListResult(BaseModel):
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
    items = ws.memory.list_items(
        agent, include_archived=args.include_archived, limit=args.limit,
        stores=[args.store] if args.store else None, types=[args.type] if args.type else None,
        tags=[f"category:{args.category}"] if args.category else None, created_after=args.since,
    )  # fmt: skip
    return ListResult(items=items, count=len(items))


__all__ = ["CATEGORIES", "ExtractInput", "ExtractResult", "ListInput", "ListResult", "memory_extract", "memory_list"]
