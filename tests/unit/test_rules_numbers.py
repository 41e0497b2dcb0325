"""Numbers as people write them, and the operators of rule conditions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.models import Operator
from reasoning.rules import compare, parse_number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("$50,000", 50000.0),
        ("1.2e3", 1200.0),
        ("15%", 0.15),
        ("-3", -3.0),
        ("+4", 4.0),
        ("-$3.50", -3.5),
        ("$-3.50", -3.5),
        ("€1,234,567.89", 1234567.89),
        ("  42  ", 42.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1E-2", 0.01),
        ("12.5 %", 0.125),
        ("0", 0.0),
    ],
)
def test_parse_number_reads_money_percent_and_exponents(text: str, number: float) -> None:
    assert parse_number(text) == pytest.approx(number)


@pytest.mark.parametrize(
    "text",
    ["abc", "", " ", "1,5", "12,34", "1,2345", "--3", "-$-3", "$", "%", "1e999", "inf", "nan", "3 apples", "1.2.3"],
)
def test_parse_number_refuses_what_is_not_a_number(text: str) -> None:
    assert parse_number(text) is None


@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False))
def test_formatted_money_parses_back(value: float) -> None:
    sign = "-" if value < 0 else ""
    text = f"{sign}${abs(value):,.2f}"
    assert parse_number(text) == pytest.approx(round(value, 2), abs=1e-6)


@pytest.mark.parametrize(
    ("fact", "op", "wanted", "expected"),
    [
        ("$60,000", Operator.GT, "50000", True),
        ("50000", Operator.GT, "$50,000", False),
        ("50000", Operator.GTE, "$50,000", True),
        ("15%", Operator.LT, "0.2", True),
        ("15%", Operator.LTE, "15%", True),
        ("n/a", Operator.GT, "1", False),  # a side that does not parse: false, never an error
        ("1", Operator.LT, "n/a", False),
        ("n/a", Operator.LTE, "n/a", False),
        ("Acme Corp", Operator.CONTAINS, "acme", True),
        ("acme", Operator.CONTAINS, "ACME corp", False),
        ("STRASSE", Operator.CONTAINS, "straße", True),  # casefold, not lower
        ("done", Operator.NE, "Done", True),  # ne and eq compare text exactly
        ("done", Operator.NE, "done", False),
        ("50000", Operator.EQ, "$50,000", False),
        ("x", Operator.EQ, "x", True),
    ],
)
def test_compare(fact: str, op: Operator, wanted: str, expected: bool) -> None:
    assert compare(fact, op, wanted) is expected


@given(st.text(), st.text())
def test_eq_and_ne_are_complements(left: str, right: str) -> None:
    assert compare(left, Operator.EQ, right) is not compare(left, Operator.NE, right)
