"""Memory tools: store, recall, consolidate, checkpoint, the time hierarchy and status of an agent's memory.

Each handler makes the same service call as the matching ``mabos memory ...`` command (which runs the tool):
:class:`kg.memory.service.MemoryService`, :mod:`kg.memory.consolidation`, :mod:`kg.memory.checkpoints` and
:mod:`kg.memory.hierarchy`.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from cli.tools.registry import ToolContext, ToolInput, token_count, tool
from kg.conversation.budget import allocate
from kg.errors import BackendUnavailableError, CorruptStoreError, InputError
from kg.memory import consolidation
from kg.memory.checkpoints import latest_checkpoint, read_checkpoint, write_checkpoint
from kg.memory.consolidation import ConsolidationResult
from kg.memory.hierarchy import MAX_LIMIT as MAX_HIERARCHY_LIMIT
from kg.memory.hierarchy import (
    HierarchyHit,
    HierarchyResult,
    HierarchyScope,
    Level,
    build_hierarchy,
    search_hierarchy,
)
from kg.memory.service import MAX_DEPTH, MAX_RECALL_LIMIT, MAX_RECALL_TOKENS, RecallResult, StoreResult
from kg.memory.service import answer_from_files as _answer_from_files
from kg.models import Checkpoint, MemoryStoreKind, MemoryType, UtcDatetime
from kg.recall.engine import RecallMode
from kg.recall.fusion import FusionMethod
from kg.workspace import Workspace, default_path

GROUP = "memory"
#: The largest context window a recall accepts (its retrieved-memory share becomes the token budget).
MAX_WINDOW = 100_000_000

_SCOPE = "Scope such as global, agent:<id> or project:<name>; default: the agent's own scope."


def _workspace_of(ctx: ToolContext, agent: str) -> Workspace:
    """The open workspace, once ``agent`` is known to exist."""
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    return ws


# ---------------------------------------------------------------------------------- store


class StoreInput(ToolInput):
    """Arguments of ``memory_store_item``."""

    content: str = Field(description="The text to remember, one self-contained statement.")
    type: MemoryType | None = Field(
        default=None, description="What kind of memory this is (default observation); sets the default importance."
    )
    importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="0..1; default by type (e.g. decision 0.75, observation 0.5)."
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="0..1 (default 1).")
    tags: list[str] | None = Field(default=None, description="Short labels without spaces or commas, e.g. ['auth'].")
    store: MemoryStoreKind | None = Field(
        default=None,
        description="working (7 items), short_term (default: 200 items for 2 hours, then archived) or long_term.",
    )
    source: str | None = Field(default=None, description="Where the memory comes from (default 'agent').")
    scope: str | None = Field(default=None, description=_SCOPE)


@tool(
    "memory_store_item",
    group=GROUP,
    description="""Remember something: store one memory item for the agent and append it to today's daily log.
    Use for observations, decisions, facts or preferences worth recalling later. Returns the stored item (its uid,
    store, importance) and the items the capacity rules moved to short-term or archived.""",
)
def memory_store_item(ctx: ToolContext, args: StoreInput) -> StoreResult:
    """Store one memory item."""
    agent = ctx.agent_for(args)
    return ctx.workspace().memory.store_item(
        agent, args.content, type=args.type, importance=args.importance, confidence=args.confidence,
        tags=args.tags, store=args.store, source=args.source, scope=args.scope,
    )  # fmt: skip


# ---------------------------------------------------------------------------------- recall


class RecallInput(ToolInput):
    """Arguments of ``memory_recall``."""

    query: str = Field(default="", description="What to look for; empty lists the most important memories.")
    limit: int = Field(
        default=20,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description=f"At most this many hits per depth level (1..{MAX_RECALL_LIMIT}).",
    )
    depth: int = Field(
        default=0,
        ge=0,
        le=MAX_DEPTH,
        description=f"Recursive search 0..{MAX_DEPTH}: each level searches again with the most frequent new terms of "
        "the previous level's hits (each hit says which depth found it).",
    )
    mode: RecallMode = Field(default="hybrid", description="hybrid (BM25 + vectors), bm25 or vector.")
    fusion: FusionMethod = Field(default="weighted", description="weighted (0.4 vector / 0.6 BM25) or rrf.")
    mmr: bool = Field(default=False, description="Re-rank for diversity (maximal marginal relevance).")
    explain: bool = Field(default=False, description="Return every component of every score.")
    min_score: float = Field(default=0.0, ge=0.0, description="Drop hits scoring below this.")
    source: Literal["items", "files"] = Field(
        default="items", description="Search memory items, or the agent's Markdown files (cited by file and lines)."
    )
    types: list[MemoryType] | None = Field(default=None, description="Only these memory types.")
    stores: list[MemoryStoreKind] | None = Field(default=None, description="Only these stores.")
    tags: list[str] | None = Field(default=None, description="Tags that must all be present.")
    min_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Only items at least this important (0..1)."
    )
    max_age: str | None = Field(default=None, description="Only items newer than this: 90m, 36h, 7d or 2w.")
    valid_at: UtcDatetime | None = Field(
        default=None, description="Only items that existed then and were not yet archived (ISO-8601; naive = UTC)."
    )
    include_archived: bool = Field(default=False, description="Also recall archived items.")
    max_tokens: int | None = token_count(
        MAX_RECALL_TOKENS, "Keep the best hits whose contents fit in this many tokens."
    )
    window: int | None = token_count(
        MAX_WINDOW,
        "The model's whole context window: the token budget becomes its retrieved-memory share (20%); overrides "
        "max_tokens.",
    )
    scope: str | None = Field(default=None, description="Only this readable scope (default: all the agent may read).")


@tool(
    "memory_recall",
    group=GROUP,
    description="""Recall the agent's memories about a topic, best first (BM25 and vector similarity fused, blended
    with importance and recency). Use before answering from memory. Returns hits with the item, score and score
    components; with source=files, spans of the agent's Markdown files. Without a usable vector index (or embedder)
    the store answers by BM25 alone: mode is bm25, notes say why and backlog counts the items still to index. Only
    if the database cannot be opened do the Markdown files answer, with fallback true and the reason.""",
)
def memory_recall(ctx: ToolContext, args: RecallInput) -> RecallResult:
    """Recall memories (or answer from the agent's files when the store cannot be opened)."""
    agent = ctx.agent_for(args)
    try:
        ws = ctx.workspace()
    except (CorruptStoreError, BackendUnavailableError) as exc:
        return recall_from_files(ctx.path or default_path(), agent, args, reason=str(exc))
    return ws.memory.recall(
        agent, args.query, limit=args.limit, depth=args.depth, mode=args.mode, fusion=args.fusion, mmr=args.mmr,
        explain=args.explain, min_score=args.min_score, source=args.source, types=args.types or None,
        stores=args.stores or None, tags=args.tags or None, min_importance=args.min_importance,
        max_age=args.max_age, valid_at=args.valid_at, include_archived=args.include_archived, scope=args.scope,
        max_tokens=allocate(args.window).memory if args.window is not None else args.max_tokens,
    )  # fmt: skip


def recall_from_files(workspace: Path, agent: str, args: RecallInput, *, reason: str) -> RecallResult:
    """A recall answered from the agent's Markdown files because the store cannot be used (``reason``).

    Args:
        workspace: The workspace directory.
        agent: The acting agent.
        args: The recall's arguments (query, mode, fusion, mmr and limit are used).
        reason: Why the store could not answer.
    """
    asked = RecallResult(agent_id=agent, query=args.query, mode=args.mode, requested_mode=args.mode,
                         fusion=args.fusion, mmr=args.mmr)  # fmt: skip
    return _answer_from_files(workspace, asked, limit=args.limit, reason=reason)


# ---------------------------------------------------------------------------------- consolidate


class ConsolidateInput(ToolInput):
    """Arguments of ``memory_consolidate``."""

    dry_run: bool = Field(default=False, description="Only report what would happen; change nothing.")
    summarize: bool = Field(
        default=True, description="Merge memories with similar tags into one; false promotes each one as it is."
    )
    min_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Candidates are at least this important (default 0.6)."
    )
    min_access_count: int | None = Field(
        default=None, ge=0, description="Short-term candidates were recalled at least this often (default 2)."
    )


@tool(
    "memory_consolidate",
    group=GROUP,
    description="""Consolidate the agent's memory: promote important working and short-term memories to long-term,
    merging ones with similar tags, then rewrite MEMORY.md and the materialized Markdown files. Use at the end of a
    task or session (dry_run first to preview). Returns the candidates, the merged groups, promoted and archived
    uids and the files written.""",
)
def memory_consolidate(ctx: ToolContext, args: ConsolidateInput) -> ConsolidationResult:
    """Consolidate memories."""
    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    return consolidation.consolidate(
        ws, agent, dry_run=args.dry_run, summarize=args.summarize, min_importance=args.min_importance,
        min_access_count=args.min_access_count,
    )  # fmt: skip


# ---------------------------------------------------------------------------------- checkpoint


class CheckpointInput(ToolInput):
    """Arguments of ``memory_checkpoint``."""

    context: str | None = Field(
        default=None, description="What the agent is working on (required unless show_latest is true)."
    )
    decisions: list[str] = Field(default_factory=list, description="Active decisions.")
    findings: list[str] = Field(default_factory=list, description="Key findings.")
    next_steps: list[str] = Field(default_factory=list, description="Next steps.")
    open_questions: list[str] = Field(default_factory=list, description="Open questions.")
    show_latest: bool = Field(
        default=False, description="Return the newest checkpoint instead of writing one (give no other fields)."
    )


class CheckpointResult(BaseModel):
    """A checkpoint and its file; both null when ``show_latest`` found none."""

    path: Path | None = Field(description="The checkpoint file.")
    checkpoint: Checkpoint | None = Field(description="The checkpoint read back from the file.")


@tool(
    "memory_checkpoint",
    group=GROUP,
    description="""Save a checkpoint of the agent's working context (current task, active decisions, key findings,
    next steps, open questions) as a Markdown file, so work can resume after a context reset; or, with
    show_latest, read the newest checkpoint back. Returns the file path and the checkpoint (null when there is
    none).""",
)
def memory_checkpoint(ctx: ToolContext, args: CheckpointInput) -> CheckpointResult:
    """Write a checkpoint, or return the latest one."""
    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    if args.show_latest:
        if args.context is not None or args.decisions or args.findings or args.next_steps or args.open_questions:
            raise InputError("show_latest", "takes no context, decisions, findings, next_steps or open_questions")
        found = latest_checkpoint(ws.path, agent)
        if found is None:
            return CheckpointResult(path=None, checkpoint=None)
        return CheckpointResult(path=found.path, checkpoint=found.checkpoint)
    if args.context is None:
        raise InputError("context", "required (unless show_latest is true)")
    path = write_checkpoint(ws.path, agent, context=args.context, decisions=args.decisions, findings=args.findings,
                            next_steps=args.next_steps, open_questions=args.open_questions,
                            clock=ws.clock)  # fmt: skip
    written = read_checkpoint(path, agent)
    return CheckpointResult(path=written.path, checkpoint=written.checkpoint)


# ---------------------------------------------------------------------------------- hierarchy


class BuildHierarchyInput(ToolInput):
    """Arguments of ``memory_build_hierarchy``."""

    scope: HierarchyScope = Field(default="all", description="Which summaries to build: week, month, quarter or all.")
    since: date | None = Field(default=None, description="Only periods ending on or after this date (YYYY-MM-DD).")


@tool(
    "memory_build_hierarchy",
    group=GROUP,
    description="""Build the agent's time hierarchy: weekly, monthly and quarterly extractive summaries of its daily
    logs. Only missing or stale summaries are rewritten, so it is cheap to run again. Use before searching long
    stretches of history. Returns the summary files created, updated and unchanged, and the periods skipped.""",
)
def memory_build_hierarchy(ctx: ToolContext, args: BuildHierarchyInput) -> HierarchyResult:
    """Build the missing or stale summaries."""
    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    return build_hierarchy(ws.path, agent, scope=args.scope, since=args.since, clock=ws.clock)


class HierarchySearchInput(ToolInput):
    """Arguments of ``memory_hierarchy_search``."""

    query: str = Field(description="Words to look for (lexical: query-term overlap).")
    level: Level = Field(
        default="weekly",
        description="daily searches the entries of the daily logs; weekly, monthly and quarterly the summaries.",
    )
    limit: int = Field(
        default=10, ge=1, le=MAX_HIERARCHY_LIMIT, description=f"At most this many hits (1..{MAX_HIERARCHY_LIMIT})."
    )


class HierarchyHits(BaseModel):
    """Hits of a hierarchy search, best first."""

    hits: list[HierarchyHit] = Field(description="Matching sections, each citing its file and lines.")


@tool(
    "memory_hierarchy_search",
    group=GROUP,
    description="""Search one level of the agent's time hierarchy (daily logs, or weekly, monthly or quarterly
    summaries) for a topic, to find when something happened. Returns hits best first, each with the period,
    the file, the matching lines, the matched terms and a snippet.""",
)
def memory_hierarchy_search(ctx: ToolContext, args: HierarchySearchInput) -> HierarchyHits:
    """Search the time hierarchy."""
    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    return HierarchyHits(hits=search_hierarchy(ws.path, agent, args.query, level=args.level, limit=args.limit))


# ---------------------------------------------------------------------------------- status


class StatusInput(ToolInput):
    """Arguments of ``memory_status`` (only the agent)."""


class StoreCounts(BaseModel):
    """Items of one store."""

    active: int = Field(description="Items in use.")
    archived: int = Field(description="Archived items (kept, not recalled by default).")


class MemoryStatus(BaseModel):
    """Counts per store and the capacities of an agent's memory."""

    agent_id: str = Field(description="The agent.")
    stores: dict[str, StoreCounts] = Field(description="Counts per store (working, short_term, long_term).")
    capacity: dict[str, int | None] = Field(description="Items each store keeps; null is unbounded.")
    short_term_ttl_seconds: int = Field(description="How long a short-term item lives before it is archived.")
    total: int = Field(description="All items, active and archived.")


@tool(
    "memory_status",
    group=GROUP,
    description="""How full the agent's memory is: active and archived items per store (working, short-term,
    long-term), the capacities and the short-term lifetime. Use to decide whether to consolidate.""",
)
def memory_status(ctx: ToolContext, args: StatusInput) -> MemoryStatus:
    """Counts and capacities."""
    return MemoryStatus.model_validate(ctx.workspace().memory.status(ctx.agent_for(args)))


__all__ = [
    "BuildHierarchyInput",
    "CheckpointInput",
    "CheckpointResult",
    "ConsolidateInput",
    "HierarchyHits",
    "HierarchySearchInput",
    "MemoryStatus",
    "RecallInput",
    "StatusInput",
    "StoreCounts",
    "StoreInput",
    "memory_build_hierarchy",
    "memory_checkpoint",
    "memory_consolidate",
    "memory_hierarchy_search",
    "memory_recall",
    "memory_status",
    "memory_store_item",
    "recall_from_files",
]
