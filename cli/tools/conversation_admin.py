"""Conversation log tools: append messages to a session (``conversation_ingest``) and compact it into the summary
DAG (``conversation_compact``).

``mabos conversation ingest|compact`` run these tools, so the CLI, the Python API and MCP share the validation of
:class:`kg.conversation.service.ConversationService`: every message is checked before any is written, and an agent
only ever appends to or compacts its own sessions (a conversation belongs to one agent; another agent's session
key names a different, new conversation of the caller). Both run the automatic extraction the workspace's
``[extraction]`` section asks for (``every_messages``, ``after_compact``), as the commands always did. The inputs
are the service's requests (:mod:`kg.conversation.requests`) plus ``agent_id``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.conversation.compaction_models import CompactionReport
from kg.conversation.requests import CompactRequest, IngestRequest
from kg.conversation.service import IngestResult
from kg.extraction.workspace import auto_extract

GROUP = "conversation"

_EXTRACTION = Field(
    default=None,
    description="The counts of the automatic extraction this call ran ([extraction] every_messages or after_compact "
    "in mabos.toml), or null when none was due.",
)


class ConversationIngestInput(IngestRequest, ToolInput):
    """Arguments of ``conversation_ingest``: the session and its new messages, as a list or as JSONL text."""


class Ingested(IngestResult):
    """What an ingest appended, and the automatic extraction it triggered."""

    extraction: dict[str, Any] | None = _EXTRACTION


class ConversationCompactInput(CompactRequest, ToolInput):
    """Arguments of ``conversation_compact``."""


class Compacted(CompactionReport):
    """What a compaction did, and the automatic extraction it triggered."""

    extraction: dict[str, Any] | None = _EXTRACTION


_INGEST = (
    "Append messages to one of the agent's sessions (created on first use): a lossless, immutable log that "
    "lcm_grep, lcm_expand and context_assemble read. Every message is validated before any is written. Returns the "
    "conversation uid, the sequence numbers and tokens appended."
)
_COMPACT = (
    "Summarise the older messages of one of the agent's sessions into the summary DAG (leaf summaries, then "
    "condensed ones), keeping the fresh tail; an R3 checkpoint is written first. With budget, only when the context "
    "nears it. Use before context_assemble when a session grows long. Returns what was summarised and the tokens "
    "before and after."
)


def _extracted(ctx: ToolContext, agent: str, trigger: Literal["compact", "ingest"], session: str) -> Any:
    report = auto_extract(ctx.workspace(), agent, trigger=trigger, session=session)
    return None if report is None else report.totals()


@tool("conversation_ingest", group=GROUP, description=_INGEST)
def conversation_ingest(ctx: ToolContext, args: ConversationIngestInput) -> Ingested:
    """Append through the conversation service (the agent's own sessions only)."""
    agent = ctx.agent_for(args)
    result = ctx.workspace().conversations.ingest(agent, args)
    return Ingested(**dict(result), extraction=_extracted(ctx, agent, "ingest", args.session_key))


@tool("conversation_compact", group=GROUP, description=_COMPACT)
def conversation_compact(ctx: ToolContext, args: ConversationCompactInput) -> Compacted:
    """Compact through the conversation service (the agent's own sessions only)."""
    agent = ctx.agent_for(args)
    report = ctx.workspace().conversations.compact(agent, args)
    return Compacted(**dict(report), extraction=_extracted(ctx, agent, "compact", args.session_key))


__all__ = ["Compacted", "ConversationCompactInput", "ConversationIngestInput", "Ingested"]
