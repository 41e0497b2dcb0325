"""Helpers for the tests that start a real server on loopback: a free port, waiting until it listens, and an ASGI
app served by uvicorn in a thread."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_listening(port: int, server: subprocess.Popen[bytes], *, timeout: float | None = None) -> None:
    """Until ``server`` accepts connections on ``port`` (it imports the whole stack first); fails when the server
    exits first. ``timeout`` bounds the wait (None: the caller's ``anyio.fail_after`` does)."""
    with anyio.fail_after(timeout):
        while True:
            assert server.poll() is None, "the server exited"
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)  # a refused connect costs microseconds: poll often, start sooner
            else:
                await stream.aclose()
                return


@contextmanager
def serving_in_thread(app: Any, host: str = "127.0.0.1") -> Iterator[int]:
    """``app`` served by uvicorn in a thread on ``host`` (any loopback address) on a free port; the port."""
    import uvicorn  # noqa: PLC0415 - the server only where a test serves

    with socket.socket() as probe:
        probe.bind((host, 0))
        port = int(probe.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (killed but not yet reaped): Linux's /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class ChildStarted(Exception):
    """Raised by the spy of :func:`spy_child_starts` instead of starting a child."""


def spy_child_starts(monkeypatch: Any) -> dict[str, list[str]]:
    """Make :func:`cli.child_process.start` record the preload list each child (by name) asks for and raise
    :class:`ChildStarted` instead of starting it; the record."""
    from cli import child_process  # noqa: PLC0415 - the CLI only where a test starts children

    asked: dict[str, list[str]] = {}

    def spy(target: object, *args: object, name: str, preload: list[str]) -> None:
        asked[name] = list(preload)
        raise ChildStarted

    monkeypatch.setattr(child_process, "start", spy)
    return asked
