"""Ports of conversation memory (messages, summaries) and of the optional chat model and summariser."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, Required, TypedDict, Unpack

from kg.models.conversation import Conversation, Message, MessageInput, MessageQuery, Summary


class TextSearch(TypedDict, total=False):
    """The options of a message or summary search (:meth:`ConversationStore.search`, :meth:`SummaryStore.search`).

    ``conversation_uids`` (required) are the conversations searched (none: no results); ``mode`` is
    ``full_text`` (the default: FTS5 words, trigram for CJK) or ``regex``; ``since`` (inclusive) and ``before``
    (exclusive) bound the time; at most ``limit`` results (default 50).
    """

    conversation_uids: Required[Sequence[str]]
    mode: str
    since: datetime | None
    before: datetime | None
    limit: int


class ConversationStore(Protocol):
    """Conversations and their immutable, sequenced messages (full-text indexed)."""

    def open(self, agent_id: str, session_key: str, *, title: str = "", now: datetime) -> Conversation:
        """The agent's conversation of ``session_key``, created (active) if it does not exist."""
        ...

    def get(self, uid: str) -> Conversation:
        """A conversation by uid, or :class:`~kg.errors.NotFoundError`."""
        ...

    def find(self, agent_id: str, session_key: str) -> Conversation | None:
        """The agent's conversation of ``session_key``, if any."""
        ...

    def list(self, agent_id: str, *, active: bool | None = None) -> builtins.list[Conversation]:
        """The agent's conversations, newest activity first."""
        ...

    def append(
        self, conversation_uid: str, messages: Sequence[MessageInput], *, now: datetime
    ) -> builtins.list[Message]:
        """Append messages in one transaction with consecutive ``seq`` numbers; return them as stored.

        ``token_count`` None is estimated by the store's estimator; ``created_at`` None is ``now``.
        """
        ...

    def messages(self, query: MessageQuery) -> builtins.list[Message]:
        """Messages of one conversation in ``seq`` order."""
        ...

    def get_messages(self, uids: Iterable[str]) -> dict[str, Message]:
        """Messages by uid."""
        ...

    def search(self, pattern: str, **options: Unpack[TextSearch]) -> builtins.list[Message]:
        """Messages matching ``pattern`` (``full_text``: FTS5 words, trigram for CJK; ``regex``), oldest first."""
        ...


class SummaryStore(Protocol):
    """The summary DAG: summaries, their covered children, and which summaries are not yet covered."""

    def add(self, summary: Summary) -> Summary:
        """Store a summary and its child edges in one transaction.

        Every child must exist in the conversation (messages for a leaf, summaries of ``depth - 1`` for a
        condensed one) and must not already be covered by another summary (a DAG level covers each node
        once): otherwise :class:`~kg.errors.ConflictError` and nothing is written.
        """
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, Summary]:
        """Summaries by uid."""
        ...

    def list(self, conversation_uid: str, *, depth: int | None = None) -> builtins.list[Summary]:
        """Summaries of a conversation in chronological order (by earliest_at, then uid)."""
        ...

    def roots(self, conversation_uid: str) -> builtins.list[Summary]:
        """Summaries no other summary covers, chronological."""
        ...

    def parent_of(self, uid: str) -> str | None:
        """The summary covering a message or summary, if any."""
        ...

    def uncovered_messages(self, conversation_uid: str) -> builtins.list[Message]:
        """Messages no leaf summary covers yet, in ``seq`` order."""
        ...

    def search(self, pattern: str, **options: Unpack[TextSearch]) -> builtins.list[Summary]:
        """Summaries matching ``pattern`` (as :meth:`ConversationStore.search`), oldest first."""
        ...


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat request to an LLM."""

    role: str
    content: str


class ChatModel(Protocol):
    """The optional LLM port: any OpenAI-compatible chat endpoint (design.md §5b)."""

    @property
    def model(self) -> str:
        """The model name (recorded on what it writes)."""
        ...

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float = 0.0,
                 response_format: Mapping[str, Any] | None = None) -> str:  # fmt: skip
        """The assistant's reply text; :class:`~kg.errors.BackendUnavailableError` when the endpoint fails.
        ``response_format`` asks for structured output (OpenAI's ``json_schema`` or ``json_object``)."""
        ...


@dataclass(frozen=True)
class SummaryText:
    """What a summariser wrote, and how (``method`` llm or extractive, ``model`` for llm)."""

    content: str
    method: str
    model: str | None = None


class Summarizer(Protocol):
    """Writes one summary of texts (messages for a leaf, summaries for a condensed node)."""

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        """A summary of ``texts`` (in order) of about ``target_tokens`` tokens; ``depth`` 0 for a leaf."""
        ...
