"""Write strategies (immediate / batched / deferred), flush by size, time and close, no loss on errors, and the
MemoryWriter pipeline (admission -> queue -> batch dedup -> dedup decision -> write) on a real workspace with the
real embedding model (loaded once for the module). Time only moves through the FixedClock: nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.clock import FixedClock
from kg.errors import InputError, ScopeError, StoreBusyError
from kg.memory.admission import MemoryCandidate
from kg.memory.write_policy import MemoryWriter, WritePolicy, WriteQueue, WriteStrategy
from kg.models import MemoryType
from tests.budget import examples
from tests.conftest import T0

CHAT = [
    "We agreed that production deploys happen on Fridays after the review.",
    "My dog is named Rex and he is a beagle.",
    "I always prefer window seats on long flights.",
]


class ListSink:
    """A sink writing into a list, failing (like a busy store) on the items named in ``fail_on`` once each."""

    def __init__(self, fail_on: Sequence[int] = ()) -> None:
        self.written: list[int] = []
        self.batches: list[list[int]] = []
        self.fail_on = set(fail_on)

    def __call__(self, batch: Sequence[int]) -> Iterator[int]:
        self.batches.append(list(batch))
        for item in batch:
            if item in self.fail_on:
                self.fail_on.discard(item)
                raise StoreBusyError("store: locked")
            self.written.append(item)
            yield item


def queue(strategy: str, sink: ListSink, clock: FixedClock, **limits) -> WriteQueue[int, int]:
    return WriteQueue(sink, policy=WritePolicy(strategy=strategy, **limits), clock=clock)


# ------------------------------------------------------------------------------------------ the queue


def test_immediate_writes_each_submission_at_once(clock):
    sink = ListSink()
    q = queue("immediate", sink, clock)
    report = q.submit([1, 2])
    assert (report.trigger, report.results, report.remaining, len(q)) == ("immediate", [1, 2], 0, 0)
    assert sink.batches == [[1, 2]]


def test_batched_flushes_when_the_batch_is_full(clock):
    sink = ListSink()
    q = queue("batched", sink, clock, batch_size=3)
    assert q.submit([1]).trigger is None and q.submit([2]).trigger is None and sink.written == []
    report = q.submit([3, 4])
    assert report.trigger == "size" and sink.batches == [[1, 2, 3], [4]] and len(q) == 0


def test_batched_flushes_when_the_oldest_waited_long_enough(clock):
    sink = ListSink()
    q = queue("batched", sink, clock, batch_size=100, max_wait_seconds=30)
    q.submit([1])
    clock.advance(timedelta(seconds=20))
    q.submit([2])
    assert q.tick().trigger is None and q.due() is None
    clock.advance(timedelta(seconds=10))  # the oldest has now waited 30 s
    assert q.due() == "time"
    report = q.tick()
    assert (report.trigger, report.results) == ("time", [1, 2])


def test_deferred_waits_for_an_explicit_flush_or_close(clock):
    sink = ListSink()
    q = queue("deferred", sink, clock, batch_size=2, max_wait_seconds=1)
    q.submit([1, 2, 3])
    clock.advance(timedelta(days=1))
    assert q.tick().trigger is None and q.due() is None and sink.written == []
    assert q.flush().results == [1, 2, 3]
    q.submit([4])
    report = q.close()
    assert (report.trigger, report.results) == ("close", [4])


def test_a_closed_queue_refuses_new_items(clock):
    q = queue("batched", ListSink(), clock)
    q.close()
    with pytest.raises(InputError) as err:
        q.submit([1])
    assert err.value.field == "queue"


def test_a_failed_flush_keeps_the_rest_queued_and_the_next_one_writes_it_once(clock):
    sink = ListSink(fail_on=[3])
    q = queue("deferred", sink, clock, batch_size=2)
    q.submit([1, 2, 3, 4, 5])
    report = q.flush()
    assert report.results == [1, 2] and report.remaining == 3 and q.pending() == [3, 4, 5]
    assert report.error == "StoreBusyError: store: locked (2 of the batch stay queued)"
    report = q.close()  # close still flushes (and would leave failures queued)
    assert report.results == [3, 4, 5] and report.error is None
    assert sink.written == [1, 2, 3, 4, 5]


def test_a_sink_that_loses_items_is_a_bug_and_the_items_stay_queued(clock):
    q = WriteQueue(lambda batch: iter(batch[:1]), policy=WritePolicy(strategy="deferred"), clock=clock)
    q.submit([1, 2])
    with pytest.raises(RuntimeError, match="1 results for 2 items"):
        q.flush()
    assert q.pending() == [2]


def test_policy_limits_are_validated():
    with pytest.raises(ValueError, match="batch_size"):
        WritePolicy(batch_size=0)
    with pytest.raises(ValueError, match="strategy"):
        WritePolicy(strategy="eventually")


@settings(max_examples=examples(80), deadline=None)
@given(
    sizes=st.lists(st.integers(0, 6), max_size=8),
    fail_on=st.sets(st.integers(0, 40), max_size=6),
    strategy=st.sampled_from(list(WriteStrategy)),
    batch_size=st.integers(1, 5),
    steps=st.lists(st.integers(0, 90), max_size=8),
)
def test_every_item_is_written_exactly_once_in_order(sizes, fail_on, strategy, batch_size, steps):
    clock = FixedClock(T0)
    sink = ListSink(fail_on=fail_on)
    q = queue(strategy, sink, clock, batch_size=batch_size, max_wait_seconds=60)
    counter = 0
    for size, step in zip(sizes, steps + [0] * len(sizes), strict=False):
        q.submit(list(range(counter, counter + size)))
        counter += size
        clock.advance(timedelta(seconds=step))
        q.tick()
    q.close()
    while q.pending():  # each item fails at most once: retrying drains the queue
        q.flush()
    assert sink.written == list(range(counter))


# ------------------------------------------------------------------------------------------ the pipeline


@pytest.fixture
def ws(embedded_ws):
    """Agents ``a`` and ``b`` on the real embedder."""
    embedded_ws.agents.add("b")
    return embedded_ws


def cand(content: str, key: str, **fields) -> MemoryCandidate:
    return MemoryCandidate(content=content, key=key, evidence=CHAT, **fields)


def test_the_writer_runs_admission_batch_dedup_and_dedup_with_one_outcome_each(ws):
    [rex] = [ws.memory.store_item("a", "The user's dog is named Rex", type="fact").item]
    writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder, admission="balanced",
                          policy=WritePolicy(strategy="batched", batch_size=10, max_wait_seconds=300))  # fmt: skip
    first = writer.offer([
        cand("Production deploys happen on Fridays after the review", "m1", type=MemoryType.DECISION),
        cand("production deploys happen on fridays after the review", "m1b", type=MemoryType.DECISION),
        cand("Rex, the user's dog, is a beagle", "m2", type=MemoryType.FACT),
        cand("The user owns a red sailing boat in Hamburg", "x", type=MemoryType.FACT),
    ])  # fmt: skip
    # admission now: the made-up one is rejected at once, the rest wait in the batch
    assert [(o.key, o.stage, o.action) for o in first.outcomes] == [("x", "admission", "reject")]
    assert [r.decision for r in first.admission] == ["admit", "admit", "dedup", "reject"]
    assert first.queued == 3 and first.flushed is None and len(ws.memory.list_items("a")) == 1
    ws.clock.advance(timedelta(minutes=5))
    flushed = writer.tick()
    assert flushed.flushed == "time"
    outcomes = {o.key: o for o in flushed.outcomes}
    assert (outcomes["m1"].stage, outcomes["m1"].action) == ("dedup", "create")
    assert (outcomes["m1b"].stage, outcomes["m1b"].action) == ("batch", "duplicate")
    assert outcomes["m1b"].duplicate_of == outcomes["m1"].ticket and "same batch" in outcomes["m1b"].reason
    assert (outcomes["m2"].action, outcomes["m2"].decision.target_uid) == ("contextualize", rex.uid)
    assert sorted(o.ticket for o in first.outcomes + flushed.outcomes) == [0, 1, 2, 3]  # exactly one each
    contents = sorted(i.content for i in ws.memory.list_items("a"))
    assert contents == sorted(["The user's dog is named Rex", "Production deploys happen on Fridays after the review",
                               "Rex, the user's dog, is a beagle"])  # fmt: skip


def test_without_admission_control_everything_goes_to_dedup(ws):
    writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder)  # immediate, admission off
    report = writer.offer([cand("The user owns a red sailing boat in Hamburg", "x")])
    assert report.admission == [] and [o.action for o in report.outcomes] == ["create"]
    assert report.flushed == "immediate" and report.queued == 0


def test_a_later_batch_sees_what_an_earlier_one_wrote(ws):
    writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder)
    writer.offer([cand("I always prefer window seats on long flights", "1", type=MemoryType.PREFERENCE)])
    report = writer.offer([cand("I always prefer window seats on long flights.", "2", type=MemoryType.PREFERENCE)])
    assert [o.action for o in report.outcomes] == ["skip"]
    assert len(ws.memory.list_items("a")) == 1


def test_deferred_writes_on_close_and_refuses_offers_afterwards(ws):
    writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder, policy=WritePolicy(strategy="deferred"))
    assert writer.offer([cand("My dog is named Rex", "1")]).queued == 1
    assert ws.memory.list_items("a") == []
    report = writer.close()
    assert report.flushed == "close" and [o.action for o in report.outcomes] == ["create"]
    with pytest.raises(InputError):
        writer.offer([cand("anything", "2")])


def test_a_scope_the_agent_may_not_write_is_refused_before_anything_is_queued(ws):
    writer = MemoryWriter(ws.memory, "a", embedder=ws.embedder, policy=WritePolicy(strategy="deferred"))
    with pytest.raises(ScopeError):
        writer.offer([cand("My dog is named Rex", "1"), cand("secret", "2", scope="agent:b")])
    assert len(writer.queue) == 0
