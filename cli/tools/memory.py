"""Memory tools: store, recall, consolidate, checkpoint, the time hierarchy and status of an agent's memory.

Each handler makes the same service call as the matching ``mabos memory ...`` command (which runs the tool):
:class:`kg.memory.service.MemoryService`, :mod:`kg.memory.consolidation`, :mod:`kg.memory.checkpoints` and
:mod:`kg.memory.hierarchy`. The checkpoint and hierarchy code is imported by the tools that run it (their results'
models are in :mod:`kg.memory.hierarchy_models`): ``mabos memory recall`` loads neither (issue 33).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.errors import InputError
from kg.memory import consolidation
from kg.memory.consolidation import ConsolidationResult
from kg.memory.hierarchy_models import HierarchyHit, HierarchyResult
from kg.memory.requests import (
    BuildHierarchyRequest,
    CheckpointRequest,
    ConsolidateRequest,
    HierarchySearchRequest,
    RecallRequest,
    StoreRequest,
)
from kg.memory.service import RecallResult, StoreResult, recall_or_files
from kg.models import Checkpoint
from kg.models.request import fields_of
from kg.workspace import Workspace, default_path

GROUP = "memory"


def _workspace_of(ctx: ToolContext, agent: str) -> Workspace:
    """The open workspace, once ``agent`` is known to exist."""
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    return ws


# ---------------------------------------------------------------------------------- store


class StoreInput(StoreRequest, ToolInput):
    """Arguments of ``memory_store_item``."""


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
    return ctx.workspace().memory.store_item(agent, **fields_of(args, StoreRequest))


# ---------------------------------------------------------------------------------- recall


class RecallInput(RecallRequest, ToolInput):
    """Arguments of ``memory_recall``."""


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
    """Recall memories (or answer from the agent's files when the store cannot be opened: decided by
    :func:`kg.memory.service.recall_or_files`)."""
    return recall_or_files(ctx.workspace, ctx.path or default_path(), ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------- consolidate


class ConsolidateInput(ConsolidateRequest, ToolInput):
    """Arguments of ``memory_consolidate``."""


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
    return consolidation.consolidate(ws, agent, **fields_of(args, ConsolidateRequest))


# ---------------------------------------------------------------------------------- checkpoint


class CheckpointInput(CheckpointRequest, ToolInput):
    """Arguments of ``memory_checkpoint``."""


class CheckpointResult(ToolOutput):
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
    from kg.memory.checkpoints import latest_checkpoint, read_checkpoint, write_checkpoint  # noqa: PLC0415

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


class BuildHierarchyInput(BuildHierarchyRequest, ToolInput):
    """Arguments of ``memory_build_hierarchy``."""


@tool(
    "memory_build_hierarchy",
    group=GROUP,
    description="""Build the agent's time hierarchy: weekly, monthly and quarterly extractive summaries of its daily
    logs. Only missing or stale summaries are rewritten, so it is cheap to run again. Use before searching long
    stretches of history. Returns the summary files created, updated and unchanged, and the periods skipped.""",
)
def memory_build_hierarchy(ctx: ToolContext, args: BuildHierarchyInput) -> HierarchyResult:
    """Build the missing or stale summaries."""
    from kg.memory.hierarchy import build_hierarchy  # noqa: PLC0415 - the log parser: loaded by the tools using it

    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    return build_hierarchy(ws.path, agent, **fields_of(args, BuildHierarchyRequest), clock=ws.clock)


class HierarchySearchInput(HierarchySearchRequest, ToolInput):
    """Arguments of ``memory_hierarchy_search``."""


class HierarchyHits(ToolOutput):
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
    from kg.memory.hierarchy import search_hierarchy  # noqa: PLC0415

    agent = ctx.agent_for(args)
    ws = _workspace_of(ctx, agent)
    return HierarchyHits(hits=search_hierarchy(ws.path, agent, **fields_of(args, HierarchySearchRequest)))


# ---------------------------------------------------------------------------------- status


class StatusInput(ToolInput):
    """Arguments of ``memory_status`` (only the agent)."""


class StoreCounts(ToolOutput):
    """Items of one store."""

    active: int = Field(description="Items in use.")
    archived: int = Field(description="Archived items (kept, not recalled by default).")


class MemoryStatus(ToolOutput):
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
]
