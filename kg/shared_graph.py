"""The shared graph's seam: what the layers above ``kg`` use to reach TypeDB, named once here.

TypeDB is not a workspace store (docs/decisions/2026-11-28-one-typedb-seam.md): it is the outbox's replay target
and a read replica of the shared part of the graph. Its adapter lives in ``kg/store/typedb/``; ``sync`` (push,
write-through, shared-graph reads, schema sync) and ``cli`` (``mabos typedb ...``) take these names from this
module, never from ``kg.store`` (an import-linter contract), so the adapter behind them is chosen here.

Importing this module loads the settings and the schema text helpers only (standard library); the client, the
replay target and the graph queries load when first asked for, and the TypeDB driver when the client connects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg.store.typedb.schema import check_read_only, fingerprint, schema_for
from kg.store.typedb.settings import WRITE_THROUGH_TIMEOUT_MS, TypeDBSettings, resolve_settings

if TYPE_CHECKING:
    from kg.ports import GraphQueryBackend
    from kg.store.typedb.client import TypeDBClient as TypeDBClient  # noqa: PLC0414 - re-exported for annotations
    from kg.store.typedb.target import TypeDBTarget as TypeDBTarget  # noqa: PLC0414


def shared_client(settings: TypeDBSettings) -> TypeDBClient:
    """A client of the TypeDB database ``settings`` name (nothing connects until it is used)."""
    from kg.store.typedb.client import TypeDBClient  # noqa: PLC0415 - loaded when TypeDB is configured

    return TypeDBClient(settings)


def graph_queries(shared: TypeDBClient) -> GraphQueryBackend:
    """The cross-agent graph queries answered by the shared graph behind ``shared``."""
    from kg.store.typedb.graph_queries import TypeDBGraphQueries  # noqa: PLC0415

    return TypeDBGraphQueries(shared)


def replay_target(shared: TypeDBClient) -> TypeDBTarget:
    """The outbox replay target writing to the shared graph behind ``shared`` (one transaction per batch)."""
    from kg.store.typedb.target import TypeDBTarget  # noqa: PLC0415

    return TypeDBTarget(shared)


__all__ = [
    "WRITE_THROUGH_TIMEOUT_MS",
    "TypeDBSettings",
    "check_read_only",
    "fingerprint",
    "graph_queries",
    "replay_target",
    "resolve_settings",
    "schema_for",
    "shared_client",
]
