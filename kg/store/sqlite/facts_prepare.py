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
from itertools import repeat
from typing import Any, NamedTuple

from kg.errors import InputError
from kg.ids import new_ids
from kg.models import AssertOutcome, AssertStatus, FactInput, ObjectKind, format_ts
from kg.ports.facts import FactColumns, FactRow
from kg.store.sqlite.facts_sql import PREPARED_FIELDS, ROW_FIELDS

_KIND_TEXT: dict[ObjectKind | None, str] = {kind: kind.value for kind in ObjectKind}
_tuple_new = tuple.__new__  # (AssertOutcome, (uid, status)) -> AssertOutcome, in C

#: Rows per multi-row statement. A statement costs SQLite about 0.7 million instructions besides its rows (the
#: statement journal of an abortable multi-row write) and its preparation grows with its rows (about 8 ms for
#: 512, once per process); the rest of a batch goes in statements of power-of-two sizes below this, so at most
#: ten statement shapes per column layout are ever prepared.
STATEMENT_ROWS = 512


class Prepared(NamedTuple):
    """The adapter's payload of a :class:`kg.ports.facts.PreparedFacts`."""

    columns: list[Sequence[Any]]  # PREPARED_FIELDS, one sequence per field (fresh uids first), a value per fact
    varying: tuple[int, ...]  # which fields (PREPARED_FIELDS positions) each row binds; () for an empty batch
    constants: tuple[Any, ...]  # the value of each other field, one for the whole batch
    chunks: list[tuple[int, list[Any]]]  # (rows, their varying values in order) of each multi-row statement
    agents: set[str]
    created: list[AssertOutcome]  # the outcomes when every row is new (the bulk-load case)
    lineage: list[tuple[str, str, int]]  # (child uid, parent uid, position) of every row

    def rows(self) -> list[tuple[Any, ...]]:
        """The prepared row of each fact (PREPARED_FIELDS): built only when a batch is not all new."""
        return list(zip(*self.columns, strict=True))


def full_row(row: tuple[Any, ...], now: str, asserted_by: str) -> tuple[Any, ...]:
    """A prepared row as the parameters of INSERT_FIELDS (created_at, updated_at, updated_by bound in)."""
    return (*row[:11], now, now, asserted_by, *row[11:])


def prepare_rows(facts: Sequence[FactInput | FactRow], *, max_variables: int) -> Prepared:
    """The prepared batch of ``facts``: multi-row statements, none binding more than ``max_variables`` parameters
    (the connection's limit)."""
    columns, parents = _columns(facts)
    uids, count = columns[0], len(facts)
    outcomes = list(map(_tuple_new, repeat(AssertOutcome), zip(uids, repeat(AssertStatus.CREATED))))
    lineage = [(uid, parent, n) for uid, links in zip(uids, parents, strict=True) if links
               for n, parent in enumerate(links)] if any(parents) else []  # fmt: skip
    agents = set(columns[1])
    if not count:
        return Prepared(columns, (), (), [], agents, outcomes, lineage)
    varying, constants = list(ROW_FIELDS), []
    for i in range(len(PREPARED_FIELDS)):
        if i in ROW_FIELDS:
            continue
        column = columns[i]
        first = column[0]
        # == takes -0.0 for 0.0: harmless, SQLite stores -0.0 as 0.0 on every path
        if column.count(first) == count:
            constants.append(first)
        else:
            varying.append(i)
    varying.sort()
    per_statement = statement_rows(len(varying), len(constants), max_variables)
    bound = [columns[i] for i in varying]
    chunks = [(size, _interleave(bound, start, size)) for start, size in _parts(count, per_statement)]
    return Prepared(columns, tuple(varying), tuple(constants), chunks, agents, outcomes, lineage)


def statement_rows(varying: int, constants: int, max_variables: int) -> int:
    """Rows per full statement: :data:`STATEMENT_ROWS`, or the largest power of two whose parameters (``varying``
    per row, ``constants`` and the transaction's time and writer once) fit in ``max_variables``."""
    rows = STATEMENT_ROWS
    while rows > 1 and rows * varying + constants + 2 > max_variables:
        rows //= 2
    return rows


def _parts(count: int, size: int) -> list[tuple[int, int]]:
    """(start, length) of each piece of ``count`` rows in order: pieces of ``size`` (a power of two), the rest in
    smaller powers of two."""
    parts, start = [], 0
    while start < count:
        while size > count - start:
            size //= 2
        parts.append((start, size))
        start += size
    return parts


def _interleave(columns: list[Sequence[Any]], start: int, size: int) -> list[Any]:
    """Rows ``start`` to ``start + size`` of ``columns``, row after row, as one flat list (a statement's
    parameters): each column copied into its stride by a slice assignment, in C, no tuple per row."""
    width = len(columns)
    flat: list[Any] = [None] * (size * width)
    for n, column in enumerate(columns):
        flat[n::width] = column[start : start + size]
    return flat


_Columns = tuple[list[Sequence[Any]], Sequence[Sequence[str]]]


def _columns(facts: Sequence[FactInput | FactRow]) -> _Columns:
    """The prepared rows of ``facts`` as columns (:data:`PREPARED_FIELDS` order), with fresh uids (one id
    reservation), and each fact's lineage (its ``derived_from``). A batch of plain :class:`FactRow` tuples (a bulk
    load) is transposed in C, a column at a time, and a :class:`FactColumns` batch (an RDF import) is columns
    already; anything else (models) is read fact by fact. All give the same values."""
    count = len(facts)
    if type(facts) is FactColumns:
        return _fact_columns(facts)
    if set(map(type, facts)) != {FactRow}:
        return _model_columns(facts)
    agent, subject, predicate, obj, kind, scope, confidence, source, since, until, parents, rule = zip(
        *facts, strict=True
    )
    if None in kind or None in scope:  # FactRow's own makers fill both; a hand-made tuple may not
        raise InputError("fact", "object_kind and scope must be set")
    derived = (
        [0] * count if not any(rule) and not any(parents)
        else [1 if r or p else 0 for r, p in zip(rule, parents, strict=True)]
    )  # fmt: skip
    return [
        new_ids("fact", count), agent, scope, subject, predicate, obj, list(map(_KIND_TEXT.__getitem__, kind)),
        confidence, source, _times(since), _times(until), rule, derived,
    ], parents  # fmt: skip


def _fact_columns(facts: FactColumns) -> _Columns:
    """:func:`_columns` of a batch held as columns: the same values as its FactRow tuples give (the shared values a
    column each, which :func:`prepare_rows` finds constant), without a tuple per fact."""
    count = len(facts)
    nothing = (None,) * count
    return [
        new_ids("fact", count), (facts.agent_id,) * count, (facts.scope,) * count, facts.subjects, facts.predicates,
        facts.objects, list(map(_KIND_TEXT.__getitem__, facts.kinds)), (1.0,) * count, (facts.source,) * count,
        nothing, nothing, nothing, [0] * count,
    ], ((),) * count  # fmt: skip


def _times(column: tuple[Any, ...]) -> Sequence[str | None]:
    """A column of optional datetimes as stored text."""
    if column.count(None) == len(column):
        return column
    return [None if t is None else format_ts(t) for t in column]


def _model_columns(facts: Sequence[FactInput | FactRow]) -> _Columns:
    """:func:`_columns` fact by fact (models, or a batch mixing models and rows)."""
    for fact in facts:
        if fact.object_kind is None or fact.scope is None:  # FactInput fills both; model_construct may not
            raise InputError("fact", "object_kind and scope must be set")
    kinds = _KIND_TEXT
    rows = [
        (
            uid, f.agent_id, f.scope, f.subject, f.predicate, f.object, kinds[f.object_kind], f.confidence,
            f.source, None if f.valid_from is None else format_ts(f.valid_from),
            None if f.valid_until is None else format_ts(f.valid_until), f.rule_id,
            1 if f.rule_id or f.derived_from else 0,
        )
        for uid, f in zip(new_ids("fact", len(facts)), facts, strict=True)
    ]  # fmt: skip
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [() for _ in PREPARED_FIELDS]
    return columns, [fact.derived_from for fact in facts]
