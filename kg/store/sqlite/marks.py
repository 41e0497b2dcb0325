"""SQLite adapter of the high-water marks of derived data (rows of ``store_meta``, migration 3).

A mark is a position in the store (a memory item's ``seq``) up to which a derived copy outside the database
(the Markdown daily logs) is known to be complete. Marks only move forward. :meth:`SqliteMarks.memory_after`
lists what a catch-up has to check after a mark, without loading whole items.
"""

from __future__ import annotations

import builtins
from datetime import date, datetime

from kg.store.sqlite.db import SqliteAdapter

#: Prefix of the ``store_meta`` keys holding marks (the rest of the key names the derived data).
PREFIX = "mark:"


class SqliteMarks(SqliteAdapter):
    """High-water marks by name."""

    def get(self, name: str) -> int:
        """The mark ``name`` (0 when never set)."""
        rows = self.db.read("SELECT value FROM store_meta WHERE key = ?", (PREFIX + name,))
        return int(rows[0][0]) if rows else 0

    def advance(self, name: str, position: int) -> int:
        """Move the mark ``name`` up to ``position`` (never down); the mark afterwards."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO store_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value "
                "WHERE CAST(excluded.value AS INTEGER) > CAST(store_meta.value AS INTEGER)",
                (PREFIX + name, str(int(position))),
            )
            return int(conn.execute("SELECT value FROM store_meta WHERE key = ?", (PREFIX + name,)).fetchone()[0])

    def memory_after(self, position: int, limit: int) -> builtins.list[tuple[int, str, str, date, str]]:
        """Up to ``limit`` memory items after ``position`` in insertion order: (position, uid, agent, day, source)."""
        rows = self.db.read(
            "SELECT seq, uid, agent_id, created_at, source FROM memory_items WHERE seq > ? ORDER BY seq LIMIT ?",
            (position, limit),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), datetime.fromisoformat(r[3]).date(), str(r[4])) for r in rows]
