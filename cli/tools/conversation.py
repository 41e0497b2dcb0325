"""Conversation-memory tools: search, describe and expand the summary DAG, and assemble a session's context.

Each handler makes the same :class:`kg.conversation.service.ConversationService` call (``ws.conversations``) as
the matching ``mabos lcm ...`` or ``mabos conversation assemble`` command, which runs the tool.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, token_count, tool
from kg.conversation.assemble import AssembledContext
from kg.conversation.tools import (
    EXPAND_DEPTH,
    EXPAND_TOKENS,
    MAX_EXPAND_DEPTH,
    MAX_EXPAND_TOKENS,
    MAX_GREP_LIMIT,
    MAX_PATTERN,
    ExpandResult,
    GrepMode,
    GrepResult,
    GrepScope,
    SummaryDescription,
)
from kg.extraction.lineage import describe_memory, expand_memory, is_memory_uid
from kg.models import UtcDatetime

GROUP = "conversation"
#: The largest token budget or context window ``context_assemble`` accepts.
MAX_BUDGET = 100_000_000

_SUMMARY_UID = (
    "A summary id (SUM- and 26 characters), as returned by lcm_grep or context_assemble; or an extracted "
    "memory item id (M-...), walked back to its messages."
)


# ---------------------------------------------------------------------------------- lcm_grep


class GrepInput(ToolInput):
    """Arguments of ``lcm_grep``."""

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


@tool(
    "lcm_grep",
    group=GROUP,
    description="""Search the agent's past conversations (messages and/or compacted summaries) by regex or full
    text, to find where something was said even after compaction. Returns hits oldest first with their kind, id,
    time, match count and a snippet; capped at 40,000 characters (truncated says when cut). Follow up with
    lcm_describe or lcm_expand on a summary id.""",
)
def lcm_grep(ctx: ToolContext, args: GrepInput) -> GrepResult:
    """Search messages and summaries."""
    return ctx.workspace().conversations.grep(
        ctx.agent_for(args), args.pattern, mode=args.mode, scope=args.scope, since=args.since, before=args.before,
        limit=args.limit, session_key=args.session_key,
    )  # fmt: skip


# ---------------------------------------------------------------------------------- lcm_describe


class DescribeInput(ToolInput):
    """Arguments of ``lcm_describe``."""

    summary_uid: str = Field(description=_SUMMARY_UID)


@tool(
    "lcm_describe",
    group=GROUP,
    description="""Describe one of the agent's conversation summaries: its text, kind (leaf or condensed), depth,
    token counts and compression, how it was written (llm or extractive), the time span and messages beneath it,
    and its place in the summary DAG (parents up to the root, children). Use to judge whether to expand it. On an
    extracted memory item (M-...): kind memory, method extraction, its memory_type, category and abstract, the
    message ids it came from (child_uids, through the items it replaced: replaced_uids), their conversation and
    time span, and its token count.""",
)
def lcm_describe(ctx: ToolContext, args: DescribeInput) -> SummaryDescription:
    """Describe a summary (or an extracted memory item)."""
    if is_memory_uid(args.summary_uid):
        return describe_memory(ctx.workspace().ports, ctx.agent_for(args), args.summary_uid)
    return ctx.workspace().conversations.describe(ctx.agent_for(args), args.summary_uid)


# ---------------------------------------------------------------------------------- lcm_expand


class ExpandInput(ToolInput):
    """Arguments of ``lcm_expand``."""

    summary_uid: str = Field(description=_SUMMARY_UID)
    max_depth: int = Field(default=EXPAND_DEPTH, ge=1, le=MAX_EXPAND_DEPTH,
                           description=f"Levels to walk down at most (1..{MAX_EXPAND_DEPTH}).")  # fmt: skip
    include_messages: bool = Field(default=False, description="Expand leaf summaries down to their source messages.")
    max_tokens: int = Field(default=EXPAND_TOKENS, ge=1, le=MAX_EXPAND_TOKENS,
                            description=f"Token cap of everything returned (1..{MAX_EXPAND_TOKENS}).")  # fmt: skip


@tool(
    "lcm_expand",
    group=GROUP,
    description="""Expand a conversation summary back to what it summarises: its children level by level and, with
    include_messages, the original messages; or an extracted memory item (M-...) back to the messages it came from.
    Use before asserting details that only a summary mentions. Returns
    the nodes reached (kind, id, level, tokens, text, time span); truncated says a depth or token cap cut the
    walk.""",
)
def lcm_expand(ctx: ToolContext, args: ExpandInput) -> ExpandResult:
    """Walk the DAG down from a summary (or from an extracted memory item to its messages)."""
    if is_memory_uid(args.summary_uid):
        return expand_memory(ctx.workspace().ports, ctx.agent_for(args), args.summary_uid, max_depth=args.max_depth,
                             max_tokens=args.max_tokens)  # fmt: skip
    return ctx.workspace().conversations.expand(
        ctx.agent_for(args), args.summary_uid, max_depth=args.max_depth, include_messages=args.include_messages,
        max_tokens=args.max_tokens,
    )  # fmt: skip


# ---------------------------------------------------------------------------------- context_assemble


class AssembleInput(ToolInput):
    """Arguments of ``context_assemble``."""

    session_key: str = Field(description="The session (conversation) key.")
    budget: int | None = token_count(MAX_BUDGET, "Tokens for the history. Give this or window, not both.")
    window: int | None = token_count(
        MAX_BUDGET,
        "The model's whole context window in tokens: the history gets its share (the split is returned as "
        "allocation). Give this or budget, not both.",
    )
    prompt: str | None = Field(default=None, description="Choose older context by relevance to this text.")


@tool(
    "context_assemble",
    group=GROUP,
    description="""Assemble a session's context within a token budget (or the history share of a whole context
    window), oldest first: the fresh tail of recent messages always, then root summaries and older messages,
    newest first or by relevance to a prompt. Use to rebuild the prompt history of a long conversation. Returns
    the items with their tokens, what was dropped, and system_prompt_addition (say to expand summaries before
    asserting details when summaries are included).""",
)
def context_assemble(ctx: ToolContext, args: AssembleInput) -> AssembledContext:
    """Assemble a session's context."""
    return ctx.workspace().conversations.assemble(
        ctx.agent_for(args), args.session_key, budget=args.budget, window=args.window, prompt=args.prompt
    )


__all__ = [
    "AssembleInput",
    "DescribeInput",
    "ExpandInput",
    "GrepInput",
    "context_assemble",
    "lcm_describe",
    "lcm_expand",
    "lcm_grep",
]
