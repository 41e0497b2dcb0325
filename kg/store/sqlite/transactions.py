"""SQLite adapter of :class:`kg.ports.extraction.Transactions`: one write transaction across ports.

Every SQLite port writes through :meth:`Database.write`, whose nested calls join the outer transaction, so
memory items, facts and a high-water mark written inside :meth:`SqliteTransactions.transaction` commit
together or not at all (a process killed before the commit leaves none of them).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kg.store.sqlite.db import Database


class SqliteTransactions:
    """Transactions over one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Join every write made inside into one transaction."""
        with self.db.write():
            yield
