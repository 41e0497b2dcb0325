"""Memory tools: store and recall an agent's memory items (and the status tool's models).

Each handler makes the same service call as the matching ``mabos memory ...`` command (which runs the tool):
:class:`kg.memory.service.MemoryService`. The upkeep and file tools (consolidate, checkpoint, the time hierarchy,
status) are in :mod:`cli.tools.memory_admin`, listed after these: ``mabos memory recall`` loads neither their code
nor their models (issue 33). The status tool's models stay here: ``mabos memory status`` and the console read them.
"""

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.memory.requests import RecallRequest, StoreRequest
from kg.memory.service import RecallResult, StoreResult, recall_or_files
from kg.models.request import fields_of
from kg.workspace import default_path

GROUP = "memory"


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


# ------------------------------------------------------------------ status (the tool: cli.tools.memory_admin)


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


__all__ = [
    "MemoryStatus",
    "RecallInput",
    "StatusInput",
    "StoreCounts",
    "StoreInput",
    "memory_recall",
    "memory_store_item",
]
