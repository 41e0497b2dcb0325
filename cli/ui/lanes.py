"""Where console work runs: worker processes ("lanes") that are killed at the deadline, and one thread for the token
check.

The MCP server's model (docs/decisions/2026-11-26-mcp-concurrency.md, docs/decisions/2026-11-28-console-workers.md)
applied to the console, on the same pool (:class:`cli.workers.Workers`):

- **Worker processes** (:class:`Lanes`): every request that reads or writes the workspace (every page and its
  ``/api`` twin, the graph views and node details, recall, the reasoning runs, approve and reject) runs in one of
  ``count`` worker processes, each holding its own workspace handle (:class:`cli.ui.work.ConsoleWork`): the page's
  data is computed and rendered there, and only the finished answer comes back.
- **Fairness.** An agent has at most one request running; its next waits for that one, not for the workers, so one
  agent (or a page hammering the console as that agent) holds one worker at most and the others stay free for
  everyone else.
- **Deadline.** A request that has not finished within ``deadline`` seconds (waiting for its turn included) is
  answered with a one-line ``deadline`` error (504) and its worker is killed (SIGKILL: what it had not committed
  rolls back); the worker slot and the agent's turn are free at once, and the next request gets a new worker. A
  worker is also capped in memory (``MABOS_WORKER_MEMORY``, 2 GiB by default, :mod:`cli.workers`).
- **In this process**, on the event loop or one thread: the token check of a request that carries an agent's API
  token (:class:`TokenCheck`: one lookup by the token's id, on its own workspace handle), the security headers and
  checks (:mod:`cli.ui.security`), static files and the index progress (``/api/index``, no workspace access).
  Nothing there computes over the store, so none of it needs to be killable.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from cli.pool_settings import PoolSettings
from cli.ui.context import Console
from cli.ui.work import Answer, ConsoleWork, Job
from cli.workers import DeadlineError, WorkerKind, Workers
from kg.errors import InputError

#: Defaults of ``mabos ui``: three worker processes, half a minute per request.
DEFAULT_LANES = 3
DEFAULT_DEADLINE = 30.0

#: The console's workers: the deadline counts from a request's arrival (a browser gets its answer within it).
CONSOLE_WORKERS = WorkerKind("mabos-ui-worker", ConsoleWork, advice="narrow the request (a smaller cap, fewer facts)",
                             waiting_counts=True, preload=("cli.ui.work", "cli.ui.rendering"))  # fmt: skip


class Lanes:
    """The console's worker processes over one workspace (see the module text).

    Args:
        path: the workspace directory.
        agent: the console's start agent (every worker's default).
        count: how many worker processes.
        deadline: seconds a request may take, waiting included.
    """

    def __init__(self, path: Path, agent: str | None, *, count: int = DEFAULT_LANES,
                 deadline: float = DEFAULT_DEADLINE) -> None:  # fmt: skip
        if not 1 <= count <= 32:
            raise InputError("lanes", "must be between 1 and 32")
        self.deadline = deadline
        settings = PoolSettings(workers=count, per_agent=1, deadline=deadline)
        self.pool = Workers(path, CONSOLE_WORKERS, settings, options=(agent,))

    @property
    def busy(self) -> int:
        """How many workers run a request now."""
        return self.pool.busy

    def pids(self) -> list[int]:
        """The process ids of the live workers."""
        return self.pool.pids()

    def running(self) -> dict[int, str]:
        """The process id of each worker running a request (busy), and which request it runs."""
        return self.pool.running()

    async def start(self) -> None:
        """Start every worker now, so the first requests find them warm."""
        await self.pool.start()

    async def run(self, key: str, job: Job, *, what: str) -> Answer:
        """``job`` in a worker, in ``key``'s turn (the acting agent), within the deadline.

        Raises:
            DeadlineError: past the deadline (the worker was killed, the turn is free again).
            WorkerError: the worker ended (e.g. past its memory limit: :class:`cli.workers.WorkerMemoryError`).
        """
        answer: Answer = await self.pool.run(job, key=key, what=what)
        return answer

    def close(self) -> None:
        """Stop the workers (busy ones are killed)."""
        self.pool.close()


class TokenCheck:
    """The agent an API token belongs to, checked in this process on one thread with its own workspace handle: a
    lookup by the token's id, so it stays out of the workers (a request would otherwise pay two trips)."""

    def __init__(self, path: Path, deadline: float = DEFAULT_DEADLINE) -> None:
        self.console = Console(path)
        self.deadline = deadline
        self._one = anyio.CapacityLimiter(1)  # the handle is used by one thread at a time

    def _verify(self, secret: str) -> str | None:
        info = self.console.ws.tokens.verify(secret)
        return info.agent_id if info is not None else None

    async def agent(self, secret: str) -> str | None:
        """The token's agent while the token is live, else None.

        Raises:
            DeadlineError: the check did not end within the deadline (the store stayed unreadable).
        """
        with anyio.move_on_after(self.deadline):
            return await anyio.to_thread.run_sync(self._verify, secret, limiter=self._one, abandon_on_cancel=True)
        raise DeadlineError(f"deadline: the token check took longer than {self.deadline:g} s; try again")

    def close(self) -> None:
        """Close the workspace handle."""
        self.console.close()


__all__ = ["CONSOLE_WORKERS", "DEFAULT_DEADLINE", "DEFAULT_LANES", "Lanes", "TokenCheck"]
