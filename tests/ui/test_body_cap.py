"""The console reads at most MAX_BODY_BYTES of a request body (issue 30: cap every document read): a real uvicorn
server on loopback, a declared length past the cap, a chunked body without a length that grows past it, and a
small post that still gets its ordinary answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio
import httpx2

from cli.ui import create_app
from cli.ui.security import MAX_BODY_BYTES
from tests.serving import serving_in_thread

if TYPE_CHECKING:
    from conftest import Built


def post(url: str, content: bytes | AsyncIterator[bytes], headers: dict[str, str]) -> httpx2.Response:
    async def main() -> httpx2.Response:
        async with httpx2.AsyncClient(timeout=120) as http:
            return await http.post(url, content=content, headers=headers)

    return anyio.run(main)


async def chunks(total: int) -> AsyncIterator[bytes]:
    """``total`` bytes of a form field, in 64 KiB chunks (sent chunked: no Content-Length)."""
    yield b"agent=a&question="
    for _ in range(total // 65_536 + 1):
        yield b"x" * 65_536


def test_a_body_past_the_cap_is_refused_in_one_line_declared_or_chunked(built: Built) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with serving_in_thread(create_app(built.path, agent="a"), "127.0.0.1") as port:
        url = f"http://127.0.0.1:{port}/api/ontology/reject"
        declared = post(url, b"agent=a&uid=" + b"x" * (MAX_BODY_BYTES + 1), form)
        assert declared.status_code == 413 and declared.text == f"error: body: at most {MAX_BODY_BYTES} bytes"
        chunked = post(url, chunks(2 * MAX_BODY_BYTES), form)
        assert chunked.status_code == 413 and chunked.text.startswith("error: body:")
        small = post(url, b"agent=a&uid=P-none", form)
        assert small.status_code == 403  # the ordinary answer: no CSRF token (nothing read past the cap here)
