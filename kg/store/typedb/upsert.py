"""Idempotent TypeQL 3 writes of one record: the primitive :mod:`kg.store.typedb.writes` builds every aggregate on.

:func:`entity_upsert` finds a record by ``uid`` (``@key``): ``put`` creates it once, an ``update`` sets its
single-valued attributes, one ``delete`` per attribute it no longer has, and multi-valued attributes are replaced
(delete all, insert the new list). Every query after the ``put`` carries :func:`guard`, so an older state never
overwrites a newer one. Values go through :mod:`kg.store.typedb.literals` (:func:`literal`), labels are fixed
names it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.models import to_utc
from kg.store.typedb.literals import (
    encode_boolean,
    encode_datetime,
    encode_double,
    encode_integer,
    encode_label,
    encode_string,
)

#: Value type of every attribute the writer sets (checked against base.tql by a test).
ATTRIBUTE_TYPES: dict[str, str] = {
    **dict.fromkeys(
        (
            "uid", "agent-id", "record-scope", "has-content", "has-source", "derived-from-uid", "derived-from-order",
            "record-json",
            "agent-name", "agent-role", "agent-department", "commitment-strategy", "granted-scope", "granted-by",
            "memory-type", "memory-store", "memory-tag", "decay-tier",
            "subject-term", "predicate-term", "object-value", "object-kind", "updated-by", "retracted-by",
            "rule-uid", "rule-name", "rule-description", "rule-type", "rule-conditions-json", "rule-conclusion",
            "violation-message", "severity", "rule-action", "rule-domain",
            "situation-belief", "situation-desire", "situation-context", "solution-plan-uid", "solution-action",
            "teaches-lesson", "node-status", "hierarchy-level",
            "target-domain", "proposed-node-type", "proposed-node-id", "proposed-label", "parent-class",
            "domain-class", "proposed-range", "proposed-definition", "proposed-synonym", "rationale",
            "proposer-agent-id", "proposal-status",
        ),
        "string",
    ),
    **dict.fromkeys(
        ("created-at", "updated-at", "expires-at", "archived-at", "valid-from", "valid-until", "retracted-at",
         "deadline"),
        "datetime",
    ),
    **dict.fromkeys(
        ("importance-score", "confidence-score", "rule-confidence-factor", "certainty-score", "urgency-score",
         "progress-score"),
        "double",
    ),
    **dict.fromkeys(("priority", "sequence-number", "record-version"), "integer"),
    **dict.fromkeys(("escalates", "is-enabled", "was-successful", "proposal-multi-valued"), "boolean"),
}  # fmt: skip

#: Attributes a record may own several of (``@card(0..)`` in base.tql).
MULTI_VALUED = frozenset(
    {"derived-from-uid", "memory-tag", "situation-belief", "situation-desire", "solution-action",
     "teaches-lesson", "proposed-synonym"}
)  # fmt: skip

Value = str | int | float | bool | datetime | None
Attributes = dict[str, Value | list[str]]


def parse_ts(text: str) -> datetime:
    """A payload timestamp (``...Z`` ISO text, as :func:`kg.models.format_ts` writes it) as UTC."""
    return to_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))


def literal(attribute: str, value: Any) -> str:
    """``value`` as a literal of ``attribute``'s value type (ISO text is read as a UTC datetime)."""
    value_type = ATTRIBUTE_TYPES[attribute]
    if value_type == "string":
        return encode_string(value, attribute)
    if value_type == "datetime":
        moment = parse_ts(value) if isinstance(value, str) else value
        return encode_datetime(moment, attribute)
    if value_type == "double":
        return encode_double(value, attribute)
    if value_type == "integer":
        return encode_integer(value, attribute)
    return encode_boolean(value, attribute)


def has(attribute: str, value: Any) -> str:
    return f"has {encode_label(attribute)} {literal(attribute, value)}"


def guard(var: str, stamp: datetime | None, version: int | None = None) -> str:
    """Skip the query when the stored record is newer than ``stamp``, or as new with a later ``version``."""
    if stamp is None:
        return ""
    moment = encode_datetime(stamp, "updated-at")
    newer = f" not {{ ${var} has updated-at $stamp; $stamp > {moment}; }};"
    if version is None:
        return newer
    later = encode_integer(version, "record-version")
    return newer + f" not {{ ${var} has updated-at {moment}, has record-version $version; $version > {later}; }};"


def _match(write: EntityWrite, extra: str = "") -> str:
    head = f"match $x isa {encode_label(write.entity)}, {has('uid', write.uid)}{extra};"
    return head + guard("x", write.stamp, write.version) + write.condition


@dataclass(frozen=True)
class EntityWrite:
    """One record's state: its entity type, uid, the time of the state and its attributes.

    ``condition`` is extra match text every query after the ``put`` carries (a fact: not retracted).
    ``version`` orders states of the same ``stamp`` (the outbox ``seq`` of the event; stored as
    ``record-version``); None for a write that does not come from the outbox.
    """

    entity: str
    uid: str
    stamp: datetime | None
    attributes: Attributes
    condition: str = ""
    version: int | None = None


def entity_upsert(write: EntityWrite) -> list[str]:
    """Queries that create the record if absent and give it exactly ``write.attributes``."""
    queries = [f"put $x isa {encode_label(write.entity)}, {has('uid', write.uid)};"]
    single = {k: v for k, v in write.attributes.items() if k not in MULTI_VALUED}
    if write.version is not None:
        single["record-version"] = write.version
    present = [has(k, v) for k, v in single.items() if v is not None]
    if present:
        queries.append(f"{_match(write)}\nupdate $x {', '.join(present)};")
    for attribute in sorted(k for k, v in single.items() if v is None):
        label = encode_label(attribute)
        extra = f", has {label} $old"
        queries.append(f"{_match(write, extra)}\ndelete has $old of $x;")
    for attribute, values in sorted((k, v) for k, v in write.attributes.items() if k in MULTI_VALUED):
        label = encode_label(attribute)
        extra = f", has {label} $old"
        queries.append(f"{_match(write, extra)}\ndelete has $old of $x;")
        items = list(values) if isinstance(values, list) else []
        if items:
            owned = ", ".join(has(attribute, item) for item in items)
            queries.append(f"{_match(write)}\ninsert $x {owned};")
    return queries


def delete_record(uid: str) -> list[str]:
    """The query that deletes the record (entity or relation) with ``uid``; nothing when it is gone."""
    return [f"match $x {has('uid', uid)};\ndelete $x;"]


__all__ = [
    "ATTRIBUTE_TYPES",
    "MULTI_VALUED",
    "Attributes",
    "EntityWrite",
    "Value",
    "delete_record",
    "entity_upsert",
    "guard",
    "has",
    "literal",
    "parse_ts",
]
