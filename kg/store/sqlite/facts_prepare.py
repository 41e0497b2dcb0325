"""The CPU-only half of a bulk fact write (``SqliteFactStore.prepare``): row tuples, outcomes, the JSON batch.

A prepared batch holds everything the write transaction needs that does not depend on the store's state, so a
caller can build batch n+1 (in another thread) while batch n is written. Its rows travel to SQLite as one JSON
array read by one ``INSERT ... SELECT`` (:func:`kg.store.sqlite.facts_sql.insert_from_json`): one
``sqlite3_step`` for the batch, during which Python's GIL is free, and only the columns that vary within the
batch (binding 16 values per row cost SQLite more than reading 4 to 7 from JSON).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
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

# Doubles whose shortest decimal text SQLite's own reader (sqlite3AtoF, used by CAST) rounds to a neighbour;
# a JSON reader that returns all of them exactly reads numbers with the C library's correctly rounded strtod,
# and batches travel as JSON. Otherwise rows are bound one by one (executemany), as before.
_JSON_PROBE = (0.707056753354459, 0.940030237150629, 0.610096720368348, 0.30000000000000004, 5e-324)


def json_reads_doubles_exactly(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` reads every probe double back exactly the way a batch is read (``json_each`` and
    ``->>``, SQLite 3.38 and later)."""
    probe = json.dumps([[value] for value in _JSON_PROBE])
    try:
        got = [r[0] for r in conn.execute("SELECT value ->> 0 FROM json_each(?)", (probe,))]
    except sqlite3.Error:  # no JSON functions in this SQLite
        return False
    return got == list(_JSON_PROBE) and all(type(v) is float for v in got)


class Prepared(NamedTuple):
    """The adapter's payload of a :class:`kg.ports.facts.PreparedFacts`."""

    rows: list[tuple[Any, ...]]  # PREPARED_FIELDS, with fresh uids
    json: str | None  # the fields that vary of each row, as one JSON array (None: bind rows one by one)
    in_json: tuple[int, ...]  # which fields (PREPARED_FIELDS positions) the JSON rows hold
    constants: tuple[Any, ...]  # the value of each other field, one for the whole batch
    agents: set[str]
    created: list[AssertOutcome]  # the outcomes when every row is new (the bulk-load case)
    lineage: list[tuple[str, str, int]]  # (child uid, parent uid, position) of every row


def full_row(row: tuple[Any, ...], now: str, asserted_by: str) -> tuple[Any, ...]:
    """A prepared row as the parameters of INSERT_FIELDS (created_at, updated_at, updated_by bound in)."""
    return (*row[:11], now, now, asserted_by, *row[11:])


def prepare_rows(facts: Sequence[FactInput | FactRow], *, as_json: bool) -> Prepared:
    """The prepared batch of ``facts`` (JSON only when ``as_json``: SQLite reads its numbers exactly)."""
    rows = _rows(facts)
    created = AssertStatus.CREATED
    outcomes = [_new_outcome(AssertOutcome, (uid, created)) for uid in map(_uid, rows)]
    lineage = [(row[0], parent, n) for fact, row in zip(facts, rows, strict=True) if fact.derived_from
               for n, parent in enumerate(fact.derived_from)]  # fmt: skip
    agents = set(map(_agent, rows))
    if not rows or not as_json:
        return Prepared(rows, None, (), (), agents, outcomes, lineage)
    in_json, constants = list(ROW_FIELDS), []
    for i in range(len(PREPARED_FIELDS)):
        if i in ROW_FIELDS:
            continue
        column = list(map(itemgetter(i), rows))
        first = column[0]
        # == takes -0.0 for 0.0: harmless, SQLite stores -0.0 as 0.0 on every path
        if column.count(first) == len(column):
            constants.append(first)
        else:
            in_json.append(i)
    in_json.sort()
    payload = _json_array(list(map(itemgetter(*in_json), rows)))
    return Prepared(rows, payload, tuple(in_json), tuple(constants), agents, outcomes, lineage)


#: Rows per ``json.dumps`` call: the C encoder holds the GIL for a whole call (~2 µs a row), and the thread that
#: writes the batch before needs it back after each SQLite call (docs/decisions/2026-11-29-lubm-import-speed.md).
DUMPS_ROWS = 256


def _json_array(rows: list[Any]) -> str:
    """``json.dumps(rows)`` (as the batch's JSON, non-ASCII kept, NaN refused), encoded a few hundred rows at a
    time so that no single call holds the GIL for long."""
    dumps = json.dumps
    parts = [dumps(rows[start : start + DUMPS_ROWS], ensure_ascii=False, allow_nan=False)[1:-1]
             for start in range(0, len(rows), DUMPS_ROWS)]  # fmt: skip
    return "[" + ", ".join(parts) + "]"


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
