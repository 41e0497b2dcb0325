"""Facts: what a caller asserts, what is stored, outcomes, live triples and queries."""

import re
from enum import StrEnum
from typing import Annotated, Any, NamedTuple

from pydantic import (
    Field,
    model_validator,
)

from kg.models.base import (
    MAX_LIST,
    MAX_OBJECT,
    MAX_TERM,
    AgentId,
    Model,
    ObjectText,
    OptionalLabel,
    Record,
    RecordId,
    Scope,
    Term,
    Unit,
    UtcDatetime,
    agent_scope,
    new_list,
)


class ObjectKind(StrEnum):
    """Whether a fact's object names an entity or is a literal value."""

    ENTITY = "entity"
    LITERAL = "literal"


#: (entity-like, number-like) patterns, compiled by the first :func:`infer_object_kind` (about 2 M instructions a
#: read-only command never needs: issue 33).
_PATTERNS: tuple[re.Pattern[str], re.Pattern[str]] | None = None


def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    global _PATTERNS  # noqa: PLW0603 - compiled once, on first use
    _PATTERNS = (re.compile(r"^[A-Za-z_][\w.:/-]*$"), re.compile(r"^[-+$€£¥]?\s*[\d.,]+\s*(%|[kKmMbB]n?)?$"))
    return _PATTERNS


def infer_object_kind(obj: str) -> ObjectKind:
    """Guess whether an object is an entity (an identifier such as ``acme``) or a literal."""
    entityish, numberish = _PATTERNS or _patterns()
    if entityish.match(obj) and not numberish.match(obj) and obj.lower() not in {"true", "false"}:
        return ObjectKind.ENTITY
    return ObjectKind.LITERAL


class FactInput(Model):
    """What a caller gives to assert a fact; the store fills in uid and times."""

    agent_id: AgentId
    subject: Term
    predicate: Term
    object: ObjectText
    object_kind: ObjectKind | None = None
    scope: Scope | None = None
    confidence: Unit = 1.0
    source: OptionalLabel = "agent"
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    derived_from: list[RecordId] = Field(default_factory=new_list, max_length=MAX_LIST)
    rule_id: RecordId | None = None

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        # Filled before validation (not by assignment afterwards, which would validate twice).
        if isinstance(data, dict):
            if data.get("object_kind") is None and isinstance(data.get("object"), str):
                data = {**data, "object_kind": infer_object_kind(data["object"])}
            if data.get("scope") is None and isinstance(data.get("agent_id"), str):
                data = {**data, "scope": agent_scope(data["agent_id"])}
        return data

    @model_validator(mode="after")
    def _check(self) -> "FactInput":
        if self.valid_from and self.valid_until and self.valid_until <= self.valid_from:
            raise ValueError("valid_until: must be later than valid_from")
        return self


class Fact(Record):
    """A (subject, predicate, object) statement with world-time validity and system-time history."""

    subject: Term
    predicate: Term
    object: ObjectText
    object_kind: ObjectKind
    confidence: Unit
    source: OptionalLabel
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    updated_at: UtcDatetime
    updated_by: AgentId
    retracted_at: UtcDatetime | None = None
    retracted_by: AgentId | None = None
    derived_from: list[RecordId] = Field(default_factory=new_list)
    rule_id: RecordId | None = None

    @property
    def derived(self) -> bool:
        """Whether the fact was produced by inference rather than asserted."""
        return bool(self.rule_id or self.derived_from)


class AssertStatus(StrEnum):
    """What an assert did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class AssertOutcome(NamedTuple):
    """Result of one assert in a batch (a tuple: bulk loads make hundreds of thousands)."""

    uid: str
    status: AssertStatus


class LiveTriple(NamedTuple):
    """A live fact reduced to what reasoning over the whole store needs (a tuple: there may be millions)."""

    uid: str
    subject: str
    predicate: str
    object: str
    confidence: float
    rule_id: str | None
    scope: str
    object_kind: str  # "entity" or "literal"


def pattern_parts(pattern: str) -> tuple[str, ...]:
    """Literal segments of a query pattern, split at its wildcards.

    ``*`` matches any run of characters; ``\\*`` is a literal star and ``\\\\`` a literal backslash.
    ``"acme"`` -> ``("acme",)`` (exact), ``"ac*e"`` -> ``("ac", "e")``, ``"*"`` -> ``("", "")`` (anything).
    """
    parts, current, chars = [], [], iter(pattern)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            current.append(nxt if nxt in ("*", "\\") else ch + nxt)
        elif ch == "*":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return tuple(parts)


class FactQuery(Model):
    """A fact pattern query: ``*`` in subject/predicate/object is a wildcard (``\\*`` a literal star)."""

    scopes: list[Scope] = Field(min_length=1)
    subject: Annotated[str, Field(max_length=MAX_TERM)] = "*"
    predicate: Annotated[str, Field(max_length=MAX_TERM)] = "*"
    object: Annotated[str, Field(max_length=MAX_OBJECT)] = "*"
    min_confidence: Unit = 0.0
    valid_at: UtcDatetime | None = None
    as_of: UtcDatetime | None = None
    include_derived: bool = True
    only_derived: bool = False
    include_retracted: bool = False
    limit: int = Field(default=100, ge=1, le=100_000)
