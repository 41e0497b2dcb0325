"""Bulk assert: batches, counts, and a bad item that stops its batch before anything of it is written."""

from __future__ import annotations

import pytest

from kg.errors import InputError, ScopeError
from kg.models import FactInput, parse


def rows(n, start=0, **extra):
    return [
        {"subject": f"item-{i}", "predicate": "hasIndex", "object": str(i), **extra} for i in range(start, start + n)
    ]


def subjects(ws):
    return sorted(f.subject for f in ws.facts.query("a", limit=10_000))


def test_counts_and_uids(ws):
    result = ws.facts.assert_many("a", rows(7), batch_size=3, keep_uids=True)

    assert (result.created, result.updated, result.unchanged) == (7, 0, 0)
    assert len(result.uids) == len(set(result.uids)) == 7
    stored = ws.ports.facts.get_many(result.uids)
    assert [stored[u].subject for u in result.uids] == [f"item-{i}" for i in range(7)]  # input order

    again = ws.facts.assert_many("a", rows(7), batch_size=3, keep_uids=True)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 7)
    assert again.uids == result.uids

    mixed = ws.facts.assert_many("a", rows(2, confidence=0.5) + rows(2, start=7), batch_size=2)
    assert (mixed.created, mixed.updated, mixed.unchanged) == (2, 2, 0)
    assert mixed.uids == []  # only kept on request
    assert len(subjects(ws)) == 9


def test_each_new_fact_appends_one_event_in_input_order(ws):
    before = ws.ports.outbox.counts()["pending"]

    ws.facts.assert_many("a", rows(10), batch_size=4)

    events = ws.ports.outbox.pending(after_seq=0, limit=1000)
    assert len(events) - before == 10
    # the clock is fixed, so batches are told apart by their order only: 4 + 4 + 2 events in seq order
    assert [e.payload["subject"] for e in events[-10:]] == [f"item-{i}" for i in range(10)]


def test_a_bad_item_stops_its_batch_but_not_earlier_ones(ws):
    items = rows(5)
    items[4]["confidence"] = 1.5  # second batch of three: items 3, 4, 5

    with pytest.raises(InputError) as err:
        ws.facts.assert_many("a", [*items, *rows(1, start=5)], batch_size=3)

    assert err.value.field == "facts[4].confidence"  # the index counts across batches
    assert "less than or equal to 1" in err.value.rule
    assert subjects(ws) == ["item-0", "item-1", "item-2"]  # the first batch was committed; none of the second


def test_a_bad_item_in_a_single_batch_writes_nothing(ws):
    before = ws.ports.outbox.counts()
    items = [*rows(3), {"subject": "   ", "predicate": "p", "object": "o"}, *rows(3, start=3)]

    with pytest.raises(InputError) as err:
        ws.facts.assert_many("a", items)

    assert err.value.field == "facts[3].subject"
    assert subjects(ws) == []
    assert ws.ports.outbox.counts() == before


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"subject": "s", "predicate": "p"}, "object"),
        ({"subject": "s", "predicate": "p", "object": "o", "colour": "red"}, "colour"),
        ({"subject": "s", "predicate": "p", "object": "o", "valid_from": "2024-02-30"}, "valid_from"),
        ({"subject": "s", "predicate": "p", "object": "o", "scope": "nowhere"}, "scope"),
        ({"subject": "s", "predicate": "p", "object": "o", "agent_id": "b"}, "agent_id"),
        ({"subject": "s", "predicate": "p", "object": "o", "derived_from": ["nope"]}, "derived_from.0"),
    ],
)
def test_bad_items_name_the_field(ws, bad, field):
    with pytest.raises(InputError) as err:
        ws.facts.assert_many("a", [*rows(2), bad])
    assert err.value.field == f"facts[2].{field}"
    assert subjects(ws) == []


def test_an_unwritable_scope_stops_the_batch(ws):
    with pytest.raises(ScopeError):
        ws.facts.assert_many("a", [*rows(2), {"subject": "s", "predicate": "p", "object": "o", "scope": "agent:b"}])
    assert subjects(ws) == []
    assert ws.facts.query("b") == []


def test_batches_are_consumed_lazily(ws):
    consumed = []

    def generate():
        for item in rows(6):
            consumed.append(item["subject"])
            if len(consumed) == 5:
                raise RuntimeError("source failed")
            yield item

    with pytest.raises(RuntimeError):
        ws.facts.assert_many("a", generate(), batch_size=2)

    assert subjects(ws) == ["item-0", "item-1", "item-2", "item-3"]  # two whole batches made it


def test_models_and_dicts_mix(ws):
    model = parse(FactInput, {"agent_id": "a", "subject": "model", "predicate": "p", "object": "o"})

    result = ws.facts.assert_many("a", [model, *rows(1)])

    assert result.created == 2
    assert subjects(ws) == ["item-0", "model"]


@pytest.mark.parametrize("size", [0, -1, 100_001])
def test_batch_size_is_bounded(ws, size):
    with pytest.raises(InputError) as err:
        ws.facts.assert_many("a", rows(1), batch_size=size)
    assert err.value.field == "batch_size"


def test_duplicates_in_a_batch_are_counted_once_created(ws):
    result = ws.facts.assert_many("a", rows(2) + rows(2) + rows(1, confidence=0.3))

    assert (result.created, result.updated, result.unchanged) == (2, 1, 2)
    assert len(subjects(ws)) == 2
