"""Outbox payloads carry exact doubles: SQLite's json_object alone printed 15 digits (0.1 + 0.2 arrived as 0.3)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kg
from kg.store.sqlite.facts import json_real
from sync.replay import EmbeddedTarget, push

#: Doubles that 15 significant digits do not round-trip.
TRICKY = (0.1 + 0.2, 1 / 3, 2 / 3, 0.1 + 0.7, math.nextafter(0.5, 0.0))

#: The payload keys as they were when payloads were built by json_object alone (order included).
FACT_KEYS = [
    "uid", "agent_id", "scope", "subject", "predicate", "object", "object_kind", "confidence", "source",
    "valid_from", "valid_until", "created_at", "updated_at", "updated_by", "retracted_at", "retracted_by",
    "rule_id", "derived_from",
]  # fmt: skip
MEMORY_KEYS = [
    "uid", "agent_id", "scope", "content", "type", "store", "importance", "confidence", "source", "tags", "tier",
    "expires_at", "archived_at", "created_at", "updated_at", "derived_from",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.fixture
def ws(workspace):
    workspace.agents.add("a")
    return workspace


def events(ws, aggregate: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(uid, raw payload text, parsed payload) of every upsert event of ``aggregate``, oldest first."""
    rows = ws._store.db.read(
        "SELECT record_uid, payload FROM outbox WHERE aggregate = ? AND op = 'upsert' ORDER BY seq", (aggregate,)
    )
    return [(r[0], r[1], json.loads(r[1])) for r in rows]


def stored(ws, table: str, uid: str, *columns: str) -> tuple[Any, ...]:
    return tuple(ws._store.db.read(f"SELECT {', '.join(columns)} FROM {table} WHERE uid = ?", (uid,))[0])


def test_fact_payload_carries_the_exact_confidence(ws):
    fact, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.1 + 0.2)
    ws.facts.assert_many("a", [{"subject": f"s{i}", "predicate": "p", "object": "o", "confidence": c}
                               for i, c in enumerate(TRICKY)])  # fmt: skip
    found = events(ws, "fact")
    assert len(found) == 1 + len(TRICKY)
    for uid, text, payload in found:
        assert payload["confidence"] == stored(ws, "facts", uid, "confidence")[0]
        assert type(payload["confidence"]) is float
        assert '"confidence":0.3,' not in text
    assert found[0][2]["confidence"] == 0.30000000000000004 == fact.confidence


def test_fact_update_and_lineage_paths_carry_exact_confidence(ws):
    parent, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100")
    child, _ = ws.facts.assert_fact("a", "acme", "isTaxable", "true", confidence=0.5, derived_from=[parent.uid])
    _, status = ws.facts.assert_fact("a", "acme", "isTaxable", "true", confidence=1 / 3, derived_from=[parent.uid])
    assert status == "updated"
    latest = events(ws, "fact")[-1][2]
    assert latest["uid"] == child.uid
    assert latest["confidence"] == 1 / 3 == stored(ws, "facts", child.uid, "confidence")[0]
    assert latest["derived_from"] == [parent.uid]


def test_placeholder_text_in_values_does_not_confuse_the_payload(ws):
    tricky = '"confidence":"#" and {"importance":"#"}'
    ws.facts.assert_fact("a", tricky, "says", tricky, confidence=0.1 + 0.2)
    tag = '"importance":"#"'  # tags hold no spaces or commas
    ws.memory.store_item("a", tricky, tags=[tag], importance=0.1 + 0.2)
    fact = events(ws, "fact")[0][2]
    memory = events(ws, "memory")[0][2]
    assert (fact["subject"], fact["object"], fact["confidence"]) == (tricky, tricky, 0.1 + 0.2)
    assert (memory["content"], memory["tags"], memory["importance"]) == (tricky, [tag], 0.1 + 0.2)


def test_memory_payload_carries_exact_importance_and_confidence(ws):
    item = ws.memory.store_item("a", "the meeting moved", importance=0.1 + 0.2, confidence=1 / 3, tags=["x"]).item
    ws.memory.update("a", item.uid, importance=2 / 3, confidence=0.1 + 0.7)
    found = events(ws, "memory")
    assert [p["importance"] for _, _, p in found] == [0.30000000000000004, 2 / 3]
    assert [p["confidence"] for _, _, p in found] == [1 / 3, 0.1 + 0.7]
    assert (found[-1][2]["importance"], found[-1][2]["confidence"]) == stored(
        ws, "memory_items", item.uid, "importance", "confidence"
    )
    assert found[-1][2]["tags"] == ["x"]


def test_payload_keys_are_unchanged(ws):
    ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.1 + 0.2)
    ws.memory.store_item("a", "note", importance=0.1 + 0.2)
    assert list(events(ws, "fact")[0][2]) == FACT_KEYS
    assert list(events(ws, "memory")[0][2]) == MEMORY_KEYS


def test_replay_into_a_second_store_keeps_the_exact_doubles(ws, tmp_path):
    fact, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "100", confidence=0.1 + 0.2)
    item = ws.memory.store_item("a", "note", importance=0.1 + 0.2, confidence=1 / 3).item
    target = kg.init_workspace(tmp_path / "target", clock=ws.clock)
    try:
        report = push(ws.ports, EmbeddedTarget(target.ports))
        assert report.pending_left == 0
        assert stored(target, "facts", fact.uid, "confidence") == stored(ws, "facts", fact.uid, "confidence")
        assert stored(target, "facts", fact.uid, "confidence")[0] == 0.30000000000000004
        columns = ("importance", "confidence")
        assert stored(target, "memory_items", item.uid, *columns) == (0.30000000000000004, 1 / 3)
        assert stored(target, "memory_items", item.uid, *columns) == stored(ws, "memory_items", item.uid, *columns)
    finally:
        target.close()


@given(st.floats(min_value=0.0, max_value=1.0))
def test_json_real_round_trips_every_double(value: float) -> None:
    parsed = json.loads(json_real(value))
    assert parsed == value
    assert type(parsed) is float
