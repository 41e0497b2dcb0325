"""Where console work runs: a few worker threads ("lanes"), each with its own workspace handle, a deadline per
request and one running request per agent, so one agent's slow page never starves another's.

The MCP server's model (docs/decisions/2026-11-26-mcp-concurrency.md) applied to the console:

- **Lanes.** ``count`` threads, each holding its own :class:`~cli.ui.context.Console` (its own SQLite connection:
  reads of different requests run side by side under WAL; writes serialize on SQLite's lock as the CLI's do). A
  request takes a free lane and gives it back when its work ends.
- **Fairness.** An agent has at most one request running; its next waits for that one, not for the lanes, so one
  agent (or a page hammering the console as that agent) holds one lane at most and the other lanes stay free for
  everyone else.
- **Deadline.** A request that has not finished (waiting included) within ``deadline`` seconds is answered with a
  one-line ``deadline`` error (504). A thread cannot be killed, so the work behind it runs on until it ends and
  keeps its lane and its agent's turn meanwhile: every computation a request can start is bounded (capped views,
  bounded reasoning methods, and GETs that compute nothing heavy; reasoning runs on POST with the CSRF token).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from cli.ui.context import Console
from kg.errors import MabosError

T = TypeVar("T")

#: Defaults of ``mabos ui``: three lanes, half a minute per request.
DEFAULT_LANES = 3
DEFAULT_DEADLINE = 30.0


class DeadlineError(MabosError):
    """A console request ran (or waited) past its deadline (HTTP 504)."""


@dataclass
class _Lane:
    executor: ThreadPoolExecutor
    console: Console


@dataclass
class _Turn:
    """One agent's turn: a lock, and how many requests hold or wait for it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class Lanes:
    """Worker lanes over one workspace (see the module text).

    Args:
        path: the workspace directory.
        agent: the console's start agent (every lane's :class:`Console` default).
        count: how many lanes (threads with their own workspace handle).
        deadline: seconds a request may take, waiting included.
    """

    def __init__(self, path: Path, agent: str | None, *, count: int = DEFAULT_LANES,
                 deadline: float = DEFAULT_DEADLINE) -> None:  # fmt: skip
        if not 1 <= count <= 32:
            raise ValueError("lanes: must be between 1 and 32")
        self.deadline = deadline
        self._lanes = [_Lane(ThreadPoolExecutor(1, thread_name_prefix=f"mabos-ui-{i}"), Console(path, agent=agent))
                       for i in range(count)]  # fmt: skip
        self._free: asyncio.Queue[_Lane] | None = None
        self._turns: dict[str, _Turn] = {}
        self._running = 0

    @property
    def busy(self) -> int:
        """How many lanes run a request's work now (abandoned work past its deadline included)."""
        return self._running

    @property
    def first(self) -> Console:
        """The first lane's console (for work outside a request, e.g. start-up checks, on that lane only)."""
        return self._lanes[0].console

    def _queue(self) -> asyncio.Queue[_Lane]:
        if self._free is None:
            self._free = asyncio.Queue()
            for lane in self._lanes:
                self._free.put_nowait(lane)
        return self._free

    async def run(self, key: str, work: Callable[[Console], T], *, what: str = "the request") -> T:
        """``work(console)`` on a free lane, in ``key``'s turn (the acting agent), within the deadline.

        Raises :class:`DeadlineError` past the deadline; the lane and the turn are given back when the work ends.
        """
        loop = asyncio.get_running_loop()
        turn = self._turns.setdefault(key, _Turn())
        turn.users += 1
        done: asyncio.Future[T] = loop.create_future()
        started = False

        async def start() -> None:
            nonlocal started
            await turn.lock.acquire()
            try:
                lane = await self._queue().get()
            except BaseException:
                turn.lock.release()
                raise
            started = True
            self._running += 1
            job = lane.executor.submit(work, lane.console)

            def finished(job: Future[T]) -> None:
                loop.call_soon_threadsafe(self._finish, job, lane, turn, key, done)

            job.add_done_callback(finished)

        try:
            async with asyncio.timeout(self.deadline):
                await start()
                return await asyncio.shield(done)
        except TimeoutError:
            raise DeadlineError(
                f"deadline: {what} took longer than {self.deadline:g} s and was abandoned (its work ends on its own "
                "bound); narrow it (a smaller cap, fewer facts) or try again"
            ) from None
        finally:
            if not started:
                self._leave(turn, key)

    def _finish(self, job: Future[T], lane: _Lane, turn: _Turn, key: str, done: asyncio.Future[T]) -> None:
        """On the loop, when a lane's work ended: hand over its result, give back the lane and the turn."""
        self._running -= 1
        self._queue().put_nowait(lane)
        turn.lock.release()
        self._leave(turn, key)
        if done.cancelled():
            return
        error = job.exception()
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(job.result())
        with contextlib.suppress(Exception):
            done.exception()  # a result nobody awaits any more (past its deadline) is not an unhandled error

    def _leave(self, turn: _Turn, key: str) -> None:
        turn.users -= 1
        if turn.users == 0 and self._turns.get(key) is turn:
            del self._turns[key]  # one entry per agent with requests, not per agent ever seen

    def close(self) -> None:
        """Close every lane's workspace (after the work it runs, at most a deadline's wait) and stop the threads."""
        closing = [lane.executor.submit(lane.console.close) for lane in self._lanes]
        wait_futures(closing, timeout=self.deadline)
        for lane in self._lanes:
            lane.executor.shutdown(wait=False, cancel_futures=True)


__all__ = ["DEFAULT_DEADLINE", "DEFAULT_LANES", "DeadlineError", "Lanes"]
