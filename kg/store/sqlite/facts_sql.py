"""SQL of the fact adapter: the insert and upsert statements, outbox events and query building.

Migration 10 (docs/decisions/2026-11-26-facts-bulk-schema.md) shapes what is here: the unique live-triple index
leads with the subject, (subject, predicate) is indexed only for retracted rows, and a fact created without
lineage gets a compact outbox event (payload ``''``, expanded by the ``outbox`` view). Migration 11
(docs/decisions/2026-11-26-fact-search-catch-up.md): writers no longer fill the full-text index; a search brings
it up to date first (``SEARCH_PENDING``, ``INDEX_PENDING``, ``MOVE_MARK``).
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from typing import Any

COLUMNS = (
    "uid, agent_id, scope, subject, predicate, object, object_kind, confidence, source, valid_from, "
    "valid_until, created_at, updated_at, updated_by, retracted_at, retracted_by, rule_id"
)

INSERT_FIELDS = (
    "uid", "agent_id", "scope", "subject", "predicate", "object", "object_kind", "confidence", "source",
    "valid_from", "valid_until", "created_at", "updated_at", "updated_by", "rule_id", "derived",
)  # fmt: skip
_INSERT = f"INSERT INTO facts({', '.join(INSERT_FIELDS)}) VALUES ({', '.join('?' * len(INSERT_FIELDS))})"
#: The fields of a prepared row (the adapter's ``prepare``): INSERT_FIELDS without the transaction's time and
#: writer (created_at, updated_at, updated_by), which are bound when the batch is written.
PREPARED_FIELDS = tuple(f for f in INSERT_FIELDS if f not in ("created_at", "updated_at", "updated_by"))
#: Prepared fields that always differ from row to row (the others may be one value for a whole batch).
ROW_FIELDS = (0, 3, 4, 5)  # uid, subject, predicate, object


@lru_cache(maxsize=64)
def insert_values(varying: tuple[int, ...], rows: int) -> str:
    """The insert of new facts (a live (scope, s, p, o) already there is skipped) for ``rows`` rows, in one
    multi-row ``VALUES`` statement.

    ``varying``: the PREPARED_FIELDS positions each row binds, in order; every other prepared field is one value
    for the whole batch. Parameters: now (?1), asserted_by (?2), those shared values in PREPARED_FIELDS order
    (?3...), then each row's varying values (anonymous ``?``: numbered from there on, so parsing stays linear in
    the rows). One ``sqlite3_step`` inserts every row, so Python's GIL is released for all of them (executemany
    takes it back for every row) and the caller's next batch is screened meanwhile; rows go in in order, so ids,
    ``seq``, events and the in-batch duplicate rule are those of one row after the other.
    """
    constants = [i for i in range(len(PREPARED_FIELDS)) if i not in varying]
    columns = [PREPARED_FIELDS[i] for i in constants] + ["created_at", "updated_at", "updated_by"]
    columns += [PREPARED_FIELDS[i] for i in varying]
    shared = [f"?{3 + n}" for n in range(len(constants))] + ["?1", "?1", "?2"]
    row = f"({', '.join(shared + ['?'] * len(varying))})"
    return (
        f"INSERT INTO facts({', '.join(columns)}) VALUES {', '.join([row] * rows)} "
        "ON CONFLICT(scope, subject, predicate, object) WHERE retracted_at IS NULL DO NOTHING"
    )


#: Secondary indexes of ``facts`` that a bulk transaction into a small store drops first and builds at its end
#: (``SqliteFactStore.bulk``): neither is a uniqueness or ``ON CONFLICT`` target, and none of the bulk path's own
#: statements reads them. The live-triple key (the upsert's conflict target), ``uid`` and ``facts_created``
#: (appended in order by a bulk load) stay.
DEFERRED_INDEXES = ("facts_object", "facts_predicate_object")
#: The most facts a store may hold for a bulk transaction to rebuild :data:`DEFERRED_INDEXES` rather than insert
#: into them. The build reads every row (LUBM(1)'s 100,866: 0.98 G instructions for both, 9.8 k a row; a new
#: row's two inserts cost 2-3 k more than that), so it pays once an import brings ~4 times the rows already there,
#: and a small import into a large store must not pay for the store: at this bound the worst case (a few rows
#: imported) is ~25 M instructions, a few milliseconds.
DEFER_INDEX_MAX_ROWS = 2_500

INSERT_LINEAGE = "INSERT OR IGNORE INTO lineage(child_uid, parent_uid, position) VALUES (?, ?, ?)"
UPSERT = (
    _INSERT
    + """
ON CONFLICT(scope, subject, predicate, object) WHERE retracted_at IS NULL DO UPDATE SET
    confidence = excluded.confidence, source = excluded.source, object_kind = excluded.object_kind,
    valid_from = excluded.valid_from, valid_until = excluded.valid_until,
    rule_id = COALESCE(excluded.rule_id, facts.rule_id), derived = MAX(facts.derived, excluded.derived),
    updated_at = excluded.updated_at, updated_by = excluded.updated_by
WHERE facts.confidence IS NOT excluded.confidence OR facts.source IS NOT excluded.source
   OR facts.valid_from IS NOT excluded.valid_from OR facts.valid_until IS NOT excluded.valid_until
   OR facts.object_kind IS NOT excluded.object_kind
   OR (excluded.rule_id IS NOT NULL AND facts.rule_id IS NOT excluded.rule_id)
   OR excluded.derived > facts.derived
RETURNING uid
"""
)

#: The SQL function that writes a double as exact JSON text (registered on the store's connection).
JSON_REAL = "mabos_json_real"


def json_real(value: float | None) -> str:
    """A double as JSON text that reads back as the same double (Python's shortest round-trip ``repr``)."""
    return "null" if value is None else repr(float(value))


def register_json_real(conn: sqlite3.Connection) -> None:
    """Make :data:`JSON_REAL` callable from SQL on ``conn`` (idempotent)."""
    conn.create_function(JSON_REAL, 1, json_real, deterministic=True)


def exact_doubles(json_object: str, columns: dict[str, str]) -> str:
    """SQL that writes exact doubles into a ``json_object(...)`` expression.

    SQLite's ``json_object`` prints a double with 15 significant digits (0.30000000000000004 becomes 0.3)
    and ``json()`` re-renders any number text, so ``json_object`` writes the placeholder string ``"#"`` as
    each key of ``columns`` (key -> column expression) and the placeholder is replaced by :data:`JSON_REAL`'s
    text. The match is unambiguous: each key occurs once, and quotes inside string values are escaped.
    """
    for key, column in columns.items():
        # 1.0 (a fact's default confidence) is written without the Python call: repr(1.0) is '1.0' too
        text = f"CASE WHEN {column} = 1.0 THEN '1.0' ELSE {JSON_REAL}({column}) END"
        json_object = f"""replace({json_object}, '"{key}":"#"', '"{key}":' || {text})"""
    return json_object


# The fact's JSON (Fact fields) built in SQL. Lineage rows exist only for derived facts (derived = 0 means
# none), so the probe is skipped for asserted ones.
_FACT_PAYLOAD = exact_doubles(
    """json_object(
    'uid', f.uid, 'agent_id', f.agent_id, 'scope', f.scope, 'subject', f.subject, 'predicate', f.predicate,
    'object', f.object, 'object_kind', f.object_kind, 'confidence', '#', 'source', f.source,
    'valid_from', f.valid_from, 'valid_until', f.valid_until, 'created_at', f.created_at,
    'updated_at', f.updated_at, 'updated_by', f.updated_by, 'retracted_at', f.retracted_at,
    'retracted_by', f.retracted_by, 'rule_id', f.rule_id,
    'derived_from', CASE WHEN f.derived THEN json(COALESCE((SELECT json_group_array(parent_uid) FROM
        (SELECT parent_uid FROM lineage WHERE child_uid = f.uid ORDER BY position)), '[]')) ELSE json('[]') END
)""",
    {"confidence": "f.confidence"},
)
_EVENTS = """
INSERT INTO outbox_log(aggregate, op, record_uid, agent_id, scope, payload, created_at)
SELECT 'fact', 'upsert', f.uid, ?, f.scope, {payload}, ?
FROM facts f WHERE {where}
"""
#: Events of the facts a batch created (parameters: asserted_by, now, the last seq before the batch), in
#: insertion order. A fact created without lineage (derived = 0) gets the compact payload '': the outbox view
#: expands it to this same JSON from the row (and the first history row, if it changed since). Derived facts
#: carry their JSON, lineage included (the view cannot tell which lineage rows came later).
CREATED_EVENTS = _EVENTS.format(
    payload=f"CASE WHEN f.derived THEN {_FACT_PAYLOAD} ELSE '' END", where="f.seq > ? ORDER BY f.seq"
)
#: The event of one changed fact (parameters: asserted_by, now, uid): its JSON as it is now.
CHANGED_EVENT = _EVENTS.format(payload=_FACT_PAYLOAD, where="f.uid = ?")
#: The full-text index's mark and the highest fact seq: when they differ, facts wait to be indexed (migration 11).
SEARCH_PENDING = (
    "SELECT (SELECT seq FROM search_marks WHERE name = 'facts_fts'), (SELECT COALESCE(MAX(seq), 0) FROM facts)"
)
#: Index every fact above the mark (parameter: the mark). Text never changes after insert, facts are never
#: deleted and seq grows with each insert, so these are exactly the facts not indexed yet.
INDEX_PENDING = (
    "INSERT INTO facts_fts(rowid, subject, predicate, object) SELECT seq, subject, predicate, object "
    "FROM facts WHERE seq > ?"
)
#: Move the mark to a seq (parameter) once everything up to it is indexed, in the same transaction.
MOVE_MARK = "UPDATE search_marks SET seq = ? WHERE name = 'facts_fts'"


def pattern_clause(column: str, pattern: str) -> tuple[str, str] | None:
    """SQL condition and parameter for a query pattern; None when it matches everything."""
    from kg.models import pattern_parts  # noqa: PLC0415 - the fact models: the memory adapter imports this module too

    parts = pattern_parts(pattern)
    if len(parts) == 1:
        return (f"{column} = ?", parts[0]) if parts[0] else None
    if not any(parts):
        return None
    # GLOB specials other than the wildcard are matched literally through one-character classes.
    escaped = ("".join(f"[{ch}]" if ch in "*?[" else ch for ch in part) for part in parts)
    return f"{column} GLOB ?", "*".join(escaped)


def as_of_source(at: str, *, live: bool) -> tuple[str, list[Any]]:
    """A subquery giving the facts as they stood at system time ``at``: those still live (``live``), or those
    retracted since ``at``. Two halves so that each uses its own partial index (live-triple key, retracted)."""
    retracted = "f.retracted_at IS NULL" if live else "f.retracted_at > ?"
    sql = f"""(
        SELECT f.uid, f.agent_id, f.scope, f.subject, f.predicate, f.object, f.object_kind,
               COALESCE(h.confidence, f.confidence) AS confidence, COALESCE(h.source, f.source) AS source,
               CASE WHEN h.uid IS NULL THEN f.valid_from ELSE h.valid_from END AS valid_from,
               CASE WHEN h.uid IS NULL THEN f.valid_until ELSE h.valid_until END AS valid_until,
               f.created_at, COALESCE(h.sys_from, f.updated_at) AS updated_at,
               COALESCE(h.updated_by, f.updated_by) AS updated_by,
               NULL AS retracted_at, NULL AS retracted_by,
               CASE WHEN h.uid IS NULL THEN f.rule_id ELSE h.rule_id END AS rule_id, f.derived
        FROM facts f
        LEFT JOIN fact_history h ON h.uid = f.uid AND f.updated_at > ? AND h.sys_from <= ? AND h.sys_to > ?
        WHERE f.created_at <= ? AND {retracted}
    )"""
    return sql, [at, at, at, at] if live else [at, at, at, at, at]
