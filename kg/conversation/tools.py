"""The recall tools over an agent's conversation memory: ``lcm_grep``, ``lcm_describe`` and ``lcm_expand``.

Plain functions over the two conversation ports that return pydantic results (the CLI, the service facade
and the tool registry render them). An agent only ever reads its own conversations: a summary or
conversation of another agent is reported exactly as a missing one (:class:`~kg.errors.NotFoundError`), so
the answer does not reveal that it exists.

* :func:`lcm_grep` finds messages and/or summaries by regular expression (Python syntax run by RE2 in
  linear time under a deadline, :mod:`kg.regex`; case-sensitive unless ``(?i)``) or full text (every word
  must occur; CJK by substring), optionally within a time window (``since`` inclusive, ``before``
  exclusive), oldest first. Each hit is cited by id with a snippet of about
  :data:`SNIPPET_CONTEXT` characters either side of its first match; at most ``limit`` hits and
  :data:`GREP_MAX_CHARS` characters of snippets are returned, and ``truncated`` says when either cap cut.
* :func:`lcm_describe` shows one summary: content, kind, depth, token counts, method and model, time span,
  descendant count, and its place in the DAG (the parent chain up to the root, and its children).
* :func:`lcm_expand` walks the DAG down from a summary, level by level (breadth first, each level in
  chronological order): condensed summaries to their child summaries, and leaves to their source messages
  when ``include_messages``. It stops at ``max_depth`` levels or before the item that would pass
  ``max_tokens``, and then says ``truncated`` and which summaries were not fully expanded (expand them
  next)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from kg.conversation.requests import (  # the limits of grep and expand, declared with their requests
    EXPAND_DEPTH,
    EXPAND_TOKENS,
    MAX_EXPAND_DEPTH,
    MAX_EXPAND_TOKENS,
    MAX_GREP_LIMIT,
    MAX_PATTERN,
)
from kg.conversation.tools_models import (
    ConversationStores,
    ExpandItem,
    ExpandResult,
    GrepHit,
    GrepMode,
    GrepResult,
    GrepScope,
    SummaryDescription,
)
from kg.errors import InputError, NotFoundError
from kg.ids import ID_PATTERN, PREFIXES
from kg.models import AGENT_ID_RE
from kg.models.conversation import Conversation, Message, Summary, SummaryKind
from kg.ports import TextSearch
from kg.regex import DEFAULT_DEADLINE, UserRegex, compile_regex, literal_regex
from kg.regex import deadline as regex_deadline
from kg.text.words import words

#: Characters of all snippets of one grep result.
GREP_MAX_CHARS = 40_000


#: Characters shown either side of a match.
SNIPPET_CONTEXT = 120


_MODES: dict[str, GrepMode] = {"regex": "regex", "full_text": "full_text"}


_SCOPES: dict[str, GrepScope] = {"messages": "messages", "summaries": "summaries", "both": "both"}


def _check_agent(agent_id: str) -> None:
    if not isinstance(agent_id, str) or not AGENT_ID_RE.match(agent_id):
        raise InputError("agent", f"must match [a-z0-9][a-z0-9_-]{{0,63}}, got {str(agent_id)[:80]!r}")


def _check_int(field: str, value: int, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InputError(field, f"must be a whole number from {lo} to {hi}, got {value!r}")


def _check_summary_uid(uid: str) -> None:
    if not isinstance(uid, str) or not ID_PATTERN.match(uid) or not uid.startswith(PREFIXES["summary"] + "-"):
        raise InputError("summary_uid", f"must be a summary id (SUM- and 26 characters), got {str(uid)[:80]!r}")


def _own_summary(stores: ConversationStores, agent_id: str, uid: str) -> Summary:
    """The summary ``uid`` if it belongs to one of ``agent_id``'s conversations (NotFoundError otherwise)."""
    _check_agent(agent_id)
    _check_summary_uid(uid)
    summary = stores.summaries.get_many([uid]).get(uid)
    if summary is None or stores.conversations.get(summary.conversation_uid).agent_id != agent_id:
        raise NotFoundError(f"summary_uid: agent {agent_id!r} has no summary {uid!r}")
    return summary


def _conversations(stores: ConversationStores, agent_id: str, conversation: str | None) -> list[Conversation]:
    """The agent's conversations, or the one named by uid or session key."""
    if conversation is None:
        return stores.conversations.list(agent_id)
    found: Conversation | None = None
    if ID_PATTERN.match(conversation) and conversation.startswith(PREFIXES["conversation"] + "-"):
        try:
            found = stores.conversations.get(conversation)
        except NotFoundError:
            found = None
    else:
        found = stores.conversations.find(agent_id, conversation)
    if found is None or found.agent_id != agent_id:
        raise NotFoundError(f"conversation: agent {agent_id!r} has no conversation {conversation[:80]!r}")
    return [found]


def _finder(pattern: str, mode: GrepMode) -> UserRegex:
    """What the snippets are centred on: the regex itself, or any word of a full-text pattern (any case).

    Both run on RE2 (:mod:`kg.regex`): linear time, a pattern it cannot run is refused naming ``pattern``.
    """
    if mode == "regex":
        return compile_regex(pattern)
    parts = [w for part in pattern.split() for w in (words(part) if part.isascii() else [part.strip("*")])]
    if not any(parts):
        raise InputError("pattern", "has no words to search for (letters or digits); use mode regex for symbols")
    return literal_regex(parts)


def snippet(text: str, finder: UserRegex, *, context: int = SNIPPET_CONTEXT) -> tuple[str, int]:
    """``(snippet, matches)``: the text around the first match of ``finder``, and how many matches there are.

    Without a match (a full-text prefix match, say) the snippet is the start of the text. ``...`` marks a cut.
    Matches are counted up to 10,000 in the first :data:`kg.regex.MAX_TEXT` characters.
    """
    first = finder.search(text)
    matches = 0
    if first is not None:
        matches = len(finder.finditer(text, limit=10_000))
    start, end = first if first is not None else (0, 0)
    lo, hi = max(0, start - context), min(len(text), max(end, start + 1) + context)
    if first is not None and end - start > 2 * context:  # a huge match: show its start
        hi = start + 2 * context
    return ("..." if lo > 0 else "") + text[lo:hi] + ("..." if hi < len(text) else ""), matches


def _message_hit(m: Message, finder: UserRegex) -> GrepHit:
    text, matches = snippet(m.content, finder)
    return GrepHit(kind="message", uid=m.uid, conversation_uid=m.conversation_uid, role=m.role, seq=m.seq,
                   at=m.created_at, snippet=text, matches=matches)  # fmt: skip


def _summary_hit(s: Summary, finder: UserRegex) -> GrepHit:
    text, matches = snippet(s.content, finder)
    return GrepHit(kind="summary", uid=s.uid, conversation_uid=s.conversation_uid, depth=s.depth,
                   at=s.earliest_at, snippet=text, matches=matches)  # fmt: skip


def _check_grep(pattern: str, mode: str, scope: str, *, limit: int, since: datetime | None,
                before: datetime | None) -> tuple[GrepMode, GrepScope]:  # fmt: skip
    if mode not in _MODES:
        raise InputError("mode", f"must be regex or full_text, got {mode!r}")
    if scope not in _SCOPES:
        raise InputError("scope", f"must be messages, summaries or both, got {scope!r}")
    if not isinstance(pattern, str) or not pattern.strip():
        raise InputError("pattern", "must not be empty")
    if len(pattern) > MAX_PATTERN or "\x00" in pattern:
        raise InputError("pattern", f"must be at most {MAX_PATTERN} characters, without NUL")
    _check_int("limit", limit, 1, MAX_GREP_LIMIT)
    for name, value in (("since", since), ("before", before)):
        if value is not None and value.tzinfo is None:
            raise InputError(name, "must be a time with a time zone (e.g. 2024-05-01T12:00:00Z)")
    if since is not None and before is not None and since >= before:
        raise InputError("before", "must be later than since")
    return _MODES[mode], _SCOPES[scope]


def lcm_grep(
    stores: ConversationStores,
    agent_id: str,
    pattern: str,
    *,
    mode: str = "regex",
    scope: str = "both",
    since: datetime | None = None,
    before: datetime | None = None,
    limit: int = 50,
    conversation: str | None = None,
    deadline: float = DEFAULT_DEADLINE,
) -> GrepResult:
    """Messages and/or summaries of the agent's conversations that match ``pattern``, oldest first.

    Args:
        stores: The conversation ports.
        agent_id: The agent searching (only its own conversations are searched).
        pattern: A Python regular expression (``regex``) or words that must all occur (``full_text``).
        mode: ``regex`` or ``full_text``.
        scope: ``messages``, ``summaries`` or ``both``.
        since: Only items at or after this time (a summary's earliest message).
        before: Only items before this time.
        limit: Most hits (1..1000).
        conversation: One conversation, by uid or session key (default: all of the agent's).
        deadline: Seconds a regex search may take (0..300); past it, rows are no longer matched and the
            result says ``truncated_by: ["deadline"]`` with what was found so far.

    Returns:
        The hits with snippets, at most ``limit`` and :data:`GREP_MAX_CHARS` characters of snippets.

    Raises:
        InputError: a bad pattern (e.g. an invalid regex), mode, scope, limit or time window.
        NotFoundError: ``conversation`` is not one of the agent's.
    """
    _check_agent(agent_id)
    grep_mode, grep_scope = _check_grep(pattern, mode, scope, limit=limit, since=since, before=before)
    finder = _finder(pattern, grep_mode)
    uids = [c.uid for c in _conversations(stores, agent_id, conversation)]
    hits: list[GrepHit] = []
    options = TextSearch(conversation_uids=uids, mode=grep_mode, since=since, before=before, limit=limit + 1)
    with regex_deadline(deadline) as budget:
        if grep_scope != "summaries":
            hits += [_message_hit(m, finder) for m in stores.conversations.search(pattern, **options)]
        if grep_scope != "messages":
            hits += [_summary_hit(s, finder) for s in stores.summaries.search(pattern, **options)]
    hits.sort(key=lambda h: (h.at, h.kind == "message", h.conversation_uid, h.seq or 0, h.uid))
    truncated_by: list[Literal["limit", "chars", "deadline"]] = ["limit"] if len(hits) > limit else []
    if budget.expired:
        truncated_by.append("deadline")
    kept: list[GrepHit] = []
    total = 0
    for hit in hits[:limit]:
        if total + len(hit.snippet) > GREP_MAX_CHARS:
            truncated_by.append("chars")
            break
        kept.append(hit)
        total += len(hit.snippet)
    return GrepResult(pattern=pattern, mode=grep_mode, scope=grep_scope, conversations=uids, hits=kept,
                      total_chars=total, truncated=bool(truncated_by), truncated_by=truncated_by)  # fmt: skip


def lcm_describe(stores: ConversationStores, agent_id: str, summary_uid: str) -> SummaryDescription:
    """One summary of the agent's conversations: content, token counts, time span and place in the DAG.

    Raises:
        InputError: a malformed agent id or summary id. NotFoundError: not one of the agent's summaries.
    """
    summary = _own_summary(stores, agent_id, summary_uid)
    lineage: list[str] = []
    parent = stores.summaries.parent_of(summary.uid)
    while parent is not None and parent not in lineage and len(lineage) <= MAX_EXPAND_DEPTH:
        lineage.append(parent)
        parent = stores.summaries.parent_of(parent)
    source = summary.source_token_count
    return SummaryDescription(
        uid=summary.uid, conversation_uid=summary.conversation_uid, kind=summary.kind, depth=summary.depth,
        content=summary.content, token_count=summary.token_count, source_token_count=source,
        compression=round(summary.token_count / source, 4) if source else None, method=summary.method,
        model=summary.model, earliest_at=summary.earliest_at, latest_at=summary.latest_at,
        descendant_count=summary.descendant_count, created_at=summary.created_at,
        parent_uid=lineage[0] if lineage else None, lineage=lineage, root_uid=lineage[-1] if lineage else summary.uid,
        child_kind="message" if summary.kind is SummaryKind.LEAF else "summary", child_uids=list(summary.child_uids),
    )  # fmt: skip


def _children(stores: ConversationStores, node: Summary, level: int) -> list[ExpandItem]:
    """The children of ``node`` as items at ``level``, in its chronological child order."""
    if node.kind is SummaryKind.LEAF:
        messages = stores.conversations.get_messages(node.child_uids)
        return [ExpandItem(kind="message", uid=m.uid, parent_uid=node.uid, level=level, role=m.role, seq=m.seq,
                           tokens=m.token_count, content=m.content, earliest_at=m.created_at,
                           latest_at=m.created_at)
                for uid in node.child_uids if (m := messages.get(uid)) is not None]  # fmt: skip
    found = stores.summaries.get_many(node.child_uids)
    return [ExpandItem(kind="summary", uid=s.uid, parent_uid=node.uid, level=level, depth=s.depth,
                       tokens=s.token_count, content=s.content, earliest_at=s.earliest_at, latest_at=s.latest_at)
            for uid in node.child_uids if (s := found.get(uid)) is not None]  # fmt: skip


def _expandable(node: Summary, include_messages: bool) -> bool:
    return node.kind is SummaryKind.CONDENSED or include_messages


def lcm_expand(
    stores: ConversationStores,
    agent_id: str,
    summary_uid: str,
    *,
    max_depth: int = EXPAND_DEPTH,
    include_messages: bool = False,
    max_tokens: int = EXPAND_TOKENS,
) -> ExpandResult:
    """Walk the DAG down from a summary: child summaries and, with ``include_messages``, source messages.

    Args:
        stores: The conversation ports.
        agent_id: The agent reading (only its own summaries).
        summary_uid: The summary to expand.
        max_depth: Levels to walk (1 = its children only), 1..64.
        include_messages: Expand leaves to their messages (a level of its own).
        max_tokens: Most tokens of all items; the walk stops before the item that would pass it.

    Returns:
        The items reached, ``truncated`` when the depth or token cap left something out.

    Raises:
        InputError: a malformed id or a cap out of range. NotFoundError: not one of the agent's summaries.
    """
    _check_int("max_depth", max_depth, 1, MAX_EXPAND_DEPTH)
    _check_int("max_tokens", max_tokens, 1, MAX_EXPAND_TOKENS)
    root = _own_summary(stores, agent_id, summary_uid)
    items: list[ExpandItem] = []
    truncated_by: list[Literal["depth", "tokens"]] = []
    frontier, total, level = [root], 0, 0
    reached: list[Summary] = [root]
    while frontier and not truncated_by:
        level += 1
        frontier = [node for node in frontier if _expandable(node, include_messages)]
        if frontier and level > max_depth:
            truncated_by.append("depth")
            break
        next_uids: list[str] = []
        for node in frontier:
            for item in _children(stores, node, level):
                if total + item.tokens > max_tokens:
                    truncated_by.append("tokens")
                    break
                items.append(item)
                total += item.tokens
                if item.kind == "summary":
                    next_uids.append(item.uid)
            if truncated_by:
                break
        found = stores.summaries.get_many(next_uids) if next_uids else {}
        frontier = [found[uid] for uid in next_uids if uid in found]
        reached += frontier
    listed = {item.uid for item in items}
    unexpanded = [s.uid for s in reached
                  if _expandable(s, include_messages) and not all(c in listed for c in s.child_uids)]  # fmt: skip
    return ExpandResult(uid=root.uid, conversation_uid=root.conversation_uid, max_depth=max_depth,
                        max_tokens=max_tokens, include_messages=include_messages, items=items, total_tokens=total,
                        truncated=bool(truncated_by), truncated_by=truncated_by, unexpanded=unexpanded)  # fmt: skip


__all__ = [
    "EXPAND_DEPTH",
    "EXPAND_TOKENS",
    "GREP_MAX_CHARS",
    "MAX_EXPAND_DEPTH",
    "MAX_EXPAND_TOKENS",
    "MAX_GREP_LIMIT",
    "MAX_PATTERN",
    "SNIPPET_CONTEXT",
    "ConversationStores",
    "ExpandItem",
    "ExpandResult",
    "GrepHit",
    "GrepMode",
    "GrepResult",
    "GrepScope",
    "SummaryDescription",
    "lcm_describe",
    "lcm_expand",
    "lcm_grep",
    "snippet",
]
