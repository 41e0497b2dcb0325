"""The conversation use cases' requests: what ingesting, compacting, assembling, grepping, describing and expanding
take, each declared once.

:class:`kg.conversation.service.ConversationService` accepts these models; the tools ``conversation_ingest``,
``conversation_compact``, ``context_assemble``, ``lcm_grep``, ``lcm_describe`` and ``lcm_expand``
(cli/tools/conversation*.py) are these models plus ``agent_id``, and ``mabos conversation ...`` and ``mabos lcm ...``
generate their parameters from them (docs/decisions/2026-11-28-request-models.md). The limits are declared here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from kg.conversation.window import token_count
from kg.models import UtcDatetime
from kg.models.conversation import MessageInput, SessionKey
from kg.models.request import Request

#: Most hits of one grep.
MAX_GREP_LIMIT = 1_000
#: Characters of a grep pattern.
MAX_PATTERN = 1_000
#: Default and largest token cap of one expansion.
EXPAND_TOKENS = 8_000
MAX_EXPAND_TOKENS = 1_000_000
#: Default and largest depth of one expansion.
EXPAND_DEPTH = 3
MAX_EXPAND_DEPTH = 64
#: The most messages one ingest appends.
MAX_INGEST = 100_000
#: The longest JSONL text one ingest takes (a longer log goes in several calls).
MAX_JSONL = 32_000_000
#: The largest token budget or context window.
MAX_BUDGET = 100_000_000

GrepMode = Literal["regex", "full_text"]
GrepScope = Literal["messages", "summaries", "both"]

_SUMMARY_UID = (
    "A summary id (SUM- and 26 characters), as returned by lcm_grep or context_assemble; or an extracted "
    "memory item id (M-...), walked back to its messages."
)


class IngestRequest(Request):
    """The session and its new messages, as a list or as JSONL text."""

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
    def _one_source(self) -> IngestRequest:
        if (self.messages is None) == (self.jsonl is None):
            raise ValueError("messages: give either messages or jsonl (exactly one)")
        return self


class CompactRequest(Request):
    """The session to compact, and when."""

    session_key: SessionKey = Field(description="The session (conversation) key.")
    budget: int | None = token_count(
        MAX_BUDGET,
        "The model's context window in tokens: compact only when the context is over 75% of it (or the R3 flush rule "
        "fires). Without it, compaction always runs.",
    )
    force: bool = Field(default=False, description="Condense with fan-out 2 as far as it goes.")


class AssembleRequest(Request):
    """The session whose context to assemble, and its budget."""

    session_key: str = Field(description="The session (conversation) key.")
    budget: int | None = token_count(MAX_BUDGET, "Tokens for the history. Give this or window, not both.")
    window: int | None = token_count(
        MAX_BUDGET,
        "The model's whole context window in tokens: the history gets its share (the split is returned as "
        "allocation). Give this or budget, not both.",
    )
    prompt: str | None = Field(default=None, description="Choose older context by relevance to this text.")


class GrepRequest(Request):
    """What to search the agent's messages and summaries for."""

    pattern: str = Field(
        min_length=1,
        max_length=MAX_PATTERN,
        description="A Python regular expression ((?i) for any case) in regex mode, or words that must all occur "
        "in full_text mode.",
    )
    mode: GrepMode = Field(default="regex", description="regex, or full_text (every word; trigrams for CJK text).")
    scope: GrepScope = Field(default="both", description="Search messages, summaries or both.")
    since: UtcDatetime | None = Field(
        default=None, description="Only items at or after this time (ISO-8601; naive = UTC)."
    )
    before: UtcDatetime | None = Field(default=None, description="Only items before this time (ISO-8601).")
    session_key: str | None = Field(default=None, description="Only this session (conversation) key.")
    limit: int = Field(
        default=50, ge=1, le=MAX_GREP_LIMIT, description=f"At most this many hits (1..{MAX_GREP_LIMIT})."
    )


class DescribeRequest(Request):
    """The summary (or extracted memory item) to describe."""

    summary_uid: str = Field(description=_SUMMARY_UID)


class ExpandRequest(Request):
    """The summary (or extracted memory item) to expand, and how far."""

    summary_uid: str = Field(description=_SUMMARY_UID)
    max_depth: int = Field(default=EXPAND_DEPTH, ge=1, le=MAX_EXPAND_DEPTH,
                           description=f"Levels to walk down at most (1..{MAX_EXPAND_DEPTH}).")  # fmt: skip
    include_messages: bool = Field(default=False, description="Expand leaf summaries down to their source messages.")
    max_tokens: int = Field(default=EXPAND_TOKENS, ge=1, le=MAX_EXPAND_TOKENS,
                            description=f"Token cap of everything returned (1..{MAX_EXPAND_TOKENS}).")  # fmt: skip


__all__ = [
    "EXPAND_DEPTH",
    "EXPAND_TOKENS",
    "MAX_BUDGET",
    "MAX_EXPAND_DEPTH",
    "MAX_EXPAND_TOKENS",
    "MAX_GREP_LIMIT",
    "MAX_INGEST",
    "MAX_JSONL",
    "MAX_PATTERN",
    "AssembleRequest",
    "CompactRequest",
    "DescribeRequest",
    "ExpandRequest",
    "GrepMode",
    "GrepRequest",
    "GrepScope",
    "IngestRequest",
    "token_count",
]
