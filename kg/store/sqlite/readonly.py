"""Read-only SQL over the embedded store (``mabos graph sql``): an administrator's window, never a write path.

The query runs on its own connection opened with ``mode=ro`` and ``PRAGMA query_only``, and an authorizer
that allows reading, selecting and functions only - so ``INSERT``, ``DELETE``, ``DROP``, ``ATTACH``, writable
pragmas and transactions are refused before they run, with an :class:`InputError` naming ``sql``. One
statement per call. BLOB values (embeddings) come back as ``"<blob N bytes>"``. This reads every scope: it is
meant for the workspace's owner, not for agents.

Every query is bounded: a deadline (``timeout``, default :data:`DEFAULT_TIMEOUT` seconds, checked by SQLite's
progress handler every :data:`PROGRESS_STEPS` virtual-machine steps, so a recursive CTE without end or a huge
sort is interrupted), at most ``limit`` rows and :data:`MAX_RESULT_BYTES` of text and blobs (the result then
says ``truncated``), and no single value larger than :data:`MAX_VALUE_BYTES` (``SQLITE_LIMIT_LENGTH``).
"""

from __future__ import annotations

import math
import sqlite3
import time
from pathlib import Path
from typing import Any

from kg.errors import InputError
from kg.models import Model

MAX_ROWS = 10_000
#: Seconds a query may run by default, and at most.
DEFAULT_TIMEOUT = 5.0
MAX_TIMEOUT = 300.0
#: Bytes of one string or blob (SQLite refuses to build a larger one: "string or blob too big").
MAX_VALUE_BYTES = 16 * 1024 * 1024
#: Bytes of text and blobs in one result; rows past it are cut (``truncated``).
MAX_RESULT_BYTES = 32 * 1024 * 1024
#: Virtual-machine steps between two deadline checks.
PROGRESS_STEPS = 10_000
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


class SqlResult(Model):
    """Columns, rows (as lists) and whether rows were cut at the limit or the size cap."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


def _authorize(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def _cell(value: Any) -> Any:
    return f"<blob {len(value)} bytes>" if isinstance(value, bytes) else value


def _size(row: tuple[Any, ...]) -> int:
    return sum(len(v) for v in row if isinstance(v, str | bytes))


def _check(sql: str, limit: int, timeout: float) -> None:
    if not 1 <= limit <= MAX_ROWS:
        raise InputError("limit", f"must be between 1 and {MAX_ROWS}, got {limit}")
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
        raise InputError("timeout", f"must be more than 0 and at most {MAX_TIMEOUT:g} seconds, got {timeout!r}")
    if not sql.strip():
        raise InputError("sql", "must not be empty")


def _fetch(cursor: sqlite3.Cursor, limit: int) -> tuple[list[tuple[Any, ...]], bool]:
    """Up to ``limit`` rows and at most :data:`MAX_RESULT_BYTES`; whether more were left."""
    rows: list[tuple[Any, ...]] = []
    total = 0
    for row in cursor:
        total += _size(row)
        if len(rows) == limit or (rows and total > MAX_RESULT_BYTES):
            return rows, True
        rows.append(row)
    return rows, False


def run_readonly(path: Path, sql: str, *, limit: int = 1000, timeout: float = DEFAULT_TIMEOUT) -> SqlResult:
    """Run one read-only statement on the database at ``path``.

    Args:
        path: The SQLite file.
        sql: One SELECT (or WITH ... SELECT) statement.
        limit: Most rows returned (1..10,000).
        timeout: Seconds the statement may run (0..300, default 5); past it, an InputError naming ``sql``.

    Raises:
        InputError: a bad limit or timeout, anything but reading, a syntax error, a value over
            :data:`MAX_VALUE_BYTES`, or the deadline passed. Nothing is ever written.
    """
    _check(sql, limit, timeout)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    deadline = time.monotonic() + timeout
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        conn.set_authorizer(_authorize)
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
        try:
            cursor = conn.execute(sql)
            rows, truncated = _fetch(cursor, limit)
        except (sqlite3.DatabaseError, sqlite3.ProgrammingError, sqlite3.Warning) as exc:
            raise InputError("sql", _reason(exc, timeout)) from None
        columns = [d[0] for d in cursor.description or ()]
    finally:
        conn.close()
    return SqlResult(columns=columns, rows=[[_cell(v) for v in row] for row in rows], truncated=truncated)


def _reason(exc: Exception, timeout: float) -> str:
    reason = " ".join(str(exc).split())
    if "interrupted" in reason:
        return f"stopped at the timeout of {timeout:g} s (add a LIMIT, narrow the query or raise --timeout)"
    if "not authorized" in reason or "readonly" in reason or "read-only" in reason:
        return "only reading is allowed (SELECT, WITH ... SELECT)"
    if "too big" in reason:
        return f"{reason}: a value may hold at most {MAX_VALUE_BYTES} bytes"
    return reason


__all__ = ["DEFAULT_TIMEOUT", "MAX_RESULT_BYTES", "MAX_ROWS", "MAX_TIMEOUT", "MAX_VALUE_BYTES", "SqlResult",
           "run_readonly"]  # fmt: skip
