"""Conversation memory records: conversations, their immutable messages, and the summary DAG over them.

The token estimate their stores use lives here too.

A conversation is one session of one agent (``session_key``, unique per agent). Messages are appended with
a gap-free ``seq`` and never change. Summaries form a DAG: a **leaf** summary (depth 0) covers a contiguous
run of messages; a **condensed** summary (depth >= 1) covers summaries of the depth below. Every summary
records what it covers (``child_uids``: messages for a leaf, summaries for a condensed one), the time span
and how many messages lie beneath it, so any summary expands back to its messages: nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import Field, model_validator

from kg.models.base import Model, Name, Record, RecordId, UtcDatetime

#: Characters of one message (a tool output can be long; memory items stop at 65,536).
MAX_MESSAGE = 1_000_000
#: Children of one summary.
MAX_CHILDREN = 10_000

MessageText = Annotated[str, Field(max_length=MAX_MESSAGE)]
SessionKey = Annotated[str, Field(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]


class Role(StrEnum):
    """Who wrote a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class SummaryKind(StrEnum):
    """A leaf summarises messages; a condensed summary summarises summaries."""

    LEAF = "leaf"
    CONDENSED = "condensed"


class SummaryMethod(StrEnum):
    """What wrote a summary: the configured LLM, or the deterministic extractive summariser."""

    LLM = "llm"
    EXTRACTIVE = "extractive"


class Conversation(Record):
    """One session of one agent."""

    session_key: SessionKey
    title: Annotated[str, Field(max_length=256)] = ""
    active: bool = True
    updated_at: UtcDatetime


class MessageInput(Model):
    """A message to append (the store gives it uid, seq and times).

    ``tool_call_id`` pairs a tool result with the assistant message that called it (context assembly keeps
    such pairs together). ``token_count`` defaults to the store's estimate when None.
    """

    role: Role
    content: MessageText
    created_at: UtcDatetime | None = None
    token_count: int | None = Field(default=None, ge=0)
    tool_call_id: Annotated[str, Field(max_length=256)] | None = None
    name: Name | None = None


class Message(Record):
    """A stored message: immutable once written."""

    conversation_uid: RecordId
    seq: int = Field(ge=0)
    role: Role
    content: MessageText
    token_count: int = Field(ge=0)
    tool_call_id: Annotated[str, Field(max_length=256)] | None = None
    name: Name | None = None


class Summary(Record):
    """A node of the summary DAG.

    Attributes:
        conversation_uid: the conversation it belongs to.
        kind: leaf (children are messages) or condensed (children are summaries of ``depth - 1``).
        depth: 0 for a leaf, 1+ for condensed summaries.
        content: the summary text.
        token_count: tokens of ``content``.
        source_token_count: tokens of what it covers (its children's contents).
        method: llm or extractive (results say which path produced them).
        model: the LLM model name, when ``method`` is llm.
        child_uids: what it covers, in chronological order.
        earliest_at: time of the earliest message beneath it.
        latest_at: time of the latest message beneath it.
        descendant_count: messages beneath it.
    """

    conversation_uid: RecordId
    kind: SummaryKind
    depth: int = Field(ge=0, le=64)
    content: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE)]
    token_count: int = Field(ge=0)
    source_token_count: int = Field(ge=0)
    method: SummaryMethod
    model: Annotated[str, Field(max_length=256)] | None = None
    child_uids: list[RecordId] = Field(min_length=1, max_length=MAX_CHILDREN)
    earliest_at: UtcDatetime
    latest_at: UtcDatetime
    descendant_count: int = Field(ge=1)

    @model_validator(mode="after")
    def _shape(self) -> Summary:
        if (self.kind is SummaryKind.LEAF) != (self.depth == 0):
            raise ValueError("depth: a leaf summary has depth 0 and a condensed one depth 1 or more")
        if self.latest_at < self.earliest_at:
            raise ValueError("latest_at: must not be before earliest_at")
        if len(set(self.child_uids)) != len(self.child_uids):
            raise ValueError("child_uids: a child is listed twice")
        return self


class MessageQuery(Model):
    """Which messages to read from one conversation (``seq`` bounds are inclusive)."""

    conversation_uid: RecordId
    from_seq: int | None = Field(default=None, ge=0)
    to_seq: int | None = Field(default=None, ge=0)
    since: datetime | None = None
    before: datetime | None = None
    limit: int | None = Field(default=None, ge=1)


# ------------------------------------------------------------------ token estimates

#: A function from text to an estimated token count.
TokenEstimator = Callable[[str], int]

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the default estimate (0 for empty text)."""
    return -(-len(text) // CHARS_PER_TOKEN)


__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_MESSAGE",
    "Conversation",
    "Message",
    "MessageInput",
    "MessageQuery",
    "Role",
    "Summary",
    "SummaryKind",
    "SummaryMethod",
    "TokenEstimator",
    "estimate_tokens",
]
