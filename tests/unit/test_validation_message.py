"""A refused value is shown in the error as the head of its repr (``kg.models.base.describe_validation_error``): the
same text as cutting the whole repr, for a value of any size, and never a second failure on the way."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from kg.errors import InputError
from kg.models.base import parse


class _Named(BaseModel):
    name: str = Field(max_length=10)


def _message(value: object) -> str:
    with pytest.raises(InputError) as refused:
        parse(_Named, {"name": value})
    assert refused.value.field == "name"
    return str(refused.value)


def _cut(value: object) -> str:
    """What the message showed when it wrote the whole repr and cut it to 60 characters."""
    whole = repr(value)
    return whole if len(whole) <= 60 else whole[:57] + "..."


@pytest.mark.parametrize(
    "value",
    [
        "x" * 11,
        "x" * 10_000_000,  # a 10 MB text: only its head is quoted
        "x" * 100 + "'",  # a quote past the head still makes repr choose double quotes
        "it's" + "x" * 100 + '"',  # both kinds: single quotes, the one in the head escaped
        "é\n\t\\" * 40,  # escapes in the head
    ],
    ids=["short", "10MB", "quote-after-head", "both-quotes", "escapes"],
)
def test_a_long_text_shows_the_head_of_its_repr(value: str) -> None:
    message = _message(value)
    assert message.endswith(f" (got {_cut(value)})") and "\n" not in message


def test_an_integer_too_long_to_write_in_decimal_is_refused_naming_the_field() -> None:
    # past sys.get_int_max_str_digits() (4,300 digits) repr raises ValueError: the refusal itself failed before
    message = _message(10**5000)
    assert message.startswith("name: ") and message.endswith("(got an integer of 16610 bits)")


def test_an_integer_of_many_digits_shows_its_first_digits() -> None:
    assert _message(10**100).endswith(f" (got {_cut(10**100)})")
