"""Scalars, the base models and parsing of untrusted input, shared by every record model."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    model_validator,
)

from kg.errors import InputError
from kg.ids import PREFIXES, new_id

AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")


SCOPE_NAME_RE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"


SCOPE_RE = re.compile(rf"^(global|agent:[a-z0-9][a-z0-9_-]{{0,63}}|(project|user|custom):{SCOPE_NAME_RE})\Z")


MAX_CONTENT = 65_536  # characters of free text (memory content, beliefs, goals ...)


MAX_TERM = 1_024  # characters of a fact subject or predicate


MAX_OBJECT = 8_192  # characters of a fact object


MAX_NAME = 256


MAX_TAGS = 64


MAX_LIST = 1_000


def format_ts(value: datetime) -> str:
    """Render a datetime (naive means UTC) as fixed-width ISO-8601 UTC (``...ffffffZ``)."""
    utc = to_utc(value)
    # %Y is not zero-padded below year 1000 on glibc: pad it so the text stays fixed-width and parseable.
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")


def to_utc(value: datetime) -> datetime:
    """Read naive datetimes as UTC and convert aware ones to UTC."""
    if value.tzinfo is UTC:
        return value
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00: a ValueError so that parse() reports the field
        raise ValueError("must lie between 0001-01-01 and 9999-12-31 once converted to UTC") from None


def _parse_ts(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("z", "Z")):
            text = text[:-1] + "+00:00"
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"must be an ISO-8601 timestamp such as 2024-05-01T12:00:00Z, got {value!r}") from None
    if isinstance(value, bool | int | float):  # pydantic would read a number as Unix seconds; the schema says text
        raise ValueError(f"must be an ISO-8601 timestamp such as 2024-05-01T12:00:00Z, got the number {value!r}")
    return value


UtcDatetime = Annotated[
    datetime,
    BeforeValidator(_parse_ts),
    AfterValidator(to_utc),
    PlainSerializer(format_ts, return_type=str, when_used="json"),
]


def _check_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _matching(pattern: re.Pattern[str], rule: str) -> Callable[[str], str]:
    """A validator: the value must match ``pattern``, else ``rule`` and the value (cut to 80 characters)."""

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{rule}, got {value[:80]!r}")
        return value

    return check


_check_agent_id = _matching(
    AGENT_ID_RE,
    "must match [a-z0-9][a-z0-9_-]{0,63} (lowercase letters, digits, '-' and '_'; it becomes a directory name)",
)
_check_scope = _matching(
    SCOPE_RE, "must be 'global', 'agent:<agent-id>', 'project:<name>', 'user:<name>' or 'custom:<name>'"
)


def _check_finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


Text = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT), AfterValidator(_check_text)]


Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_check_text)]


OptionalLabel = Annotated[str, Field(max_length=MAX_NAME)]


Term = Annotated[str, Field(min_length=1, max_length=MAX_TERM), AfterValidator(_check_text)]


ObjectText = Annotated[str, Field(min_length=1, max_length=MAX_OBJECT), AfterValidator(_check_text)]


AgentId = Annotated[str, AfterValidator(_check_agent_id)]


Scope = Annotated[str, AfterValidator(_check_scope)]


Unit = Annotated[float, Field(ge=0.0, le=1.0), AfterValidator(_check_finite)]


Priority = Annotated[int, Field(ge=1, le=10)]


Tag = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[^\s,]+$")]


RecordId = Annotated[str, Field(pattern=r"^[A-Z]{1,3}-[0-9A-HJKMNP-TV-Z]{26}$")]


def agent_scope(agent_id: str) -> str:
    """The private scope of an agent."""
    return f"agent:{agent_id}"


def new_list() -> list[Any]:
    """A new empty list, as a pydantic field's ``default_factory`` (``Field(default_factory=new_list)``).

    Not the builtin ``list``: pydantic reads a factory's signature when it builds a model (does it take the validated
    data?), and for a builtin ``inspect`` parses the text signature with :mod:`tokenize`, whose first use in a process
    compiles its large token patterns (about 5 ms, 13 M instructions of a cold ``mabos fact query`` or recall, issue
    33); each further builtin factory costs ~0.3 ms more. A Python function's signature is read from its code.
    tests/unit/test_startup_imports.py keeps builtin list factories out of pydantic fields.
    """
    return []


class Model(BaseModel):
    """Base of every mabos model: unknown fields refused, assignments validated.

    Validators are built on a model's first use, not at import (``defer_build``): a CLI process pays only for the
    models it touches. pydantic >= 2.14 builds under a lock, so threads meeting a model first are safe.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False, defer_build=True)


class Record(Model):
    """Fields every stored record has."""

    uid: RecordId
    agent_id: AgentId
    scope: Scope
    created_at: UtcDatetime

    @model_validator(mode="before")
    @classmethod
    def _default_scope(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("scope") and isinstance(data.get("agent_id"), str):
            data = {**data, "scope": agent_scope(data["agent_id"])}
        return data


M = TypeVar("M", bound=BaseModel)


def _loc_part(part: str | int) -> str:
    # a dict key of the input can be any text: quote it when it is not a plain name, so the message stays one line
    text = str(part)
    return text if re.fullmatch(r"[\w\-]{1,64}", text) else repr(text[:40])


#: The tags pydantic adds to an error's location for the member of a union (or a validator) that failed:
#: ``observation.constrained-str`` is the field ``observation``, whatever member of ``str | Triple`` was tried.
#: Compiled by the first error report (``re``'s cache keeps it): about 3 M instructions no valid call needs.
_SCHEMA_TAG = (
    r"(constrained-\w+|function-(after|before|wrap|plain)\[.*\]|(lax-or-strict|json-or-python|tagged-union|nullable|"
    r"chain|default|model|dataclass)\[.*\]|(str|int|float|bool|bytes|list|dict|set|frozenset|tuple|decimal|date|"
    r"datetime|time|timedelta|url|uuid|is-instance|literal)(\[.*\])?)"
)


def error_location(loc: Iterable[Any]) -> list[str | int]:
    """A pydantic error's location as the path of the input: field names, keys and indexes, without the tags
    pydantic adds for the union member or validator that was tried."""
    return [p for p in loc if isinstance(p, int) or (isinstance(p, str) and not re.fullmatch(_SCHEMA_TAG, p))]


def describe_validation_error(exc: ValidationError) -> InputError:
    """Turn pydantic's report into one :class:`InputError` naming the first bad field (the field's path, without
    the tags pydantic adds for union members and validators)."""
    err = exc.errors(include_url=False)[0]
    field = ".".join(_loc_part(p) for p in error_location(err["loc"]))
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not field:  # a model-level rule: its message starts with "<field>: "
        named = re.match(r"^([A-Za-z_][\w.]*): (.*)$", msg, re.S)
        field, msg = (named.group(1), named.group(2)) if named else (exc.title, msg)
    value = err.get("input")
    if err["type"] != "value_error" and isinstance(value, str | int | float) and not isinstance(value, bool):
        msg = f"{msg} (got {_shown(value)})"
    return InputError(field, msg)


def _shown(value: str | int | float, most: int = 60) -> str:
    """``repr(value)`` cut to ``most`` characters (the last three "..."), without writing out a long value: only a
    long text's head is quoted (with the quote characters of the whole text, which decide repr's quotes and escapes),
    and an integer too long for Python to write in decimal (past ``sys.get_int_max_str_digits()``) is given by its
    size."""
    if isinstance(value, str) and len(value) > most:
        value = value[:most] + "".join(q for q in "'\"" if q in value)
    try:
        shown = repr(value)
    except ValueError:  # only an int has a repr that can fail
        return f"an integer of {int(value).bit_length()} bits"
    return shown if len(shown) <= most else shown[: most - 3] + "..."


def parse(model: type[M], data: dict[str, Any]) -> M:
    """Validate ``data`` into ``model`` or raise :class:`InputError` naming the field and the rule."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc) from None


def new_record_id(kind: str) -> str:
    """A fresh id for a record kind (see :data:`kg.ids.PREFIXES`)."""
    if kind not in PREFIXES:
        raise InputError("kind", f"unknown record kind {kind!r}")
    return new_id(kind)
