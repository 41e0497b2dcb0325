"""Outbox events -> TypeQL writes: every query the writer can emit is a golden file, values are encoded.

No TypeDB server runs here: these tests pin the query text (tests/data/typedb/writes/<case>.tql; regenerate
with UPDATE_GOLDEN=1 after a reviewed change) and check it against the schema's labels and value types.
The queries run against a real server in tests/integration (marker ``typedb``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kg.errors import InputError
from kg.models import NodeKind, OutboxEvent, RelationKind
from kg.store.typedb.literals import decode_string
from kg.store.typedb.schema import base_schema
from kg.store.typedb.writes import ATTRIBUTE_TYPES, MULTI_VALUED, WRITERS, batch_queries, event_queries

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "typedb" / "writes"
T0 = "2026-03-01T09:00:00.000000Z"
T1 = "2026-03-02T10:30:00.250000Z"
NASTY = 'say "hi"; delete $x; \\ end\nnext line'

COMMON = {"agent_id": "sales-agent", "scope": "agent:sales-agent", "created_at": T0, "updated_at": T1}


def _event(aggregate: str, op: str, uid: str, payload: dict[str, Any], seq: int = 1) -> OutboxEvent:
    return OutboxEvent(
        seq=seq, aggregate=aggregate, op=op, record_uid=uid, agent_id="sales-agent", scope="agent:sales-agent",
        payload=payload, created_at=datetime(2026, 3, 2, 10, 30, 1, tzinfo=UTC),
    )  # fmt: skip


def _bdi(kind: NodeKind, uid: str, **fields: Any) -> OutboxEvent:
    payload = {"uid": uid, "kind": kind.value, **COMMON, "content": f"{kind.value} text", "status": "active",
               "certainty": None, "priority": None, "urgency": None, "progress": None, "deadline": None,
               "hierarchy_level": None, "sequence": None, **fields}  # fmt: skip
    return _event(kind.value, "upsert", uid, payload)


CASES: dict[str, OutboxEvent] = {
    "agent": _event("agent", "upsert", "A-1", {"uid": "A-1", **COMMON, "name": "Sales", "role": None,
                                               "department": "sales", "commitment_strategy": "cautious"}),
    "grant": _event("grant", "upsert", "sales-agent|project:q3",
                    {"agent_id": "sales-agent", "scope": "project:q3", "granted_by": "admin", "created_at": T0}),
    "grant-delete": _event("grant", "delete", "sales-agent|project:q3",
                           {"agent_id": "sales-agent", "scope": "project:q3"}),
    "fact": _event("fact", "upsert", "F-1", {
        "uid": "F-1", **COMMON, "subject": "acme", "predicate": "hasCEO", "object": NASTY, "object_kind": "literal",
        "confidence": 0.30000000000000004, "source": "crm", "valid_from": T0, "valid_until": None,
        "updated_by": "sales-agent", "retracted_at": None, "retracted_by": None, "rule_id": "R-9",
        "derived_from": ["F-0", "M-0"]}),
    "fact-retract": _event("fact", "retract", "F-1",
                           {"uid": "F-1", "retracted_at": T1, "retracted_by": "finance-agent"}),
    "memory": _event("memory", "upsert", "M-1", {
        "uid": "M-1", **COMMON, "content": "Kick-off:\tAcme needs SSO ✓", "type": "event", "store": "long_term",
        "importance": 0.4, "confidence": 1, "source": "agent", "tags": ["acme", "auth"], "tier": "working",
        "expires_at": None, "archived_at": None, "derived_from": []}),
    "memory-skill": _event("memory", "upsert", "M-2", {
        "uid": "M-2", **COMMON, "content": "negotiation", "type": "skill", "store": "long_term", "importance": 0.9,
        "confidence": 0.8, "source": "agent", "tags": [], "tier": "core", "expires_at": T1, "archived_at": None,
        "derived_from": ["M-1"]}),
    "goal": _bdi(NodeKind.GOAL, "G-1", priority=8, progress=0.25, deadline="2026-12-31T17:00:00.000000Z",
                 hierarchy_level="strategic"),
    "belief": _bdi(NodeKind.BELIEF, "B-1", certainty=0.7, content=NASTY),
    "plan-step": _bdi(NodeKind.PLAN_STEP, "S-1", status="pending", sequence=2),
    "relation": _event("relation", "upsert", "E-1", {
        "uid": "E-1", "kind": RelationKind.STEP_DEPENDS_ON.value, "source_uid": "S-2", "target_uid": "S-1",
        "agent_id": "sales-agent", "scope": "agent:sales-agent", "created_at": T0}),
    "relation-delete": _event("relation", "delete", "E-1", {"uid": "E-1"}),
    "rule": _event("rule", "upsert", "R-1", {
        "uid": "R-1", "agent_id": "sales-agent", "scope": "agent:sales-agent", "created_at": T0, "name": "big",
        "description": "", "type": "inference", "enabled": True, "domain": "general", "severity": "warning",
        "conditions": [{"subject": "?x", "predicate": "hasRevenue", "object": "10000", "operator": "gt"}],
        "conclusion": {"subject": "?x", "predicate": "isBig", "object": "true"}, "violation_message": "",
        "action": "", "escalate": False, "confidence_factor": 0.9}),
    "rule-delete": _event("rule", "delete", "R-1", {"uid": "R-1"}),
    "case": _event("case", "upsert", "C-1", {
        "uid": "C-1", "agent_id": "sales-agent", "scope": "agent:sales-agent", "created_at": T0,
        "situation": {"beliefs": ["price sensitive"], "desires": ["grow"], "context": "Q3"},
        "solution": {"plan_id": "P-1", "actions": ["discount"]},
        "outcome": {"success": True, "metrics": {"deals": 3}, "lessons": ["ask early"]}}),
    "case-delete": _event("case", "delete", "C-1", {"uid": "C-1"}),
    "proposal": _event("proposal", "upsert", "O-1", {  # the real payload: model_dump() has no updated_at
        "uid": "O-1", "agent_id": "sales-agent", "scope": "agent:sales-agent", "created_at": T0,
        "domain": "sbvr-business", "node_type": "class", "node_id": "biz:DropshipVendor",
        "label": "Dropship Vendor", "parent_class": "biz:Supplier", "domain_class": None, "range": None,
        "sbvr_definition": "a supplier that ships to the buyer", "sbvr_synonyms": ["drop shipper"],
        "rationale": "", "multi_valued": False, "proposed_by": "sales-agent", "status": "pending"}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_queries_match_the_golden_file(name: str, golden: Callable[[Path, str], None]) -> None:
    golden(GOLDEN / f"{name}.tql", "\n\n".join(event_queries(CASES[name])) + "\n")


def test_every_aggregate_and_op_has_a_golden_case() -> None:
    covered = {(e.aggregate, e.op) for e in CASES.values()}
    for aggregate in WRITERS:
        local = aggregate in {"conversation", "message", "summary"}  # no queries: see the last test
        assert any(a == aggregate for a, _ in covered) or aggregate in {k.value for k in NodeKind} or local, aggregate
    for op in (("grant", "delete"), ("fact", "retract"), ("relation", "delete"), ("rule", "delete"),
               ("case", "delete")):  # fmt: skip
        assert op in covered


def _declared() -> dict[str, str]:
    return dict(re.findall(r"^\s*attribute ([a-z-]+), value ([a-z]+);", base_schema(), flags=re.MULTILINE))


def test_attribute_value_types_agree_with_base_tql() -> None:
    declared = _declared()
    for attribute, value_type in ATTRIBUTE_TYPES.items():
        assert declared.get(attribute) == value_type, attribute
    for attribute in MULTI_VALUED:
        assert re.search(rf"owns {attribute} @card\(0\.\.\)", base_schema()), attribute


def test_every_label_in_the_queries_is_declared() -> None:
    schema = base_schema()
    types = set(re.findall(r"^\s*(?:entity|relation|attribute) ([a-z-]+)", schema, flags=re.MULTILINE))
    for event in CASES.values():
        for query in event_queries(event):
            unquoted = re.sub(r'"(?:[^"\\]|\\.)*"', '""', query)
            for label in re.findall(r"\b(?:isa!?|has) ([a-z][a-z-]*)", unquoted):
                assert label in types, (label, query)


def test_hostile_text_stays_inside_one_literal() -> None:
    queries = event_queries(CASES["fact"])
    literals = [m.group(0) for q in queries for m in re.finditer(r'"(?:[^"\\]|\\.)*"', q)]
    assert NASTY in [decode_string(lit) for lit in literals]
    for query in queries:  # outside the literals nothing of the value is left
        assert "delete $x" not in re.sub(r'"(?:[^"\\]|\\.)*"', '""', query)


def test_floats_keep_every_digit() -> None:
    text = "\n".join(event_queries(CASES["fact"]))
    assert "has confidence-score 0.30000000000000004" in text
    assert "has confidence-score 1.0" in "\n".join(event_queries(CASES["memory"]))  # an int widened to double


def test_a_malformed_payload_is_refused_by_field() -> None:
    bad = _event("relation", "upsert", "E-9", {"uid": "E-9", "kind": "no-such-relation", "source_uid": "a",
                                              "target_uid": "b"})  # fmt: skip
    with pytest.raises(InputError, match="payload"):
        event_queries(bad)
    with pytest.raises(InputError, match="aggregate"):
        event_queries(_event("mystery", "upsert", "X-1", {}))
    wrong_type = _event("goal", "upsert", "G-2", {**CASES["goal"].payload, "uid": "G-2", "priority": "high"})
    with pytest.raises(InputError, match="priority"):
        event_queries(wrong_type)


def test_a_batch_keeps_event_order() -> None:
    events = [CASES["fact"], CASES["fact-retract"]]
    queries = batch_queries(events)
    assert queries[: len(event_queries(events[0]))] == event_queries(events[0])
    assert queries[-1] == event_queries(events[1])[-1]


@pytest.mark.parametrize("aggregate", ["conversation", "message", "summary"])
def test_conversation_memory_stays_local(aggregate: str) -> None:
    # Conversations are an agent's working data (like memory items on the TypeDB store): replayed to a second
    # embedded store (tests/unit/test_outbox_replay.py), never written to the shared graph.
    assert event_queries(_event(aggregate, "upsert", "MS-1", {"uid": "MS-1"})) == []
