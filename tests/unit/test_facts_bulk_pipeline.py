"""Bulk writes as a few multi-row statements per batch, and the next batch screened in a helper thread (issues 22
and 33).

The multi-row path must store exactly what the same facts asserted one by one through the service stored
(``assert_fact``: each fact its own one-row statement, every column but uid, subject, predicate and object shared):
text with quotes, backslashes, control characters and characters outside the BMP, every double, columns that vary
or not within a batch, validity times, rule ids and lineage. The pipeline
must keep the outcome of one batch after the other: a bad batch after written ones, a write inside an outer
transaction (the helper thread never touches the store), and no thread left behind.
"""

from __future__ import annotations

import math
import random
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.clock import FixedClock
from kg.errors import InputError
from kg.facts_fast import fast_fact, fast_row
from kg.facts_requests import FactAssertRequest
from kg.models import FactInput
from kg.ports.facts import FactRow
from kg.store.sqlite.facts_prepare import STATEMENT_ROWS, Prepared, prepare_rows, statement_rows
from kg.workspace import Workspace
from tests.budget import examples

STORED = (
    "agent_id, scope, subject, predicate, object, object_kind, confidence, source, valid_from, valid_until, "
    "created_at, updated_at, updated_by, retracted_at, rule_id, derived"
)


def stored(ws: Workspace) -> list[tuple[Any, ...]]:
    """Every fact row (uids aside: they are fresh in each store), with each double's exact bits, in seq order."""
    rows = ws._store.db.read(f"SELECT {STORED} FROM facts ORDER BY seq")
    return [tuple(v.hex() if isinstance(v, float) else v for v in row) for row in rows]


def events(ws: Workspace) -> list[tuple[Any, ...]]:
    """The outbox events (payloads as the view expands them), uids aside."""
    out = []
    for e in ws.ports.outbox.pending(after_seq=0, limit=100_000):
        payload = {k: v for k, v in e.payload.items() if k not in ("uid", "derived_from")}
        out.append((e.op, e.scope, sorted(payload.items(), key=str)))
    return out


def pair(tmp_path: Path) -> tuple[Workspace, Workspace]:
    """Two fresh stores on one fixed clock: one for batches (multi-row statements), one for facts one by one."""
    clock = FixedClock(datetime(2026, 11, 26, 12, tzinfo=UTC))
    fast, slow = (kg.init_workspace(tmp_path / name, clock=clock) for name in ("multi", "rows"))
    for ws in (fast, slow):
        ws.agents.add("a")
    return fast, slow


def one_by_one(ws: Workspace, items: list[dict[str, Any]]) -> dict[str, int]:
    """Assert ``items`` one at a time through the service (one outer transaction, as extraction writes: one commit
    instead of one per fact); how many came back created, updated and unchanged."""
    counts = dict.fromkeys(("created", "updated", "unchanged"), 0)
    with ws.ports.transactions.transaction():
        for item in items:
            counts[ws.facts.assert_fact("a", FactAssertRequest.model_validate(item))[1]] += 1
    return counts


def keys(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(i["subject"], i["predicate"], i["object"], i.get("scope", "agent:a")) for i in items]


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=12
).filter(str.strip)
DOUBLE = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
ITEM = st.fixed_dictionaries(
    {"subject": TEXT, "predicate": st.sampled_from(["p", "q", 'say "hi"', "back\\slash"]), "object": TEXT},
    optional={
        "confidence": DOUBLE,
        "source": st.sampled_from(["", "loader", "é\n\t", "\U0001f600"]),
        "object_kind": st.sampled_from(["entity", "literal"]),
        "scope": st.sampled_from(["agent:a", "global"]),
    },
)


@settings(max_examples=examples(24), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(ITEM, min_size=1, max_size=30), batch=st.integers(1, 12))
def test_the_multi_row_path_stores_what_facts_one_by_one_stored(tmp_path_factory: Any, items: list[dict[str, Any]],
                                                       batch: int) -> None:  # fmt: skip
    fast, slow = pair(tmp_path_factory.mktemp("pair"))
    try:
        result = fast.facts.assert_many("a", items, batch_size=batch)
        assert one_by_one(slow, items) == {"created": result.created, "updated": result.updated,
                                           "unchanged": result.unchanged}  # fmt: skip
        assert stored(fast) == stored(slow)
        if len(set(keys(items))) == len(items):
            assert events(fast) == events(slow)
        else:  # a batch writes its creation events first, then those of the facts it repeats (same events)
            assert sorted(events(fast), key=str) == sorted(events(slow), key=str)
        scopes = ["agent:a", "global"]
        found = [[f.subject for f in ws.ports.facts.search(items[0]["subject"], scopes=scopes)] for ws in (fast, slow)]
        assert found[0] == found[1]
    finally:
        fast.close()
        slow.close()


def test_every_column_kind_and_double_goes_through_multi_row_statements_exactly(tmp_path: Path) -> None:
    rng = random.Random(22)
    doubles = [rng.random() for _ in range(300)] + [0.0, -0.0, 1.0, 5e-324, math.nextafter(1.0, 0.0), 0.1 + 0.2]
    items: list[dict[str, Any]] = [
        {"subject": f's{i} "q" \\ \x01\U0001f600', "predicate": "p", "object": f"o{i}\n", "confidence": d}
        for i, d in enumerate(doubles)
    ]
    items += [  # varying validity, rule ids, lineage and kinds in one batch
        {"subject": "t", "predicate": "p", "object": "1", "valid_from": "2026-01-01T00:00:00Z"},
        {"subject": "t", "predicate": "p", "object": "2", "valid_until": "2027-01-01T00:00:00Z",
         "object_kind": "literal"},
        {"subject": "t", "predicate": "p", "object": "3", "rule_id": "R-01JABCDEFGHJKMNPQRSTVWXYZ0"},
    ]  # fmt: skip
    fast, slow = pair(tmp_path)
    try:
        parents = fast.facts.assert_many("a", items[:2], keep_uids=True).uids
        assert one_by_one(slow, items[:2])["created"] == 2
        items.append({"subject": "t", "predicate": "p", "object": "4", "derived_from": parents})
        # the same parent uids in the other store: its own facts carry other uids, lineage rows are not checked
        fast.facts.assert_many("a", items[2:], batch_size=100)
        one_by_one(slow, items[2:])
        assert stored(fast) == stored(slow)
        got = [float.fromhex(r[6]) for r in stored(fast)[2 : 2 + len(doubles) - 2]]
        assert got == doubles[2:]  # bit for bit (-0.0 included)
        child = fast.facts.query("a", subject="t", object="4")[0]
        assert child.derived_from == parents
    finally:
        fast.close()
        slow.close()


def test_a_batch_of_equal_but_distinct_doubles_keeps_each_one(tmp_path: Path) -> None:
    # 0.0 == -0.0, so the batch "shares" one confidence; SQLite stores -0.0 as 0.0 on either path anyway
    batch = [{"subject": f"z{i}", "predicate": "p", "object": "o", "confidence": c} for i, c in enumerate([0.0, -0.0])]
    fast, slow = pair(tmp_path)
    try:
        fast.facts.assert_many("a", batch)
        one_by_one(slow, batch)
        assert [r[6] for r in stored(fast)] == [(0.0).hex(), (0.0).hex()]
        assert stored(fast) == stored(slow)
    finally:
        fast.close()
        slow.close()


def items(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"subject": f"item-{i}", "predicate": "p", "object": str(i)} for i in range(start, start + n)]


def test_a_bad_batch_after_written_ones_is_not_written_and_is_named(workspace: Workspace) -> None:
    workspace.agents.add("a")
    batch = [*items(25), {"subject": "x", "predicate": "p", "object": "y", "confidence": 2}, *items(20, 25)]

    with pytest.raises(InputError) as err:
        workspace.facts.assert_many("a", batch, batch_size=10)

    assert err.value.field == "facts[25].confidence"
    assert len(workspace.facts.query("a", limit=1000)) == 20  # batches 0-9 and 10-19; not 20-29 nor later
    assert threading.active_count() == 1 or not any(
        t.name.startswith("mabos-facts-screen") for t in threading.enumerate()
    )


def test_many_batches_inside_an_outer_transaction_do_not_wait_on_themselves(workspace: Workspace) -> None:
    workspace.agents.add("a")
    with workspace.ports.transactions.transaction():  # as extraction writes facts with its other records
        result = workspace.facts.assert_many("a", items(50), batch_size=7)
    assert result.created == 50
    assert len(workspace.facts.query("a", limit=1000)) == 50


def test_no_helper_thread_outlives_the_call(workspace: Workspace) -> None:
    workspace.agents.add("a")
    workspace.facts.assert_many("a", items(30), batch_size=4)
    workspace.facts.assert_many("a", items(30), batch_size=4)  # all unchanged: the per-row path
    assert not [t for t in threading.enumerate() if t.name.startswith("mabos-facts-screen")]


@pytest.mark.parametrize(
    "item",
    [
        {"subject": "acme", "predicate": "p", "object": "Berlin"},
        {"subject": "acme", "predicate": "p", "object": "42 %", "confidence": 0.25, "source": "", "scope": "global"},
        {"subject": "a", "predicate": "p", "object": "b", "object_kind": "literal", "rule_id": None,
         "derived_from": ["F-01JABCDEFGHJKMNPQRSTVWXYZ0"]},
    ],
)  # fmt: skip
def test_a_fact_row_holds_the_models_values(item: dict[str, Any]) -> None:
    # bulk batches carry FactRow tuples, not models; fast_fact (checked against the model by the hypothesis test
    # in test_facts_bulk_fast.py) is built from the same row
    row = fast_row("a", item)
    model = FactInput.model_validate({"agent_id": "a", **item})
    assert row is not None
    assert row._asdict() == model.model_dump()
    assert row.to_input() == model == fast_fact("a", item)


@pytest.mark.parametrize("count", [1, 3, STATEMENT_ROWS - 1, STATEMENT_ROWS, 2 * STATEMENT_ROWS + 7])
def test_a_batch_cut_into_statements_stores_what_facts_one_by_one_stored(tmp_path: Path, count: int) -> None:
    """A batch goes in as full statements of STATEMENT_ROWS rows and the rest in power-of-two ones: every row once,
    in order, with the varying columns in the right places (confidence varies here, the source does not)."""
    batch = [{"subject": f"s{i}", "predicate": "p", "object": f"o{i}", "confidence": (i % 7) / 7, "source": "x"}
             for i in range(count)]  # fmt: skip
    fast, slow = pair(tmp_path)
    try:
        assert fast.facts.assert_many("a", batch, batch_size=10_000).created == count
        assert one_by_one(slow, batch)["created"] == count
        assert stored(fast) == stored(slow)
        assert events(fast) == events(slow)
        assert [r[2] for r in stored(fast)] == [f"s{i}" for i in range(count)]
    finally:
        fast.close()
        slow.close()


def test_statements_stay_under_the_variable_limit() -> None:
    assert statement_rows(5, 8, 250_000) == STATEMENT_ROWS
    assert statement_rows(16, 0, 999) == 32  # 32 * 16 + 2 <= 999 (SQLite's limit before 3.32)
    assert statement_rows(16, 0, 10) == 1


def test_fact_rows_and_models_prepare_the_same_batch() -> None:
    """A batch of plain FactRow tuples is transposed column-wise in C; models are read fact by fact: the same
    rows, shared values, statement parameters and lineage (uids aside: fresh on each call)."""
    rng = random.Random(33)
    items: list[dict[str, Any]] = [
        {"subject": f"s{i}", "predicate": rng.choice(["p", "q"]), "object": f"o{i % 7}",
         "object_kind": rng.choice(["entity", "literal"]), "confidence": rng.choice([1.0, 0.5, rng.random()]),
         "scope": rng.choice(["agent:a", "global"])}
        for i in range(700)
    ]  # fmt: skip
    items[3].update(valid_from="2026-01-01T00:00:00Z", valid_until="2027-01-01T00:00:00Z")
    items[5]["rule_id"] = "R-01JABCDEFGHJKMNPQRSTVWXYZ0"
    items[8]["derived_from"] = ["F-01JABCDEFGHJKMNPQRSTVWXYZ0", "F-01JABCDEFGHJKMNPQRSTVWXYZ1"]

    def seen(prepared: Prepared) -> tuple[Any, ...]:
        rows = prepared.rows()
        place = {row[0]: n for n, row in enumerate(rows)}  # each uid as its fact's position
        width = len(prepared.varying)
        params = [value for _, values in prepared.chunks for value in values]
        params[::width] = [place[uid] for uid in params[::width]]  # the uid is the first varying field
        sizes = [size for size, _ in prepared.chunks]
        lineage = [(place[child], parent, n) for child, parent, n in prepared.lineage]
        return ([row[1:] for row in rows], prepared.varying, prepared.constants, sizes, params, lineage,
                [o.status for o in prepared.created])  # fmt: skip

    without_rule = [{k: v for k, v in item.items() if k != "rule_id"} for item in items]  # lineage alone
    for batch, varying in (
        (items, (0, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12)),
        (without_rule, (0, 2, 3, 4, 5, 6, 7, 9, 10, 12)),
    ):
        models = [FactInput.model_validate({"agent_id": "a", **item}) for item in batch]
        fact_rows = [FactRow(**{name: getattr(model, name) for name in FactRow._fields}) for model in models]
        for limit in (250_000, 999):  # statements of 512 rows and the rest; of 64 rows (999 variables)
            by_row, by_model = (prepare_rows(facts, max_variables=limit) for facts in (fact_rows, models))
            assert seen(by_row) == seen(by_model)
            assert by_row.varying == varying  # source and agent shared, the rest varies
            mixed = prepare_rows([*models[:2], *fact_rows[2:]], max_variables=limit)  # read fact by fact
            assert seen(mixed) == seen(by_row)
    with pytest.raises(InputError, match="object_kind and scope"):
        prepare_rows([fact_rows[0]._replace(object_kind=None)], max_variables=999)
