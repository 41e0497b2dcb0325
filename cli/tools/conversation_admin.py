"""Conversation log tools: append messages to a session (``conversation_ingest``) and compact it into the summary
DAG (``conversation_compact``).

``mabos conversation ingest|compact`` run these tools, so the CLI, the Python API and MCP share the validation of
:class:`kg.conversation.service.ConversationService`: every message is checked before any is written, and an agent
only ever appends to or compacts its own sessions (a conversation belongs to one agent; another agent's session
key names a different, new conversation of the caller). Both run the automatic extraction the workspace's
``[extraction]`` section asks for (``every_messages``, ``after_compact``), as the commands always did.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from cli.tools.registry import ToolContext, ToolInput, token_count, tool
from kg.conversation.compaction_models import CompactionReport
from kg.conversation.service import MAX_INGEST, IngestResult
from kg.extraction.workspace import auto_extract
from kg.models.conversation import MessageInput, SessionKey

GROUP = "conversation"
#: The longest JSONL text one ``conversation_ingest`` call takes (a longer log goes in several calls).
MAX_JSONL = 32_000_000
#: The largest context window ``conversation_compact`` accepts.
MAX_BUDGET = 100_000_000

_EXTRACTION = Field(
    default=None,
    description="The counts of the automatic extraction this call ran ([extraction] every_messages or after_compact "
    "in mabos.toml), or null when none was due.",
)


class ConversationIngestInput(ToolInput):
    """Arguments of ``conversation_ingest``: the session and its new messages, as a list or as JSONL text."""

    session_key: SessionKey = Field(description="The session (conversation) key; a new key starts a conversation.")
    messages: list[MessageInput] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_INGEST,
        description="The messages, oldest first: role (system, user, assistant, tool), content, optionally "
        "created_at (ISO-8601, default now), name, tool_call_id (pairs a tool result with its call), token_count.",
    )
    jsonl: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_JSONL,
        description="Instead of messages: JSONL text, one message object a line (a bad line is reported as 'line "
        "N: field: rule').",
    )
    title: str = Field(default="", max_length=256, description="Title of a new conversation.")

    @model_validator(mode="after")
    def _one_source(self) -> ConversationIngestInput:
        if (self.messages is None) == (self.jsonl is None):
            raise ValueError("messages: give either messages or jsonl (exactly one)")
        return self


class Ingested(IngestResult):
    """What an ingest appended, and the automatic extraction it triggered."""

    extraction: dict[str, Any] | None = _EXTRACTION


class ConversationCompactInput(ToolInput):
    """Arguments of ``conversation_compact``."""

    session_key: SessionKey = Field(description="The session (conversation) key.")
    budget: int | None = token_count(
        MAX_BUDGET,
        "The model's context window in tokens: compact only when the context is over 75% of it (or the R3 flush rule "
        "fires). Without it, compaction always runs.",
    )
    force: bool = Field(default=False, description="Condense with fan-out 2 as far as it goes.")


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
    rows = args.jsonl if args.jsonl is not None else args.messages or []
    result = ctx.workspace().conversations.ingest(agent, args.session_key, rows, title=args.title)
    return Ingested(**dict(result), extraction=_extracted(ctx, agent, "ingest", args.session_key))


@tool("conversation_compact", group=GROUP, description=_COMPACT)
def conversation_compact(ctx: ToolContext, args: ConversationCompactInput) -> Compacted:
    """Compact through the conversation service (the agent's own sessions only)."""
    agent = ctx.agent_for(args)
    report = ctx.workspace().conversations.compact(agent, args.session_key, budget=args.budget, force=args.force)
    return Compacted(**dict(report), extraction=_extracted(ctx, agent, "compact", args.session_key))


__all__ = ["Compacted", "ConversationCompactInput", "ConversationIngestInput", "Ingested"]
