"""What context assembly returns: the items kept (messages and summaries, in order), those dropped, and the
totals."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from kg.conversation.budget import ContextBudget
from kg.models import Model
from kg.models.base import new_list
from kg.models.conversation import (
    Role,
)

ItemKind = Literal["message", "summary"]


Ordering = Literal["newest_first", "relevance"]


class ContextItem(Model):
    """One message or summary of an assembled context.

    Attributes:
        kind: ``message`` or ``summary``.
        uid: Its id (cite it; expand a summary with ``lcm_expand``).
        role: A message's role (None for a summary).
        depth: A summary's depth, 0 for a leaf (None for a message).
        seq: A message's sequence number (None for a summary).
        tool_call_id: A message's tool call id, if any.
        tokens: Estimated tokens of ``content``.
        content: The text.
        earliest_at: A message's time, or the earliest message beneath a summary.
        latest_at: A message's time, or the latest message beneath a summary.
        descendant_count: Messages beneath a summary (1 for a message).
        in_tail: Part of the fresh tail.
        score: Relevance score in 0..1 when the context was assembled for a prompt (None in the tail).
    """

    model_config = ConfigDict(frozen=True)

    kind: ItemKind
    uid: str
    role: Role | None = None
    depth: int | None = None
    seq: int | None = None
    tool_call_id: str | None = None
    tokens: int = Field(ge=0)
    content: str
    earliest_at: datetime
    latest_at: datetime
    descendant_count: int = 1
    in_tail: bool = False
    score: float | None = None


class DroppedItem(Model):
    """A candidate left out because it did not fit the budget."""

    model_config = ConfigDict(frozen=True)

    kind: ItemKind
    uid: str
    tokens: int
    reason: Literal["budget"] = "budget"


class AssembledContext(Model):
    """The result of :func:`assemble`.

    Attributes:
        conversation_uid: The conversation.
        items: The context, oldest first.
        total_tokens: Tokens of all items.
        budget_tokens: The budget asked for.
        tail_tokens: Tokens of the fresh tail.
        tail_messages: Messages in the fresh tail (``fresh_tail`` or more, when a tool pair pulled the boundary
            back; fewer in a short conversation).
        over_budget: The fresh tail alone exceeds the budget (it is included anyway, older context is not).
        ordering: How older candidates were chosen: ``newest_first`` or ``relevance`` (with a prompt).
        relevance_mode: ``bm25`` or ``hybrid`` (BM25 and embedder) when ordering by relevance, else None.
        summaries: Summary items included.
        dropped: Candidates that did not fit, in the order they were tried (the first :data:`DROPPED_LISTED`).
        dropped_count: All candidates (messages and summaries) that did not fit.
        dropped_tokens: Their tokens.
        system_prompt_addition: :data:`SUMMARY_NOTE` when the context holds a summary, else empty.
        notes: Anything the caller should know (over budget, relevance fell back to BM25).
        allocation: How a whole context window was split, when the budget came from one (the history share
            is ``budget_tokens``).
    """

    conversation_uid: str
    items: list[ContextItem]
    total_tokens: int
    budget_tokens: int
    tail_tokens: int
    tail_messages: int
    over_budget: bool
    ordering: Ordering
    relevance_mode: Literal["bm25", "hybrid"] | None = None
    summaries: int
    dropped: list[DroppedItem] = Field(default_factory=new_list)
    dropped_count: int = 0
    dropped_tokens: int = 0
    system_prompt_addition: str = ""
    notes: list[str] = Field(default_factory=new_list)
    allocation: ContextBudget | None = None
