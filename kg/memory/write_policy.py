"""Write strategies for memory candidates, and the writer that runs admission, dedup and the writes.

Strategies (:class:`WriteStrategy`):

- ``immediate``: each offer is written at once (its candidates form one batch);
- ``batched``: candidates wait in a queue, flushed when ``batch_size`` are waiting or the oldest has
  waited ``max_wait_seconds`` (checked on every offer and by :meth:`WriteQueue.tick`, against the clock:
  nothing sleeps), and on close;
- ``deferred``: candidates wait until an explicit :meth:`WriteQueue.flush` or close (end of a session,
  before a compaction).

:class:`WriteQueue` holds the waiting items and hands them to a *sink* in batches of at most
``batch_size``. The sink yields one result per item, in order, once that item is durably handled; the
queue drops an item only when its result arrives. If the sink raises a :class:`~kg.errors.MabosError`
(a busy or unreachable store), the item it was on and everything after it stay queued, the report says
why, and the next flush retries them: every item is handled exactly once, none is lost.

:class:`MemoryWriter` is the pipeline for one agent: :func:`~kg.memory.admission.evaluate` (when
admission control is on), then the queue, then per batch :func:`~kg.memory.dedup.batch_duplicates`, a
:class:`~kg.memory.dedup.Deduplicator` decision against the agent's memories (including the ones written
earlier in the batch) and :func:`~kg.memory.dedup_apply.apply_decision`. Every offered candidate ends with
exactly one :class:`CandidateOutcome` saying what happened and why.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Generic, Literal, TypeVar

from pydantic import Field

from kg.clock import Clock
from kg.errors import InputError, MabosError
from kg.memory.admission import AdmissionPreset, AdmissionResult, MemoryCandidate, Neighbours, evaluate, get_preset
from kg.memory.dedup import DedupDecision, Deduplicator, batch_duplicates
from kg.memory.dedup_apply import AppliedDecision, apply_decision
from kg.memory.service import MemoryService
from kg.models import Model
from kg.models.base import new_list
from kg.ports import ChatModel, Embedder

T = TypeVar("T")
R = TypeVar("R")


class WriteStrategy(StrEnum):
    """When queued candidates are written."""

    IMMEDIATE = "immediate"
    BATCHED = "batched"
    DEFERRED = "deferred"


class WritePolicy(Model):
    """A strategy and its batch limits (``batch_size`` items, ``max_wait_seconds`` for the oldest)."""

    strategy: WriteStrategy = WriteStrategy.IMMEDIATE
    batch_size: int = Field(default=20, ge=1, le=10_000)
    max_wait_seconds: float = Field(default=60.0, gt=0)


FlushTrigger = Literal["immediate", "size", "time", "manual", "close"]


@dataclass
class FlushReport(Generic[R]):
    """What one flush handled (``results`` in order), what is still queued, and the error that stopped it."""

    trigger: FlushTrigger | None = None
    results: list[R] = field(default_factory=list)
    remaining: int = 0
    error: str | None = None


@dataclass(frozen=True)
class _Queued(Generic[T]):
    item: T
    queued_at: datetime


class WriteQueue(Generic[T, R]):
    """Queued items flushed to a sink by the policy (see the module docstring for the guarantees).

    Args:
        sink: called with a batch; yields one result per item, in order, after each is handled.
        policy: the strategy and limits.
        clock: the time source for ``max_wait_seconds``.
    """

    def __init__(self, sink: Callable[[Sequence[T]], Iterable[R]], *, policy: WritePolicy, clock: Clock) -> None:
        self.sink = sink
        self.policy = policy
        self.clock = clock
        self.closed = False
        self._queue: deque[_Queued[T]] = deque()

    def __len__(self) -> int:
        return len(self._queue)

    def pending(self) -> list[T]:
        """The items still waiting, oldest first."""
        return [q.item for q in self._queue]

    def submit(self, items: Sequence[T]) -> FlushReport[R]:
        """Queue ``items``; flush when the policy says so (the report is empty otherwise)."""
        if self.closed:
            raise InputError("queue", "is closed: no more items can be submitted")
        now = self.clock.now()
        self._queue.extend(_Queued(item, now) for item in items)
        if self.policy.strategy is WriteStrategy.IMMEDIATE:
            return self.flush(trigger="immediate")
        return self.tick()

    def due(self) -> FlushTrigger | None:
        """Why a batched queue should flush now (``size`` or ``time``), or None."""
        if self.policy.strategy is not WriteStrategy.BATCHED or not self._queue:
            return None
        if len(self._queue) >= self.policy.batch_size:
            return "size"
        waited = self.clock.now() - self._queue[0].queued_at
        return "time" if waited >= timedelta(seconds=self.policy.max_wait_seconds) else None

    def tick(self) -> FlushReport[R]:
        """Flush if due (call it from a loop or after each turn); an empty report otherwise."""
        trigger = self.due()
        return self.flush(trigger=trigger) if trigger else FlushReport(remaining=len(self._queue))

    def flush(self, *, trigger: FlushTrigger = "manual") -> FlushReport[R]:
        """Hand every queued item to the sink in batches of ``batch_size``; stop at the first error."""
        report: FlushReport[R] = FlushReport(trigger=trigger)
        while self._queue and report.error is None:
            batch = [q.item for q in list(self._queue)[: self.policy.batch_size]]
            report.error = self._drain(batch, report.results)
        report.remaining = len(self._queue)
        return report

    def _drain(self, batch: list[T], results: list[R]) -> str | None:
        handled = 0
        try:
            for result in self.sink(batch):
                if handled == len(batch):
                    raise RuntimeError("write sink yielded more results than items")  # a sink bug, not data
                self._queue.popleft()
                results.append(result)
                handled += 1
        except MabosError as exc:
            return f"{type(exc).__name__}: {exc} ({len(batch) - handled} of the batch stay queued)"
        if handled != len(batch):
            raise RuntimeError(f"write sink yielded {handled} results for {len(batch)} items")
        return None

    def close(self) -> FlushReport[R]:
        """Refuse further items and flush the rest (what fails stays in :meth:`pending`; flush again)."""
        self.closed = True
        return self.flush(trigger="close")


# ------------------------------------------------------------------------------------------ the pipeline

OutcomeStage = Literal["admission", "batch", "dedup"]


class CandidateOutcome(Model):
    """The one outcome of an offered candidate.

    ``stage`` admission (rejected there), batch (a duplicate of candidate ``duplicate_of`` of its batch)
    or dedup (decided and applied: ``decision`` and ``applied``). ``ticket`` numbers offers in order.
    """

    ticket: int
    key: str | None = None
    stage: OutcomeStage
    action: str
    reason: str
    admission: AdmissionResult | None = None
    decision: DedupDecision | None = None
    applied: AppliedDecision | None = None
    duplicate_of: int | None = None


class OfferReport(Model):
    """What an offer did now: the admission results, the outcomes decided so far, and the queue."""

    admission: list[AdmissionResult] = Field(default_factory=new_list)
    outcomes: list[CandidateOutcome] = Field(default_factory=new_list)
    queued: int = 0
    flushed: FlushTrigger | None = None
    error: str | None = None


@dataclass(frozen=True)
class _Ticketed:
    ticket: int
    candidate: MemoryCandidate
    admission: AdmissionResult | None


class MemoryWriter:
    """Admission, dedup and writes of one agent's memory candidates under a write policy.

    Args:
        memory: the memory service that writes.
        agent_id: whose memories.
        embedder: for cosine novelty and dedup (``ws.embedder``); None uses token Jaccard.
        chat: the optional LLM for dedup decisions.
        admission: a preset name or preset to turn admission control on; None (default) admits everything.
        policy: the write strategy (default immediate).

    Example:
        >>> writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder, admission="balanced")  # doctest: +SKIP
        >>> report = writer.offer([MemoryCandidate(content="Prefers tea", type="preference",
        ...                                        evidence=["I prefer tea to coffee."])])  # doctest: +SKIP
        >>> writer.close()  # doctest: +SKIP
    """

    def __init__(self, memory: MemoryService, agent_id: str, *, embedder: Embedder | None,
                 chat: ChatModel | None = None, admission: str | AdmissionPreset | None = None,
                 policy: WritePolicy | None = None) -> None:  # fmt: skip
        memory.policy.require_agent(agent_id)
        self.memory = memory
        self.agent_id = agent_id
        self.embedder = embedder
        self.preset = get_preset(admission) if admission is not None else None
        self.dedup = Deduplicator(embedder, chat)
        self.queue: WriteQueue[_Ticketed, CandidateOutcome] = WriteQueue(
            self._write, policy=policy or WritePolicy(), clock=memory.clock
        )
        self._tickets = 0

    def offer(self, candidates: Sequence[MemoryCandidate]) -> OfferReport:
        """Run admission on ``candidates``, queue the admitted ones (and those passed to dedup) and flush per
        the policy. Rejected candidates get their outcome at once; queued ones when they are flushed.

        Raises:
            ScopeError: a candidate names a scope the agent may not write (checked first: nothing is queued).
        """
        for candidate in candidates:
            self.memory.policy.check_write(self.agent_id, candidate.scope)
        results = self._admit(candidates)
        report = OfferReport(admission=[r for r in results if r is not None])
        queued = []
        for candidate, result in zip(candidates, results, strict=True):
            ticket = self._tickets
            self._tickets += 1
            if result is not None and result.decision == "reject":
                rejected = CandidateOutcome(ticket=ticket, key=candidate.key, stage="admission", action="reject",
                                            reason=result.reason, admission=result)  # fmt: skip
                report.outcomes.append(rejected)
            else:
                queued.append(_Ticketed(ticket, candidate, result))
        return self._merge(report, self.queue.submit(queued))

    def tick(self) -> OfferReport:
        """Flush a batched queue whose size or time limit is reached."""
        return self._merge(OfferReport(), self.queue.tick())

    def flush(self) -> OfferReport:
        """Write everything queued now."""
        return self._merge(OfferReport(), self.queue.flush())

    def close(self) -> OfferReport:
        """Write everything queued and refuse further offers."""
        return self._merge(OfferReport(), self.queue.close())

    def _merge(self, report: OfferReport, flushed: FlushReport[CandidateOutcome]) -> OfferReport:
        report.outcomes += flushed.results
        report.flushed, report.error, report.queued = flushed.trigger, flushed.error, flushed.remaining
        return report

    def _admit(self, candidates: Sequence[MemoryCandidate]) -> list[AdmissionResult | None]:
        if self.preset is None or not candidates:
            return [None] * len(candidates)
        existing = self.memory.list_items(self.agent_id, include_archived=False)
        return list(evaluate(candidates, existing=existing, now=self.memory.clock.now(), preset=self.preset,
                             embedder=self.embedder))  # fmt: skip

    def _write(self, batch: Sequence[_Ticketed]) -> Iterator[CandidateOutcome]:
        """The queue's sink: batch dedup, then decide and apply each kept candidate, yielding as it goes."""
        duplicates = {d.index: d for d in batch_duplicates([t.candidate for t in batch], self.embedder)}
        existing = Neighbours(self.memory.list_items(self.agent_id, include_archived=False), self.embedder)
        for index, queued in enumerate(batch):
            if index in duplicates:
                dup = duplicates[index]
                yield CandidateOutcome(ticket=queued.ticket, key=queued.candidate.key, stage="batch",
                                       action="duplicate", reason=dup.reason, admission=queued.admission,
                                       duplicate_of=batch[dup.duplicate_of].ticket)  # fmt: skip
                continue
            decision = self.dedup.decide(queued.candidate, existing)
            applied = apply_decision(self.memory, self.agent_id, queued.candidate, decision)
            existing.remove(applied.archived)
            existing.add(list(self.memory.store.memory.get_many(applied.written).values()))
            yield CandidateOutcome(ticket=queued.ticket, key=queued.candidate.key, stage="dedup",
                                   action=decision.action, reason=decision.reason, admission=queued.admission,
                                   decision=decision, applied=applied)  # fmt: skip


__all__ = [
    "CandidateOutcome",
    "FlushReport",
    "MemoryWriter",
    "OfferReport",
    "WritePolicy",
    "WriteQueue",
    "WriteStrategy",
]
