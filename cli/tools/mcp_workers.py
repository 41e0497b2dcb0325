"""Worker processes of the MCP server: every tool call runs in a child process with its own workspace handle.

Why processes (docs/decisions/2026-11-26-mcp-concurrency.md): a call past its deadline must stop, and a thread cannot
be stopped (a regex in C, a SQLite busy wait or a long fixpoint loop never looks at a flag); a process can be killed,
and the store is built to survive that (WAL rollback; the crash-safety harness SIGKILLs writers). Each worker opens
the workspace once and keeps it, so calls cost a pipe round trip, not an open.

- :class:`WorkerPool` keeps up to ``workers`` warm processes. A call takes an idle one; past ``deadline`` seconds the
  worker is killed (its uncommitted transaction rolls back) and the caller gets a one-line error; a replacement is
  started on the next call.
- Fairness: an agent may have at most ``per_agent`` calls running at once; the others wait for that agent's own
  calls, not for the pool, so one agent's slow calls never take every worker.
- Reads run concurrently: each worker holds its own SQLite connection (WAL lets readers proceed beside a writer);
  writes from several workers serialize on SQLite's write lock as writes of several CLI processes do.

- Memory: each worker may take at most ``memory`` bytes of address space beyond what it holds when it is ready
  (``RLIMIT_AS``; default :data:`DEFAULT_MEMORY`, 2 GiB, or ``MABOS_WORKER_MEMORY``), so no single call can take
  the machine. A call past it fails with ``error: memory: ...`` (a Python ``MemoryError``, or a native library that
  aborts when an allocation fails); that worker is replaced and the server keeps serving.

Children come from a ``forkserver`` that has imported the tools once (:mod:`cli.child_process`), so a replacement
starts in a fraction of a second; each child gets the server's current environment, and its stdout is pointed at
stderr (on stdio, the server's stdout is the protocol).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import resource
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import anyio

from cli import child_process
from kg.errors import InputError

logger = logging.getLogger(__name__)

#: Defaults of ``mabos serve --mcp``: two warm workers, one running call per agent, a minute per call.
DEFAULT_WORKERS = 2
DEFAULT_DEADLINE = 60.0
_START_TIMEOUT = 120.0  # seconds for a new worker to open the workspace (a cold start imports the whole stack)
#: The address space a worker may take beyond its size when ready (the preloaded libraries: ~0.5 GiB, ~1.4 GiB
#: with the local embedding model's torch), unless ``MABOS_WORKER_MEMORY`` says otherwise.
DEFAULT_MEMORY = 2 << 30
ENV_MEMORY = "MABOS_WORKER_MEMORY"
_MIN_MEMORY = 32 << 20
_UNITS = {"": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}
_OUT_OF_MEMORY = "internal error: MemoryError"  # how call_tool reports a MemoryError


def memory_from_env() -> int | None:
    """The worker memory limit in bytes from ``MABOS_WORKER_MEMORY`` (``2GiB``, ``512MiB``, a byte count, or
    ``off`` for none); :data:`DEFAULT_MEMORY` when it is not set.

    Raises:
        InputError: naming ``MABOS_WORKER_MEMORY`` for a value that is not a size.
    """
    value = os.environ.get(ENV_MEMORY, "").strip().lower()
    if not value:
        return DEFAULT_MEMORY
    if value in ("off", "none", "0"):
        return None
    found = re.fullmatch(r"(\d+)\s*([a-z]*)", value)
    if found is None or found.group(2) not in _UNITS:
        raise InputError(ENV_MEMORY, f"must be a size such as 2GiB, 512MiB or a byte count, or off; got {value!r}")
    return int(found.group(1)) * _UNITS[found.group(2)]


def _size(count: int | None) -> str:
    return "no limit" if count is None else f"{count / (1 << 30):g} GiB" if count >= 1 << 30 else f"{count >> 20} MiB"


@dataclass(frozen=True)
class PoolSettings:
    """How many workers, how many running calls per agent, each call's deadline in seconds, and the address space
    in bytes a worker may take beyond its size when ready (None: no limit)."""

    workers: int = DEFAULT_WORKERS
    per_agent: int = 1
    deadline: float = DEFAULT_DEADLINE
    memory: int | None = field(default_factory=memory_from_env)

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= 64:
            raise InputError("workers", "must be between 1 and 64")
        if not 1 <= self.per_agent <= self.workers:
            raise InputError("per_agent", f"must be between 1 and the number of workers ({self.workers})")
        if not 0 < self.deadline <= 86_400:
            raise InputError("deadline", "must be more than 0 and at most 86400 seconds")
        if self.memory is not None and not _MIN_MEMORY <= self.memory <= 1 << 40:
            raise InputError("memory", f"must be between {_size(_MIN_MEMORY)} and 1024 GiB (or no limit)")


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


def _serve(conn: Connection, path: str, memory: int | None = None) -> None:
    """A worker's life (in a child set up by :func:`cli.child_process.start`): open the workspace, cap its memory,
    answer calls until the pipe closes or a call ran out of memory (the worker then ends: the pool replaces it)."""
    from cli.tools.mcp_calls import call_tool  # noqa: PLC0415 - preloaded by the forkserver; imported in the child
    from cli.tools.registry import ToolContext  # noqa: PLC0415

    ctx = ToolContext(path=Path(path), operator=False)
    try:
        ctx.workspace()  # warm: open now; a workspace that cannot open is retried by the call (its error is its result)
    except Exception as exc:
        logger.warning("worker %s: the workspace did not open yet: %s", os.getpid(), exc)
    _limit_memory(memory)
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            name, arguments, agent = message
            ctx.agent = agent
            if not _answer(conn, name, call_tool(ctx, name, arguments), memory):
                break
    finally:
        ctx.close()


def _answer(conn: Connection, name: str, result: Any, memory: int | None) -> bool:
    """Send a call's result; False (the worker should end) when the call, or its answer, ran out of memory."""
    try:
        reply = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        text = reply["content"][0].get("text", "") if reply.get("isError") and reply.get("content") else ""
        if not text.startswith(_OUT_OF_MEMORY):
            conn.send(reply)
            return True
    except MemoryError:
        pass
    conn.send({**_error(f"error: memory: {name} needed more than the worker memory limit ({_size(memory)}) and was "
                        "stopped (what it had not committed was rolled back); narrow the call"),
               "retire": True})  # fmt: skip
    return False


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    pid: int

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


class WorkerError(Exception):
    """A worker could not be started or died during a call (the message is one line)."""


@dataclass
class _AgentGate:
    semaphore: anyio.Semaphore
    users: int = 0


@dataclass
class WorkerPool:
    """Worker processes over one workspace (see the module text)."""

    path: Path
    settings: PoolSettings = field(default_factory=PoolSettings)
    _idle: list[_Worker] = field(default_factory=list)
    _busy: dict[int, _Worker] = field(default_factory=dict)
    _slots: anyio.Semaphore | None = None
    _agents: dict[str | None, _AgentGate] = field(default_factory=dict)
    _closed: bool = False

    @property
    def busy(self) -> int:
        """How many calls are running in a worker now."""
        return len(self._busy)

    def pids(self) -> list[int]:
        """The process ids of the live workers (idle and busy)."""
        return [w.pid for w in [*self._idle, *self._busy.values()]]

    def _spawn(self) -> _Worker:
        process, ours = child_process.start(_serve, str(self.path.resolve()), self.settings.memory,
                                            name="mabos-mcp-worker",
                                            preload=child_process.server_preload(self.path))  # fmt: skip
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

    async def call(self, name: str, arguments: dict[str, Any], *, agent: str | None, key: str | None) -> dict[str, Any]:
        """Run tool ``name`` in a worker acting as ``agent`` (the bound agent, if any); ``key`` is whose turn it
        is (the acting agent). Returns the MCP result as data; a deadline or a dead worker is an error result."""
        if self._closed:
            raise WorkerError("the server is shutting down")
        if self._slots is None:
            self._slots = anyio.Semaphore(self.settings.workers)
        with self._agent_gate(key) as mine:
            async with mine, self._slots:
                for attempt in (1, 2):  # an idle worker may have died (killed from outside): the call never started
                    worker = self._idle.pop() if self._idle else await anyio.to_thread.run_sync(self._spawn)
                    try:
                        worker.conn.send((name, arguments, agent))
                    except OSError:
                        worker.stop(kill=True)
                        if attempt == 2:
                            raise WorkerError(f"no worker could take {name}") from None
                        continue
                    return await self._run(worker, name)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _run(self, worker: _Worker, name: str) -> dict[str, Any]:
        """Wait for the reply of the call just sent to ``worker``, at most the deadline."""
        self._busy[worker.pid] = worker
        healthy = False
        try:
            with anyio.move_on_after(self.settings.deadline) as timer:
                await anyio.wait_readable(worker.conn.fileno())
            if timer.cancelled_caught:
                return _error(f"error: deadline: {name} ran longer than {self.settings.deadline:g} s and was stopped "
                              "(what it had not committed was rolled back); narrow the call or ask the operator for "
                              "a longer --deadline")  # fmt: skip
            try:
                reply: dict[str, Any] = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join(2)
                return self._died(name, worker.process.exitcode)
            healthy = not reply.pop("retire", False)  # a worker that ran out of memory ends; a new one replaces it
            return reply
        finally:
            del self._busy[worker.pid]
            if healthy and not self._closed:
                self._idle.append(worker)
            else:
                worker.stop(kill=True)  # past its deadline, cancelled by the client, or dead

    def _died(self, name: str, code: int | None) -> dict[str, Any]:
        """The error of a call whose worker ended: a native library aborts (SIGABRT) when an allocation past the
        memory limit fails, and the kernel's OOM killer sends SIGKILL."""
        if code in (-signal.SIGABRT, -signal.SIGKILL) and self.settings.memory is not None:
            return _error(f"error: memory: {name} stopped its worker (exit code {code}), most likely past the worker "
                          f"memory limit ({_size(self.settings.memory)}); what it had not committed was rolled back; "
                          "narrow the call")  # fmt: skip
        return _error(f"internal error: the worker running {name} ended (exit code {code})")

    def close(self) -> None:
        """Stop every worker: idle ones finish cleanly (they save their vector index), busy ones are killed."""
        self._closed = True
        for worker in self._idle:
            worker.stop(kill=False)
        for worker in list(self._busy.values()):
            worker.stop(kill=True)
        self._idle.clear()


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MEMORY",
    "DEFAULT_WORKERS",
    "ENV_MEMORY",
    "PoolSettings",
    "WorkerError",
    "WorkerPool",
    "memory_from_env",
]
