"""Outbox replay into a second embedded store: state equals the source, replaying twice equals once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.conversation.models import MessageInput, Role, Summary, SummaryKind, SummaryMethod
from kg.ids import new_id
from kg.models import OutboxEvent
from reasoning.cases import CaseService
from reasoning.service import RuleService
from sync.replay import EmbeddedTarget, push
from tests.budget import examples

# Columns that are local by design (row ids, usage statistics, derived search context): not replicated.
LOCAL = {"seq", "access_count", "accessed_at", "context", "id"}
# ... except where ``seq`` is data: a message's place in its conversation.
KEEP = {"messages": {"seq"}}
TABLES = ("agents", "grants", "facts", "fact_history", "memory_items", "bdi_nodes", "relations", "rules", "cases",
          "ontology_proposals", "conversations", "messages", "summaries", "summary_edges")  # fmt: skip
RULE = {"name": "taxable", "conditions": [{"subject": "?x", "predicate": "hasRevenue", "object": "?r"}],
        "conclusion": {"subject": "?x", "predicate": "isTaxable", "object": "true"}}  # fmt: skip


def state(store: Any) -> dict[str, Any]:
    """Every replicated table as sorted rows, without local columns; lineage as ordered parent lists."""
    dump: dict[str, Any] = {}
    for table in TABLES:
        rows = store.db.read(f"SELECT * FROM {table}")
        local = LOCAL - KEEP.get(table, set())
        dump[table] = sorted(repr(sorted((k, r[k]) for k in r.keys() if k not in local)) for r in rows)  # noqa: SIM118 (Row)
    lineage: dict[str, list[str]] = {}
    for r in store.db.read("SELECT child_uid, parent_uid FROM lineage ORDER BY child_uid, position"):
        lineage.setdefault(r[0], []).append(r[1])
    dump["lineage"] = lineage
    return dump


@pytest.fixture
def target(tmp_path, clock):
    ws = kg.init_workspace(tmp_path / "target", clock=clock)
    yield ws
    ws.close()


def build(ws) -> None:
    """A varied source through the workspace services, the clock moving between changes."""
    tick = lambda: ws.clock.advance(timedelta(seconds=1))  # noqa: E731
    ws.scopes.grant("b", "agent:a", granted_by="a")
    tick()
    f1, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100")
    ws.facts.assert_fact("a", "acme", "locatedIn", "paris")
    tick()
    ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.5)  # an update: history
    tick()
    ws.facts.retract("a", subject="acme", predicate="locatedIn")
    tick()
    ws.facts.assert_fact("a", "acme", "locatedIn", "paris")  # same triple again, a new uid
    ws.scopes.revoke("b", "agent:a", revoked_by="a")
    item = ws.memory.store_item("a", "the meeting moved to friday").item
    tick()
    ws.memory.update("a", item.uid, importance=0.9, tags=["calendar"])
    tick()
    ws.memory.update("a", item.uid, archived_at=ws.clock.now())
    belief = ws.bdi.add("belief", "a", "acme is profitable")
    goal = ws.bdi.add("goal", "a", "grow acme")
    tick()
    ws.bdi.update("a", goal.uid, status="achieved")
    ws.bdi.link("a", "belief-supports-goal", belief.uid, goal.uid)
    rules = RuleService(ws.ports, ws.scopes, ws.clock)
    rule = rules.create("a", **RULE)
    tick()
    rules.toggle("a", rule.uid, enabled=False)
    doomed = rules.create("a", **{**RULE, "name": "doomed"})
    tick()
    rules.delete("a", doomed.uid)
    CaseService(ws.ports, ws.scopes, ws.clock, None).store_case(
        "a", situation={"beliefs": ["x"], "desires": ["grow"]}, solution={"actions": ["act"]},
        outcome={"success": True},
    )  # fmt: skip
    conversation(ws)
    assert f1.uid


def conversation(ws) -> None:
    """A conversation with messages (one of them a tool result) and a leaf summary over two of them."""
    chat = ws.ports.conversations.open("a", "session-1", title="kick-off", now=ws.clock.now())
    said = ws.ports.conversations.append(chat.uid, [
        MessageInput(role=Role.USER, content="Acme needs SSO before renewal"),
        MessageInput(role=Role.ASSISTANT, content="Noted: SSO by March", tool_call_id="call-1"),
        MessageInput(role=Role.TOOL, content='{"ok": true}', tool_call_id="call-1"),
    ], now=ws.clock.now())  # fmt: skip
    ws.clock.advance(timedelta(seconds=1))
    ws.ports.conversations.append(chat.uid, [MessageInput(role=Role.USER, content="thanks")], now=ws.clock.now())
    ws.ports.summaries.add(Summary(
        uid=new_id("summary"), agent_id="a", conversation_uid=chat.uid, kind=SummaryKind.LEAF, depth=0,
        content="Acme needs SSO by March.", token_count=6, source_token_count=14, method=SummaryMethod.EXTRACTIVE,
        child_uids=[said[0].uid, said[1].uid], earliest_at=said[0].created_at, latest_at=said[1].created_at,
        descendant_count=2, created_at=ws.clock.now(),
    ))  # fmt: skip


def reset_acks(ws) -> None:
    with ws._store.db.write() as conn:
        conn.execute("UPDATE outbox SET acked_at = NULL")


def test_push_replays_every_aggregate_into_an_equal_store(ws, target):
    build(ws)
    pending = ws.ports.outbox.counts()["pending"]
    report = push(ws._store, EmbeddedTarget(target._store), batch=7)
    assert (report.sent, report.acknowledged, report.pending_left) == (pending, pending, 0)
    assert report.batches == -(-pending // 7)
    assert {"agent", "grant", "fact", "memory", "belief", "goal", "relation", "rule", "case", "conversation",
            "message", "summary"} <= set(report.by_aggregate)  # fmt: skip
    assert state(target._store) == state(ws._store)
    assert state(ws._store)["fact_history"]  # the update reached the target's history too


def test_push_again_sends_nothing_and_full_replay_changes_nothing(ws, target):
    build(ws)
    push(ws._store, EmbeddedTarget(target._store))
    once = state(target._store)
    target_events = target.ports.outbox.counts()["pending"]
    assert push(ws._store, EmbeddedTarget(target._store)).sent == 0
    reset_acks(ws)
    again = push(ws._store, EmbeddedTarget(target._store), batch=5)
    assert again.sent == again.acknowledged > 0
    assert state(target._store) == once == state(ws._store)
    # nothing runs again, not even a delete-then-recreate cycle (a grant revoked, a rule deleted): the target
    # knows each record's last applied outbox position
    assert target.ports.outbox.counts()["pending"] == target_events


def test_target_outbox_records_what_it_applied(ws, target):
    build(ws)
    push(ws._store, EmbeddedTarget(target._store))
    onward = kg.init_workspace(target.path.parent / "third", clock=ws.clock)
    try:
        push(target._store, EmbeddedTarget(onward._store))
        assert state(onward._store) == state(ws._store)
    finally:
        onward.close()


class CrashingTarget(EmbeddedTarget):
    """Applies half of one batch, then crashes (the transaction rolls back or is kept, as chosen)."""

    def __init__(self, store: Any, *, commit_half: bool) -> None:
        super().__init__(store)
        self.commit_half = commit_half
        self.calls = 0

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        self.calls += 1
        if self.calls == 2:
            if self.commit_half:  # committed but never acknowledged: the batch comes again
                super().apply(events[: len(events) // 2])
            raise RuntimeError("crash")
        super().apply(events)


@pytest.mark.parametrize("commit_half", [False, True])
def test_crash_between_apply_and_ack_loses_and_duplicates_nothing(ws, target, commit_half):
    build(ws)
    with pytest.raises(RuntimeError):
        push(ws._store, CrashingTarget(target._store, commit_half=commit_half), batch=6)
    assert ws.ports.outbox.counts()["acked"] == 6
    report = push(ws._store, EmbeddedTarget(target._store), batch=6)
    assert report.pending_left == 0
    assert state(target._store) == state(ws._store)


def test_crash_after_apply_before_ack_is_resent_harmlessly(ws, target, monkeypatch):
    build(ws)
    store = ws._store
    monkeypatch.setattr(store.outbox, "ack", lambda seqs: (_ for _ in ()).throw(RuntimeError("crash")))
    with pytest.raises(RuntimeError):
        push(store, EmbeddedTarget(target._store), batch=10)
    monkeypatch.undo()
    push(store, EmbeddedTarget(target._store), batch=10)
    assert state(target._store) == state(store)


def test_batch_must_be_positive(ws, target):
    with pytest.raises(ValueError, match="batch"):
        push(ws._store, EmbeddedTarget(target._store), batch=0)


OPS = st.lists(
    st.tuples(st.sampled_from(["assert", "update", "retract", "memory", "archive", "goal", "rule", "toggle"]),
              st.integers(0, 3)),
    max_size=25,
)  # fmt: skip


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS, batch=st.integers(1, 9))
def test_random_operations_replay_to_an_equal_state(tmp_path_factory, clock, ops, batch):
    root = tmp_path_factory.mktemp("replay")
    with kg.init_workspace(root / "src", clock=clock) as src, kg.init_workspace(root / "dst", clock=clock) as dst:
        src.agents.add("a")
        rules = RuleService(src.ports, src.scopes, src.clock)
        made: dict[str, list[str]] = {"memory": [], "rule": []}
        for op, n in ops:
            clock.advance(timedelta(seconds=1))
            run(src, rules, made, op, n)
        push(src._store, EmbeddedTarget(dst._store), batch=batch)
        assert state(dst._store) == state(src._store)
        reset_acks(src)
        push(src._store, EmbeddedTarget(dst._store), batch=batch)
        assert state(dst._store) == state(src._store)


def run(ws, rules, made: dict[str, list[str]], op: str, n: int) -> None:
    if op == "assert":
        ws.facts.assert_fact("a", f"s{n}", "p", "o")
    elif op == "update":
        ws.facts.assert_fact(
            "a", f"s{n}", "p", "o", confidence=(n + 1) / 4
        )  # binary-exact: see docs (SQLite JSON floats)
    elif op == "retract":
        ws.facts.retract("a", subject=f"s{n}")
    elif op == "memory":
        made["memory"].append(ws.memory.store_item("a", f"note {n}").item.uid)
    elif op == "archive" and made["memory"]:
        ws.memory.update("a", made["memory"][n % len(made["memory"])], importance=n / 4)
    elif op == "goal":
        ws.bdi.add("goal", "a", f"goal {n}")
    elif op == "rule":
        made["rule"].append(rules.create("a", **{**RULE, "name": f"r{n}"}).uid)
    elif op == "toggle" and made["rule"]:
        rules.toggle("a", made["rule"][n % len(made["rule"])])
