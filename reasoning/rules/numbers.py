"""Numbers written the way people write them, and the comparison operators of rule conditions.

``parse_number`` reads ``"$50,000"`` as 50000, ``"15%"`` as 0.15, ``"1.2e3"`` as 1200 and
``"-3"`` as -3; anything else (``"abc"``, ``"1,5"``, ``"inf"``) is ``None``. ``compare`` applies an
:class:`~kg.models.Operator` to a fact's object: ``eq``/``ne`` compare the text exactly, ``contains``
is a case-insensitive substring test, and ``gt``/``lt``/``gte``/``lte`` compare parsed numbers (a side
that does not parse makes the comparison false, never an error).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from functools import lru_cache

from kg.models import Operator

# One optional sign (before or after a currency symbol), digits with optional thousands commas in
# groups of three, an optional fraction and exponent, and an optional trailing percent sign.
_NUMBER = re.compile(
    r"""
    \A\s*
    (?P<sign1>[+-])?\s*
    (?P<currency>[$€£¥])?\s*
    (?P<sign2>[+-])?
    (?P<digits>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)
    (?P<exponent>[eE][+-]?\d+)?
    \s*(?P<percent>%)?
    \s*\Z
    """,
    re.VERBOSE,
)

_NUMERIC: dict[Operator, Callable[[float, float], bool]] = {
    Operator.GT: operator.gt,
    Operator.LT: operator.lt,
    Operator.GTE: operator.ge,
    Operator.LTE: operator.le,
}

#: Operators that compare numbers (both sides must parse).
NUMERIC_OPERATORS = frozenset(_NUMERIC)


@lru_cache(maxsize=65_536)
def parse_number(text: str) -> float | None:
    """Read a number such as ``"$50,000"``, ``"15%"``, ``"1.2e3"`` or ``"-3"``; ``None`` if it is not one.

    Examples:
        >>> parse_number("$50,000"), parse_number("15%"), parse_number("abc")
        (50000.0, 0.15, None)
    """
    match = _NUMBER.match(text)
    if match is None or (match["sign1"] and match["sign2"]):
        return None
    value = float(match["digits"].replace(",", "") + (match["exponent"] or ""))
    if not math.isfinite(value):  # "1e999"
        return None
    if match["percent"]:
        value /= 100
    return -value if "-" in (match["sign1"], match["sign2"]) else value


def compare(fact_object: str, op: Operator, wanted: str) -> bool:
    """Whether a fact's object satisfies ``op`` against ``wanted`` (a condition's constant or bound value).

    Examples:
        >>> compare("$60,000", Operator.GT, "50000"), compare("Acme Corp", Operator.CONTAINS, "acme")
        (True, True)
    """
    if op is Operator.EQ:
        return fact_object == wanted
    if op is Operator.NE:
        return fact_object != wanted
    if op is Operator.CONTAINS:
        return wanted.casefold() in fact_object.casefold()
    left, right = parse_number(fact_object), parse_number(wanted)
    if left is None or right is None:
        return False
    return _NUMERIC[op](left, right)
