"""Which adapter is the workspace's store: the one place outside ``kg/store/`` that names one.

``mabos.toml``'s ``store`` setting is a key of :data:`STORES` (name -> ``"module:attribute"``, imported on first
use, as rdflib's plugin registry does), and :func:`open_store` opens it. The workspace keeps what it returns to
itself and hands out its ports (:class:`kg.ports.StorePorts`); no module above ``kg`` imports ``kg.store`` (an
import-linter contract), and none reaches an adapter's internals (tests/test_quality.py).

The shared graph (TypeDB) is not a store but the outbox's replay target and a read replica; its seam is
:mod:`kg.shared_graph`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from kg.clock import Clock
from kg.errors import WorkspaceError
from kg.ports import StoreBackend

if TYPE_CHECKING:
    from kg.store.sqlite.readonly import SqlResult

#: Store name (``store = "..."`` in ``mabos.toml``) -> the adapter class, as ``"module:attribute"``.
STORES: dict[str, str] = {"sqlite": "kg.store.sqlite:SqliteGraphStore"}
#: Store name -> its read-only SQL runner (``mabos graph sql``); a store without SQL has no entry.
READ_ONLY_SQL: dict[str, str] = {"sqlite": "kg.store.sqlite.readonly:run_readonly"}
#: Seconds a read-only SQL statement may run unless the caller says otherwise (``mabos graph sql --timeout``).
SQL_TIMEOUT = 5.0


def _load(table: dict[str, str], kind: str, what: str) -> Any:
    try:
        module, attribute = table[kind].split(":")
    except KeyError:
        raise WorkspaceError(
            f"store: {what} is not available for the {kind!r} store (known: {', '.join(table)})"
        ) from None
    return getattr(importlib.import_module(module), attribute)


def open_store(kind: str, path: Path, *, clock: Clock) -> StoreBackend:
    """Open the ``kind`` store at ``path`` (created and migrated when new)."""
    return cast(StoreBackend, _load(STORES, kind, "a store adapter")(path, clock=clock))


def read_only_sql(kind: str, path: Path, sql: str, *, limit: int = 1000, timeout: float = SQL_TIMEOUT) -> SqlResult:
    """Run one read-only SQL statement on the ``kind`` store at ``path``, on a connection of its own that can
    only read (:func:`kg.store.sqlite.readonly.run_readonly`: the limits, and what is refused)."""
    run = _load(READ_ONLY_SQL, kind, "read-only SQL")
    return cast("SqlResult", run(path, sql, limit=limit, timeout=timeout))


if TYPE_CHECKING:  # mypy checks that every registered adapter is a whole StoreBackend
    from kg.store.sqlite import SqliteGraphStore

    def _sqlite_is_a_backend(store: SqliteGraphStore) -> StoreBackend:
        return store


__all__ = ["READ_ONLY_SQL", "SQL_TIMEOUT", "STORES", "open_store", "read_only_sql"]
