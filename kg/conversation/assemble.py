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
is deterministic: the same store, arguments and embedder give the same context."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kg.conversation.assemble_models import AssembledContext, ContextItem, DroppedItem
from kg.conversation.relevance import Relevance, RelevanceScores, bm25_scores
from kg.errors import InputError
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
from kg.ports import ConversationStore, SummaryStore

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
