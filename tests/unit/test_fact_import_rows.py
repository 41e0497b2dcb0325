"""triple_rows (an import's screen) gives what fast_row gives for the same facts as dicts, batch after batch."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.facts_fast import TermChecks, fast_row, triple_rows
from kg.ports.facts import FactRow

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
        assert rows == _expected(batch)
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
