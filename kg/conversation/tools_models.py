"""What the lcm tools return (grep hits, a summary's description, expanded items) and the stores they read."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Protocol

from pydantic import Field

from kg.conversation import requests
from kg.models import Model
from kg.models.base import new_list
from kg.models.conversation import Role, SummaryKind, SummaryMethod
from kg.ports import ConversationStore, SummaryStore

GrepMode = requests.GrepMode
GrepScope = requests.GrepScope


class ConversationStores(Protocol):
    """Anything holding the two conversation ports (a :class:`~kg.store.sqlite.SqliteGraphStore`)."""

    @property
    def conversations(self) -> ConversationStore:
        """Conversations and messages."""
        ...

    @property
    def summaries(self) -> SummaryStore:
        """The summary DAG."""
        ...


class GrepHit(Model):
    """One message or summary that matched, cited by id.

    Attributes:
        kind: ``message`` or ``summary``.
        uid: Its id.
        conversation_uid: Its conversation.
        role: A message's role.
        seq: A message's sequence number.
        depth: A summary's depth.
        at: A message's time, or the earliest message beneath a summary.
        snippet: Text around the first match (``...`` where cut).
        matches: Occurrences of the pattern found in the text (0 when the full-text index matched a form the
            snippet finder does not see, e.g. a prefix).
    """

    kind: Literal["message", "summary"]
    uid: str
    conversation_uid: str
    role: Role | None = None
    seq: int | None = None
    depth: int | None = None
    at: datetime
    snippet: str
    matches: int


class GrepResult(Model):
    """The hits of :func:`lcm_grep`, oldest first.

    Attributes:
        pattern: The pattern searched.
        mode: ``regex`` or ``full_text``.
        scope: ``messages``, ``summaries`` or ``both``.
        conversations: The conversations searched.
        hits: The hits.
        total_chars: Characters of all snippets (at most :data:`GREP_MAX_CHARS`).
        truncated: More hits exist than were returned.
        truncated_by: What cut: ``limit`` (more matches than ``limit``), ``chars`` (the character cap) and/or
            ``deadline`` (the regex search ran out of time: rows after that were not matched).
    """

    pattern: str
    mode: GrepMode
    scope: GrepScope
    conversations: list[str]
    hits: list[GrepHit]
    total_chars: int
    truncated: bool
    truncated_by: list[Literal["limit", "chars", "deadline"]] = Field(default_factory=new_list)


class SummaryDescription(Model):
    """What :func:`lcm_describe` says about one summary, or about one extracted memory item (``kind`` ``memory``:
    ``child_uids`` are the messages it came from, through the items it replaced; ``method`` is ``extraction``;
    ``memory_type``, ``category``, ``abstract`` and ``replaced_uids`` are set; ``depth`` 0, no parent).

    Attributes:
        uid: The summary (or memory item).
        conversation_uid: Its conversation.
        kind: ``leaf`` (covers messages), ``condensed`` (covers summaries) or ``memory`` (an extracted item).
        depth: 0 for a leaf.
        content: The summary text.
        token_count: Tokens of the content.
        source_token_count: Tokens of what it covers.
        compression: ``token_count / source_token_count`` (None when the source is empty).
        method: ``llm`` or ``extractive``.
        model: The LLM's model name for ``llm`` summaries.
        earliest_at: The earliest message beneath it.
        latest_at: The latest message beneath it.
        descendant_count: Messages beneath it.
        created_at: When it was written.
        parent_uid: The summary covering it, None for a root.
        lineage: Parent chain from its parent up to the root (empty for a root).
        root_uid: The root above it (itself for a root).
        child_kind: ``message`` for a leaf, ``summary`` for a condensed summary.
        child_uids: Its children in chronological order.
        memory_type: A memory item's type (``preference``, ``event`` ...); None for a summary.
        category: A memory item's extraction category (``profile`` ... ``patterns``); None when it has none.
        abstract: A memory item's one-line abstract (its first paragraph); None for a summary.
        replaced_uids: Memory items it replaced (a merge, supersession ...) walked through to reach its messages.
    """

    uid: str
    conversation_uid: str
    kind: SummaryKind | Literal["memory"]
    depth: int
    content: str
    token_count: int
    source_token_count: int
    compression: float | None
    method: SummaryMethod | Literal["extraction"]
    model: str | None
    earliest_at: datetime
    latest_at: datetime
    descendant_count: int
    created_at: datetime
    parent_uid: str | None
    lineage: list[str]
    root_uid: str
    child_kind: Literal["message", "summary"]
    child_uids: list[str]
    memory_type: str | None = None
    category: str | None = None
    abstract: str | None = None
    replaced_uids: list[str] = Field(default_factory=new_list)


class ExpandItem(Model):
    """One node reached by :func:`lcm_expand`.

    Attributes:
        kind: ``summary`` or ``message``.
        uid: Its id.
        parent_uid: The summary it was reached from.
        level: Edges from the expanded summary (1 = its children).
        depth: A summary's depth.
        role: A message's role.
        seq: A message's sequence number.
        tokens: Its token count (as stored).
        content: Its text.
        earliest_at: A message's time, or the earliest message beneath a summary.
        latest_at: A message's time, or the latest message beneath a summary.
    """

    kind: Literal["summary", "message"]
    uid: str
    parent_uid: str
    level: int
    depth: int | None = None
    role: Role | None = None
    seq: int | None = None
    tokens: int
    content: str
    earliest_at: datetime
    latest_at: datetime


class ExpandResult(Model):
    """What :func:`lcm_expand` read beneath one summary.

    Attributes:
        uid: The summary expanded.
        conversation_uid: Its conversation.
        max_depth: Levels walked at most.
        max_tokens: Token cap of all items.
        include_messages: Whether leaves were expanded to their messages.
        items: The nodes reached, level by level, each level chronological.
        total_tokens: Tokens of all items.
        truncated: A cap cut the walk: something beneath the summary is missing from ``items``.
        truncated_by: ``depth`` and/or ``tokens``.
        unexpanded: Summaries (the expanded one or items) whose children are not all in ``items``.
    """

    uid: str
    conversation_uid: str
    max_depth: int
    max_tokens: int
    include_messages: bool
    items: list[ExpandItem]
    total_tokens: int
    truncated: bool
    truncated_by: list[Literal["depth", "tokens"]] = Field(default_factory=new_list)
    unexpanded: list[str] = Field(default_factory=new_list)
