"""Memory file tools: materialize the agent's read-only memory files, export its cognitive files, import them back.

``mabos memory materialize|export|import`` run these tools, so the CLI, the Python API and MCP share their
validation. Every file is the acting agent's own, under ``agents/<agent>/``: materialized files hold its own items,
the facts it asserted and can still see, and its own beliefs; an export writes the records it may read; an import
reads only its own folder and creates or updates records only where it may write (a section naming a record the
agent cannot see is an error naming the file, line and ``id``, and nothing is written).
"""

from __future__ import annotations

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.memory.cognitive import export_cognitive, import_cognitive
from kg.memory.cognitive_format import ExportResult, ImportResult
from kg.memory.materialize import MaterializeResult, materialize
from kg.memory.requests import CognitiveRequest, Kind

GROUP = "memory"


class MaterializeInput(ToolInput):
    """Arguments of ``memory_materialize`` (the acting agent only)."""


class CognitiveInput(CognitiveRequest, ToolInput):
    """Arguments of ``memory_export`` and ``memory_import``."""


_MATERIALIZE = (
    "Write the agent's read-only memory files from the store under agents/<agent>/: memory/mabos-memory-items.md "
    "(archived items marked), mabos-facts.md (retracted facts marked) and mabos-beliefs.md. A file is rewritten "
    "only if its content changed. Returns each file with its status and record count."
)
_EXPORT = (
    "Write the agent's cognitive files (Beliefs.md, Desires.md, Goals.md, Intentions.md, Plans.md, Learnings.md) "
    "from the store: one '## ' section per record with marker lines (certainty, priority, deadline, id). They can "
    "be edited and read back with memory_import. Returns each file with its status and record count."
)
_IMPORT = (
    "Read the agent's cognitive files back into the store: a section with an id updates the fields that differ, "
    "one without creates a record. Every file is validated first: a bad value names the file, line and field and "
    "nothing is written. Returns what was created, updated, linked and left unchanged, with warnings."
)


@tool("memory_materialize", group=GROUP, description=_MATERIALIZE)
def memory_materialize(ctx: ToolContext, args: MaterializeInput) -> MaterializeResult:
    """The agent's three materialized files."""
    return materialize(ctx.workspace(), ctx.agent_for(args))


@tool("memory_export", group=GROUP, description=_EXPORT)
def memory_export(ctx: ToolContext, args: CognitiveInput) -> ExportResult:
    """The agent's cognitive files, from the store."""
    return export_cognitive(ctx.workspace(), ctx.agent_for(args), args.kind)


@tool("memory_import", group=GROUP, description=_IMPORT)
def memory_import(ctx: ToolContext, args: CognitiveInput) -> ImportResult:
    """The agent's cognitive files, into the store."""
    return import_cognitive(ctx.workspace(), ctx.agent_for(args), args.kind)


__all__ = ["CognitiveInput", "Kind", "MaterializeInput"]
