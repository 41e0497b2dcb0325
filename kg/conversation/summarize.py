"""Summarisers for the summary DAG: one over the LLM port, one deterministic and extractive, and the fallback.

* :class:`LLMSummarizer` asks a :class:`~kg.ports.ChatModel` for a leaf summary (of messages) or a condensed
  summary (of summaries), with prompts of our own (below). A reply that is empty, or longer than three times
  the target after one request to shorten it, is **rejected with** :class:`~kg.errors.BackendUnavailableError`
  (the compaction engine refuses summaries over 3x target anyway; raising lets the fallback take over).
* :class:`ExtractiveSummarizer` needs no model: it quotes the most informative sentences of the span
  (:mod:`kg.conversation.extractive`), in their original order, under a ``[extractive summary ...]`` marker.
* :class:`FallbackSummarizer` tries the LLM and falls back to extractive when it fails; :func:`make_summarizer`
  picks what the configuration allows. Every result says which path wrote it (``SummaryText.method``).

How the compaction engine should hand over messages: :func:`format_message` (``[2024-05-01 12:00] user: ...``),
so that both summarisers see who said what and when.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from datetime import datetime

from kg.conversation.extractive import EXTRACTIVE_MARKER, ExtractiveSummarizer, Sentence, split_sentences
from kg.errors import BackendUnavailableError, InputError
from kg.models.conversation import SummaryMethod, TokenEstimator, estimate_tokens
from kg.ports import ChatMessage, ChatModel, Embedder, Summarizer, SummaryText

log = logging.getLogger("mabos.conversation")

#: Summaries longer than this many times their target are rejected (the seed's rule).
MAX_TARGET_RATIO = 3

_LEAF_SYSTEM = """\
You condense part of a conversation into a summary for an AI agent's memory. The summary takes the place of \
these messages in the agent's context window. The messages themselves are kept and can be looked up later, \
so the summary must tell the agent accurately what happened and which details exist.

Keep:
- decisions and conclusions, and who reached them;
- facts that were stated, with the names of people, places, projects, tools and organisations;
- numbers, amounts, versions, dates, times and durations, exactly as written;
- file paths, URLs, commands, identifiers and error messages, verbatim;
- open questions, TODOs, promises and problems left unresolved;
- who said, asked or did what (use the speaker names or roles shown).

Rules:
- Use only what the messages say. Do not invent or guess details, causes or outcomes; if something is \
unclear in the messages, say that it is unclear.
- Follow the order of events, and give dates or times where the messages show them.
- Leave out greetings, small talk and repetition.
- Write plain text in short paragraphs or "- " bullet points: no headings, no preamble, no closing remarks.
- Length: about {target} tokens (roughly {words} words), never more than {limit} tokens."""

_CONDENSED_SYSTEM = """\
You merge consecutive summaries of one conversation into a single summary at a higher level, for an AI \
agent's memory. The summaries are given oldest first; each covers a later stretch of the conversation than \
the one before it. The underlying messages are kept and can be looked up, so the merged summary is a map of \
what happened rather than a transcript.

Keep decisions and their outcomes; facts with their names, numbers, dates, file paths, URLs and identifiers; \
and open questions or TODOs, saying which were resolved later and how.

Rules:
- Keep the chronology: tell events in the order they happened, with the dates or periods given.
- Say each thing once: merge points that several summaries repeat, and where a later summary changes an \
earlier fact, keep the final state (and that it changed).
- Use only what the summaries say; invent nothing.
- {depth_hint}
- Write plain text in short paragraphs or "- " bullet points: no headings, no preamble, no closing remarks.
- Length: about {target} tokens (roughly {words} words), never more than {limit} tokens."""

_DEPTH_HINTS = (
    "Stay concrete: this summary covers a stretch of about one working session.",
    "Be more general: keep the main threads, the decisions and their results; drop step-by-step detail.",
    "Give the long view: the main threads, milestones with their dates, lasting decisions and what is still open.",
)

_SHORTEN = (
    "That summary is about {tokens} tokens; it must not exceed {limit}. Rewrite it in about {target} tokens, "
    "keeping decisions, names, numbers, dates, paths and open items, and cutting everything else."
)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def format_message(speaker: str, content: str, created_at: datetime | None = None) -> str:
    """One message as the summarisers expect it: ``[YYYY-MM-DD HH:MM] speaker: content``.

    Args:
        speaker: the author's name, or the role (``user``, ``assistant``, ``tool`` ...).
        content: the message text.
        created_at: when it was written; omitted from the line when None.
    """
    stamp = f"[{created_at:%Y-%m-%d %H:%M}] " if created_at is not None else ""
    return f"{stamp}{speaker}: {content}"


def _check(texts: Sequence[str], target_tokens: int, depth: int) -> None:
    if not any(t.strip() for t in texts):
        raise InputError("texts", "nothing to summarise: every text is empty")
    if target_tokens < 1:
        raise InputError("target_tokens", "must be at least 1")
    if depth < 0:
        raise InputError("depth", "must be 0 (leaf) or more (condensed)")


class LLMSummarizer:
    """Summaries written by a chat model with our prompts.

    Args:
        chat: the LLM port.
        estimator: the token estimate used for the length check (default chars/4).
        max_ratio: replies longer than ``max_ratio * target_tokens`` are sent back once to be shortened and
            then rejected.

    ``summarize`` raises :class:`~kg.errors.BackendUnavailableError` when the endpoint fails, when the reply is
    empty, or when it is still over ``max_ratio`` times the target after one request to shorten it: the
    caller never gets a summary the compaction engine would reject.
    """

    def __init__(
        self, chat: ChatModel, *, estimator: TokenEstimator = estimate_tokens, max_ratio: float = MAX_TARGET_RATIO
    ) -> None:
        if max_ratio < 1:
            raise InputError("max_ratio", "must be at least 1")
        self.chat = chat
        self.estimator = estimator
        self.max_ratio = max_ratio

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        """A summary of ``texts`` (messages when ``depth`` is 0, else summaries of ``depth - 1``), in order.

        Raises:
            InputError: nothing to summarise, ``target_tokens`` below 1 or a negative depth.
            BackendUnavailableError: the endpoint failed, or the reply was empty or too long.
        """
        _check(texts, target_tokens, depth)
        limit = max(1, math.floor(self.max_ratio * target_tokens))
        messages = [ChatMessage("system", self.system_prompt(target_tokens, depth, limit)), self._request(texts, depth)]
        text = self._ask(messages, limit)
        tokens = self.estimator(text)
        if tokens > limit:  # one chance to shorten, in the same conversation
            retry = [*messages, ChatMessage("assistant", text)]
            retry.append(ChatMessage("user", _SHORTEN.format(tokens=tokens, limit=limit, target=target_tokens)))
            text = self._ask(retry, limit)
            tokens = self.estimator(text)
        if tokens > limit:
            raise BackendUnavailableError(
                f"llm: {self.chat.model} wrote a summary of {tokens} tokens, over {self.max_ratio:g}x the target of "
                f"{target_tokens} ({limit}): rejected"
            )
        return SummaryText(content=text, method=SummaryMethod.LLM.value, model=self.chat.model)

    @staticmethod
    def system_prompt(target_tokens: int, depth: int, limit: int) -> str:
        """The system prompt for a leaf (``depth`` 0) or a condensed summary."""
        words = max(1, round(target_tokens * 0.75))
        if depth == 0:
            return _LEAF_SYSTEM.format(target=target_tokens, words=words, limit=limit)
        hint = _DEPTH_HINTS[min(depth, len(_DEPTH_HINTS)) - 1]
        return _CONDENSED_SYSTEM.format(target=target_tokens, words=words, limit=limit, depth_hint=hint)

    @staticmethod
    def _request(texts: Sequence[str], depth: int) -> ChatMessage:
        parts = [t.strip() for t in texts if t.strip()]
        if depth == 0:
            body = "\n\n".join(parts)
            return ChatMessage("user", f"Messages to summarise, oldest first:\n\n<messages>\n{body}\n</messages>")
        body = "\n\n".join(f'<summary n="{i}">\n{p}\n</summary>' for i, p in enumerate(parts, 1))
        return ChatMessage("user", f"Summaries to merge, oldest first (depth {depth - 1}):\n\n{body}")

    def _ask(self, messages: list[ChatMessage], limit: int) -> str:
        text = _THINK.sub("", self.chat.complete(messages, max_tokens=limit, temperature=0.0)).strip()
        if not text:
            raise BackendUnavailableError(f"llm: {self.chat.model} wrote an empty summary")
        return text


class FallbackSummarizer:
    """The LLM first; the extractive summariser when the LLM fails (the result's ``method`` says which).

    After ``max_failures`` failures in a row the LLM is not asked again by this instance (a compaction of many
    chunks does not wait for a dead endpoint's timeout each time). ``last_error`` keeps the latest failure.

    Args:
        primary: usually an :class:`LLMSummarizer`.
        fallback: usually an :class:`ExtractiveSummarizer`.
        max_failures: consecutive failures before the primary is given up.
    """

    def __init__(self, primary: Summarizer, fallback: Summarizer, *, max_failures: int = 3) -> None:
        if max_failures < 1:
            raise InputError("max_failures", "must be at least 1")
        self.primary = primary
        self.fallback = fallback
        self.max_failures = max_failures
        self.failures = 0
        self.last_error: str | None = None

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        """The primary's summary, or the fallback's when the primary raises BackendUnavailableError."""
        if self.failures < self.max_failures:
            try:
                result = self.primary.summarize(texts, target_tokens=target_tokens, depth=depth)
            except BackendUnavailableError as exc:
                self.failures += 1
                self.last_error = str(exc)
                log.warning("summary falls back to extractive: %s", exc)
            else:
                self.failures = 0
                return result
        return self.fallback.summarize(texts, target_tokens=target_tokens, depth=depth)


def make_summarizer(
    chat: ChatModel | None,
    *,
    estimator: TokenEstimator = estimate_tokens,
    embedder: Embedder | None = None,
    fallback: bool = True,
) -> Summarizer:
    """The summariser the configuration allows.

    Args:
        chat: the configured LLM, or None.
        estimator: token estimate for both summarisers.
        embedder: used by the extractive summariser for sentence centrality (BM25 salience when None).
        fallback: with an LLM, fall back to extractive when it fails (default) instead of raising.

    Returns:
        An :class:`ExtractiveSummarizer` without an LLM; with one, a :class:`FallbackSummarizer` over an
        :class:`LLMSummarizer` (or the bare :class:`LLMSummarizer` when ``fallback`` is False).
    """
    extractive = ExtractiveSummarizer(estimator=estimator, embedder=embedder)
    if chat is None:
        return extractive
    llm = LLMSummarizer(chat, estimator=estimator)
    return FallbackSummarizer(llm, extractive) if fallback else llm


__all__ = [
    "EXTRACTIVE_MARKER",
    "MAX_TARGET_RATIO",
    "ExtractiveSummarizer",
    "FallbackSummarizer",
    "LLMSummarizer",
    "Sentence",
    "format_message",
    "make_summarizer",
    "split_sentences",
]
