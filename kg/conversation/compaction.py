"""Compaction: when to summarise (the trigger) and how (the summary DAG builder).

**Trigger** (:func:`needs_compaction`): the conversation's context cost is the tokens of its uncovered
messages plus those of its root summaries (what an assembled context holds at most). Compaction is due
when that cost is above ``context_threshold`` (0.75) x the budget, or when the R3 flush rule
(:func:`kg.memory.checkpoints.should_flush`: cost >= budget - reserve floor 8,000 - soft threshold 4,000)
says a non-empty context is full enough to checkpoint. For large budgets the threshold fires first (96,000 of
128,000), for small ones the flush rule does (20,000 of 32,000).

**Builder** (:func:`compact`), one sweep:

1. Plan. Nothing eligible (every uncovered message in the fresh tail, no run of roots to condense): return
   a report that says so; nothing is written, not even a checkpoint.
2. Write the R3 checkpoint first (through the ``checkpoint`` callable), before any summary.
3. Leaf pass: uncovered messages before the fresh tail (the last 64 messages), cut into chunks of
   consecutive messages of at most ``leaf_chunk_tokens`` (a message larger than that is a chunk alone).
   A chunk never splits a tool call from its result (messages sharing a ``tool_call_id``): a pair that
   straddles the fresh tail stays whole in the tail. Each chunk becomes a leaf summary (target 2,400).
4. Condensed passes, depth 0 upwards: runs of consecutive roots of one depth (by message order, broken by
   anything else in between) are grouped oldest first. A group takes at least the minimum fan-out (8
   leaves for depth 1, 4 summaries for depth 2+; 2 when forced) and grows while its source stays within
   ``leaf_chunk_tokens``; a shorter remainder waits. Each group becomes a summary one depth up (target
   2,000), and the new summaries take part in the next depth's pass.
5. Forced: with ``force``, or when a ``budget`` is given and the context is still over the trigger after
   the normal sweep, the condensed passes run again with the hard minimum fan-out of 2.

**Acceptance**: a summary must be at least 35% smaller than its sources (``summary <= 0.65 x source``
tokens) and at most 3x its target. A rejected summary is never stored. It is retried once, with the
``fallback`` summariser (the service passes the extractive one when the primary is an LLM) or else the
same summariser, at a smaller target: ``min(target, source x (1 - min_compression) / 2)``. When the
retry is rejected too, the sources stay as they were (uncovered messages or roots) and the report lists
the rejection; later chunks and groups still go ahead. A summariser refusing a span
(:class:`~kg.errors.InputError`, e.g. no sentence in it) is a rejection too, and so is the primary failing
with :class:`~kg.errors.BackendUnavailableError` when a fallback exists (without one the error propagates;
what was stored before stays valid).

Nothing is lost: messages are never changed, a summary only adds edges to what it covers, so every
message is either beneath a root summary or still uncovered (:func:`lossless_check` verifies it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from kg.conversation.compaction_checks import context_tokens, depth_stats, lossless_check, needs_compaction
from kg.conversation.compaction_models import (
    DEFAULT_SETTINGS,
    CheckpointWriter,
    CompactionReport,
    CompactionSettings,
    CompactionTrigger,
    DepthStats,
    LosslessReport,
    Rejection,
    Trigger,
)
from kg.conversation.summarize import format_message
from kg.errors import BackendUnavailableError, InputError
from kg.ids import new_id
from kg.models import format_ts
from kg.models.conversation import (
    Conversation,
    Message,
    Summary,
    SummaryKind,
    SummaryMethod,
    TokenEstimator,
    estimate_tokens,
)
from kg.ports import ConversationStore, Summarizer, SummaryStore, SummaryText


def leaf_chunks(uncovered: Sequence[Message], *, fresh_tail: int, chunk_tokens: int) -> list[list[Message]]:
    """Chunks of ``uncovered`` (seq order) to summarise: before the fresh tail, whole tool pairs, <= chunk size.

    The fresh tail is the last ``fresh_tail`` messages of the conversation (the newest message is always
    uncovered). A chunk is seq-contiguous, at most ``chunk_tokens`` unless one unsplittable unit is larger.
    """
    if not uncovered:
        return []
    tail_start = uncovered[-1].seq - fresh_tail + 1
    last: dict[str, int] = {}
    for i, message in enumerate(uncovered):
        if message.tool_call_id:
            last[message.tool_call_id] = i
    units: list[list[Message]] = []
    current: list[Message] = []
    reach = -1
    for i, message in enumerate(uncovered):
        if message.seq >= tail_start:
            break
        if current and current[-1].seq + 1 != message.seq:  # a gap: what lies between is covered already
            units.append(current)
            current = []
        current.append(message)
        reach = max(reach, last.get(message.tool_call_id or "", i))
        if reach <= i:  # no tool pair open across this point
            units.append(current)
            current = []
    # an unfinished unit (its pair reaches into the tail) waits with the tail
    chunks: list[list[Message]] = []
    chunk: list[Message] = []
    tokens = 0
    for unit in units:
        size = sum(m.token_count for m in unit)
        contiguous = not chunk or chunk[-1].seq + 1 == unit[0].seq
        if chunk and (tokens + size > chunk_tokens or not contiguous):
            chunks.append(chunk)
            chunk, tokens = [], 0
        chunk.extend(unit)
        tokens += size
    if chunk:
        chunks.append(chunk)
    return chunks


@dataclass
class _Builder:
    """One compaction of one conversation (state shared by the passes)."""

    messages: ConversationStore
    store: SummaryStore
    conversation: Conversation
    summarizer: Summarizer
    fallback: Summarizer | None
    settings: CompactionSettings
    now: datetime
    estimate: TokenEstimator
    created: list[Summary] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    retried: int = 0
    _spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    # -- one summary, with acceptance and one retry

    def _accept(self, text: SummaryText, source: int, target: int) -> str | None:
        tokens = self.estimate(text.content)
        if not text.content.strip():
            return "empty summary"
        if tokens > source * (1 - self.settings.min_compression):
            return f"{tokens} tokens is not {self.settings.min_compression:.0%} smaller than its {source} source tokens"
        if tokens > self.settings.max_target_ratio * target:
            return f"{tokens} tokens is over {self.settings.max_target_ratio:g}x the target of {target}"
        return None

    def _attempt(self, summarizer: Summarizer, texts: list[str], source: int, depth: int,
                 target: int) -> tuple[SummaryText | None, str | None]:  # fmt: skip
        """A summary and why it is rejected (None: accepted)."""
        try:
            text = summarizer.summarize(texts, target_tokens=target, depth=depth)
        except InputError as exc:  # e.g. "no sentence in the texts": this span cannot be summarised
            return None, f"summariser refused: {exc}"
        return text, self._accept(text, source, self.settings.target(depth))

    def _write(self, texts: list[str], source: int, depth: int, children: list[str]) -> SummaryText | None:
        target = self.settings.target(depth)
        try:
            first, reason = self._attempt(self.summarizer, texts, source, depth, target)
        except BackendUnavailableError as exc:
            if self.fallback is None:
                raise
            first, reason = None, f"summariser unavailable: {exc}"
        if reason is None:
            return first
        smaller = max(1, min(target, int(source * (1 - self.settings.min_compression) / 2)))
        second, second_reason = self._attempt(self.fallback or self.summarizer, texts, source, depth, smaller)
        if second_reason is None:
            self.retried += 1
            return second
        shown = first or second
        self.rejected.append(Rejection(depth=depth, children=len(children), first_child=children[0],
                                       last_child=children[-1], source_tokens=source,
                                       summary_tokens=self.estimate(shown.content) if shown else 0,
                                       reason=f"{reason}; retry: {second_reason}"))  # fmt: skip
        return None

    def _store(self, text: SummaryText, *, depth: int, source: int, children: list[str], earliest: datetime,
               latest: datetime, descendants: int) -> Summary:  # fmt: skip
        conversation = self.conversation
        summary = Summary(
            uid=new_id("summary"), agent_id=conversation.agent_id, scope=conversation.scope, created_at=self.now,
            conversation_uid=conversation.uid, kind=SummaryKind.LEAF if depth == 0 else SummaryKind.CONDENSED,
            depth=depth, content=text.content, token_count=self.estimate(text.content), source_token_count=source,
            method=SummaryMethod(text.method), model=text.model if text.method == SummaryMethod.LLM else None,
            child_uids=children, earliest_at=earliest, latest_at=latest, descendant_count=descendants,
        )  # fmt: skip
        stored = self.store.add(summary)
        self.created.append(stored)
        return stored

    # -- passes

    def leaf(self, chunk: list[Message]) -> None:
        """Summarise one chunk of messages into a leaf."""
        texts = [format_message(m.name or m.role.value, m.content, m.created_at) for m in chunk]
        source = sum(m.token_count for m in chunk)
        children = [m.uid for m in chunk]
        text = self._write(texts, source, 0, children)
        if text is not None:
            stored = self._store(text, depth=0, source=source, children=children,
                                 earliest=min(m.created_at for m in chunk), latest=max(m.created_at for m in chunk),
                                 descendants=len(chunk))  # fmt: skip
            self._spans[stored.uid] = (chunk[0].seq, chunk[-1].seq)

    def condense(self, *, forced: bool) -> None:
        """Condensed passes from depth 0 upwards until no depth has a group to condense."""
        depth = 0
        while depth < 64:
            roots = self.ordered_roots()
            if not any(s.depth >= depth for s in roots):
                return
            for group in self.groups(roots, depth, forced=forced):
                self.condense_group(group)
            depth += 1

    def groups(self, roots: list[Summary], depth: int, *, forced: bool) -> list[list[Summary]]:
        """Groups of consecutive ``depth`` roots to condense (see the module docstring)."""
        fanout = self.settings.fanout(depth + 1, forced=forced)
        runs: list[list[Summary]] = []
        current: list[Summary] = []
        previous_end = -2
        for root in roots:
            start, end = self.span(root)
            if root.depth == depth and current and start == previous_end + 1:
                current.append(root)
            else:  # anything else (another depth, uncovered messages between) ends the run
                if current:
                    runs.append(current)
                current = [root] if root.depth == depth else []
            previous_end = end
        if current:
            runs.append(current)
        out: list[list[Summary]] = []
        for run in runs:
            i = 0
            while len(run) - i >= fanout:
                group = run[i : i + fanout]
                tokens = sum(s.token_count for s in group)
                j = i + fanout
                while j < len(run) and tokens + run[j].token_count <= self.settings.leaf_chunk_tokens:
                    tokens += run[j].token_count
                    j += 1
                out.append(run[i:j])
                i = j
        return out

    def condense_group(self, group: list[Summary]) -> None:
        """Summarise one group of same-depth summaries one depth up."""
        depth = group[0].depth + 1
        texts = [f"[{format_ts(s.earliest_at)} .. {format_ts(s.latest_at)}] {s.content}" for s in group]
        source = sum(s.token_count for s in group)
        children = [s.uid for s in group]
        text = self._write(texts, source, depth, children)
        if text is not None:
            stored = self._store(text, depth=depth, source=source, children=children,
                                 earliest=min(s.earliest_at for s in group), latest=max(s.latest_at for s in group),
                                 descendants=sum(s.descendant_count for s in group))  # fmt: skip
            self._spans[stored.uid] = (self.span(group[0])[0], self.span(group[-1])[1])

    def ordered_roots(self) -> list[Summary]:
        """Root summaries in message order."""
        return sorted(self.store.roots(self.conversation.uid), key=self.span)

    def span(self, summary: Summary) -> tuple[int, int]:
        """(first, last) message seq beneath a summary (cached; walks the first and last child down)."""
        if summary.uid not in self._spans:
            self._spans[summary.uid] = (self._edge_seq(summary, 0), self._edge_seq(summary, -1))
        return self._spans[summary.uid]

    def _edge_seq(self, summary: Summary, index: int) -> int:
        node = summary
        while node.depth > 0:
            node = self.store.get_many([node.child_uids[index]])[node.child_uids[index]]
        return self.messages.get_messages([node.child_uids[index]])[node.child_uids[index]].seq


def compact(conversations: ConversationStore, summaries: SummaryStore, summarizer: Summarizer,
            conversation_uid: str, *, settings: CompactionSettings = DEFAULT_SETTINGS, now: datetime,
            estimator: TokenEstimator = estimate_tokens, checkpoint: CheckpointWriter | None = None,
            fallback: Summarizer | None = None, force: bool = False, budget: int | None = None,
            trigger: Trigger = "manual") -> CompactionReport:  # fmt: skip
    """Run one compaction sweep of a conversation (see the module docstring) and report it.

    Args:
        conversations: The message log.
        summaries: The summary DAG (written through ``add`` only).
        summarizer: Writes the summaries (LLM or extractive).
        conversation_uid: The conversation to compact.
        settings: Sizes, fan-outs and acceptance rules.
        now: Creation time of the new summaries.
        estimator: Token estimate of summary texts (messages carry their own counts).
        checkpoint: Writes the R3 checkpoint before any summary; None writes none.
        fallback: The retry summariser (default: ``summarizer`` again).
        force: Condense with the hard minimum fan-out right away.
        budget: When given and the context is still over the trigger after the normal sweep, a forced
            condensed pass follows.
        trigger: Why this compaction runs (recorded in the report).
    """
    conversation = conversations.get(conversation_uid)
    builder = _Builder(conversations, summaries, conversation, summarizer, fallback=fallback, settings=settings,
                       now=now, estimate=estimator)  # fmt: skip
    uncovered = summaries.uncovered_messages(conversation_uid)
    roots = builder.ordered_roots()
    before = sum(m.token_count for m in uncovered) + sum(s.token_count for s in roots)
    chunks = leaf_chunks(uncovered, fresh_tail=settings.fresh_tail, chunk_tokens=settings.leaf_chunk_tokens)
    over_budget = budget is not None and needs_compaction(before, budget=budget, settings=settings).needed
    can_condense = any(builder.groups(roots, d, forced=force or over_budget) for d in {s.depth for s in roots})
    if not chunks and not can_condense:
        return CompactionReport.unchanged(
            conversation_uid, trigger, tokens=before, uncovered=len(uncovered), roots=len(roots),
            note="nothing eligible: every uncovered message is in the fresh tail and no run of summaries reaches "
                 "the minimum fan-out",
        )  # fmt: skip
    written = checkpoint(_checkpoint_context(conversation, uncovered, roots, before, trigger)) if checkpoint else None
    for chunk in chunks:
        builder.leaf(chunk)
    builder.condense(forced=force)
    after = context_tokens(summaries, conversation_uid)
    forced = force
    if not force and budget is not None and needs_compaction(after, budget=budget, settings=settings).needed:
        builder.condense(forced=True)
        after = context_tokens(summaries, conversation_uid)
        forced = True
    return CompactionReport(conversation_uid=conversation_uid, trigger=trigger, compacted=bool(builder.created),
                            forced=forced, checkpoint=written, context_tokens_before=before,
                            context_tokens_after=after,
                            uncovered_messages=len(summaries.uncovered_messages(conversation_uid)),
                            roots=len(summaries.roots(conversation_uid)), created=[s.uid for s in builder.created],
                            depths=depth_stats(builder.created), rejected=builder.rejected,
                            retried=builder.retried)  # fmt: skip


def _checkpoint_context(conversation: Conversation, uncovered: Sequence[Message], roots: Sequence[Summary],
                        tokens: int, trigger: str) -> str:  # fmt: skip
    lines = [
        f"Compacting conversation {conversation.session_key!r} ({conversation.uid}) of agent "
        f"{conversation.agent_id}: {len(uncovered)} messages not yet summarised and {len(roots)} root summaries, "
        f"{tokens} tokens of context (trigger: {trigger}).",
    ]
    last_user = next((m for m in reversed(uncovered) if m.role.value == "user"), None)
    if last_user is not None:
        text = " ".join(last_user.content.split())
        lines.append(f"Latest user message ({format_ts(last_user.created_at)}): {text[:500]}")
    return "\n".join(lines)


__all__ = [
    "DEFAULT_SETTINGS",
    "CheckpointWriter",
    "CompactionReport",
    "CompactionSettings",
    "CompactionTrigger",
    "DepthStats",
    "LosslessReport",
    "Rejection",
    "Trigger",
    "compact",
    "context_tokens",
    "depth_stats",
    "leaf_chunks",
    "lossless_check",
    "needs_compaction",
]
