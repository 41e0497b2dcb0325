"""Write-through: push each committed change to TypeDB right away, best-effort, never failing the caller.

With TypeDB configured, :func:`attach` subscribes a :class:`WriteThrough` to the workspace's commit notifier
(``ws.ports.commits``): every committed write transaction wakes a worker thread, which pushes the pending
outbox with a short timeout through the same replay code as ``mabos sync push`` (so it is ordered, batched,
idempotent and acknowledged only after TypeDB committed). The caller's thread only sets an event. Whatever
does not go through stays in the outbox for the next push.

A :class:`CircuitBreaker` stops a dead server from costing every write a connection attempt: after a
failure it stays *open* for ``cooldown`` seconds (no attempts), then lets one attempt through. Its state
lives in ``.mabos/typedb-breaker.json`` so that short-lived processes (each CLI command) share it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kg.errors import MabosError, logger
from sync.breaker import BREAKER_FILE, CircuitBreaker

if TYPE_CHECKING:  # every command opens a workspace through attach(): the TypeDB side loads only when configured
    from kg.shared_graph import TypeDBSettings
    from kg.workspace import Workspace
    from sync.replay import ReplayTarget


#: How long closing a workspace waits for the last push.
CLOSE_WAIT = 3.0


@dataclass
class FlushResult:
    """What one write-through attempt did: ``pushed`` events, or why nothing was (``skipped`` / ``error``)."""

    pushed: int = 0
    skipped: str | None = None
    error: str | None = None


class WriteThrough:
    """Pushes a workspace's outbox to TypeDB after each commit, on a worker thread."""

    def __init__(
        self,
        ws: Workspace,
        settings: TypeDBSettings,
        *,
        breaker: CircuitBreaker | None = None,
        target: ReplayTarget | None = None,
    ) -> None:
        from kg.shared_graph import WRITE_THROUGH_TIMEOUT_MS, replay_target, shared_client  # noqa: PLC0415
        from kg.workspace import STATE_DIR  # noqa: PLC0415

        self.ws = ws
        short = replace(settings, timeout_ms=min(settings.timeout_ms, WRITE_THROUGH_TIMEOUT_MS))
        self.target: ReplayTarget = target or replay_target(shared_client(short))
        self.breaker = breaker or CircuitBreaker(ws.path / STATE_DIR / BREAKER_FILE)
        self.last: FlushResult | None = None
        self.commits = 0
        #: The last failure while attached (None when every attempt went through or none was made).
        self.last_error: str | None = None
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="mabos-write-through", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        """A write committed: wake the worker (the commit hook; cheap, never raises)."""
        self.commits += 1
        self._idle.clear()
        self._wake.set()

    def flush(self) -> FlushResult:
        """Push what is pending now, on the calling thread; never raises."""
        from sync.replay import push  # noqa: PLC0415

        if not self.breaker.allow():
            return FlushResult(skipped="circuit breaker open: TypeDB failed recently")
        if self.ws.ports.outbox.counts()["pending"] == 0:
            return FlushResult(skipped="nothing pending")
        try:
            report = push(self.ws.ports, self.target)
        except MabosError as exc:
            self.breaker.record_failure(str(exc))
            logger().info("write-through to TypeDB failed (the outbox keeps the change): %s", exc)
            self.last_error = str(exc)
            return FlushResult(error=str(exc))
        except Exception as exc:  # never fail the caller; the outbox still holds everything
            self.breaker.record_failure(f"{type(exc).__name__}: {exc}")
            logger().info("write-through to TypeDB failed unexpectedly: %s", exc)
            self.last_error = f"{type(exc).__name__}: {exc}"
            return FlushResult(error=self.last_error)
        self.breaker.record_success()
        return FlushResult(pushed=report.sent)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop:
                self._idle.set()
                return
            self.last = self.flush()
            if not self._wake.is_set():
                self._idle.set()

    def close(self, wait: float = CLOSE_WAIT) -> None:
        """Stop the worker (a push in progress may finish within ``wait`` seconds), then, if anything was
        committed while attached, push what is left once."""
        self.ws.ports.commits.unsubscribe(self.notify)
        self._idle.wait(wait)
        self._stop = True
        self._wake.set()
        self._thread.join(wait)
        if self.commits:
            self.last = self.flush()


def attach(ws: Workspace, override: str | None = None) -> WriteThrough | None:
    """Start write-through for ``ws`` when TypeDB is configured and ``[typedb] write_through`` is on (None
    otherwise). Close it before ``ws``: closing makes a last push attempt."""
    if not ws.config.typedb.address_given(override):
        return None  # every command opens a workspace through here: without TypeDB, none of its side is imported
    from sync.shared_graph import typedb_settings  # noqa: PLC0415

    settings = typedb_settings(ws, override)
    if settings is None or not ws.config.typedb.write_through:
        return None
    writer = WriteThrough(ws, settings)
    ws.ports.commits.subscribe(writer.notify)
    return writer


__all__ = ["BREAKER_FILE", "CircuitBreaker", "FlushResult", "WriteThrough", "attach"]
