"""The shared TypeDB graph of a workspace: settings, schema sync, outbox push and status.

Everything here works from an open :class:`~kg.workspace.Workspace`. TypeDB is optional: with no address
configured (:func:`typedb_settings` is None) the commands that need it say so, the nightly job skips its
push step, and reads use the local store. With an address that cannot be reached, every operation raises
:class:`~kg.errors.BackendUnavailableError` (CLI exit code 3) and changes nothing locally: the outbox keeps
every unacknowledged event for the next push.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import WorkspaceError
from kg.models import format_ts
from kg.models.request import requested
from kg.shared_graph import (
    TypeDBSettings,
    check_read_only,
    fingerprint,
    replay_target,
    resolve_settings,
    schema_for,
    shared_client,
)
from kg.workspace import ONTOLOGY_DIR, STATE_DIR, Workspace
from sync.breaker import BREAKER_FILE, CircuitBreaker
from sync.shared_graph_requests import PushRequest, SchemaSyncRequest, TypeQLRequest

if TYPE_CHECKING:
    from kg.shared_graph import TypeDBClient
    from sync.replay import PushReport

#: Where the fingerprint of the last schema synced to TypeDB is kept (per workspace).
SCHEMA_STATE = "typedb-schema.json"
NOT_CONFIGURED = (
    "typedb: not configured; pass --typedb HOST:PORT, set MABOS_TYPEDB_ADDRESS, or set [typedb] address in mabos.toml"
)


def typedb_settings(ws: Workspace, override: str | None = None) -> TypeDBSettings | None:
    """The workspace's TypeDB settings (``override`` = the ``--typedb`` option), or None if not configured."""
    return resolve_settings(
        workspace_name=ws.config.name,
        config_address=ws.config.typedb.address,
        config_database=ws.config.typedb.database,
        override=override,
    )


def client_for(ws: Workspace, override: str | None = None) -> TypeDBClient:
    """A client for the workspace's TypeDB database; :class:`WorkspaceError` when none is configured."""
    settings = typedb_settings(ws, override)
    if settings is None:
        raise WorkspaceError(NOT_CONFIGURED)
    return shared_client(settings)


def status(ws: Workspace, override: str | None = None) -> dict[str, Any]:
    """Whether TypeDB is configured and reachable, the database, the outbox backlog, the last schema sync and
    the write-through circuit breaker (None when closed)."""
    report: dict[str, Any] = {"configured": False, "outbox": ws.ports.outbox.counts()}
    settings = typedb_settings(ws, override)
    if settings is None:
        report["message"] = NOT_CONFIGURED
        return report
    report["configured"] = True
    report.update(shared_client(settings).status())
    report["schema"] = _read_state(ws)
    report["circuit_breaker"] = CircuitBreaker(ws.path / STATE_DIR / BREAKER_FILE).state() or None
    return report


def _state_file(ws: Workspace) -> Path:
    return ws.path / STATE_DIR / SCHEMA_STATE


def _read_state(ws: Workspace) -> dict[str, Any] | None:
    try:
        data = json.loads(_state_file(ws).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_state(ws: Workspace, state: dict[str, Any]) -> None:
    path = _state_file(ws)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def schema_queries(ontology_dir: Path) -> list[str]:
    """The schema queries of the ontology set in ``ontology_dir``: ``base.tql``, then its TypeQL (if any)."""
    from kg.ontology.typeql import ontology_schema  # noqa: PLC0415 - rdflib: only a schema sync reads the ontology

    return schema_for(ontology_schema(ontology_dir))


def workspace_schema(ws: Workspace) -> list[str]:
    """The workspace's schema queries: ``base.tql``, then the TypeQL of its active ontology set."""
    return schema_queries(ws.path / ONTOLOGY_DIR)


def sync_schema(
    ws: Workspace, request: SchemaSyncRequest | None = None, *, override: str | None = None, **fields: Any
) -> dict[str, Any]:
    """Create the database if needed and define the base and ontology schema in one schema transaction.

    ``if_changed`` (the request's, or a keyword) skips the define when the database already existed and the
    schema text is the one last synced to this address and database. Returns what was done (``created``,
    ``defined``, ``changed``, ``fingerprint``).
    """
    request = requested(SchemaSyncRequest, request, fields)
    client = client_for(ws, override)
    queries = workspace_schema(ws)
    digest = fingerprint(queries)
    created = client.ensure_database()
    target = {"address": client.settings.address, "database": client.settings.database}
    previous = _read_state(ws) or {}
    changed = previous.get("fingerprint") != digest or {k: previous.get(k) for k in target} != target
    report: dict[str, Any] = {**target, "created": created, "changed": changed, "fingerprint": digest,
                              "defined": False, "queries": len(queries)}  # fmt: skip
    if request.if_changed and not created and not changed:
        return report
    client.define(queries)
    _write_state(ws, {**target, "fingerprint": digest, "synced_at": format_ts(datetime.now(UTC))})
    report["defined"] = True
    return report


def push_outbox(
    ws: Workspace,
    request: PushRequest | None = None,
    *,
    progress: Callable[[PushReport], None] | None = None,
    override: str | None = None,
    **fields: Any,
) -> PushReport:
    """Send the outbox's unacknowledged events to TypeDB in order, in batches of the request's ``batch`` (schema
    synced first if needed).

    Raises :class:`~kg.errors.BackendUnavailableError` when TypeDB cannot be reached; every batch not
    committed stays unacknowledged.
    """
    request = requested(PushRequest, request, fields)
    sync_schema(ws, if_changed=True, override=override)
    from sync.replay import push  # noqa: PLC0415 - every command's write-through set-up imports this module

    return push(ws.ports, replay_target(client_for(ws, override)), batch=request.batch, progress=progress)


def run_typeql(ws: Workspace, request: TypeQLRequest, *, override: str | None = None) -> tuple[str, list[Any], bool]:
    """Run one TypeQL query on the workspace's database: the database, at most ``limit`` answers and whether more
    existed. Without ``write``, write stages and schema queries are refused (:class:`~kg.errors.InputError`)
    before anything is sent."""
    if not request.write:
        check_read_only(request.query)
    client = client_for(ws, override)
    answers, truncated = client.query(request.query, write=request.write, limit=request.limit)
    return client.settings.database, answers, truncated


__all__ = [
    "NOT_CONFIGURED",
    "SCHEMA_STATE",
    "client_for",
    "push_outbox",
    "run_typeql",
    "schema_queries",
    "status",
    "sync_schema",
    "typedb_settings",
    "workspace_schema",
]
