"""Python values -> TypeQL 3 literals for query text (the rules: /work/shared/typedb-notes.md §1.2, §1.8, §2.10).

Prefer ``given`` parameters where the server has them; labels can never be parameters, and older servers have
no ``given``, so every value or label that goes into query text goes through this module. Every encoder
refuses what it cannot encode with an :class:`~kg.errors.InputError` naming the field, never emits a partial
literal, and never lets a value end its literal early (no injection).

* strings: ``"..."`` with ``\\\\ \\" \\n \\r \\t \\b \\f`` escaped, so a literal is always one line and one
  token; other control characters (NUL included) stay raw, as the grammar allows, or become ``\\uXXXX`` on
  request (recent servers only); unpaired surrogates are refused (UTF-8 cannot carry them);
* integers: 64-bit signed; ``bool`` is refused where an integer is expected;
* doubles: finite only, written so that they read back bit-for-bit (``1.0``, ``1.5e-07``);
* decimals: ``<digits>.<digits>dec``, at most 19 fractional digits and an i64 integer part;
* datetimes: UTC, ``YYYY-MM-DDTHH:MM:SS.ffffff`` for ``datetime`` attributes (naive input is read as UTC),
  the same with ``Z`` for ``datetime-tz``;
* labels: :data:`kg.models.typeql.IDENTIFIER_RE`, not a reserved word; scoped role labels
  ``relation:role``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

from kg.errors import InputError
from kg.models.typeql import IDENTIFIER_RE, RESERVED_WORDS

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
DECIMAL_FRACTION_DIGITS = 19

# Escapes of the grammar (rust/value.rs StringLiteral::unescape), both ways.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_UNESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
# Characters written as \uXXXX: C0/C1 controls, DEL, line/paragraph separators, BOM.
_NEEDS_U = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}\Z")
_HEX_BRACED = re.compile(r"\{([0-9A-Fa-f]{1,6})\}")


def _escape_char(ch: str, unicode_escapes: bool) -> str:
    known = _ESCAPES.get(ch)
    if known is not None:
        return known
    if unicode_escapes and _NEEDS_U.match(ch):
        return f"\\u{ord(ch):04x}"
    return ch


def encode_string(value: object, field: str = "value", *, unicode_escapes: bool = False) -> str:
    """A double-quoted TypeQL string literal whose value is exactly ``value``.

    Other control characters (NUL included) stay raw by default, which every TypeQL 3 grammar accepts inside
    quotes; ``unicode_escapes=True`` writes them as ``\\uXXXX``, which only servers with typeql #438
    (April 2026) understand.
    """
    if not isinstance(value, str):
        raise InputError(field, f"must be a string, got {type(value).__name__}")
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise InputError(field, f"contains an unpaired surrogate U+{ord(bad.group()):04X}, which has no encoding")
    return '"' + "".join(_escape_char(ch, unicode_escapes) for ch in value) + '"'


def decode_string(literal: str) -> str:
    """The value of a TypeQL string literal (``"..."`` or ``'...'``); the inverse of :func:`encode_string`.

    Raises :class:`InputError` for a malformed literal: no closing quote, an unescaped delimiter inside,
    or an escape the grammar does not know.
    """
    if len(literal) < 2 or literal[0] not in "\"'" or literal[-1] != literal[0]:
        raise InputError("literal", "must start and end with the same quote")
    quote, body, out, i = literal[0], literal[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == quote:
            raise InputError("literal", f"unescaped {quote} at offset {i + 1}")
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(body):
            raise InputError("literal", "ends inside an escape sequence")
        code = body[i + 1]
        if code in _UNESCAPES:
            out.append(_UNESCAPES[code])
            i += 2
        elif code == "u":
            braced = _HEX_BRACED.match(body, i + 2)
            if braced is not None:
                point, i = int(braced.group(1), 16), braced.end()
            elif _HEX4.match(body[i + 2 : i + 6]):
                point, i = int(body[i + 2 : i + 6], 16), i + 6
            else:
                raise InputError("literal", f"bad \\u escape at offset {i + 1}")
            if point > 0x10FFFF or 0xD800 <= point <= 0xDFFF:
                raise InputError("literal", f"\\u escape U+{point:X} is not a Unicode scalar value")
            out.append(chr(point))
        else:
            raise InputError("literal", f"invalid escape sequence \\{code} at offset {i + 1}")
    return "".join(out)


def encode_integer(value: object, field: str = "value") -> str:
    """A TypeQL ``integer`` literal (64-bit signed)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, f"must be an integer, got {type(value).__name__}")
    if not INT_MIN <= value <= INT_MAX:
        raise InputError(field, f"must fit in a 64-bit signed integer ({INT_MIN}..{INT_MAX}), got {value}")
    return str(value)


def encode_double(value: object, field: str = "value") -> str:
    """A TypeQL ``double`` literal that reads back as the same float (ints are accepted and widened)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, f"must be a number, got {type(value).__name__}")
    if isinstance(value, int):
        try:
            number = float(value)
        except OverflowError:
            raise InputError(field, "integer is too large for a double") from None
        if number != value:
            raise InputError(field, f"integer {value} has no exact double")
    else:
        number = value
    if not math.isfinite(number):
        raise InputError(field, f"must be a finite number, got {number!r}")
    text = repr(number)
    # repr gives "1e-07" / "1e+16" / "inf"-free text; the grammar wants digits on both sides of the dot.
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (f"e{int(exponent)}" if exponent else "")


def encode_decimal(value: object, field: str = "value") -> str:
    """A TypeQL ``decimal`` literal (``12.50dec``): exact, at most 19 fractional digits, i64 integer part."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise InputError(field, f"must be a Decimal or an integer, got {type(value).__name__}")
    number = Decimal(value)
    if not number.is_finite():
        raise InputError(field, f"must be a finite decimal, got {number}")
    if number.adjusted() > 19:  # |number| >= 1e20: far outside i64, and cheap to refuse before int()
        raise InputError(field, f"integer part must fit in a 64-bit signed integer, got {number}")
    _sign, digits, exponent = number.as_tuple()
    if isinstance(exponent, int) and -exponent > DECIMAL_FRACTION_DIGITS:
        extra = -exponent - DECIMAL_FRACTION_DIGITS
        if any(digits[-extra:]):
            raise InputError(field, f"has more than {DECIMAL_FRACTION_DIGITS} fractional digits: {number}")
    integral = int(number.to_integral_value(rounding="ROUND_FLOOR"))
    if not INT_MIN <= integral <= INT_MAX:
        raise InputError(field, f"integer part must fit in a 64-bit signed integer, got {number}")
    text = f"{number:f}"
    if "." in text:
        text = text.rstrip("0")
        text = text + "0" if text.endswith(".") else text
    else:
        text += ".0"
    return ("0.0" if text in ("-0.0",) else text) + "dec"


def decode_decimal(literal: str) -> Decimal:
    """The value of a decimal literal written by :func:`encode_decimal`."""
    if not re.fullmatch(r"-?[0-9]+\.[0-9]+dec", literal):
        raise InputError("literal", f"not a decimal literal: {literal[:40]!r}")
    return Decimal(literal[:-3])


def encode_boolean(value: object, field: str = "value") -> str:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise InputError(field, f"must be a boolean, got {type(value).__name__}")
    return "true" if value else "false"


def encode_datetime(value: object, field: str = "value", *, tz: bool = False) -> str:
    """A UTC datetime literal: ``2024-05-01T12:00:00.000000`` for ``datetime`` (``...Z`` when ``tz``).

    Naive input is read as UTC and aware input converted to UTC, as in :mod:`kg.models`.
    """
    if not isinstance(value, datetime):
        raise InputError(field, f"must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        utc = value
    else:
        try:
            utc = value.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            raise InputError(field, "must lie between 0001-01-01 and 9999-12-31 once converted to UTC") from None
    text = f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%f")
    return text + "Z" if tz else text


def decode_datetime(literal: str) -> datetime:
    """The aware UTC datetime of a literal written by :func:`encode_datetime`."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})Z?", literal)
    if match is None:
        raise InputError("literal", f"not a datetime literal: {literal[:40]!r}")
    return datetime.fromisoformat(match.group(1)).replace(tzinfo=UTC)


def encode_label(value: object, field: str = "label") -> str:
    """A type label (``memory-item``): lowercase kebab identifier, not a reserved word."""
    if not isinstance(value, str):
        raise InputError(field, f"must be a string, got {type(value).__name__}")
    if not IDENTIFIER_RE.match(value):
        raise InputError(field, f"must be a lowercase kebab-case identifier such as memory-item, got {value[:80]!r}")
    if value in RESERVED_WORDS:
        raise InputError(field, f"{value!r} is a reserved TypeQL keyword")
    return value


def encode_role(value: object, field: str = "role") -> str:
    """A scoped role label ``relation:role`` (both parts checked by :func:`encode_label`)."""
    if not isinstance(value, str) or value.count(":") != 1:
        raise InputError(field, f"must be a scoped role label relation:role, got {str(value)[:80]!r}")
    relation, role = value.split(":")
    return f"{encode_label(relation, field)}:{encode_label(role, field)}"


#: The encoder of each Python type, tried in order (bool before int: a bool is an int).
_ENCODERS: tuple[tuple[type, Callable[[object, str], str]], ...] = (
    (str, encode_string),
    (bool, encode_boolean),
    (int, encode_integer),
    (float, encode_double),
    (Decimal, encode_decimal),
    (datetime, encode_datetime),
)


def encode_value(value: object, field: str = "value") -> str:
    """Any supported Python value as a literal: str, bool, int (integer), float (double), Decimal, datetime."""
    for kind, encode in _ENCODERS:
        if isinstance(value, kind):
            return encode(value, field)
    raise InputError(field, f"has no TypeQL literal form: {type(value).__name__}")


__all__ = [
    "DECIMAL_FRACTION_DIGITS",
    "INT_MAX",
    "INT_MIN",
    "decode_datetime",
    "decode_decimal",
    "decode_string",
    "encode_boolean",
    "encode_datetime",
    "encode_decimal",
    "encode_double",
    "encode_integer",
    "encode_label",
    "encode_role",
    "encode_string",
    "encode_value",
]
