"""Rules, cases and live triples in the embedded store (migration 5, kg/store/sqlite/reasoning.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models import Case, Rule, RuleType


def rule(agent: str = "a", **fields) -> Rule:
    data = {
        "uid": new_id("rule"), "agent_id": agent, "created_at": fields.pop("created_at", "2024-05-01T12:00:00Z"),
        "name": "taxable", "conditions": [{"subject": "?x", "predicate": "locatedIn", "object": "US"}],
        "conclusion": {"subject": "?x", "predicate": "isTaxable", "object": "true"}, **fields,
    }  # fmt: skip
    return Rule.model_validate(data)


def case(agent: str = "a", beliefs=("b1",), success: bool = True) -> Case:
    return Case.model_validate({
        "uid": new_id("case"), "agent_id": agent, "created_at": "2024-05-01T12:00:00Z",
        "situation": {"beliefs": list(beliefs), "desires": ["grow"]}, "solution": {"actions": ["hire"]},
        "outcome": {"success": success},
    })  # fmt: skip


def events(ws, aggregate: str) -> list[tuple[str, str]]:
    rows = ws._store.db.read("SELECT op, record_uid FROM outbox WHERE aggregate = ? ORDER BY seq", (aggregate,))
    return [(r[0], r[1]) for r in rows]


def test_a_rule_round_trips_and_a_put_replaces_it(ws):
    first = ws.ports.rules.put(rule(), now=ws.clock.now())
    assert ws.ports.rules.get_many([first.uid]) == {first.uid: first}
    off = first.model_copy(update={"enabled": False})
    ws.ports.rules.put(off, now=ws.clock.now())
    assert ws.ports.rules.get_many([first.uid])[first.uid].enabled is False
    assert events(ws, "rule") == [("upsert", first.uid), ("upsert", first.uid)]


def test_rules_are_listed_by_scope_type_and_state(ws):
    mine = ws.ports.rules.put(rule(), now=ws.clock.now())
    check = ws.ports.rules.put(rule(type="constraint", violation_message="no"), now=ws.clock.now())
    off = ws.ports.rules.put(rule(enabled=False), now=ws.clock.now())
    theirs = ws.ports.rules.put(rule("b"), now=ws.clock.now())
    assert [r.uid for r in ws.ports.rules.list(scopes=["agent:a"])] == [mine.uid, check.uid, off.uid]
    assert [r.uid for r in ws.ports.rules.list(scopes=["agent:a"], type=RuleType.CONSTRAINT)] == [check.uid]
    assert [r.uid for r in ws.ports.rules.list(scopes=["agent:a"], enabled=True)] == [mine.uid, check.uid]
    assert [r.uid for r in ws.ports.rules.list(scopes=["agent:b"])] == [theirs.uid]
    with pytest.raises(InputError, match="scopes"):
        ws.ports.rules.list(scopes=[])


def test_a_rule_cannot_move_to_another_agent_and_needs_a_known_agent(ws):
    stored = ws.ports.rules.put(rule(), now=ws.clock.now())
    with pytest.raises(ConflictError, match="another agent"):
        ws.ports.rules.put(stored.model_copy(update={"agent_id": "b", "scope": "agent:b"}), now=ws.clock.now())
    with pytest.raises(NotFoundError, match="nobody"):
        ws.ports.rules.put(rule("nobody"), now=ws.clock.now())
    assert ws.ports.rules.list(scopes=["agent:a", "agent:b", "agent:nobody"]) == [stored]


def test_deleting_rules_records_delete_events(ws):
    stored = ws.ports.rules.put(rule(), now=ws.clock.now())
    assert ws.ports.rules.delete([stored.uid, "R-00000000000000000000000000"]) == [stored.uid]
    assert ws.ports.rules.get_many([stored.uid]) == {}
    assert events(ws, "rule")[-1] == ("delete", stored.uid)


def test_identical_situations_are_stored_once_per_scope(ws):
    first, new = ws.ports.cases.add(case(), situation_key="k1")
    again, new_again = ws.ports.cases.add(case(success=False), situation_key="k1")
    other, _ = ws.ports.cases.add(case("b"), situation_key="k1")  # another scope: its own
    assert (new, new_again) == (True, False) and again == first
    assert ws.ports.cases.count("agent:a") == 1 and ws.ports.cases.count("agent:b") == 1
    assert ws.ports.cases.list(scopes=["agent:a", "agent:b"]) == [first, other]
    assert [e[0] for e in events(ws, "case")] == ["upsert", "upsert"]


def test_cases_are_deleted_with_events(ws):
    stored = [ws.ports.cases.add(case(beliefs=(f"b{n}",)), situation_key=f"k{n}")[0] for n in range(3)]
    assert ws.ports.cases.delete([stored[0].uid, stored[2].uid]) == sorted([stored[0].uid, stored[2].uid])
    assert ws.ports.cases.list(scopes=["agent:a"]) == [stored[1]]
    assert [e[0] for e in events(ws, "case")].count("delete") == 2


def test_live_triples_read_live_valid_facts_in_batches(ws):
    now = ws.clock.now()
    kept = [ws.facts.assert_fact("a", f"s{n}", "p", f"o{n}", confidence=0.5)[0] for n in range(5)]
    gone = ws.facts.assert_fact("a", "x", "p", "retracted")[0]
    ws.facts.retract("a", uids=[gone.uid])
    ws.facts.assert_fact("a", "x", "p", "expired", valid_until=now - timedelta(days=1))
    ws.facts.assert_fact("a", "x", "p", "derived", rule_id=new_id("rule"))
    ws.facts.assert_fact("b", "x", "p", "private to b")
    found = list(ws.ports.facts.live_triples(scopes=["agent:a"], valid_at=now, derived=False, batch=2))
    assert [(t.uid, t.subject, t.object, t.confidence) for t in found] == [
        (f.uid, f.subject, f.object, 0.5) for f in kept
    ]
    derived = list(ws.ports.facts.live_triples(scopes=["agent:a"], valid_at=now, derived=True))
    assert [t.object for t in derived] == ["derived"] and derived[0].rule_id is not None


def test_stats_count_rules_and_cases(ws):
    ws.ports.rules.put(rule(), now=ws.clock.now())
    ws.ports.cases.add(case(), situation_key="k")
    stats = ws.ports.stats()
    assert (stats["rules"], stats["cases"]) == (1, 1)
