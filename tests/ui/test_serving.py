"""The console served for real (uvicorn in a thread, raw HTTP, real worker processes): DNS rebinding refused on any
loopback address, and one agent's slow request neither blocks another agent nor outlives its deadline.

The slow request is real: a reject (a write) that waits for SQLite's write lock, which the test holds, as the MCP
server's concurrency test does: it waits inside SQLite's busy handler, in C, where no flag could stop it, so only
killing its process ends it. Nothing is mocked.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from cli.ui import create_app
from kg.workspace import DB_FILE, STATE_DIR
from tests.serving import process_alive, serving_in_thread

if TYPE_CHECKING:
    from conftest import Built


@contextmanager
def serving(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """``app`` served by uvicorn in a thread on ``host``; its base URL."""
    with serving_in_thread(app, host) as port:
        yield f"http://{host}:{port}"


def get(url: str, headers: dict[str, str] | None = None, *, method: str = "GET", data: Any = None) -> httpx2.Response:
    """One request (a generous client timeout: a hang fails the test, never blocks it)."""

    async def main() -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=120) as http:
            return await http.request(method, url, headers=headers, data=data)

    return anyio.run(main)


def test_dns_rebinding_is_refused_on_another_loopback_address(built: Built) -> None:
    """Bound to 127.0.0.2: a foreign Host is 421, a foreign Origin 403, the bound address and localhost work."""
    with serving(create_app(built.path, agent="a", host="127.0.0.2"), "127.0.0.2") as base:
        port = base.rsplit(":", 1)[1]
        assert get(f"{base}/api/overview", {"Host": f"evil.example:{port}"}).status_code == 421
        foreign = get(f"{base}/api/overview", {"Origin": f"http://evil.example:{port}"})
        assert foreign.status_code == 403 and foreign.text.startswith("error: origin:")
        assert get(f"{base}/api/overview").json()["agent_id"] == "a"
        assert get(f"{base}/api/overview", {"Origin": base}).status_code == 200
        assert get(f"{base}/", {"Host": f"localhost:{port}"}).status_code == 200


@contextmanager
def write_lock(built: Built) -> Iterator[None]:
    """Hold SQLite's write lock on the workspace's store (every console write then waits)."""
    lock = sqlite3.connect(built.path / STATE_DIR / DB_FILE, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        lock.rollback()
        lock.close()


def _until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_slow_request_of_one_agent_blocks_no_other_agent(built: Built) -> None:
    """Before: one worker thread, no deadline: a's slow request (64 s in the report) held b's /api/overview. Now b
    is answered while a's request still runs in its worker."""
    app = create_app(built.path, agent="a", deadline=120)
    lanes, csrf = app.state.console.lanes, app.state.console.guard.csrf  # the token the pages carry
    with serving(app) as base:
        assert len(lanes.pids()) == 3  # started warm, with the server
        reject = {"uid": built.uids["proposal"], "reason": "slow", "agent": "a"}
        with ThreadPoolExecutor(1) as pool, write_lock(built):  # the lock goes first, then the pool waits
            slow = pool.submit(get, f"{base}/api/ontology/reject", {"X-CSRF-Token": csrf}, method="POST", data=reject)
            _until(lambda: lanes.busy == 1, "a's reject never started")
            other = get(f"{base}/api/overview?agent=b")
            assert other.status_code == 200 and other.json()["agent_id"] == "b"
            assert not slow.done() and lanes.busy == 1  # a's reject still waits for the lock
        assert slow.result(timeout=120).json()["done"] == "rejected"  # the lock released: it completes


def test_a_request_past_its_deadline_is_stopped_and_its_worker_killed(built: Built) -> None:
    """Before: a thread cannot be killed, so a's request past its deadline ran on and kept its lane and a's turn.
    Now its worker process is killed at the deadline: the process is gone, the write it had not committed is rolled
    back, and a's next request is served at once (while the lock that held the first one is still held)."""
    app = create_app(built.path, agent="a", deadline=3)  # b's request below takes ~0.2 s (load 4-5)
    lanes, csrf = app.state.console.lanes, app.state.console.guard.csrf
    with serving(app) as base:
        reject = {"uid": built.uids["proposal"], "reason": "slow", "agent": "a"}
        with write_lock(built), ThreadPoolExecutor(1) as pool:
            late_call = pool.submit(get, f"{base}/api/ontology/reject", {"X-CSRF-Token": csrf}, method="POST",
                                    data=reject)  # fmt: skip
            _until(lambda: lanes.busy == 1, "a's reject never started")
            [(pid, what)] = lanes.running().items()
            assert what == "POST /api/ontology/reject" and process_alive(pid)
            other = get(f"{base}/api/overview?agent=b")  # b's request runs in another worker meanwhile
            assert other.status_code == 200 and other.json()["agent_id"] == "b"
            assert not late_call.done()
            late = late_call.result(timeout=120)
            assert late.status_code == 504
            assert late.json()["error"].startswith("deadline: POST /api/ontology/reject took longer than 3 s")
            assert "\n" not in late.json()["error"]
            assert not process_alive(pid) and pid not in lanes.pids() and lanes.busy == 0  # killed, and its slot free
            mine = get(f"{base}/api/overview?agent=a")  # a's turn is free at once: a read needs no write lock
            assert mine.status_code == 200 and mine.json()["agent_id"] == "a"
        page = get(f"{base}/api/ontology?agent=a&proposal={built.uids['proposal']}").json()
        assert page["selected"]["proposal"]["status"] == "validated"  # the killed reject was rolled back
