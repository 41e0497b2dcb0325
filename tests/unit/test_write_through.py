"""Write-through: changes reach the target right after their commit, a dead target never fails the caller.

The target here is a second real embedded store (sync.replay.EmbeddedTarget, the same replay code a TypeDB
target runs through) or a real refused TypeDB connection (127.0.0.1:1). No server is mocked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kg.errors import BackendUnavailableError
from kg.models import NodeKind, OutboxEvent
from kg.store.sqlite import SqliteGraphStore
from kg.store.typedb.settings import TypeDBSettings
from kg.workspace import STATE_DIR, Workspace, init_workspace
from sync.replay import EmbeddedTarget
from sync.write_through import BREAKER_FILE, CircuitBreaker, WriteThrough, attach

SETTINGS = TypeDBSettings(address="127.0.0.1:1", database="mabos_w")


class DeadTarget:
    """A target whose server is gone (what TypeDBTarget raises when the connection is refused)."""

    calls = 0

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        DeadTarget.calls += 1
        raise BackendUnavailableError("typedb: 127.0.0.1:1 is unreachable (connect): refused")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = init_workspace(tmp_path / "w")
    yield workspace
    workspace.close()


def _wait_until(condition: object, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.02)
    return False


def test_a_commit_reaches_the_target_without_a_push(ws: Workspace, tmp_path: Path) -> None:
    replica = SqliteGraphStore(tmp_path / "replica.sqlite")
    writer = WriteThrough(ws, SETTINGS, target=EmbeddedTarget(replica))
    ws.ports.commits.subscribe(writer.notify)
    try:
        ws.agents.add("sales-agent", name="Sales")
        assert _wait_until(lambda: replica.agents.exists("sales-agent")), "the worker never pushed the change"
        ws.bdi.add("belief", "sales-agent", "Acme is expanding", certainty=0.7)
    finally:
        writer.close()
    assert ws.ports.outbox.counts()["pending"] == 0
    assert [n.content for n in replica.bdi.list(kind=NodeKind.BELIEF, scopes=["agent:sales-agent"])] == [
        "Acme is expanding"
    ]
    assert writer.last_error is None
    replica.close()


def test_a_dead_target_never_fails_the_caller_and_loses_nothing(ws: Workspace) -> None:
    DeadTarget.calls = 0
    writer = WriteThrough(ws, SETTINGS, target=DeadTarget())
    ws.ports.commits.subscribe(writer.notify)
    try:
        agent = ws.agents.add("sales-agent", name="Sales")  # succeeds locally whatever the target does
        ws.agents.add("finance-agent", name="Finance")
    finally:
        writer.close()
    assert ws.agents.get("sales-agent").uid == agent.uid
    assert ws.ports.outbox.counts() == {"pending": 2, "acked": 0}
    assert writer.last_error is not None and "unreachable" in writer.last_error
    # The first failure opened the breaker: later attempts in the cooldown did not touch the target.
    assert DeadTarget.calls == 1
    assert writer.breaker.state()["failures"] == 1
    assert (ws.path / STATE_DIR / BREAKER_FILE).exists()


def test_the_breaker_opens_for_its_cooldown_then_lets_one_attempt_through(tmp_path: Path) -> None:
    now = [1000.0]
    breaker = CircuitBreaker(tmp_path / "breaker.json", cooldown=60, now=lambda: now[0])
    assert breaker.allow() and breaker.state() == {}
    breaker.record_failure("refused")
    assert not breaker.allow()
    now[0] += 59.9
    assert not breaker.allow()
    now[0] += 0.2
    assert breaker.allow()
    breaker.record_failure("refused again")
    assert breaker.state()["failures"] == 2 and not breaker.allow()
    breaker.record_success()
    assert breaker.allow() and breaker.state() == {}


def test_the_breaker_is_shared_by_processes_through_its_file(ws: Workspace) -> None:
    path = ws.path / STATE_DIR / BREAKER_FILE
    CircuitBreaker(path).record_failure("refused")
    writer = WriteThrough(ws, SETTINGS, target=DeadTarget())  # another process's writer, same workspace
    ws.ports.commits.subscribe(writer.notify)
    try:
        ws.agents.add("sales-agent", name="Sales")
    finally:
        writer.close()
    assert writer.last is not None and writer.last.skipped is not None
    assert writer.last.skipped.startswith("circuit breaker open")


def test_attach_only_when_configured(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MABOS_TYPEDB_ADDRESS", raising=False)
    assert attach(ws) is None
    writer = attach(ws, "127.0.0.1:1")
    assert writer is not None and ws.ports.commits.subscribed(writer.notify)
    writer.close()
    assert not ws.ports.commits.subscribed(writer.notify)
    ws.config.typedb.write_through = False
    assert attach(ws, "127.0.0.1:1") is None


def test_a_real_refused_connection_is_absorbed(ws: Workspace) -> None:
    writer = attach(ws, "127.0.0.1:1")
    assert writer is not None
    try:
        ws.agents.add("sales-agent", name="Sales")
    finally:
        writer.close()
    assert writer.last_error is not None and "127.0.0.1:1 is unreachable" in writer.last_error
    assert ws.ports.outbox.counts()["pending"] == 1
