"""FTS5's own consistency check, shared by the tests of the full-text indexes."""

from __future__ import annotations

from kg.store.sqlite.db import Database


def check_fts(db: Database, table: str = "facts_fts") -> None:
    """FTS5's ``integrity-check`` of an external-content index against its table: raises
    ``sqlite3.DatabaseError`` when a row is missing from the index or indexed twice."""
    with db.write() as conn:
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
