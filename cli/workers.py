"""Worker processes of the servers: every MCP tool call (:mod:`cli.tools.mcp_workers`) and every console request
that reads the workspace (:mod:`cli.ui.lanes`) runs in a child process with its own workspace handle, under a
deadline, and is killed at it.

Why processes (docs/decisions/2026-11-26-mcp-concurrency.md): a call past its deadline must stop, and a thread cannot
be stopped (a regex in C, a SQLite busy wait or a long fixpoint loop never looks at a flag); a process can be killed,
and the store is built to survive that (WAL rollback; the crash-safety harness SIGKILLs writers). Each worker opens
the workspace once and keeps it, so calls cost a pipe round trip, not an open.

- :class:`Workers` keeps up to ``workers`` warm processes of one :class:`WorkerKind` (what a worker does with a
  message). A call takes an idle worker; past ``deadline`` seconds the worker is killed (its uncommitted transaction
  rolls back) and the caller gets :class:`DeadlineError`, one line; a replacement is started on the next call.
- Fairness: an agent may have at most ``per_agent`` calls running at once; the others wait for that agent's own
  calls, not for the pool, so one agent's slow calls never take every worker.
- Reads run concurrently: each worker holds its own SQLite connection (WAL lets readers proceed beside a writer);
  writes from several workers serialize on SQLite's write lock as writes of several CLI processes do.
- Memory: each worker may take at most ``memory`` bytes of address space beyond what it holds when it is ready
  (``RLIMIT_AS``; default :data:`cli.pool_settings.DEFAULT_MEMORY`, 2 GiB, or ``MABOS_WORKER_MEMORY``), so no
  single call can take the machine. A call past it fails with :class:`WorkerMemoryError` (a Python
  ``MemoryError``, or a native library that aborts when an allocation fails); that worker is replaced and the
  server keeps serving.

Errors, one line each, under ``kg.errors.BackendUnavailableError`` (the server could not answer this call)::

    WorkerError             a worker could not start or ended during the call, or the server is shutting down
    ├── DeadlineError       the call ran past its deadline; its worker was killed
    └── WorkerMemoryError   the call ran past the worker memory limit; its worker ended and is replaced

Children come from a ``forkserver`` that has imported the tools once (:mod:`cli.child_process`), so a replacement
starts in a fraction of a second; each child gets the server's current environment, and its stdout is pointed at
stderr (on stdio, the server's stdout is the protocol).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import resource
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Protocol

import anyio

from cli import child_process
from cli.pool_settings import PoolSettings, size_text
from kg.errors import BackendUnavailableError

logger = logging.getLogger(__name__)

_START_TIMEOUT = 120.0  # seconds for a new worker to open the workspace (a cold start imports the whole stack)


class WorkerError(BackendUnavailableError):
    """A worker could not be started, ended during a call, or the server is shutting down (one line)."""


class DeadlineError(WorkerError):
    """A call ran (or, where the caller counts waiting, waited and ran) past its deadline; its worker was killed."""


class WorkerMemoryError(WorkerError):
    """A call ran past the worker memory limit; its worker ended and is replaced."""


class Handler(Protocol):
    """What a worker runs: one answer per message (picklable both ways), then ``close`` when the worker ends."""

    def __call__(self, message: Any, /) -> Any: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerKind:
    """What a pool's workers do.

    Attributes:
        name: the process name (``ps`` shows it).
        opener: ``opener(path, *options)`` -> :class:`Handler`, run in the child before it reports ready (open the
            workspace there, so the first call finds it warm); a module-level callable (the forkserver imports it).
        advice: what a caller stopped at the deadline or the memory limit can do ("narrow the call").
        waiting_counts: whether the deadline counts from the call's arrival (waiting for the agent's turn and a
            worker included: an HTTP request is answered within it) or from its start in a worker.
        preload: modules the forkserver imports beyond the server's (:func:`cli.child_process.server_preload`), so
            that every worker forks with them; the first child a process starts decides its forkserver's preload,
            so this helps when this kind's workers start first (they start with their server), and is harmless
            otherwise.
    """

    name: str
    opener: Callable[..., Handler]
    advice: str
    waiting_counts: bool = False
    preload: tuple[str, ...] = ()


def _limit_memory(memory: int | None) -> None:
    """In a worker: cap its address space at its size now plus ``memory`` bytes (never above the hard limit)."""
    if memory is None:
        return
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):  # not Linux: the limit of the whole process
        size = 0
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + memory if hard == resource.RLIM_INFINITY else min(size + memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _serve(conn: Connection, opener: Callable[..., Handler], path: str, memory: int | None,
           options: tuple[Any, ...] = ()) -> None:  # fmt: skip
    """A worker's life (in a child set up by :func:`cli.child_process.start`): open the handler, cap its memory,
    answer messages until the pipe closes or one ran out of memory (the worker then ends: the pool replaces it)."""
    handler = opener(Path(path), *options)
    _limit_memory(memory)
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None or not _answer(conn, handler, message):
                break
    finally:
        handler.close()


def _answer(conn: Connection, handler: Handler, message: Any) -> bool:
    """Send the answer to one message; False (the worker should end) when it, or its answer, ran out of memory.
    A handler answers its own errors; one that raises anyway (a bug) is reported in one line and the worker
    serves on."""
    try:
        conn.send(("done", handler(message)))
        return True
    except MemoryError:
        pass
    except Exception as exc:
        logger.exception("worker %s: the handler failed", os.getpid())
        conn.send(("failed", f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
        return True
    conn.send(("memory", None))
    return False


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    pid: int
    task: str = ""  # what it runs now

    def stop(self, *, kill: bool) -> None:
        """End the process: at once (``kill``), or by closing its pipe and waiting a little."""
        if kill and self.process.exitcode is None:  # never signal a pid that was already reaped (and maybe reused)
            self.process.kill()
        with contextlib.suppress(OSError):
            self.conn.close()
        self.process.join(2 if kill else 10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(2)


@dataclass
class _AgentGate:
    semaphore: anyio.Semaphore
    users: int = 0


class Workers:
    """Worker processes of one kind over one workspace (see the module text).

    Args:
        path: the workspace directory (each worker opens its own handle on it).
        kind: what the workers do.
        settings: how many, running calls per agent, the deadline and the memory limit.
        options: more arguments for ``kind.opener`` after the path (picklable).
    """

    def __init__(self, path: Path, kind: WorkerKind, settings: PoolSettings | None = None,
                 options: tuple[Any, ...] = ()) -> None:  # fmt: skip
        self.path = path
        self.kind = kind
        self.settings = settings if settings is not None else PoolSettings()
        self.options = options
        self._idle: list[_Worker] = []
        self._busy: dict[int, _Worker] = {}
        self._slots: anyio.Semaphore | None = None
        self._agents: dict[str | None, _AgentGate] = {}
        self._closed = False

    @property
    def busy(self) -> int:
        """How many calls are running in a worker now."""
        return len(self._busy)

    def pids(self) -> list[int]:
        """The process ids of the live workers (idle and busy)."""
        return [w.pid for w in [*self._idle, *self._busy.values()]]

    def running(self) -> dict[int, str]:
        """The process id of each busy worker and what it runs (the ``what`` of its call)."""
        return {pid: worker.task for pid, worker in self._busy.items()}

    def _spawn(self) -> _Worker:
        process, ours = child_process.start(_serve, self.kind.opener, str(self.path.resolve()), self.settings.memory,
                                            self.options, name=self.kind.name,
                                            preload=[*child_process.server_preload(self.path),
                                                     *self.kind.preload])  # fmt: skip
        try:
            if not ours.poll(_START_TIMEOUT):
                raise WorkerError(f"a worker did not open the workspace within {_START_TIMEOUT:g} s")
            _ready, pid = ours.recv()
        except (EOFError, OSError) as exc:
            process.kill()
            process.join(2)
            raise WorkerError(f"a worker ended while starting (exit code {process.exitcode})") from exc
        except WorkerError:
            process.kill()
            process.join(2)
            raise
        return _Worker(process, ours, int(pid))

    async def start(self) -> None:
        """Start every worker now (they open the workspace in parallel), so the first calls find them warm."""
        missing = self.settings.workers - len(self._idle) - len(self._busy)

        async def one() -> None:
            self._idle.append(await anyio.to_thread.run_sync(self._spawn))

        async with anyio.create_task_group() as group:
            for _ in range(missing):
                group.start_soon(one)

    @contextlib.contextmanager
    def _agent_gate(self, key: str | None) -> Iterator[anyio.Semaphore]:
        gate = self._agents.get(key)
        if gate is None:
            gate = self._agents[key] = _AgentGate(anyio.Semaphore(self.settings.per_agent))
        gate.users += 1
        try:
            yield gate.semaphore
        finally:
            gate.users -= 1
            if not gate.users:
                del self._agents[key]  # one entry per agent with calls, not per agent ever seen

    async def run(self, message: Any, *, key: str | None, what: str) -> Any:
        """Send ``message`` to a worker in ``key``'s turn (the acting agent) and return its answer; ``what`` names
        the call in errors.

        Raises:
            DeadlineError: past the deadline (the worker was killed; with ``kind.waiting_counts`` the wait counts).
            WorkerMemoryError: the call ran past the worker memory limit (the worker ended).
            WorkerError: no worker could start, the worker ended otherwise, or the pool is closed.
        """
        if self._closed:
            raise WorkerError("the server is shutting down")
        begun = anyio.current_time()
        budget = self.settings.deadline
        if self._slots is None:
            self._slots = anyio.Semaphore(self.settings.workers)
        with self._agent_gate(key) as mine:
            async with contextlib.AsyncExitStack() as held:
                with anyio.move_on_after(budget if self.kind.waiting_counts else math.inf) as waiting:
                    await held.enter_async_context(mine)
                    await held.enter_async_context(self._slots)
                ends = begun + budget if self.kind.waiting_counts else math.inf
                if waiting.cancelled_caught:
                    raise DeadlineError(self._unstarted(what))
                for attempt in (1, 2):  # an idle worker may have died (killed from outside): the call never started
                    worker = self._idle.pop() if self._idle else await anyio.to_thread.run_sync(self._spawn)
                    if anyio.current_time() >= ends:  # the start of a new worker took the rest: keep it for the next
                        self._idle.append(worker)
                        raise DeadlineError(self._unstarted(what))
                    try:
                        worker.conn.send(message)
                    except OSError:
                        worker.stop(kill=True)
                        if attempt == 2:
                            raise WorkerError(f"no worker could take {what}") from None
                        continue
                    return await self._wait(worker, what, min(budget, ends - anyio.current_time()))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _wait(self, worker: _Worker, what: str, left: float) -> Any:
        """Wait for the answer to the message just sent to ``worker``, at most ``left`` seconds."""
        self._busy[worker.pid] = worker
        worker.task = what
        healthy = False
        try:
            with anyio.move_on_after(left) as timer:
                await anyio.wait_readable(worker.conn.fileno())
            if timer.cancelled_caught:
                raise DeadlineError(self._late(what))
            try:
                status, answer = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join(2)
                raise self._died(what, worker.process.exitcode) from None
            if status == "memory":  # the worker ended after saying so: a new one replaces it
                limit = size_text(self.settings.memory)
                raise WorkerMemoryError(f"memory: {what} needed more than the worker memory limit ({limit}) and "
                                        f"was stopped (what it had not committed was rolled back); "
                                        f"{self.kind.advice}")  # fmt: skip
            healthy = True
            if status == "failed":
                raise WorkerError(f"{what} failed in its worker: {answer}")
            return answer
        finally:
            del self._busy[worker.pid]
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                worker.stop(kill=True)  # past its deadline, cancelled by the caller, or dead

    def _unstarted(self, what: str) -> str:
        return (f"deadline: {what} waited {self.settings.deadline:g} s for a worker and did not start (the agent's "
                "earlier request, or every worker, was still busy); try again")  # fmt: skip

    def _late(self, what: str) -> str:
        took = "took longer than {:g} s (waiting for its turn included)" if self.kind.waiting_counts else \
            "ran longer than {:g} s"  # fmt: skip
        return (f"deadline: {what} {took.format(self.settings.deadline)} and was stopped (what it had not committed "
                f"was rolled back); {self.kind.advice} or ask the operator for a longer --deadline")  # fmt: skip

    def _died(self, what: str, code: int | None) -> WorkerError:
        """The error of a call whose worker ended: a native library aborts (SIGABRT) when an allocation past the
        memory limit fails, and the kernel's OOM killer sends SIGKILL."""
        if code in (-signal.SIGABRT, -signal.SIGKILL) and self.settings.memory is not None:
            limit = size_text(self.settings.memory)
            return WorkerMemoryError(f"memory: {what} stopped its worker (exit code {code}), most likely past the "
                                     f"worker memory limit ({limit}); what it had not committed was rolled back; "
                                     f"{self.kind.advice}")  # fmt: skip
        return WorkerError(f"the worker running {what} ended (exit code {code})")

    def close(self) -> None:
        """Stop every worker: idle ones finish cleanly (they save their vector index), busy ones are killed."""
        self._closed = True
        for worker in self._idle:
            worker.stop(kill=False)
        for worker in list(self._busy.values()):
            worker.stop(kill=True)
        self._idle.clear()


__all__ = [
    "DeadlineError",
    "Handler",
    "WorkerError",
    "WorkerKind",
    "WorkerMemoryError",
    "Workers",
]
