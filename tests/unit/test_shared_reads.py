"""Shared-graph reads fall back to the local store, and say why, whenever TypeDB cannot answer for it.

No server runs here: "unreachable" is a real refused connection (127.0.0.1:1). That TypeDB answers when it is
reachable is tested against a server in tests/integration (marker ``typedb``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import sync.reads
from kg.store.sqlite.graph_queries import SqliteGraphQueries
from kg.workspace import STATE_DIR, Workspace, init_workspace
from sync.breaker import BREAKER_FILE, CircuitBreaker
from sync.reads import graph_backend
from sync.shared_graph import status

DEAD = "127.0.0.1:1"


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    workspace = init_workspace(tmp_path / "w")
    workspace.agents.add("sales-agent", name="Sales")
    yield workspace
    workspace.close()


def test_not_configured_reads_locally_without_a_reason(ws: Workspace) -> None:
    backend, reason = graph_backend(ws)
    assert isinstance(backend, SqliteGraphQueries) and backend.source == "local"
    assert reason is None


def test_unreachable_reads_locally_opens_the_breaker_and_keeps_the_outbox(ws: Workspace) -> None:
    before = ws.ports.outbox.counts()
    backend, reason = graph_backend(ws, DEAD)
    assert backend.source == "local"
    assert reason is not None and reason.startswith(f"typedb: {DEAD} is unreachable")
    assert ws.ports.outbox.counts() == before
    assert status(ws, DEAD)["circuit_breaker"]["failures"] == 1
    backend, reason = graph_backend(ws, DEAD)  # within the cooldown: no new attempt
    assert backend.source == "local" and reason is not None and "circuit breaker open" in reason
    assert CircuitBreaker(ws.path / STATE_DIR / BREAKER_FILE).state()["failures"] == 1


def test_a_long_backlog_is_not_pushed_on_a_read(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sync.reads, "MAX_PUSH_ON_READ", 0)
    backend, reason = graph_backend(ws, DEAD)
    assert backend.source == "local"
    assert reason == "typedb: 1 outbox events not pushed yet (run 'mabos sync push')"
    assert not (ws.path / STATE_DIR / BREAKER_FILE).exists()  # nothing was attempted
