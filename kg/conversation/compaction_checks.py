"""When to compact (context tokens against the budget) and what to check after: summaries per depth and the
lossless property (every message under exactly one root)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from kg.conversation.compaction_models import (
    DEFAULT_SETTINGS,
    CompactionSettings,
    CompactionTrigger,
    DepthStats,
    LosslessReport,
)
from kg.errors import InputError
from kg.memory.checkpoints import should_flush
from kg.models.conversation import (
    MessageQuery,
    Summary,
)
from kg.ports import ConversationStore, SummaryStore


def context_tokens(summaries: SummaryStore, conversation_uid: str) -> int:
    """Tokens of the conversation's uncovered messages plus its root summaries."""
    uncovered = summaries.uncovered_messages(conversation_uid)
    return sum(m.token_count for m in uncovered) + sum(s.token_count for s in summaries.roots(conversation_uid))


def needs_compaction(tokens: int, *, budget: int, settings: CompactionSettings = DEFAULT_SETTINGS) -> CompactionTrigger:
    """Whether a context of ``tokens`` needs compacting under ``budget`` (see the module docstring).

    Raises:
        InputError: ``budget`` is not a positive integer or ``tokens`` is negative.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InputError("budget", f"must be a positive integer, got {budget!r}")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise InputError("tokens", f"must be an integer >= 0, got {tokens!r}")
    threshold = int(settings.context_threshold * budget)
    flush_at = max(0, budget - settings.reserve_floor - settings.soft_threshold)
    reason: Literal["threshold", "flush"] | None = None
    if tokens > threshold:
        reason = "threshold"
    elif tokens > 0 and should_flush(tokens, context_window=budget, reserve_floor=settings.reserve_floor,
                                     soft_threshold=settings.soft_threshold):  # fmt: skip
        reason = "flush"
    return CompactionTrigger(needed=reason is not None, reason=reason, context_tokens=tokens, budget=budget,
                             threshold_tokens=threshold, flush_tokens=flush_at)  # fmt: skip


def depth_stats(created: Sequence[Summary]) -> list[DepthStats]:
    """Per-depth counts and compression of ``created`` summaries, shallowest first."""
    out = []
    for depth in sorted({s.depth for s in created}):
        at = [s for s in created if s.depth == depth]
        source = sum(s.source_token_count for s in at)
        tokens = sum(s.token_count for s in at)
        out.append(DepthStats(depth=depth, summaries=len(at), source_tokens=source, summary_tokens=tokens,
                              compression_ratio=round(tokens / source, 4) if source else 0.0))  # fmt: skip
    return out


def lossless_check(conversations: ConversationStore, summaries: SummaryStore, conversation_uid: str) -> LosslessReport:
    """Expand every root summary down to its messages and compare with the log (see :class:`LosslessReport`).

    Also checks each summary's ``descendant_count`` and its ``earliest_at``/``latest_at`` against the
    messages beneath it.
    """
    log = {m.uid: m for m in conversations.messages(MessageQuery(conversation_uid=conversation_uid))}
    uncovered = [m.uid for m in summaries.uncovered_messages(conversation_uid)]
    seen: list[str] = []
    inconsistent: list[str] = []

    def walk(summary: Summary) -> list[str]:
        if summary.depth == 0:
            found = list(summary.child_uids)
        else:
            children = summaries.get_many(summary.child_uids)
            found = [uid for child in summary.child_uids if child in children for uid in walk(children[child])]
            if len(children) != len(summary.child_uids):
                inconsistent.append(f"{summary.uid}: a child summary is missing")
        times = [log[uid].created_at for uid in found if uid in log]
        if summary.descendant_count != len(found):
            inconsistent.append(f"{summary.uid}: descendant_count {summary.descendant_count} != {len(found)}")
        if times and (min(times) != summary.earliest_at or max(times) != summary.latest_at):
            inconsistent.append(f"{summary.uid}: time span does not match its messages")
        return found

    for root in summaries.roots(conversation_uid):
        seen += walk(root)
    reachable = seen + uncovered
    counted: dict[str, int] = {}
    for uid in reachable:
        counted[uid] = counted.get(uid, 0) + 1
    return LosslessReport(messages=len(log), covered=len(seen), uncovered=len(uncovered),
                          reachable=len(set(reachable) & set(log)),
                          missing=sorted(set(log) - set(reachable)),
                          duplicated=sorted(uid for uid, n in counted.items() if n > 1),
                          inconsistent=inconsistent)  # fmt: skip
