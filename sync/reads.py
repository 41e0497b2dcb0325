"""Reads of the shared graph: TypeDB when it is configured and reachable, else the local store, said so.

:func:`graph_backend` picks the backend the cross-agent graph queries run on. With TypeDB configured it
first pushes this workspace's pending outbox (so the shared graph holds its latest changes) and then reads
from TypeDB; when TypeDB is not configured, unreachable, its circuit breaker is open (it failed in the last
minute), or the backlog is too long to push on a read (:data:`MAX_PUSH_ON_READ`), the local store answers
and the result's ``source`` is ``"local"``, with the reason returned alongside. The local store is always
consistent: it is the source of truth.
"""

from __future__ import annotations

from kg.errors import MabosError
from kg.ports import GraphQueryBackend
from kg.shared_graph import graph_queries
from kg.workspace import STATE_DIR, Workspace
from sync.breaker import BREAKER_FILE, CircuitBreaker
from sync.shared_graph import client_for, push_outbox, typedb_settings

#: A read pushes the pending outbox first only up to this many events; past it the local store answers (it
#: is current) and the reason says to run ``mabos sync push``, so a query never turns into a long push.
MAX_PUSH_ON_READ = 2_000


def local_backend(ws: Workspace) -> GraphQueryBackend:
    """The embedded store's graph-query backend (``source`` ``local``)."""
    return ws.ports.graph_queries


def graph_backend(ws: Workspace, override: str | None = None) -> tuple[GraphQueryBackend, str | None]:
    """The backend for shared-graph reads and, when it is the local one although TypeDB is configured, why."""
    if typedb_settings(ws, override) is None:
        return local_backend(ws), None
    breaker = CircuitBreaker(ws.path / STATE_DIR / BREAKER_FILE)
    if not breaker.allow():
        return local_backend(ws), "typedb: circuit breaker open (TypeDB failed in the last minute)"
    pending = ws.ports.outbox.counts()["pending"]
    if pending > MAX_PUSH_ON_READ:
        return local_backend(ws), f"typedb: {pending} outbox events not pushed yet (run 'mabos sync push')"
    try:
        push_outbox(ws, override=override)
        backend = graph_queries(client_for(ws, override))
    except MabosError as exc:
        breaker.record_failure(str(exc))
        return local_backend(ws), str(exc)
    breaker.record_success()
    return backend, None


__all__ = ["MAX_PUSH_ON_READ", "graph_backend", "local_backend"]
