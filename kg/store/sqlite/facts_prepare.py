"""The CPU-only half of a bulk fact write (``SqliteFactStore.prepare``): row tuples, outcomes, bound parameters.

A prepared batch holds everything the write transaction needs that does not depend on the store's state, so a
caller can build batch n+1 (in another thread) while batch n is written. Its rows travel to SQLite as multi-row
``INSERT ... VALUES (...), (...)`` statements (:func:`kg.store.sqlite.facts_sql.insert_values`) of up to
:data:`STATEMENT_ROWS` rows, each row binding only the columns that vary within the batch and the shared values
bound once per statement: a few ``sqlite3_step`` calls per batch, during which Python's GIL is free
(docs/decisions/2026-11-29-lubm-import-speed.md, "third pass").
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import Any, NamedTuple

from kg.errors import InputError
from kg.ids import new_ids
from kg.models import AssertOutcome, AssertStatus, FactInput, ObjectKind, format_ts
from kg.ports.facts import FactRow
from kg.store.sqlite.facts_sql import PREPARED_FIELDS, ROW_FIELDS

_KIND_TEXT: dict[ObjectKind | None, str] = {kind: kind.value for kind in ObjectKind}
_new_outcome = tuple.__new__
_uid, _agent = itemgetter(0), itemgetter(1)  # of a prepared row (PREPARED_FIELDS)

#: Rows per multi-row statement. A statement costs SQLite about 0.7 million instructions besides its rows (the
#: statement journal of an abortable multi-row write) and its preparation grows with its rows (about 8 ms for
#: 512, once per process); the rest of a batch goes in statements of power-of-two sizes below this, so at most
#: ten statement shapes per column layout are ever prepared.
STATEMENT_ROWS = 512


class Prepared(NamedTuple):
    """The adapter's payload of a :class:`kg.ports.facts.PreparedFacts`."""

    rows: list[tuple[Any, ...]]  # PREPARED_FIELDS, with fresh uids
    varying: tuple[int, ...]  # which fields (PREPARED_FIELDS positions) each row binds; () for an empty batch
    constants: tuple[Any, ...]  # the value of each other field, one for the whole batch
    chunks: list[tuple[int, list[Any]]]  # (rows, their varying values in order) of each multi-row statement
    agents: set[str]
    created: list[AssertOutcome]  # the outcomes when every row is new (the bulk-load case)
    lineage: list[tuple[str, str, int]]  # (child uid, parent uid, position) of every row


def full_row(row: tuple[Any, ...], now: str, asserted_by: str) -> tuple[Any, ...]:
    """A prepared row as the parameters of INSERT_FIELDS (created_at, updated_at, updated_by bound in)."""
    return (*row[:11], now, now, asserted_by, *row[11:])


def prepare_rows(facts: Sequence[FactInput | FactRow], *, max_variables: int) -> Prepared:
    """The prepared batch of ``facts``: multi-row statements, none binding more than ``max_variables`` parameters
    (the connection's limit)."""
    rows = _rows(facts)
    created = AssertStatus.CREATED
    outcomes = [_new_outcome(AssertOutcome, (uid, created)) for uid in map(_uid, rows)]
    lineage = [(row[0], parent, n) for fact, row in zip(facts, rows, strict=True) if fact.derived_from
               for n, parent in enumerate(fact.derived_from)]  # fmt: skip
    agents = set(map(_agent, rows))
    if not rows:
        return Prepared(rows, (), (), [], agents, outcomes, lineage)
    varying, constants = list(ROW_FIELDS), []
    for i in range(len(PREPARED_FIELDS)):
        if i in ROW_FIELDS:
            continue
        column = list(map(itemgetter(i), rows))
        first = column[0]
        # == takes -0.0 for 0.0: harmless, SQLite stores -0.0 as 0.0 on every path
        if column.count(first) == len(column):
            constants.append(first)
        else:
            varying.append(i)
    varying.sort()
    per_statement = statement_rows(len(varying), len(constants), max_variables)
    values = itemgetter(*varying)
    chunks = [(len(part), list(chain.from_iterable(map(values, part))))
              for part in _parts(rows, per_statement)]  # fmt: skip
    return Prepared(rows, tuple(varying), tuple(constants), chunks, agents, outcomes, lineage)


def statement_rows(varying: int, constants: int, max_variables: int) -> int:
    """Rows per full statement: :data:`STATEMENT_ROWS`, or the largest power of two whose parameters (``varying``
    per row, ``constants`` and the transaction's time and writer once) fit in ``max_variables``."""
    rows = STATEMENT_ROWS
    while rows > 1 and rows * varying + constants + 2 > max_variables:
        rows //= 2
    return rows


def _parts(rows: list[tuple[Any, ...]], size: int) -> list[list[tuple[Any, ...]]]:
    """``rows`` in order, cut into pieces of ``size`` (a power of two) and the rest into smaller powers of two."""
    parts, start = [], 0
    while start < len(rows):
        while size > len(rows) - start:
            size //= 2
        parts.append(rows[start : start + size])
        start += size
    return parts


def _rows(facts: Sequence[FactInput | FactRow]) -> list[tuple[Any, ...]]:
    """The prepared row of each fact (:data:`PREPARED_FIELDS`), with fresh uids (one id reservation)."""
    for fact in facts:
        if fact.object_kind is None or fact.scope is None:  # FactInput fills both; model_construct may not
            raise InputError("fact", "object_kind and scope must be set")
    kinds = _KIND_TEXT
    return [
        (
            uid, f.agent_id, f.scope, f.subject, f.predicate, f.object, kinds[f.object_kind], f.confidence,
            f.source, None if f.valid_from is None else format_ts(f.valid_from),
            None if f.valid_until is None else format_ts(f.valid_until), f.rule_id,
            1 if f.rule_id or f.derived_from else 0,
        )
        for uid, f in zip(new_ids("fact", len(facts)), facts, strict=True)
    ]  # fmt: skip
