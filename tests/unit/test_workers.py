"""The worker pool the MCP server and the console share (cli/workers.py), with a handler that computes: a pure-Python
loop that looks at no flag, the kind of work a thread could never be stopped in (issue 30: "killable workers").

Real worker processes from the forkserver; the handler below is imported by the children by name. Outcomes are
asserted by order and by process state, never by duration.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from cli.pool_settings import PoolSettings
from cli.workers import DeadlineError, WorkerError, WorkerKind, WorkerMemoryError, Workers
from kg.errors import BackendUnavailableError, MabosError
from tests.serving import process_alive


class Spinner:
    """Spins the CPU for ``message`` seconds and answers its pid; ``"oom"`` raises MemoryError, ``"bug"`` a
    ValueError (a handler's own error)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, message: Any) -> int:
        if message == "oom":
            raise MemoryError
        if message == "bug":
            raise ValueError("a bug in the handler")
        end = time.monotonic() + float(message)
        while time.monotonic() < end:  # no flag, no sleep: only killing the process ends it early
            pass
        return os.getpid()

    def close(self) -> None:
        """Nothing to close."""


SPINNERS = WorkerKind("mabos-test-spinner", Spinner, advice="spin less")


@pytest.fixture
def pool(tmp_path: Path) -> Any:
    made = Workers(tmp_path, SPINNERS, PoolSettings(workers=2, per_agent=1, deadline=1, memory=None))  # b: a round trip
    try:
        yield made
    finally:
        made.close()


def test_a_computation_past_its_deadline_is_killed_and_holds_up_no_other_agent(pool: Workers) -> None:
    done: list[str] = []
    outcome: dict[str, Any] = {}
    spinning: list[int] = []

    async def call(label: str, key: str, message: Any) -> None:
        try:
            outcome[label] = await pool.run(message, key=key, what=f"spin {message}")
        except MabosError as exc:
            outcome[label] = exc
        done.append(label)

    async def scenario() -> None:
        await pool.start()
        async with anyio.create_task_group() as group:
            group.start_soon(call, "a", "a", 600)
            while not pool.running():
                await anyio.sleep(0.01)
            spinning.extend(pool.running())
            group.start_soon(call, "b", "b", 0)

    anyio.run(scenario)
    assert done == ["b", "a"]  # b was answered while a's loop spun in the other worker
    assert isinstance(outcome["b"], int) and outcome["b"] not in spinning
    error = outcome["a"]
    assert isinstance(error, DeadlineError) and isinstance(error, BackendUnavailableError)
    assert str(error).startswith("deadline: spin 600 ran longer than 1 s and was stopped")
    assert str(error).endswith("spin less or ask the operator for a longer --deadline")
    assert spinning and not process_alive(spinning[0])  # the loop burns no more CPU
    assert pool.busy == 0 and spinning[0] not in pool.pids()


def test_a_handler_that_runs_out_of_memory_is_replaced_and_one_that_fails_serves_on(pool: Workers) -> None:
    workers: list[list[int]] = []

    async def scenario() -> list[Any]:
        results: list[Any] = []
        for message in ("bug", 0, "oom", 0):
            try:
                results.append(await pool.run(message, key="a", what=f"spin {message}"))
            except WorkerError as exc:
                results.append(exc)
            workers.append(pool.pids())
        return results

    bug, first, oom, after = anyio.run(scenario)
    assert isinstance(bug, WorkerError) and not isinstance(bug, WorkerMemoryError)
    assert str(bug) == "spin bug failed in its worker: ValueError: a bug in the handler"
    assert workers[0] == workers[1] == [first]  # the worker whose handler failed answered the next call
    assert isinstance(oom, WorkerMemoryError)
    assert str(oom).startswith("memory: spin oom needed more than the worker memory limit (no limit)")
    assert workers[2] == [] and workers[3] == [after]  # the worker that ran out ended; a new one took the next call
    assert first != after and not process_alive(first)
