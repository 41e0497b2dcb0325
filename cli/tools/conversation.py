"""Conversation-memory tools: search, describe and expand the summary DAG, and assemble a session's context.

Each handler makes the same :class:`kg.conversation.service.ConversationService` call (``ws.conversations``) as
the matching ``mabos lcm ...`` or ``mabos conversation assemble`` command, which runs the tool. The inputs are the
service's requests (:mod:`kg.conversation.requests`) plus ``agent_id``.
"""

from __future__ import annotations

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.conversation.assemble import AssembledContext
from kg.conversation.requests import AssembleRequest, DescribeRequest, ExpandRequest, GrepRequest
from kg.conversation.tools import ExpandResult, GrepResult, SummaryDescription
from kg.extraction.lineage import describe_memory, expand_memory, is_memory_uid

GROUP = "conversation"


# ---------------------------------------------------------------------------------- lcm_grep


class GrepInput(GrepRequest, ToolInput):
    """Arguments of ``lcm_grep``."""


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
    return ctx.workspace().conversations.grep(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------- lcm_describe


class DescribeInput(DescribeRequest, ToolInput):
    """Arguments of ``lcm_describe``."""


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
    return ctx.workspace().conversations.describe(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------- lcm_expand


class ExpandInput(ExpandRequest, ToolInput):
    """Arguments of ``lcm_expand``."""


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
    return ctx.workspace().conversations.expand(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------- context_assemble


class AssembleInput(AssembleRequest, ToolInput):
    """Arguments of ``context_assemble``."""


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
    return ctx.workspace().conversations.assemble(ctx.agent_for(args), args)


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
