"""The bulk fast path: it accepts only what FactInput accepts, with the same values; batch ids; bulk events."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import InputError, ScopeError
from kg.facts_fast import agent_ok, fast_fact
from kg.ids import _ALPHABET, is_id, new_id, new_ids
from kg.models import FactInput, ObjectKind, parse

AGENT = "a"
ID = "F-01J0000000000000000000000A"

_texts = st.one_of(
    st.sampled_from(["acme", "Acme Corp", "42", "3.5%", "true", " x ", "x\n", "ünï", "a\x00b", "", "   ", "\x1c"]),
    st.text(max_size=12),
    st.text(alphabet="ab \t\x00\ud800", max_size=4),
    st.builds(lambda n: "x" * n, st.sampled_from([1_024, 1_025, 8_192, 8_193])),
    st.integers(),
    st.none(),
    st.binary(max_size=3),
)
_values: dict[str, st.SearchStrategy[Any]] = {
    "agent_id": st.sampled_from([AGENT, "b", "A", 1]),
    "subject": _texts,
    "predicate": _texts,
    "object": _texts,
    "object_kind": st.sampled_from([None, "entity", "literal", "Entity", ObjectKind.ENTITY, ObjectKind.LITERAL, 1]),
    "scope": st.sampled_from([None, "global", "agent:a", "agent:b", "project:x", "project:", "", "Global", 3]),
    "confidence": st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-2, 2),
        st.booleans(),
        st.sampled_from(["0.5", None, 0.0, 1.0, -0.0, 1.5, 1.0000000000000002, -1e-300, 2]),
    ),
    "source": st.one_of(st.text(max_size=5), st.sampled_from(["", "x" * 256, "x" * 257, "a\ud800"]), st.none()),
    "valid_from": st.sampled_from([None, "2024-01-01T00:00:00Z", "not a date"]),
    "valid_until": st.sampled_from([None, "2023-01-01T00:00:00Z"]),
    "derived_from": st.one_of(
        st.lists(st.sampled_from([ID, ID + "\n", "F-1", "f-01J0000000000000000000000A", 5]), max_size=3),
        st.just((ID,)),
        st.none(),
        st.just("F"),
    ),
    "rule_id": st.sampled_from([None, ID, ID + "\n", "", "R-01J0000000000000000000000B"]),
    "extra": st.just(1),
}
_mostly_valid = st.one_of(st.sampled_from(["acme", "Acme Corp", "42", "x\n"]), st.text(min_size=1, max_size=8), _texts)
_items = st.fixed_dictionaries(
    {"subject": _mostly_valid, "predicate": _mostly_valid, "object": _mostly_valid},
    optional={k: v for k, v in _values.items() if k not in ("subject", "predicate", "object")},
)


_plain = st.fixed_dictionaries(
    {
        "subject": st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True),
        "predicate": st.from_regex(r"[a-z][A-Za-z]{0,10}", fullmatch=True),
        "object": st.text(min_size=1, max_size=20).filter(lambda s: s.strip() and "\x00" not in s),
    },
    optional={
        "confidence": st.floats(0.0, 1.0),
        "source": st.text(max_size=10),
        "object_kind": st.sampled_from(["entity", "literal", None]),
        "scope": st.sampled_from(["global", "agent:a", None]),
        "derived_from": st.lists(st.just(ID), max_size=2),
        "rule_id": st.sampled_from([ID, None]),
    },
)


_override = st.sampled_from(sorted(_values)).flatmap(lambda key: _values[key].map(lambda value: {key: value}))
_mutated = st.builds(lambda base, *changes: {k: v for c in (base, *changes) for k, v in c.items()}, _plain, _override)
_mutated_twice = st.builds(
    lambda base, *changes: {k: v for c in (base, *changes) for k, v in c.items()}, _plain, _override, _override
)


def _model(item: dict[str, Any]) -> FactInput | InputError:
    try:
        return parse(FactInput, {"agent_id": AGENT, **item})
    except InputError as exc:
        return exc


def _same(fast: FactInput, model: FactInput) -> None:
    assert fast == model
    assert fast.model_fields_set == model.model_fields_set
    assert fast.model_dump() == model.model_dump()
    for name in FactInput.model_fields:  # same types too (1 becomes 1.0, "entity" becomes ObjectKind.ENTITY)
        assert type(getattr(fast, name)) is type(getattr(model, name)), name
    assert fast.model_dump_json() == model.model_dump_json()


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_items, _mutated, _mutated_twice))
def test_the_fast_path_accepts_only_what_the_model_accepts_with_the_same_values(item: dict[str, Any]) -> None:
    fast = fast_fact(AGENT, item)
    model = _model(item)
    if fast is not None:
        assert isinstance(model, FactInput), f"fast path accepted what the model refuses: {model}"
        _same(fast, model)


@settings(max_examples=300, deadline=None)
@given(_plain)
def test_plain_items_take_the_fast_path(item: dict[str, Any]) -> None:
    if any(0xD800 <= ord(ch) <= 0xDFFF for value in item.values() if isinstance(value, str) for ch in value):
        return  # a lone surrogate is refused by the model, so it must leave the fast path
    fast = fast_fact(AGENT, item)
    assert fast is not None
    model = _model(item)
    assert isinstance(model, FactInput)
    _same(fast, model)


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"subject": " ", "predicate": "p", "object": "o"}, "subject"),
        ({"subject": "s", "predicate": "p", "object": "o", "confidence": math.nan}, "confidence"),
        ({"subject": "s", "predicate": "p", "object": "o", "confidence": True}, None),  # the model takes bool
        ({"subject": "s", "predicate": "p", "object": "o", "valid_from": "2024-01-01"}, None),
        ({"subject": "s", "predicate": "p", "object": "o", "colour": "red"}, "colour"),
        ({"subject": "s", "predicate": "p", "object": "o", "rule_id": ID + "\n"}, "rule_id"),
        ({"subject": "s\ud800", "predicate": "p", "object": "o"}, "subject"),
    ],
)
def test_what_the_fast_path_leaves_to_the_model(item: dict[str, Any], field: str | None) -> None:
    assert fast_fact(AGENT, item) is None
    model = _model(item)
    assert isinstance(model, FactInput) if field is None else model.field == field  # type: ignore[union-attr]


def test_agent_ids_the_model_refuses_disable_the_fast_path() -> None:
    assert agent_ok("a") and agent_ok("bench-agent")
    assert not agent_ok("Bad Agent") and not agent_ok("a\n")


def test_a_bad_item_in_a_fast_batch_is_reported_by_the_model(ws: Any) -> None:
    items = [{"subject": f"s{i}", "predicate": "p", "object": f"o{i}"} for i in range(6)]
    items[4]["object"] = "bad\x00"
    with pytest.raises(InputError) as err:
        ws.facts.assert_many("a", items, batch_size=3)
    assert err.value.field == "facts[4].object"
    assert err.value.rule == "must not contain NUL characters"
    assert sorted(f.subject for f in ws.facts.query("a")) == ["s0", "s1", "s2"]


def test_a_fast_item_outside_the_writable_scopes_is_refused(ws: Any) -> None:
    with pytest.raises(ScopeError) as err:
        ws.facts.assert_many("a", [{"subject": "s", "predicate": "p", "object": "o", "scope": "agent:b"}])
    assert "agent:b" in str(err.value)
    assert ws.facts.query("a") == []


def _decode(text: str) -> int:
    value = 0
    for ch in text.split("-", 1)[1]:
        value = value * 32 + _ALPHABET.index(ch)
    return value


def test_batch_ids_are_consecutive_and_ordered_like_single_ids() -> None:
    before = new_id("fact")
    batch = new_ids("fact", 3_000)  # crosses at least two 1024-value blocks
    after = new_id("fact")
    assert [before, *batch, after] == sorted([before, *batch, after])
    assert len(set(batch)) == 3_000 and all(is_id(uid, "fact") for uid in batch)
    values = [_decode(uid) for uid in batch]
    assert values == list(range(values[0], values[0] + 3_000))
    assert new_ids("memory", 0) == []
    assert new_ids("memory", 1)[0].startswith("M-")


def test_a_bulk_batch_writes_one_event_per_new_fact_with_its_lineage(ws: Any) -> None:
    first = ws.facts.assert_many("a", [{"subject": "s", "predicate": "p", "object": "o"}], keep_uids=True)
    items = [{"subject": f"s{i}", "predicate": "p", "object": f"v{i}", "confidence": 0.1 + 0.2} for i in range(5)]
    items.append({"subject": "d", "predicate": "p", "object": "x", "derived_from": first.uids, "rule_id": ID})
    result = ws.facts.assert_many("a", items, keep_uids=True)
    assert result.created == 6
    events = ws.ports.outbox.pending(after_seq=0, limit=100)[-6:]
    assert [e.record_uid for e in events] == result.uids
    assert events[0].payload["confidence"] == 0.1 + 0.2  # exact double, not 0.3
    assert events[0].payload["derived_from"] == []
    assert events[-1].payload["derived_from"] == first.uids
    assert events[-1].payload["confidence"] == 1.0
    raw = ws._store.db.read("SELECT payload FROM outbox WHERE record_uid = ?", [result.uids[-1]])[0][0]
    assert '"confidence":1.0,' in raw  # written as repr(1.0) without the Python function
    assert ws.ports.facts.get_many(result.uids[-1:])[result.uids[-1]].derived_from == first.uids
