"""triple_rows (an import's screen) gives what fast_row gives for the same facts as dicts, batch after batch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.facts_fast import TermChecks, _all_text, _text, fast_row, triple_rows
from kg.models import AssertOutcome, AssertStatus, ObjectKind
from kg.ports.facts import FactColumns, FactRow
from kg.store.sqlite.facts_prepare import Prepared, prepare_rows

AGENT, SCOPE, SOURCE = "a", "agent:a", "rdf-import"


class Sub(str):
    """A str subclass: the model path must judge it, even when an equal plain str was accepted before."""

    __slots__ = ()


_terms = st.one_of(
    st.sampled_from(["acme", "Acme Corp", "42", " x ", "x\n", "ünï", "a\x00b", "", "   ", "\x1c", "a\ud800"]),
    st.text(max_size=6),
    st.builds(lambda n: "x" * n, st.sampled_from([1_024, 1_025, 8_192, 8_193])),
    st.builds(Sub, st.sampled_from(["acme", "42"])),
    st.sampled_from([None, 7]),
)
_triples = st.lists(st.tuples(_terms, _terms, _terms, st.sampled_from(["", "@en", "http://x#int"])), max_size=12)


def _expected(batch: list[tuple[Any, Any, Any, str]]) -> list[FactRow | None]:
    return [
        fast_row(AGENT, {"subject": s, "predicate": p, "object": o, "object_kind": "literal" if mark else "entity",
                         "scope": SCOPE, "source": SOURCE})
        for s, p, o, mark in batch
    ]  # fmt: skip


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_triples, min_size=1, max_size=4))
def test_each_batch_gives_the_rows_fast_row_gives_with_the_checks_kept_across_batches(batches: list[Any]) -> None:
    checks = TermChecks()
    for batch in batches:
        rows = triple_rows(AGENT, batch, SCOPE, SOURCE, checks)
        expected = _expected(batch)
        assert list(rows) == expected
        assert len(rows) == len(expected)
        if batch and None not in expected and all(type(value) is str for triple in batch for value in triple):
            assert type(rows) is FactColumns  # every row accepted: the columns, no tuple per fact
            assert rows[1:] == expected[1:] and rows[-1] == expected[-1]
        else:
            assert type(rows) is list
        for row, (s, p, o, _) in zip(rows, batch, strict=True):
            if row is not None:
                assert type(row) is FactRow
                assert (type(row.subject), type(row.predicate), type(row.object)) == (str, str, str)
                assert row.subject is s and row.predicate is p and row.object is o  # the batch's own strings
        lists = [row.derived_from for row in rows if row is not None]
        assert len({id(value) for value in lists}) == len(lists)  # a fresh list each, as fast_row gives
    assert all(type(value) is str for value in checks.terms | checks.objects)


def test_a_term_refused_once_is_refused_in_every_later_batch_and_valid_ones_stay_fast() -> None:
    checks = TermChecks()
    first = triple_rows(AGENT, [("s", "p", "o", ""), ("s", "p", "", "@en")], SCOPE, SOURCE, checks)
    assert first[0] is not None and first[1] is None
    again = triple_rows(AGENT, [("s", "p", "", ""), ("s", "p", "o", "x"), (Sub("s"), "p", "o", "")], SCOPE, SOURCE,
                        checks)  # fmt: skip
    assert again[0] is None and again[2] is None
    assert again[1] is not None and again[1].object_kind.value == "literal"
    assert checks.terms == {"s", "p"} and checks.objects == {"o"}


def test_the_remembered_terms_start_again_past_the_limit() -> None:
    checks = TermChecks()
    checks.terms.update(str(n) for n in range(TermChecks.LIMIT + 1))
    rows = triple_rows(AGENT, [("s", "p", "o", "")], SCOPE, SOURCE, checks)
    assert rows[0] is not None
    assert checks.terms == {"s", "p"} and checks.objects == {"o"}


def test_the_remembered_terms_start_again_past_the_character_limit() -> None:
    """Long distinct literals are bounded by their characters, not only by their count."""
    checks = TermChecks()
    long_ones = [("s", "p", f"{n}" + "x" * 8000, "@en") for n in range(TermChecks.CHAR_LIMIT // 8000 + 2)]
    for start in range(0, len(long_ones), 2_000):
        assert all(row is not None for row in triple_rows(AGENT, long_ones[start : start + 2_000], SCOPE, SOURCE,
                                                           checks))  # fmt: skip
        assert checks.chars <= TermChecks.CHAR_LIMIT + 2_000 * 8_010  # trimmed before each batch
    assert len(checks.objects) < len(long_ones)  # started again on the way
    rows = triple_rows(AGENT, [("s", "p", "o", "")], SCOPE, SOURCE, checks)
    assert rows[0] is not None


def _seen(prepared: Prepared) -> tuple[Any, ...]:
    """A prepared batch with each uid replaced by its fact's position (uids are fresh on each call)."""
    rows = prepared.rows()
    place = {row[0]: n for n, row in enumerate(rows)}
    width = len(prepared.varying)
    params = [value for _, values in prepared.chunks for value in values]
    params[::width] = [place[uid] for uid in params[::width]]  # the uid is the first varying field
    assert all(type(o) is AssertOutcome and o.status is AssertStatus.CREATED for o in prepared.created)
    return ([row[1:] for row in rows], [type(value) for row in rows for value in row], prepared.varying,
            prepared.constants, [size for size, _ in prepared.chunks], params, prepared.agents,
            [place[o.uid] for o in prepared.created], prepared.lineage)  # fmt: skip


_valid = st.sampled_from(["acme", "Acme Corp", "42", "ünï", "http://ex.org/a", "x" * 1_024])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_valid, _valid, _valid, st.sampled_from(["", "@en", "http://x#int"])), min_size=1,
                max_size=40), st.integers(1, 30), st.sampled_from([250_000, 999, 40]))  # fmt: skip
def test_columns_prepare_the_batch_their_rows_prepare(triples: list[Any], repeat: int, limit: int) -> None:
    """prepare_rows reads a FactColumns batch as columns: the rows, shared values, statements and outcomes its
    FactRow tuples give (uids aside), across statement sizes and variable limits."""
    batch = triples * repeat  # past one statement's rows
    rows = triple_rows(AGENT, batch, SCOPE, SOURCE, TermChecks())
    assert type(rows) is FactColumns
    by_columns, by_rows = (prepare_rows(facts, max_variables=limit) for facts in (rows, list(rows)))
    assert _seen(by_columns) == _seen(by_rows)
    assert len(set(by_columns.columns[0])) == len(batch)


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(InputError, match=r"^columns: must hold one value per fact each$"):
        FactColumns(AGENT, SCOPE, SOURCE, subjects=("s",), predicates=("p",), objects=(), kinds=[ObjectKind.ENTITY])
    rows = FactColumns(AGENT, SCOPE, SOURCE, subjects=("s", "t"), predicates=("p", "p"), objects=("o", "1"),
                       kinds=[ObjectKind.ENTITY, ObjectKind.LITERAL])  # fmt: skip
    assert rows[-1] == rows[1:][0] == FactRow(AGENT, "t", "p", "1", ObjectKind.LITERAL, SCOPE, 1.0, SOURCE, None,
                                              None, [], None)  # fmt: skip
    assert rows[0].derived_from is not rows[0].derived_from  # a fresh list each time, as fast_row gives


@settings(max_examples=400, deadline=None)
@given(st.sets(st.one_of(_terms.filter(lambda v: type(v) is str), st.text(max_size=3)), max_size=6),
       st.sampled_from([1, 3, 1_024]))  # fmt: skip
def test_the_set_check_accepts_exactly_the_sets_whose_every_value_passes(values: set[str], limit: int) -> None:
    """TermChecks.learn checks a set of fresh terms at once (joined, in C) before value by value (these sets are
    far below the join limit, past which it answers False and the values are checked one by one)."""
    assert _all_text(values, limit) == all(_text(value, limit) for value in values)
