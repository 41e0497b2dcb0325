"""Helpers for the tests that start a real server on loopback: a free port, and waiting until it listens."""

from __future__ import annotations

import socket
import subprocess

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
