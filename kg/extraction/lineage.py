"""From an extracted memory item back to the conversation messages it came from (``lcm_expand`` on a memory id).

The walk follows ``derived_from``: message uids are the level's items; memory uids (the item a merge, a
contextualization, a contradiction or a supersession replaced) are walked through, one level further down,
up to ``max_depth`` levels. Only the agent's own items and messages of its own conversations are shown; another
agent's item is reported exactly as a missing one.
"""

from __future__ import annotations

from typing import Literal

from kg.conversation.tools import MAX_EXPAND_TOKENS
from kg.conversation.tools_models import ExpandItem, ExpandResult, SummaryDescription
from kg.errors import InputError, NotFoundError
from kg.ids import PREFIXES
from kg.models.conversation import estimate_tokens
from kg.ports import GraphStore


def is_memory_uid(uid: str) -> bool:
    """Whether ``uid`` names a memory item."""
    return isinstance(uid, str) and uid.startswith(PREFIXES["memory"] + "-")


def expand_memory(store: GraphStore, agent_id: str, uid: str, *, max_depth: int = 3,
                  max_tokens: int = 8_000) -> ExpandResult:  # fmt: skip
    """The messages beneath the agent's memory item ``uid``, level by level (module docstring).

    Raises:
        InputError: not a memory id. NotFoundError: not one of the agent's memory items.
    """
    if not is_memory_uid(uid):
        raise InputError("summary_uid", f"must be a summary or memory id, got {str(uid)[:80]!r}")
    root = store.memory.get_many([uid]).get(uid)
    if root is None or root.agent_id != agent_id:
        raise NotFoundError(f"summary_uid: agent {agent_id!r} has no memory item {uid!r}")
    items: list[ExpandItem] = []
    total, level, frontier, seen = 0, 0, [root], {uid}
    truncated_by: list[Literal["depth", "tokens"]] = []
    own: dict[str, bool] = {}
    while frontier and not truncated_by:
        level += 1
        if level > max_depth:
            truncated_by.append("depth")
            break
        parents = [(node.uid, p) for node in frontier for p in node.derived_from if p not in seen]
        seen.update(p for _, p in parents)
        messages = store.conversations.get_messages([p for _, p in parents])
        memories = store.memory.get_many([p for _, p in parents if is_memory_uid(p)])
        for parent_uid, child in parents:
            m = messages.get(child)
            if m is None:
                continue
            if m.conversation_uid not in own:
                own[m.conversation_uid] = store.conversations.get(m.conversation_uid).agent_id == agent_id
            if not own[m.conversation_uid]:
                continue
            if total + m.token_count > max_tokens:
                truncated_by.append("tokens")
                break
            total += m.token_count
            items.append(ExpandItem(kind="message", uid=m.uid, parent_uid=parent_uid, level=level, role=m.role,
                                    seq=m.seq, tokens=m.token_count, content=m.content, earliest_at=m.created_at,
                                    latest_at=m.created_at))  # fmt: skip
        frontier = [i for i in memories.values() if i.agent_id == agent_id]
    conversation = ""
    if items:
        first = store.conversations.get_messages([items[0].uid])[items[0].uid]
        conversation = first.conversation_uid
    return ExpandResult(uid=uid, conversation_uid=conversation, max_depth=max_depth, max_tokens=max_tokens,
                        include_messages=True, items=items, total_tokens=total, truncated=bool(truncated_by),
                        truncated_by=truncated_by, unexpanded=[uid] if truncated_by else [])  # fmt: skip


def describe_memory(store: GraphStore, agent_id: str, uid: str, *, max_depth: int = 3) -> SummaryDescription:
    """The agent's memory item ``uid`` as ``lcm_describe`` shows it: type, category, abstract, the messages it came
    from (walked as :func:`expand_memory` walks, the same scoping), their conversation and time span, tokens.

    Raises:
        InputError: not a memory id. NotFoundError: not one of the agent's memory items.
    """
    walked = expand_memory(store, agent_id, uid, max_depth=max_depth, max_tokens=MAX_EXPAND_TOKENS)
    item = store.memory.get_many([uid])[uid]
    messages = walked.items
    source = sum(m.tokens for m in messages)
    tokens = estimate_tokens(item.content)
    category = next((t.split(":", 1)[1] for t in item.tags if t.startswith("category:")), None)
    return SummaryDescription(
        uid=uid, conversation_uid=walked.conversation_uid, kind="memory", depth=0, content=item.content,
        token_count=tokens, source_token_count=source, compression=round(tokens / source, 4) if source else None,
        method="extraction", model=None, earliest_at=min((m.earliest_at for m in messages), default=item.created_at),
        latest_at=max((m.latest_at for m in messages), default=item.created_at), descendant_count=len(messages),
        created_at=item.created_at, parent_uid=None, lineage=[], root_uid=uid, child_kind="message",
        child_uids=[m.uid for m in messages], memory_type=item.type.value, category=category,
        abstract=item.content.split("\n\n", 1)[0].strip(),
        replaced_uids=list(dict.fromkeys(m.parent_uid for m in messages if m.parent_uid and m.parent_uid != uid)),
    )  # fmt: skip


__all__ = ["describe_memory", "expand_memory", "is_memory_uid"]
