"""Idle-time indexing for the MCP server: build the vector index while no tool call is in flight.

When the server has had no call running for ``idle`` seconds and the vector index has a backlog (the store's index
queue, or a build that is missing or unfinished), :class:`IdleIndexer` runs one pass in a child process: it opens the
workspace, adds up to ``pass_items`` queued items (or, when the index must be built, builds it with a checkpoint every
``pass_items`` items) and saves. Progress (items done / total) goes to the server's log. Passes repeat while the
server stays idle and stop when the backlog is empty.

A tool call that arrives while a pass runs wins: the pass's process is killed at once (:meth:`IdleIndexer.call_started`,
called before the call is sent to a worker), which also releases the sidecar's file lock a recall would wait for.
Nothing is lost or indexed twice: the queue rows of a pass are forgotten only after its save, and a build resumes
from its last checkpoint (:mod:`kg.recall.sidecar`); the next idle period starts the next pass
(docs/decisions/2026-11-26-mcp-concurrency.md).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

import anyio

from kg.errors import InputError

logger = logging.getLogger(__name__)

#: Defaults of ``mabos serve --mcp --index-when-idle``.
DEFAULT_IDLE = 30.0
PASS_ITEMS = 200
_POLL = 0.5
_RECHECK = 60.0  # seconds between backlog checks once it was found empty and no call came since
_PRELOAD = ["cli.tools"]


def _index_pass(conn: Connection, path: str, env: dict[str, str], items: int, batch: int) -> None:
    """A pass's life: open the workspace, index up to ``items`` queued items (or build with checkpoints), report."""
    os.environ.clear()
    os.environ.update(env)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)
    os.dup2(2, 1)  # never write on the server's stdout (the stdio transport)
    sys.stdout = sys.stderr

    from cli.tools.registry import ToolContext  # noqa: PLC0415 - preloaded by the forkserver

    ctx = ToolContext(path=Path(path), operator=False)
    try:
        sidecar = ctx.workspace().vectors
        if sidecar is None:
            conn.send(("done", 0, "no embedder configured"))
            return
        state = sidecar.status()
        if state["state"] == "ready" and not state["backlog"]:
            conn.send(("done", 0, ""))
            return
        sidecar.save_every, sidecar.batch = items, max(1, min(batch, items))

        def progress(done: int, total: int) -> None:
            conn.send(("progress", done, total))

        building = state["state"] != "ready"
        report = sidecar.sync(limit=None if building else items, save=True, progress=progress)
        conn.send(("done", report.backlog, report.reason if not report.usable else ""))
    finally:
        ctx.close()


@dataclass
class IdleIndexer:
    """Runs index passes in a child process while the server is idle (see the module text).

    Args:
        path: the workspace directory.
        idle: seconds without a call in flight before a pass starts (more than 0).
        pass_items: items per pass, and between checkpoints of a build.
        batch: items embedded at a time (progress is reported per batch).
        poll: how often, in seconds, the idle state is looked at.
    """

    path: Path
    idle: float = DEFAULT_IDLE
    pass_items: int = PASS_ITEMS
    batch: int = 64
    poll: float = _POLL
    events: list[str] = field(default_factory=list)  # "start", "progress", "done", "stopped", "empty" (in order)
    _in_flight: int = 0
    _last: float = field(default_factory=time.monotonic)
    _empty_at: float | None = None
    _failed_at: float | None = None
    _stopped: bool = False  # the pass in progress was stopped by a call
    _process: BaseProcess | None = None
    _closed: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.idle <= 86_400:
            raise InputError("index_when_idle", "must be more than 0 and at most 86400 seconds (0 turns it off)")
        if self.pass_items < 1:
            raise InputError("pass_items", "must be at least 1")

    @property
    def empty(self) -> bool:
        """Whether the last pass (or check) found no backlog and no call came since."""
        return self._empty_at is not None

    def call_started(self) -> None:
        """A tool call arrived: it wins; a pass in progress is stopped now (its last checkpoint stays)."""
        self._in_flight += 1
        process = self._process
        if process is not None and process.exitcode is None:
            process.kill()
            self._stopped = True
            self.events.append("stopped")
            logger.info("vector index (idle): pass stopped, a tool call arrived; the next idle period resumes it")

    def call_ended(self) -> None:
        """A tool call ended: the idle clock starts again, and the backlog may have grown."""
        self._in_flight -= 1
        self._last = time.monotonic()
        self._empty_at = self._failed_at = None

    async def run(self) -> None:
        """Loop until :meth:`close`: after ``idle`` quiet seconds, run passes while there is a backlog."""
        while not self._closed:
            await anyio.sleep(self.poll)
            now = time.monotonic()
            if self._in_flight or now - self._last < self.idle:
                continue
            last_check = max(self._empty_at or 0.0, self._failed_at or 0.0)
            if last_check and now - last_check < max(self.idle, _RECHECK):
                continue
            await self._one_pass()

    async def _one_pass(self) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_PRELOAD)
        ours, theirs = context.Pipe()
        process = context.Process(target=_index_pass, daemon=True, name="mabos-idle-index",
                                  args=(theirs, str(self.path.resolve()), dict(os.environ), self.pass_items,
                                        self.batch))  # fmt: skip
        await anyio.to_thread.run_sync(process.start)
        theirs.close()
        self._process, self._stopped = process, False
        self.events.append("start")
        try:
            await self._follow(ours)
        finally:
            self._process = None
            with contextlib.suppress(OSError):
                ours.close()
            if process.exitcode is None:
                process.kill()
            await anyio.to_thread.run_sync(process.join, 5)

    async def _follow(self, conn: Connection) -> None:
        """Log the pass's progress until it reports its end or dies (killed by a call)."""
        while True:
            await anyio.wait_readable(conn.fileno())
            try:
                kind, first, second = conn.recv()
            except (EOFError, OSError):
                if not self._stopped:  # it failed on its own: try again after a while, not every poll
                    self._failed_at = time.monotonic()
                    logger.warning("vector index (idle): the pass ended without a report (see the log above)")
                return  # killed by a call: call_started logged it
            if kind == "progress":
                self.events.append("progress")
                logger.info("vector index (idle): %d of %d items", first, second)
                continue
            self.events.append("done")
            if second:
                logger.warning("vector index (idle): %s", second)
            if first:
                logger.info("vector index (idle): pass saved, %d items still waiting", first)
            else:
                self.events.append("empty")
                self._empty_at = time.monotonic()
                logger.info("vector index (idle): up to date")
            return

    def close(self) -> None:
        """Stop the loop and any pass in progress."""
        self._closed = True
        process = self._process
        if process is not None and process.exitcode is None:
            process.kill()


__all__ = ["DEFAULT_IDLE", "PASS_ITEMS", "IdleIndexer"]
