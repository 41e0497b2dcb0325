"""A workspace written before migration 10 keeps working after it: facts, queries, search and outbox replay.

The old workspace is made by this code with the schema stopped at migration 9 and the fact events written as
before migration 10: into the ``outbox`` table, every one with the fact's whole JSON (the statement the adapter
still uses for a changed fact, pointed at the old table). Then the workspace is opened normally (migration 10
runs) and must answer every query as it did, hand out the old pending events unchanged, take new facts (with
compact events) and replay old and new events into a fresh store that ends equal to the source.

Writers before migration 11 filled the full-text index themselves: the old workspace indexes its facts the same
way (every row once), so migration 11 must start its mark above them (indexing them again would fail the FTS
integrity check below, and search would list facts twice).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.clock import FixedClock
from kg.store.sqlite import db as db_module
from kg.store.sqlite import facts as facts_module
from kg.store.sqlite import facts_sql
from kg.workspace import Workspace
from sync.replay import EmbeddedTarget, push
from tests.fts import check_fts

OLD = 9
QUERIES: list[dict[str, Any]] = [
    {"subject": "acme"},
    {"subject": "acme", "predicate": "hasRevenue"},
    {"predicate": "hasCustomer"},
    {"object": "globex"},
    {"subject": "ac*", "include_retracted": True},
    {"subject": "acme", "include_retracted": True},
    {},
]


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def write_old_workspace(path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A workspace at schema 9 with facts written as before migration 10; what it answered, for comparison."""
    with monkeypatch.context() as patch:
        old = [m for m in db_module.load_migrations() if m.version <= OLD]
        patch.setattr(db_module, "load_migrations", lambda directory=None: old)
        old_events = facts_sql.CHANGED_EVENT.replace("INSERT INTO outbox_log", "INSERT INTO outbox")
        patch.setattr(facts_module, "CREATED_EVENTS", old_events.replace("f.uid = ?", "f.seq > ? ORDER BY f.seq"))
        patch.setattr(facts_module, "CHANGED_EVENT", old_events)
        patch.setattr(facts_module.SqliteFactStore, "catch_up_search", lambda self: 0)  # no mark before 11
        with kg.init_workspace(path, clock=clock) as ws:
            assert ws._store.db.schema_version() == OLD
            assert ws._store.db.read("SELECT type FROM sqlite_master WHERE name = 'outbox'")[0][0] == "table"
            ws.agents.add("a")
            revenue, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.1 + 0.2)
            ws.facts.assert_many("a", [{"subject": "acme", "predicate": "hasCustomer", "object": f"c{i}"}
                                       for i in range(20)] + [{"subject": "initech", "predicate": "hasCustomer",
                                                               "object": "globex"}])  # fmt: skip
            clock.advance(timedelta(seconds=1))
            ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.5)  # an update: history
            ws.facts.assert_fact("a", "acme", "isTaxable", "true", derived_from=[revenue.uid])
            clock.advance(timedelta(seconds=1))
            ws.facts.retract("a", subject="acme", predicate="hasCustomer")
            with ws._store.db.write() as conn:  # the first events went out already
                conn.execute("UPDATE outbox SET acked_at = ? WHERE seq <= 5", (ws._store.db.now(),))
                conn.execute(facts_sql.INDEX_PENDING, (0,))  # what the writers before migration 11 did, once each
            return {
                "queries": [[f.model_dump() for f in ws.facts.query("a", **q)] for q in QUERIES],
                "as_of": [f.model_dump() for f in ws.facts.query("a", subject="acme", as_of=clock.now()
                                                                  - timedelta(seconds=1, microseconds=1))],
                "search": [f.uid for f in ws.ports.facts.search("acme", scopes=["agent:a"])],
                "pending": [e.model_dump() for e in ws.ports.outbox.pending(limit=1000)],
                "raw": ws._store.db.read("SELECT seq, payload FROM outbox ORDER BY seq"),
            }  # fmt: skip


def replicated(ws: Workspace) -> dict[str, list[str]]:
    """The replicated fact tables as sorted rows, without local row ids."""
    dump = {}
    for table, columns in (
        ("facts", "uid, agent_id, scope, subject, predicate, object, object_kind, confidence, source, valid_from, "
                  "valid_until, created_at, updated_at, updated_by, retracted_at, retracted_by, rule_id, derived"),
        ("fact_history", "uid, confidence, source, valid_from, valid_until, rule_id, updated_by, sys_from, sys_to"),
        ("lineage", "child_uid, parent_uid, position"),
    ):  # fmt: skip
        dump[table] = sorted(repr(tuple(r)) for r in ws._store.db.read(f"SELECT {columns} FROM {table}"))
    return dump


def test_an_old_workspace_migrates_and_keeps_its_facts_queries_and_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock(kg.clock.SystemClock().now().replace(microsecond=0))
    before = write_old_workspace(tmp_path / "old", clock, monkeypatch)
    assert before["queries"][0] and before["as_of"] and before["search"] and len(before["pending"]) > 20

    with kg.open_workspace(tmp_path / "old", clock=clock) as ws:
        db = ws._store.db
        assert db.schema_version() >= 10
        assert db.read("SELECT type FROM sqlite_master WHERE name = 'outbox'")[0][0] == "view"
        assert [[f.model_dump() for f in ws.facts.query("a", **q)] for q in QUERIES] == before["queries"]
        as_of = ws.facts.query("a", subject="acme", as_of=clock.now() - timedelta(seconds=1, microseconds=1))
        assert [f.model_dump() for f in as_of] == before["as_of"]
        assert ws.ports.facts.search_pending() == 0
        assert [f.uid for f in ws.ports.facts.search("acme", scopes=["agent:a"])] == before["search"]
        check_fts(ws._store.db)
        # the old events, pending or not, read exactly as they were written
        assert [e.model_dump() for e in ws.ports.outbox.pending(limit=1000)] == before["pending"]
        assert [tuple(r) for r in db.read("SELECT seq, payload FROM outbox ORDER BY seq")] == [
            tuple(r) for r in before["raw"]
        ]

        # new facts after the migration: compact events next to the old ones, expanded on reading
        clock.advance(timedelta(seconds=1))
        result = ws.facts.assert_many("a", [{"subject": "acme", "predicate": "hasSite", "object": f"s{i}",
                                             "confidence": 1 / 3} for i in range(5)], keep_uids=True)  # fmt: skip
        raw = {r[0]: r[1] for r in db.read("SELECT record_uid, payload FROM outbox_log WHERE record_uid IN "
                                           f"({','.join('?' * 5)})", result.uids)}  # fmt: skip
        assert set(raw.values()) == {""}
        new_events = [e for e in ws.ports.outbox.pending(limit=1000) if e.record_uid in raw]
        assert [e.payload["confidence"] for e in new_events] == [1 / 3] * 5
        assert [e.payload["uid"] for e in new_events] == result.uids
        clock.advance(timedelta(seconds=1))
        ws.facts.assert_fact("a", "acme", "hasSite", "s0", confidence=0.25)  # updated after its compact event
        first = next(e for e in ws.ports.outbox.pending(limit=1000) if e.record_uid == result.uids[0])
        assert first.payload["confidence"] == 1 / 3  # still the state it was created in (from the history)
        assert json.loads(db.read("SELECT payload FROM outbox WHERE record_uid = ? ORDER BY seq DESC",
                                  (result.uids[0],))[0][0])["confidence"] == 0.25  # fmt: skip

        # replay everything (old acknowledged events too) into a fresh store: it ends equal to the source
        with db.write() as conn:
            conn.execute("UPDATE outbox SET acked_at = NULL")
        with kg.init_workspace(tmp_path / "target", clock=clock) as target:
            report = push(ws.ports, EmbeddedTarget(target.ports), batch=7)
            assert report.pending_left == 0 and report.sent == db.read("SELECT COUNT(*) FROM outbox")[0][0]
            assert replicated(target) == replicated(ws)
            assert [f.uid for f in target.ports.facts.search("acme", scopes=["agent:a"])] == [
                f.uid for f in ws.ports.facts.search("acme", scopes=["agent:a"])
            ]
            assert len({f.uid for f in ws.ports.facts.search("hasSite", scopes=["agent:a"])}) == 5
            check_fts(ws._store.db)
            check_fts(target._store.db)
