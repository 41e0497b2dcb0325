"""The MCP server over HTTP caps a request's body at the cap of every document mabos reads (issue 30).

Before: ``mabos serve --mcp --http PORT`` left the cap to the SDK's unnamed default of 4 MiB, so a tool call whose
document the tool's own input model accepts (an RDF document of up to 100,000,000 characters for ``fact_import``)
was refused over HTTP while stdio took it, and nothing said where the bound was. Now the cap is one named number,
:data:`kg.limits.MAX_DOCUMENT_BYTES`: a body past it is answered 413 in one line before it is read (at once when
``Content-Length`` says so; at the first byte past the cap for a body sent chunked, without a length), and a body
within it reaches the server whole. A real uvicorn server on loopback, raw sockets for the bodies a client library
would not send; no tool call is made, so no worker starts.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from cli.tools import ToolContext
from cli.tools.mcp_server import ToolServer
from kg.limits import MAX_DOCUMENT_BYTES
from kg.workspace import init_workspace
from tests.serving import serving_in_thread

#: The small cap of the chunked tests (the default cap holds 100 MB: too much to send in a unit test).
SMALL = 64 << 10
_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolServer]:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    ws = init_workspace(tmp_path / "ws")
    made = ToolServer(ToolContext(workspace_obj=ws))
    yield made
    made.close()
    ws.close()


def _head(port: int, framing: str) -> bytes:
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{framing}\r\n\r\n").encode()  # fmt: skip


def _answer(sock: socket.socket) -> tuple[int, bytes]:
    """Status and body of the response on ``sock`` (the socket's timeout fails a server that waits for the rest of
    the body instead of answering)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or b"\r\n\r\n"
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(v) for k, _, v in (line.partition(":") for line in lines[1:]) if k.lower() == "content-length")
    while len(body) < length:
        body += sock.recv(65536)
    return int(lines[0].split()[1]), body


def test_a_declared_length_past_the_cap_is_refused_before_any_byte_of_it(server: ToolServer) -> None:
    with serving_in_thread(server.http_app()) as port, socket.create_connection(("127.0.0.1", port), 60) as sock:
        sock.sendall(_head(port, f"Content-Length: {MAX_DOCUMENT_BYTES + 1}"))  # and not one byte of the body
        status, answer = _answer(sock)
    assert (status, answer) == (413, b"Request body too large")


def test_a_chunked_body_past_the_cap_is_refused_at_the_cap(server: ToolServer) -> None:
    """Chunks without end: the answer comes once a little more than the cap was sent (the body never ends)."""
    with serving_in_thread(server.http_app(body_cap=SMALL)) as port:
        with socket.create_connection(("127.0.0.1", port), 60) as sock:
            sock.sendall(_head(port, "Transfer-Encoding: chunked"))
            sent = 0
            while sent < 20 * SMALL and not select.select([sock], [], [], 0.05)[0]:
                sock.sendall(b"2000\r\n" + b" " * 0x2000 + b"\r\n")  # 8 KiB chunks, no last chunk ever
                sent += 0x2000
            status, answer = _answer(sock)
        assert (status, answer) == (413, b"Request body too large") and sent < 20 * SMALL
        assert _initialize(port, chunked=False) == 200  # the server goes on serving


def test_a_body_within_the_cap_reaches_the_server_whole(server: ToolServer) -> None:
    with serving_in_thread(server.http_app(body_cap=SMALL)) as port:
        assert _initialize(port, chunked=True) == 200
        assert _initialize(port, chunked=False) == 200


def test_the_default_cap_is_the_document_cap_not_the_sdks_4_mib(server: ToolServer) -> None:
    """A 5 MiB request (a tool's document may be 100 MB) is served; before, the SDK refused it with 413."""
    with serving_in_thread(server.http_app()) as port:
        assert _initialize(port, chunked=False, padding=5 << 20) == 200


def _initialize(port: int, *, chunked: bool, padding: int = 0) -> int:
    """The status of an ``initialize`` request (its client name ``padding`` characters long)."""
    request = json.loads(json.dumps(_INITIALIZE))
    request["params"]["clientInfo"]["name"] += "x" * padding
    payload = json.dumps(request).encode()

    async def pieces() -> AsyncIterator[bytes]:  # a generator body goes out chunked, in pieces of 16 bytes
        for start in range(0, len(payload), 16):
            yield payload[start : start + 16]

    async def main() -> int:
        async with httpx2.AsyncClient(timeout=60) as http:
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            answer = await http.post(f"http://127.0.0.1:{port}/mcp", content=pieces() if chunked else payload,
                                     headers=headers)  # fmt: skip
            return answer.status_code

    return anyio.run(main)
