"""SQLite adapters of :class:`kg.ports.extraction.Transactions` (one write transaction across ports) and
:class:`kg.ports.outbox.CommitNotifier` (word after each commit).

Every SQLite port writes through :meth:`Database.write`, whose nested calls join the outer transaction, so
memory items, facts and a high-water mark written inside :meth:`SqliteTransactions.transaction` commit
together or not at all (a process killed before the commit leaves none of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kg.store.sqlite.db import SqliteAdapter


class SqliteTransactions(SqliteAdapter):
    """Transactions over one database."""

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Join every write made inside into one transaction."""
        with self.db.write():
            yield


class SqliteCommitNotifier(SqliteAdapter):
    """Listeners called after every committed top-level write transaction (:attr:`Database.commit_hooks`)."""

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each commit from now on."""
        self.db.commit_hooks.append(listener)

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        """Stop calling ``listener`` (nothing happens when it was not subscribed)."""
        if listener in self.db.commit_hooks:
            self.db.commit_hooks.remove(listener)

    def subscribed(self, listener: Callable[[], None]) -> bool:
        """Whether ``listener`` is called after each commit."""
        return listener in self.db.commit_hooks
