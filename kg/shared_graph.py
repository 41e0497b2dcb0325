"""The shared graph's seam: what the layers above ``kg`` use to reach TypeDB, named once here.

TypeDB is not a workspace store (docs/decisions/2026-11-28-one-typedb-seam.md): it is the outbox's replay target
and a read replica of the shared part of the graph. Its adapter lives in ``kg/store/typedb/``; ``sync`` (push,
write-through, shared-graph reads, schema sync) and ``cli`` (``mabos typedb ...``) import these names from this
module, never from ``kg.store`` (an import-linter contract), so the adapter behind them is chosen here. Importing
this module does not import the TypeDB driver: the client loads it on first connection.
"""

from __future__ import annotations

from kg.ports import GraphQueryBackend
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.graph_queries import TypeDBGraphQueries
from kg.store.typedb.schema import check_read_only, fingerprint, schema_for
from kg.store.typedb.settings import WRITE_THROUGH_TIMEOUT_MS, TypeDBSettings, resolve_settings
from kg.store.typedb.target import TypeDBTarget


def graph_queries(client: TypeDBClient) -> GraphQueryBackend:
    """The cross-agent graph queries answered by the shared graph behind ``client``."""
    return TypeDBGraphQueries(client)


def replay_target(client: TypeDBClient) -> TypeDBTarget:
    """The outbox replay target writing to the shared graph behind ``client`` (one transaction per batch)."""
    return TypeDBTarget(client)


__all__ = [
    "WRITE_THROUGH_TIMEOUT_MS",
    "TypeDBClient",
    "TypeDBSettings",
    "check_read_only",
    "fingerprint",
    "graph_queries",
    "replay_target",
    "resolve_settings",
    "schema_for",
]
