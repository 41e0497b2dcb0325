"""Contract: every mutation appends its outbox events in its own transaction; pending / ack / counts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models import NodeKind, RelationKind

A, G = "agent:a", "global"


class Recorder:
    """Reads the events appended since the last call."""

    def __init__(self, store):
        self.store = store
        self.seen = 0

    def new(self):
        events = self.store.outbox.pending(after_seq=self.seen, limit=100_000)
        if events:
            self.seen = events[-1].seq
        return [(e.aggregate, e.op, e.record_uid) for e in events]


@pytest.fixture
def rec(graph_store):
    return Recorder(graph_store)


def test_fresh_store_has_an_empty_outbox(graph_store):
    assert graph_store.outbox.counts() == {"pending": 0, "acked": 0}
    assert graph_store.outbox.pending() == []


def test_agent_and_grant_events(mk, rec):
    agent = mk.agent("a")
    assert rec.new() == [("agent", "upsert", agent.uid)]

    mk.grant("a", "project:x")
    assert [(agg, op) for agg, op, _ in rec.new()] == [("grant", "upsert")]
    mk.grant("a", "project:x")  # idempotent: nothing new to replay
    assert rec.new() == []

    assert mk.store.scopes.revoke("a", "project:x", revoked_by="admin")
    assert [(agg, op) for agg, op, _ in rec.new()] == [("grant", "delete")]
    assert not mk.store.scopes.revoke("a", "project:x", revoked_by="admin")
    assert rec.new() == []


def test_fact_events(mk, rec, clock):
    mk.agent("a")
    rec.new()

    out = mk.assert_facts("a", [("acme", "is", "firm"), ("globex", "is", "firm")])
    assert sorted(rec.new()) == sorted(("fact", "upsert", o.uid) for o in out)

    mk.assert_facts("a", [("acme", "is", "firm"), ("globex", "is", "firm")])  # unchanged
    assert rec.new() == []

    clock.advance(timedelta(hours=1))
    mk.assert_facts("a", [("acme", "is", "firm")], confidence=0.4)  # updated
    assert rec.new() == [("fact", "upsert", out[0].uid)]

    retracted = mk.store.facts.retract(scopes=[A], retracted_by="a", predicate="is")
    assert sorted(rec.new()) == sorted(("fact", "retract", uid) for uid in retracted)
    assert len(retracted) == 2


def test_events_of_one_record_inside_a_batch_keep_their_order(mk, rec):
    mk.agent("a")
    rec.new()

    out = mk.store.facts.assert_many(
        [
            mk.fact_input("a", "x", "p", "o", confidence=0.1),
            mk.fact_input("a", "y", "p", "o"),
            mk.fact_input("a", "x", "p", "o", confidence=0.2),
        ],
        asserted_by="a",
    )

    events = mk.store.outbox.pending(after_seq=rec.seen)
    about_x = [e for e in events if e.record_uid == out[0].uid]
    assert [e.payload["confidence"] for e in about_x] == [0.1, 0.2]  # replaying them in seq order ends at 0.2
    assert sorted(e.record_uid for e in events) == sorted([out[0].uid, out[0].uid, out[1].uid])


def test_bdi_and_relation_events(mk, rec):
    mk.agent("a")
    rec.new()

    belief = mk.node(NodeKind.BELIEF, "a", "b")
    goal = mk.node(NodeKind.GOAL, "a", "g")
    assert rec.new() == [("belief", "upsert", belief.uid), ("goal", "upsert", goal.uid)]

    mk.store.bdi.update(goal.uid, {"status": "active"}, updated_by="a")
    assert rec.new() == [("goal", "upsert", goal.uid)]

    rel = mk.link(RelationKind.BELIEF_SUPPORTS_GOAL, belief.uid, goal.uid, "a")
    assert rec.new() == [("relation", "upsert", rel.uid)]

    mk.store.relations.unlink(rel.uid, removed_by="a")
    assert rec.new() == [("relation", "delete", rel.uid)]


def test_failing_mutations_append_nothing(mk, rec, clock):
    mk.agent("a")
    belief = mk.node(NodeKind.BELIEF, "a", "b")
    goal = mk.node(NodeKind.GOAL, "a", "g")
    plan = mk.node(NodeKind.PLAN, "a", "p")
    mk.link(RelationKind.BELIEF_SUPPORTS_GOAL, belief.uid, goal.uid, "a")
    fact = mk.fact("a", "acme", "is", "firm")
    rec.new()
    before = mk.store.outbox.counts()

    with pytest.raises(ConflictError):
        mk.agent("a")
    with pytest.raises(NotFoundError):
        mk.store.facts.retract(scopes=[A], retracted_by="a", uids=[fact.uid, new_id("fact")])
    with pytest.raises(InputError):
        mk.store.bdi.update(goal.uid, {"status": "bogus"}, updated_by="a")
    with pytest.raises(NotFoundError):
        mk.store.bdi.update(new_id("goal"), {"status": "active"}, updated_by="a")
    with pytest.raises(InputError):
        mk.link(RelationKind.BELIEF_SUPPORTS_GOAL, belief.uid, plan.uid, "a")
    with pytest.raises(ConflictError):
        mk.link(RelationKind.BELIEF_SUPPORTS_GOAL, belief.uid, goal.uid, "a")
    with pytest.raises(NotFoundError):
        mk.store.relations.unlink(new_id("relation"), removed_by="a")
    with pytest.raises(NotFoundError):
        mk.node(NodeKind.GOAL, "ghost", "g")
    with pytest.raises(ConflictError):
        mk.store.bdi.add(goal)

    assert rec.new() == []
    assert mk.store.outbox.counts() == before


def test_event_payload_carries_the_record(mk, graph_store):
    mk.agent("a")
    fact = mk.fact("a", "acme", "hasRevenue", "$50,000", scope=G, confidence=0.75)

    event = graph_store.outbox.pending()[-1]

    assert (event.aggregate, event.op, event.record_uid, event.scope) == ("fact", "upsert", fact.uid, G)
    assert event.agent_id == "a"
    assert {k: event.payload[k] for k in ("uid", "subject", "predicate", "object", "confidence", "scope")} == {
        "uid": fact.uid,
        "subject": "acme",
        "predicate": "hasRevenue",
        "object": "$50,000",
        "confidence": 0.75,
        "scope": G,
    }


def test_pending_after_seq_and_limit(mk, graph_store):
    for agent_id in ("a", "b", "c", "d"):
        mk.agent(agent_id)

    events = graph_store.outbox.pending()
    seqs = [e.seq for e in events]
    assert len(seqs) == 4 and seqs == sorted(seqs) and len(set(seqs)) == 4
    assert [e.seq for e in graph_store.outbox.pending(limit=2)] == seqs[:2]
    assert [e.seq for e in graph_store.outbox.pending(after_seq=seqs[1])] == seqs[2:]
    assert [e.record_uid for e in events] == [graph_store.agents.get(a).uid for a in ("a", "b", "c", "d")]


def test_ack_is_idempotent_and_counted(mk, graph_store):
    for agent_id in ("a", "b", "c"):
        mk.agent(agent_id)
    seqs = [e.seq for e in graph_store.outbox.pending()]

    assert graph_store.outbox.ack(seqs[:2]) == 2
    assert graph_store.outbox.ack(seqs[:2]) == 0
    assert graph_store.outbox.ack([seqs[1], seqs[2], 10**9]) == 1
    assert graph_store.outbox.ack([]) == 0

    assert graph_store.outbox.counts() == {"pending": 0, "acked": 3}
    assert graph_store.outbox.pending() == []

    d = mk.agent("d")
    assert graph_store.outbox.counts() == {"pending": 1, "acked": 3}
    [event] = graph_store.outbox.pending()
    assert event.record_uid == d.uid and event.seq > max(seqs)
