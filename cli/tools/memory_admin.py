"""Memory upkeep and file tools: consolidate, checkpoint, the time hierarchy and the status of an agent's memory.

Each handler makes the same service call as the matching ``mabos memory ...`` command (which runs the tool):
:mod:`kg.memory.consolidation`, :mod:`kg.memory.checkpoints`, :mod:`kg.memory.hierarchy` and
:meth:`kg.memory.service.MemoryService.status`. Apart from :mod:`cli.tools.memory` (store, recall) so that a recall
imports neither these tools' code nor their models (issue 33); the module's name lists it after that one, so the
tools keep their order (``mabos tools list``, MCP). The checkpoint and hierarchy code is imported when its tool runs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from cli.tools.memory import GROUP, MemoryStatus, StatusInput
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.errors import InputError
from kg.memory import consolidation
from kg.memory.admin_requests import (
    BuildHierarchyRequest,
    CheckpointRequest,
    ConsolidateRequest,
    HierarchySearchRequest,
)
from kg.memory.consolidation import ConsolidationResult
from kg.memory.hierarchy_models import HierarchyHit, HierarchyResult
from kg.models import Checkpoint
from kg.models.request import fields_of
from kg.workspace import Workspace


def _workspace_of(ctx: ToolContext, agent: str) -> Workspace:
    """The open workspace, once ``agent`` is known to exist."""
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    return ws


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
    "memory_build_hierarchy",
    "memory_checkpoint",
    "memory_consolidate",
    "memory_hierarchy_search",
    "memory_status",
]
