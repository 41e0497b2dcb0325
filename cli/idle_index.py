"""Idle-time indexing for the servers (``mabos serve --mcp``, ``mabos ui``): build the vector index while no request
is in flight.

When the server has had no request running for ``idle`` seconds and the vector index has a backlog (the store's index
queue, or a build that is missing or unfinished), :class:`IdleIndexer` runs one pass in a child process
(:mod:`cli.child_process`): it opens the workspace, adds up to ``pass_items`` queued items (or, when the index must be
built, builds it with a checkpoint every ``pass_items`` items) and saves. Progress (items done / total) goes to the
server's log and to :meth:`IdleIndexer.progress`, which the console shows. Passes repeat while the server stays idle
and stop when the backlog is empty.

A request that arrives while a pass runs wins: the pass's process is killed at once (:meth:`IdleIndexer.call_started`,
called before the request is served), which also releases the sidecar's file lock a recall would wait for. Nothing
is lost or indexed twice: the queue rows of a pass are forgotten only after its save, and a build resumes from its
last checkpoint (:mod:`kg.recall.sidecar`); the next idle period starts the next pass
(docs/decisions/2026-11-26-mcp-concurrency.md). The pass indexes the workspace's memory items only, as
``mabos index update`` does, refreshes every agent's Markdown index sidecar (a recall never writes it) and embeds
the files' chunks the embedding cache lacks (:func:`kg.recall.file_search.embed_chunks`); recall applies the agents'
scopes to what it finds.

The server runs :meth:`IdleIndexer.running` around its serving (the MCP server's transport, the console's lifespan);
leaving it stops the loop and any pass.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import click

from kg.errors import InputError

if TYPE_CHECKING:  # multiprocessing loads when a pass starts, not with every CLI command that has the options
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

logger = logging.getLogger(__name__)

#: Defaults of ``--index-when-idle`` (``mabos serve --mcp``, ``mabos ui``).
DEFAULT_IDLE = 30.0
PASS_ITEMS = 200
_POLL = 0.5
_RECHECK = 60.0  # seconds between backlog checks once it was found empty and no request came since

#: ``waiting``: for an idle moment (or a re-check); ``indexing``: a pass runs; ``paused``: a request stopped the last
#: pass (the next idle period resumes it); ``up to date``: nothing to index; ``unavailable``: no embedder;
#: ``failed``: the last pass died on its own (retried later); ``stopped``: the server is shutting down.
IndexState = Literal["waiting", "indexing", "paused", "up to date", "unavailable", "failed", "stopped"]
F = TypeVar("F", bound=Callable[..., Any])


def _index_pass(conn: Connection, path: str, items: int, batch: int) -> None:
    """A pass's life: open the workspace, index up to ``items`` queued items (or build with checkpoints), report."""
    from kg.recall.file_search import embed_chunks  # noqa: PLC0415 - imported in the child
    from kg.recall.markdown_index import MarkdownIndex  # noqa: PLC0415 - imported in the child
    from kg.workspace import open_workspace  # noqa: PLC0415 - preloaded by the forkserver; imported in the child

    with open_workspace(Path(path)) as ws:
        ws.memory.prune_all_expired()  # idle time archives what reads already leave out (recall never writes it)
        markdown = MarkdownIndex(ws.path)
        agents = [s.agent_id for s in markdown.refresh_all()]  # the Markdown index follows the files (recall reads)
        sidecar = ws.vectors
        if sidecar is None:
            conn.send(("done", 0, "no embedder configured"))
            return
        state = sidecar.status()
        backlog, problem = 0, ""
        if state["state"] != "ready" or state["backlog"]:
            sidecar.save_every, sidecar.batch = items, max(1, min(batch, items))

            def progress(done: int, total: int) -> None:
                conn.send(("progress", done, total))

            building = state["state"] != "ready"
            report = sidecar.sync(limit=None if building else items, save=True, progress=progress)
            backlog, problem = report.backlog, report.reason if not report.usable else ""
        for agent_id in agents if not problem else ():  # then the chunks a hybrid recall of files would embed
            embed_chunks(markdown, agent_id, ws.embedder, batch=batch)
        conn.send(("done", backlog, problem))


@dataclass
class IdleIndexer:
    """Runs index passes in a child process while the server is idle (see the module text).

    Args:
        path: the workspace directory.
        idle: seconds without a request in flight before a pass starts (more than 0).
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
    _stopped: bool = False  # the pass in progress was stopped by a request
    _process: BaseProcess | None = None
    _closed: bool = False
    _state: IndexState = "waiting"
    _done: int | None = None
    _total: int | None = None
    _backlog: int | None = None
    _message: str = ""
    _passes: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.idle <= 86_400:
            raise InputError("index_when_idle", "must be more than 0 and at most 86400 seconds (0 turns it off)")
        if self.pass_items < 1:
            raise InputError("pass_items", "must be at least 1")

    @property
    def empty(self) -> bool:
        """Whether the last pass (or check) found no backlog and no request came since."""
        return self._empty_at is not None

    def progress(self) -> dict[str, Any]:
        """Where indexing stands: ``state`` (:data:`IndexState`), the running or last pass's ``done`` of ``total``
        items (a build counts the whole store), the ``backlog`` its end reported, ``passes`` started, ``message``."""
        return {"state": self._state, "done": self._done, "total": self._total, "backlog": self._backlog,
                "passes": self._passes, "message": self._message, "idle_s": self.idle}  # fmt: skip

    def call_started(self) -> None:
        """A request arrived: it wins; a pass in progress is stopped now (its last checkpoint stays)."""
        self._in_flight += 1
        process = self._process
        if process is not None and process.exitcode is None:
            process.kill()
            self._stopped = True
            self._state = "paused"
            self.events.append("stopped")
            logger.info("vector index (idle): pass stopped, a request arrived; the next idle period resumes it")

    def call_ended(self) -> None:
        """A request ended: the idle clock starts again, and the backlog may have grown."""
        self._in_flight -= 1
        self._last = time.monotonic()
        self._empty_at = self._failed_at = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[IdleIndexer]:
        """Run the loop beside the body (the server's serving); leaving stops the loop and any pass."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.run)
            try:
                yield self
            finally:
                self.close()
                group.cancel_scope.cancel()

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
        from cli import child_process  # noqa: PLC0415 - see the TYPE_CHECKING block

        path = str(self.path.resolve())
        preload = await anyio.to_thread.run_sync(child_process.server_preload, self.path)
        process, ours = await anyio.to_thread.run_sync(lambda: child_process.start(
            _index_pass, path, self.pass_items, self.batch, name="mabos-idle-index", preload=preload))  # fmt: skip
        self._process, self._stopped = process, False
        self._state, self._passes = "indexing", self._passes + 1
        self._done = self._total = None  # until this pass reports (a resumed build reports from its checkpoint)
        self.events.append("start")
        try:
            await self._follow(ours)
        finally:
            self._process = None
            with contextlib.suppress(OSError):
                ours.close()
            if process.exitcode is None:
                process.kill()
            with anyio.CancelScope(shield=True):  # reap it even when the server is shutting down
                await anyio.to_thread.run_sync(process.join, 5)

    async def _follow(self, conn: Connection) -> None:
        """Log the pass's progress until it reports its end or dies (killed by a request)."""
        while True:
            await anyio.wait_readable(conn.fileno())
            try:
                kind, first, second = conn.recv()
            except (EOFError, OSError):
                if not self._stopped:  # it failed on its own: try again after a while, not every poll
                    self._failed_at = time.monotonic()
                    self._state, self._message = "failed", "the pass ended without a report (see the server's log)"
                    logger.warning("vector index (idle): the pass ended without a report (see the log above)")
                return  # killed by a request: call_started logged it
            if kind == "progress":
                self.events.append("progress")
                self._done, self._total = first, second
                logger.info("vector index (idle): %d of %d items", first, second)
                continue
            self._end(first, second)
            return

    def _end(self, backlog: int, problem: str) -> None:
        """A pass reported its end: ``backlog`` items still wait; ``problem`` says why the index is unusable."""
        self.events.append("done")
        self._backlog, self._message = backlog, problem
        if problem:
            logger.warning("vector index (idle): %s", problem)
        if backlog:
            self._state = "waiting"
            logger.info("vector index (idle): pass saved, %d items still waiting", backlog)
            return
        self.events.append("empty")
        self._empty_at = time.monotonic()
        self._state = "unavailable" if problem else "up to date"
        logger.info("vector index (idle): up to date")

    def close(self) -> None:
        """Stop the loop and any pass in progress."""
        self._closed = True
        self._state = "stopped"
        process = self._process
        if process is not None and process.exitcode is None:
            process.kill()


def idle_seconds(seconds: float, off: bool) -> float:
    """The idle delay the two ``--index-when-idle`` options ask for (0: off)."""
    return 0.0 if off else seconds


def index_when_idle_options(command: F) -> F:
    """``--index-when-idle SECONDS`` (default 30; 0 turns it off) and ``--no-index-when-idle``, for every server."""
    command = click.option("--no-index-when-idle", "no_index_when_idle", is_flag=True,
                           help="Do not index in the background (as --index-when-idle 0).")(command)  # fmt: skip
    return click.option(
        "--index-when-idle", type=click.FloatRange(0, 86_400), default=DEFAULT_IDLE, show_default=True,
        metavar="SECONDS", help="After this long with no request in flight, index the vector index backlog in the "
        "background, in resumable checkpoints; a request stops the pass at once (0: off).",
    )(command)  # fmt: skip


def log_to_stderr(seconds: float) -> None:
    """Idle indexing's progress goes to stderr (the server's log), one line per step, when it is on."""
    if seconds:
        handler = logging.StreamHandler()  # stderr
        handler.setFormatter(logging.Formatter("mabos: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


__all__ = [
    "DEFAULT_IDLE",
    "PASS_ITEMS",
    "IdleIndexer",
    "IndexState",
    "idle_seconds",
    "index_when_idle_options",
    "log_to_stderr",
]
