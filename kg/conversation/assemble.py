"""Context assembly: the messages and summaries of one conversation that fit a token budget, in order.

:func:`assemble` builds the history part of a model's context (the ``history`` share of
:mod:`kg.conversation.budget`):

1. **Fresh tail.** The last ``fresh_tail`` messages of the conversation are always included, even when they
   alone exceed the budget (the result then says ``over_budget``). The tail boundary never splits a tool
   call from its result: while a tool message in the tail answers an assistant message before the boundary,
   the boundary moves back to that assistant message (see :func:`tool_partner`).
2. **Older context.** The candidates are the DAG's root summaries (:meth:`~kg.ports.SummaryStore.roots`) and
   the messages no leaf summary covers yet, outside the tail; an uncovered tool message and the uncovered
   assistant message it answers form one candidate (both or neither). Without a prompt they are taken
   newest-first; with a prompt, most relevant first (:class:`Relevance`: BM25 over the candidates' text,
   fused with the embedder's cosine when an embedder is given, by :func:`kg.recall.fusion.fuse_weighted`),
   ties newest-first. A candidate that does not fit the remaining budget is dropped and the next one tried.
3. **Order.** The chosen items are restored to chronological order: a summary sits at the position of the
   first message beneath it, a message at its ``seq``.

Tokens are counted with ``estimator`` (default four characters a token) over each item's content. Everything
is deterministic: the same store, arguments and embedder give the same context.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from kg.conversation.budget import ContextBudget
from kg.errors import BackendUnavailableError, InputError
from kg.models import Model
from kg.models.conversation import (
    MAX_MESSAGE,
    Message,
    MessageQuery,
    Role,
    Summary,
    SummaryKind,
    TokenEstimator,
    estimate_tokens,
)
from kg.ports import ConversationStore, Embedder, SummaryStore
from kg.recall.fusion import DEFAULT_FUSION, FusionSettings, fuse_weighted, normalize_bm25, normalize_vector
from kg.recall.markdown_index import search_terms

#: Added to the system prompt when the context holds summaries (our own words).
SUMMARY_NOTE = (
    "Some older parts of this conversation are shown as summaries, each marked with its id (SUM-...). "
    "A summary is compressed: it leaves things out and may blur exact wording, numbers, names, dates and "
    "file paths. Before you state such a detail from a summary as fact, call lcm_expand with the summary's "
    "id to read what it covers, down to the original messages. Use lcm_grep to find where something was "
    "said and lcm_describe to see what a summary spans. If you cannot check a detail, say that it comes "
    "from a summary."
)
#: Default number of most recent messages always included.
FRESH_TAIL = 64
#: Largest accepted budget and fresh tail.
MAX_BUDGET = 100_000_000
MAX_FRESH_TAIL = 100_000
#: Dropped candidates listed in a result (all are counted).
DROPPED_LISTED = 100
#: Messages read at once when the tail boundary looks further back for a tool call.
_READ_BACK = 64
#: BM25 parameters (Lucene's defaults, as the Markdown index).
BM25_K1 = 1.5
BM25_B = 0.75

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
    dropped: list[DroppedItem] = Field(default_factory=list)
    dropped_count: int = 0
    dropped_tokens: int = 0
    system_prompt_addition: str = ""
    notes: list[str] = Field(default_factory=list)
    allocation: ContextBudget | None = None


# ------------------------------------------------------------------------------------------ relevance


def bm25_scores(query: str, texts: Sequence[str], *, k1: float = BM25_K1, b: float = BM25_B) -> list[float]:
    """Okapi BM25 (higher is better) of each text for ``query``, with the Markdown index's terms.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``; a text without any query term scores 0.
    """
    query_set = set(search_terms(query))
    if not query_set or not texts:
        return [0.0] * len(texts)
    docs = [search_terms(text) for text in texts]
    lengths = [len(doc) for doc in docs]
    average = sum(lengths) / len(docs) or 1.0
    counts: list[dict[str, int]] = []
    df = dict.fromkeys(query_set, 0)
    for doc in docs:
        tf: dict[str, int] = {}
        for term in doc:
            if term in query_set:
                tf[term] = tf.get(term, 0) + 1
        counts.append(tf)
        for term in tf:
            df[term] += 1
    n = len(docs)
    idf = {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    scores = []
    for tf, length in zip(counts, lengths, strict=True):
        norm = k1 * (1.0 - b + b * length / average)
        scores.append(sum(idf[t] * f * (k1 + 1.0) / (f + norm) for t, f in tf.items()))
    return scores


@dataclass(frozen=True)
class RelevanceScores:
    """Relevance of each candidate (0..1), which branches ran, and why one did not."""

    scores: list[float]
    mode: Literal["bm25", "hybrid"]
    notes: list[str] = field(default_factory=list)


class Relevance:
    """Scores candidates against a prompt: BM25 over their text, fused with embedder cosine when available.

    Fusion is recall's weighted fusion with the keyword floor (:func:`kg.recall.fusion.fuse_weighted`, BM25
    normalised to the best candidate). An embedder that cannot load leaves BM25 alone, with a note.
    """

    def __init__(self, embedder: Embedder | None = None, settings: FusionSettings = DEFAULT_FUSION) -> None:
        self.embedder = embedder
        self.settings = settings

    def score(self, prompt: str, texts: Sequence[str]) -> RelevanceScores:
        """One score in 0..1 per text (0: unrelated)."""
        raw = bm25_scores(prompt, texts)
        bm25 = normalize_bm25({str(i): -s for i, s in enumerate(raw)})
        similarity: list[float] | None = None
        notes: list[str] = []
        if self.embedder is not None and texts:
            try:
                [query, *vectors] = self.embedder.embed([prompt, *texts], batch=True)
                similarity = [sum(q * v for q, v in zip(query, vector, strict=True)) for vector in vectors]
            except BackendUnavailableError as exc:
                notes.append(f"embedder unavailable, relevance by BM25 only: {exc}")
        scores = []
        for i in range(len(texts)):
            fused, _ = fuse_weighted(
                bm25[str(i)], normalize_vector(similarity[i]) if similarity else 0.0, self.settings,
                bm25_present=any(raw), vector_present=similarity is not None,
            )  # fmt: skip
            scores.append(fused)
        return RelevanceScores(scores, "hybrid" if similarity is not None else "bm25", notes)


# ------------------------------------------------------------------------------------------ the message log


class _Log:
    """The messages of one conversation read by ``seq`` as needed (seq numbers are gap-free)."""

    def __init__(self, conversations: ConversationStore, conversation_uid: str, known: Sequence[Message]) -> None:
        self.conversations = conversations
        self.uid = conversation_uid
        self.known = {m.seq: m for m in known}

    def read(self, lo: int, hi: int) -> None:
        """Make sure every message with ``lo <= seq <= hi`` is known."""
        if lo <= hi and any(s not in self.known for s in range(lo, hi + 1)):
            query = MessageQuery(conversation_uid=self.uid, from_seq=lo, to_seq=hi)
            self.known.update((m.seq, m) for m in self.conversations.messages(query))

    def at(self, seq: int) -> Message | None:
        """The message with ``seq``, read (with up to 63 before it) if not known yet."""
        if seq not in self.known:
            self.read(max(0, seq - _READ_BACK + 1), seq)
        return self.known.get(seq)


def tool_partner(log: _Log, message: Message) -> Message | None:
    """The assistant message a tool message answers, or None (also for a message that is not a tool result).

    Looking back from the tool message, not past the last user message: the nearest assistant message with
    the same ``tool_call_id``, else the nearest assistant message (a call whose id was not recorded).
    """
    if message.role is not Role.TOOL:
        return None
    nearest: Message | None = None
    for seq in range(message.seq - 1, -1, -1):
        before = log.at(seq)
        if before is None or before.role is Role.USER:
            break
        if before.role is Role.ASSISTANT:
            if message.tool_call_id is not None and before.tool_call_id == message.tool_call_id:
                return before
            nearest = nearest or before
    return nearest


def _fresh_tail(log: _Log, uncovered: Sequence[Message], size: int) -> list[Message]:
    """The last ``size`` messages, the boundary moved back so that no tool result is cut from its call."""
    if size == 0:
        return []
    start = uncovered[-1].seq + 1 if uncovered else 0
    # messages after the last uncovered one (covered ones: usually none) end the conversation
    after = log.conversations.messages(MessageQuery(conversation_uid=log.uid, from_seq=start))
    log.known.update((m.seq, m) for m in after)
    if not log.known:
        return []
    end = max(log.known)
    lo = max(0, end - size + 1)
    log.read(lo, end)
    checked = end + 1  # tool messages from here on have their partner inside the tail
    while checked > lo:
        checked -= 1
        partner = tool_partner(log, log.known[checked])
        if partner is not None and partner.seq < lo:
            log.read(partner.seq, lo - 1)
            lo = partner.seq
    return [log.known[s] for s in range(lo, end + 1)]


# ------------------------------------------------------------------------------------------ candidates


Source = Message | Summary


@dataclass
class _Unit:
    """A candidate: one summary, or one message (with its tool partner), chosen or dropped as a whole.

    Items are built only for the chosen units (a long uncompacted conversation has thousands of candidates).
    """

    sources: list[Source]
    tokens: list[int]
    position: int  # the newest source's position in the conversation
    score: float | None = None

    @property
    def total(self) -> int:
        return sum(self.tokens)

    @property
    def text(self) -> str:
        return "\n".join(source.content for source in self.sources)

    def items(self) -> list[ContextItem]:
        return [
            _item(source, tokens, score=self.score) for source, tokens in zip(self.sources, self.tokens, strict=True)
        ]

    def dropped(self) -> list[DroppedItem]:
        # model_construct: every value comes from validated records
        return [DroppedItem.model_construct(kind="summary" if isinstance(source, Summary) else "message",
                                            uid=source.uid, tokens=tokens, reason="budget")
                for source, tokens in zip(self.sources, self.tokens, strict=True)]  # fmt: skip


def _item(source: Source, tokens: int, *, in_tail: bool = False, score: float | None = None) -> ContextItem:
    """A context item of a stored message or summary (``model_construct``: the record is validated already)."""
    if isinstance(source, Summary):
        return ContextItem.model_construct(
            kind="summary", uid=source.uid, role=None, depth=source.depth, seq=None, tool_call_id=None,
            tokens=tokens, content=source.content, earliest_at=source.earliest_at, latest_at=source.latest_at,
            descendant_count=source.descendant_count, in_tail=False, score=score,
        )  # fmt: skip
    return ContextItem.model_construct(
        kind="message", uid=source.uid, role=source.role, depth=None, seq=source.seq,
        tool_call_id=source.tool_call_id, tokens=tokens, content=source.content, earliest_at=source.created_at,
        latest_at=source.created_at, descendant_count=1, in_tail=in_tail, score=score,
    )  # fmt: skip


def _tokens(estimator: TokenEstimator, text: str) -> int:
    tokens = estimator(text)
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise InputError("estimator", f"must return a whole number of tokens >= 0, got {tokens!r}")
    return tokens


def first_seqs(conversations: ConversationStore, summaries: SummaryStore, nodes: Sequence[Summary]) -> dict[str, int]:
    """The ``seq`` of the first message beneath each summary (following first children, one read per depth)."""
    current = {s.uid: s for s in nodes}
    first_message: dict[str, str] = {}
    while current:
        first_message.update({uid: s.child_uids[0] for uid, s in current.items() if s.kind is SummaryKind.LEAF})
        deeper = {uid: s.child_uids[0] for uid, s in current.items() if s.kind is not SummaryKind.LEAF}
        found = summaries.get_many(set(deeper.values())) if deeper else {}
        current = {uid: found[child] for uid, child in deeper.items() if child in found}
    messages = conversations.get_messages(set(first_message.values()))
    return {uid: messages[m].seq for uid, m in first_message.items() if m in messages}


def _candidates(log: _Log, roots: Sequence[Summary], older: Sequence[Message], positions: dict[str, int],
                estimator: TokenEstimator) -> list[_Unit]:  # fmt: skip
    """Root summaries and older uncovered messages as units, a tool result grouped with its call."""
    units = [_Unit([s], [_tokens(estimator, s.content)], positions.get(s.uid, -1)) for s in roots]
    older_seqs = {m.seq for m in older}
    group_of: dict[int, list[Message]] = {}
    for m in older:
        partner = tool_partner(log, m)
        group = group_of[partner.seq] if partner is not None and partner.seq in older_seqs else [m]
        if group[-1] is not m:
            group.append(m)
        group_of[m.seq] = group
    seen: set[int] = set()
    for m in older:
        group = group_of[m.seq]
        if id(group) not in seen:
            seen.add(id(group))
            units.append(_Unit(list(group), [_tokens(estimator, g.content) for g in group], group[-1].seq))
    return units


def _order(
    units: list[_Unit], prompt: str | None, relevance: Relevance | None
) -> tuple[list[_Unit], RelevanceScores | None]:
    """Units in the order they are tried: newest first, or by relevance to ``prompt`` (ties newest first)."""
    if prompt is None:
        return sorted(units, key=lambda u: -u.position), None
    scored = (relevance or Relevance()).score(prompt, [u.text for u in units])
    for unit, score in zip(units, scored.scores, strict=True):
        unit.score = score
    return sorted(units, key=lambda u: (-(u.score or 0.0), -u.position)), scored


def _position(item: ContextItem, positions: dict[str, int]) -> tuple[int, int, str]:
    if item.kind == "summary":
        return positions.get(item.uid, -1), 0, item.uid
    return item.seq if item.seq is not None else -1, 1, item.uid


def _check(budget_tokens: int, fresh_tail: int, prompt: str | None) -> None:
    for name, value, limit in (("budget_tokens", budget_tokens, MAX_BUDGET), ("fresh_tail", fresh_tail,
                                                                              MAX_FRESH_TAIL)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
            raise InputError(name, f"must be a whole number from 0 to {limit}, got {value!r}")
    if prompt is not None and len(prompt) > MAX_MESSAGE:
        raise InputError("prompt", f"must be at most {MAX_MESSAGE} characters, got {len(prompt)}")


def assemble(
    conversations: ConversationStore,
    summaries: SummaryStore,
    conversation_uid: str,
    *,
    budget_tokens: int,
    prompt: str | None = None,
    fresh_tail: int = FRESH_TAIL,
    estimator: TokenEstimator = estimate_tokens,
    relevance: Relevance | None = None,
) -> AssembledContext:
    """The context of one conversation within ``budget_tokens`` (see the module docstring for the rules).

    Args:
        conversations: The message log.
        summaries: The summary DAG.
        conversation_uid: The conversation (the caller checks that the agent may read it).
        budget_tokens: Tokens for the history, e.g. :attr:`~kg.conversation.budget.ContextBudget.history`.
        prompt: The current request: older context is then chosen by relevance to it, not by age.
        fresh_tail: Most recent messages always included.
        estimator: Token estimate of a text.
        relevance: How to score relevance (default BM25 only; pass ``Relevance(embedder)`` for hybrid).

    Returns:
        The items, oldest first, with totals, what was dropped and the system-prompt addition.

    Raises:
        InputError: a bad budget, fresh tail or prompt. NotFoundError: no such conversation.
    """
    _check(budget_tokens, fresh_tail, prompt)
    conversations.get(conversation_uid)
    uncovered = summaries.uncovered_messages(conversation_uid)
    roots = summaries.roots(conversation_uid)
    log = _Log(conversations, conversation_uid, uncovered)
    tail = [_item(m, _tokens(estimator, m.content), in_tail=True) for m in _fresh_tail(log, uncovered, fresh_tail)]
    tail_start = tail[0].seq if tail and tail[0].seq is not None else math.inf
    positions = first_seqs(conversations, summaries, roots)
    older = [m for m in uncovered if m.seq < tail_start]
    units, scored = _order(_candidates(log, roots, older, positions, estimator), prompt, relevance)
    tail_tokens = sum(item.tokens for item in tail)
    left = budget_tokens - tail_tokens
    chosen: list[ContextItem] = list(tail)
    dropped: list[DroppedItem] = []
    dropped_count = dropped_tokens = 0
    for unit in units:
        if unit.total <= left:
            chosen.extend(unit.items())
            left -= unit.total
            continue
        if len(dropped) < DROPPED_LISTED:
            dropped.extend(unit.dropped())
        dropped_count += len(unit.sources)
        dropped_tokens += unit.total
    chosen.sort(key=lambda item: _position(item, positions))
    notes = list(scored.notes) if scored else []
    if left < 0:
        notes.append(f"the fresh tail ({len(tail)} messages, {tail_tokens} tokens) exceeds the budget of "
                     f"{budget_tokens} tokens; it is included anyway and older context is left out")  # fmt: skip
    n_summaries = sum(item.kind == "summary" for item in chosen)
    return AssembledContext(
        conversation_uid=conversation_uid, items=chosen, total_tokens=sum(item.tokens for item in chosen),
        budget_tokens=budget_tokens, tail_tokens=tail_tokens, tail_messages=len(tail), over_budget=left < 0,
        ordering="relevance" if scored else "newest_first", relevance_mode=scored.mode if scored else None,
        summaries=n_summaries, dropped=dropped[:DROPPED_LISTED], dropped_count=dropped_count,
        dropped_tokens=dropped_tokens, system_prompt_addition=SUMMARY_NOTE if n_summaries else "",
        notes=notes,
    )  # fmt: skip


__all__ = [
    "DROPPED_LISTED",
    "FRESH_TAIL",
    "SUMMARY_NOTE",
    "AssembledContext",
    "ContextItem",
    "DroppedItem",
    "Relevance",
    "RelevanceScores",
    "assemble",
    "bm25_scores",
    "first_seqs",
    "tool_partner",
]
