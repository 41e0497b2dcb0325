"""Read-only SQL over the embedded store (``mabos graph sql``): an administrator's window, never a write path.

The query runs on its own connection opened with ``mode=ro`` and ``PRAGMA query_only``, and an authorizer
that allows reading, selecting and functions only - so ``INSERT``, ``DELETE``, ``DROP``, ``ATTACH``, writable
pragmas and transactions are refused before they run, with an :class:`InputError` naming ``sql``. One
statement per call. Rows past ``limit`` are cut and the result says so. BLOB values (embeddings) come back as
``"<blob N bytes>"``. This reads every scope: it is meant for the workspace's owner, not for agents.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from kg.errors import InputError
from kg.models import Model

MAX_ROWS = 10_000
_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


class SqlResult(Model):
    """Columns, rows (as lists) and whether rows were cut at the limit."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


def _authorize(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def _cell(value: Any) -> Any:
    return f"<blob {len(value)} bytes>" if isinstance(value, bytes) else value


def run_readonly(path: Path, sql: str, *, limit: int = 1000) -> SqlResult:
    """Run one read-only statement on the database at ``path``; at most ``limit`` rows (1..10,000)."""
    if not 1 <= limit <= MAX_ROWS:
        raise InputError("limit", f"must be between 1 and {MAX_ROWS}, got {limit}")
    if not sql.strip():
        raise InputError("sql", "must not be empty")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
        try:
            cursor = conn.execute(sql)
            rows = cursor.fetchmany(limit + 1)
        except (sqlite3.DatabaseError, sqlite3.ProgrammingError, sqlite3.Warning) as exc:
            reason = " ".join(str(exc).split())
            if "not authorized" in reason or "readonly" in reason or "read-only" in reason:
                reason = "only reading is allowed (SELECT, WITH ... SELECT)"
            raise InputError("sql", reason) from None
        columns = [d[0] for d in cursor.description or ()]
    finally:
        conn.close()
    return SqlResult(columns=columns, rows=[[_cell(v) for v in row] for row in rows[:limit]],
                     truncated=len(rows) > limit)  # fmt: skip


__all__ = ["MAX_ROWS", "SqlResult", "run_readonly"]
