"""Outbox replay: send unacknowledged events to a target in order, in batches, idempotently.

:func:`push` reads the source's pending outbox events oldest first, hands each batch to a
:class:`ReplayTarget` and acknowledges the batch in the source only after the target committed it. A
crash between the two resends the batch on the next push, which is harmless because a target applies
events idempotently (put / match by uid, deletes of what is gone are no-ops, older states never
overwrite newer ones: the embedded target compares each record's last applied outbox ``seq``).

:class:`EmbeddedTarget` replays into a second embedded store: the offline proof of the replay semantics
(and the model the TypeDB target follows). It only delegates: the SQL lives in the store's adapter
(:class:`kg.store.sqlite.replay.SqliteReplayApplier`, the :class:`kg.ports.ReplayApplier` port), and this
module passes in what the adapter may not import, the reasoning layer's case ``situation_key``. See
``docs/outbox-replay.md`` for what each aggregate carries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kg.models import OutboxEvent
from kg.ports import OutboxStore, ReplayApplier, UnknownAggregateError
from reasoning.cbr import situation_key


class ReplayTarget(Protocol):
    """Where outbox events are replayed to.

    ``apply`` commits a whole batch atomically or raises; applying an event again (a resent batch, a
    full replay) must leave the target as it was.
    """

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        """Apply ``events`` (in the given order) in one transaction."""
        ...


class OutboxSource(Protocol):
    """A store with an outbox (a workspace's ``ports``)."""

    @property
    def outbox(self) -> OutboxStore:
        """The store's outbox."""
        ...


class ReplaySink(Protocol):
    """A store that applies another store's outbox events (a workspace's ``ports``)."""

    @property
    def replay(self) -> ReplayApplier:
        """The store's replay port."""
        ...


@dataclass
class PushReport:
    """What one push did.

    Attributes:
        sent: events applied to the target (resent ones count again).
        batches: batches applied.
        acknowledged: events newly acknowledged in the source.
        pending_left: unacknowledged events left in the source afterwards.
        by_aggregate: events sent per aggregate (``fact``, ``memory``, ``belief`` ...).
    """

    sent: int = 0
    batches: int = 0
    acknowledged: int = 0
    pending_left: int = 0
    by_aggregate: dict[str, int] = field(default_factory=dict)


def push(
    source: OutboxSource,
    target: ReplayTarget,
    *,
    batch: int = 500,
    progress: Callable[[PushReport], None] | None = None,
) -> PushReport:
    """Replay the source's unacknowledged outbox events into ``target``, oldest first.

    Each batch is acknowledged only after ``target.apply`` returned (the target committed it): an error
    or a crash in between leaves the batch pending, and the next push resends it.

    Args:
        source: the store whose outbox is replayed.
        target: where the events go.
        batch: events per batch (at least 1).
        progress: called with the running report after each acknowledged batch.

    Returns:
        The counts of this push.
    """
    if batch < 1:
        raise ValueError("batch must be at least 1")
    report = PushReport()
    per_aggregate: Counter[str] = Counter()
    after = 0
    while events := source.outbox.pending(limit=batch, after_seq=after):
        target.apply(events)
        report.acknowledged += source.outbox.ack([e.seq for e in events])
        report.sent += len(events)
        report.batches += 1
        per_aggregate.update(e.aggregate for e in events)
        report.by_aggregate = dict(sorted(per_aggregate.items()))
        after = events[-1].seq
        if progress is not None:
            progress(report)
    report.pending_left = source.outbox.counts()["pending"]
    return report


# ------------------------------------------------------------------------------ the embedded target


class EmbeddedTarget:
    """Replays outbox events into a second embedded store, through its :class:`~kg.ports.ReplayApplier`.

    Each batch is one write transaction of the target store; an event that changed the target is also
    appended to the target's own outbox, so the target can replay onward, and a resend leaves no trace.
    Each record's last applied source outbox position guards against older states (see
    :class:`kg.store.sqlite.replay.SqliteReplayApplier`). An embedded target replays one source.
    """

    def __init__(self, store: ReplaySink) -> None:
        self.store = store
        self.applier: ReplayApplier = store.replay

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        """Apply ``events`` in order in one transaction (all or nothing).

        Raises:
            UnknownAggregateError: an event's aggregate has no replay (nothing is applied).
        """
        self.applier.apply_events(events, situation_key=situation_key)


__all__ = [
    "EmbeddedTarget",
    "OutboxSource",
    "PushReport",
    "ReplaySink",
    "ReplayTarget",
    "UnknownAggregateError",
    "push",
]
