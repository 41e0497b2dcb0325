"""SQLite adapter of the index queue: memory items the vector index has not seen yet (migration 3)."""

from __future__ import annotations

import builtins

from kg.store.sqlite.db import SqliteAdapter


class SqliteIndexQueue(SqliteAdapter):
    """Rows appended by triggers on every insert, content change or delete of a memory item."""

    def store_id(self) -> str:
        """This database's random identity: a vector index built for another one is not used."""
        return str(self.db.read("SELECT value FROM store_meta WHERE key = 'store_id'")[0][0])

    def pending(self, after: int, limit: int) -> builtins.list[tuple[int, str]]:
        """The oldest ``limit`` rows after position ``after`` as (position, uid); a uid may repeat."""
        rows = self.db.read("SELECT seq, uid FROM vector_queue WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit))
        return [(int(r["seq"]), str(r["uid"])) for r in rows]

    def count(self, after: int = 0) -> int:
        """Distinct uids waiting after position ``after``."""
        return int(self.db.read("SELECT COUNT(DISTINCT uid) FROM vector_queue WHERE seq > ?", (after,))[0][0])

    def last(self) -> int:
        """The newest position (0 when empty)."""
        return int(self.db.read("SELECT COALESCE(MAX(seq), 0) FROM vector_queue")[0][0])

    def done(self, upto: int) -> int:
        """Forget every row at or before ``upto`` (the index covering them is saved); how many."""
        with self.db.write() as conn:
            return conn.execute("DELETE FROM vector_queue WHERE seq <= ?", (upto,)).rowcount
