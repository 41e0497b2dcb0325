"""TypeQL 3 literal encoding: round trips, one-token literals, refusals (kg/store/typedb/literals.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.errors import InputError
from kg.store.typedb import literals as lit

# Text without lone surrogates (UTF-8 cannot carry them), biased towards the dangerous characters.
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(['"', "'", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", ";", "$", "u", "{", "}"]),
        st.characters(blacklist_categories=["Cs"]),
    )
)
INJECTIONS = ['"; delete $x;', '" or true; match $y', '\\"; delete $x; #', "\\", '"', "'", "\\u0022", "\n}; match"]


def one_token(literal: str) -> bool:
    """A tiny tokenizer: the literal is exactly one double-quoted string token on one line."""
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"' or "\n" in literal or "\r" in literal:
        return False
    i = 1
    while i < len(literal) - 1:
        if literal[i] == "\\":
            i += 2
            continue
        if literal[i] == '"':
            return False
        i += 1
    return i == len(literal) - 1


@given(TEXT)
def test_string_round_trip_and_single_token(text: str) -> None:
    encoded = lit.encode_string(text)
    assert one_token(encoded)
    assert lit.decode_string(encoded) == text


@given(TEXT)
def test_string_unicode_escapes_round_trip(text: str) -> None:
    encoded = lit.encode_string(text, unicode_escapes=True)
    assert one_token(encoded)
    assert all(ord(ch) >= 0x20 for ch in encoded)
    assert lit.decode_string(encoded) == text


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_attempts_stay_inside_the_literal(text: str) -> None:
    encoded = lit.encode_string(text)
    assert one_token(encoded)
    assert lit.decode_string(encoded) == text


def test_string_escapes_are_the_grammars() -> None:
    assert lit.encode_string('a"b\\c\nd\te') == '"a\\"b\\\\c\\nd\\te"'
    assert lit.encode_string("é\u2028x") == '"é\u2028x"'
    assert lit.encode_string("\x00", unicode_escapes=True) == '"\\u0000"'
    assert lit.decode_string("'it\\'s'") == "it's"
    assert lit.decode_string('"\\u{1F600}\\u00e9"') == "\U0001f600é"


@pytest.mark.parametrize(
    "bad", ['"abc', "abc", '"a"b"', '"\\x"', '"\\u12"', '"\\"', "\"'", '"\\ud800"', '"\\u{110000}"']
)
def test_decode_refuses_malformed_literals(bad: str) -> None:
    with pytest.raises(InputError):
        lit.decode_string(bad)


def test_string_refusals_name_the_field() -> None:
    with pytest.raises(InputError) as err:
        lit.encode_string("a\ud800b", "content")
    assert err.value.field == "content"
    with pytest.raises(InputError) as err:
        lit.encode_string(5, "subject")
    assert err.value.field == "subject"


@given(st.integers(min_value=lit.INT_MIN, max_value=lit.INT_MAX))
def test_integer_round_trip(number: int) -> None:
    assert int(lit.encode_integer(number)) == number


@pytest.mark.parametrize("bad", [lit.INT_MAX + 1, lit.INT_MIN - 1, True, 1.0, "1", None])
def test_integer_refusals(bad: object) -> None:
    with pytest.raises(InputError) as err:
        lit.encode_integer(bad, "access_count")
    assert err.value.field == "access_count"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_round_trip(number: float) -> None:
    encoded = lit.encode_double(number)
    mantissa = encoded.split("e")[0].lstrip("-")
    whole, _, frac = mantissa.partition(".")
    assert whole.isdigit() and frac.isdigit()  # digits on both sides of the dot
    back = float(encoded)
    assert back == number and math.copysign(1, back) == math.copysign(1, number)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, True, "0.5", Decimal("0.5"), 2**1024, 2**53 + 1])
def test_double_refusals(bad: object) -> None:
    with pytest.raises(InputError) as err:
        lit.encode_double(bad, "importance")
    assert err.value.field == "importance"


@given(st.decimals(allow_nan=False, allow_infinity=False, places=lit.DECIMAL_FRACTION_DIGITS,
                   min_value=Decimal(lit.INT_MIN), max_value=Decimal(lit.INT_MAX)))  # fmt: skip
def test_decimal_round_trip(number: Decimal) -> None:
    encoded = lit.encode_decimal(number)
    assert encoded.endswith("dec")
    assert lit.decode_decimal(encoded) == number


def test_decimal_forms() -> None:
    assert lit.encode_decimal(Decimal("12.50")) == "12.5dec"
    assert lit.encode_decimal(Decimal("1E+3")) == "1000.0dec"
    assert lit.encode_decimal(7) == "7.0dec"
    assert lit.encode_decimal(Decimal("-0.00")) == "0.0dec"
    assert lit.encode_decimal(Decimal("0.1000000000000000000000")) == "0.1dec"


@pytest.mark.parametrize(
    "bad", [Decimal("NaN"), Decimal("Infinity"), Decimal("1E-20"), Decimal(2**63), Decimal("1E+400"), 0.5, True]
)
def test_decimal_refusals(bad: object) -> None:
    with pytest.raises(InputError) as err:
        lit.encode_decimal(bad, "amount")
    assert err.value.field == "amount"


def test_booleans() -> None:
    assert lit.encode_boolean(True) == "true"
    assert lit.encode_boolean(False) == "false"
    with pytest.raises(InputError):
        lit.encode_boolean(1, "enabled")


ZONES = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))])


@given(st.datetimes(timezones=ZONES, min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)))
def test_datetime_round_trip_in_utc(moment: datetime) -> None:
    plain = lit.encode_datetime(moment)
    zoned = lit.encode_datetime(moment, tz=True)
    assert zoned == plain + "Z"
    assert len(plain) == 26 and plain[10] == "T"
    assert lit.decode_datetime(plain) == moment
    assert lit.decode_datetime(zoned) == moment


def test_datetime_naive_is_utc_and_refusals() -> None:
    assert lit.encode_datetime(datetime(2024, 5, 1, 12, 0)) == "2024-05-01T12:00:00.000000"
    assert lit.encode_datetime(datetime(999, 1, 1)) == "0999-01-01T00:00:00.000000"
    with pytest.raises(InputError) as err:
        lit.encode_datetime(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))), "deadline")
    assert err.value.field == "deadline"
    with pytest.raises(InputError):
        lit.encode_datetime("2024-05-01", "deadline")


@pytest.mark.parametrize("label", ["memory-item", "agent", "plan-step", "a1", "x"])
def test_labels_accepted(label: str) -> None:
    assert lit.encode_label(label) == label


@pytest.mark.parametrize(
    "bad", ["", "Agent", "1abc", "memory_item", "a--b", "-a", "a-", "has", "entity", "match", "a b", 'a"', "a;", 3]
)
def test_labels_refused(bad: object) -> None:
    with pytest.raises(InputError) as err:
        lit.encode_label(bad, "type")
    assert err.value.field == "type"


def test_roles() -> None:
    assert lit.encode_role("goal-decomposition:subgoal") == "goal-decomposition:subgoal"
    for bad in ["goal", "a:b:c", "goal:has", "Goal:x", ":x"]:
        with pytest.raises(InputError):
            lit.encode_role(bad)


def test_encode_value_dispatch() -> None:
    moment = datetime(2024, 5, 1, tzinfo=UTC)
    assert lit.encode_value("x") == '"x"'
    assert lit.encode_value(True) == "true"
    assert lit.encode_value(3) == "3"
    assert lit.encode_value(0.5) == "0.5"
    assert lit.encode_value(Decimal("1.5")) == "1.5dec"
    assert lit.encode_value(moment) == "2024-05-01T00:00:00.000000"
    with pytest.raises(InputError) as err:
        lit.encode_value([1], "tags")
    assert err.value.field == "tags"
