"""How mabos's HTTP backends (the chat model, the HTTP embedder) must fail: one :class:`BackendUnavailableError`
of one short line naming the server, whatever the server did (an error status, a malformed answer, no answer in
time, nothing listening).

A test module runs the contract against its client by subclassing :class:`HttpFailureContract` with the client as
``ask(url, timeout)``, a call that sends one request to the server at ``url`` (an OpenAI-compatible base URL) and
gives up after ``timeout`` seconds, and with a ``stub`` fixture (:mod:`tests.stubs.chat_server`); the answers that
are malformed for its protocol it checks with :func:`answered`.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from kg.errors import BackendUnavailableError
from tests.stubs.chat_server import ChatStub

#: ``ask(url, timeout)``: one request of the client under test.
Ask = Callable[[str, float], object]

#: The longest refusal a backend may give (a long body is cut to an excerpt).
MAX_MESSAGE = 400

#: Error answers every backend turns into a refusal: (status, body, what the message must match).
ERROR_STATUSES = [
    (500, b'{"error": {"message": "model crashed"}}', "HTTP 500.*model crashed"),
    (400, b'{"error": "context length exceeded"}', "HTTP 400.*context length"),
    (401, b'{"error": "invalid api key"}', "HTTP 401.*invalid api key"),
    (404, b"", "HTTP 404"),
    (503, b"x" * 10_000, "HTTP 503"),  # a long body is cut to an excerpt
    (502, b"line one\nline two", "HTTP 502.*line one line two"),  # one line
]


def refused(ask: Ask, url: str, match: str, *, timeout: float = 10) -> str:
    """The message of the :class:`BackendUnavailableError` ``ask`` raises, checked: it matches ``match``, it is
    one line of fewer than :data:`MAX_MESSAGE` characters, and it names the server."""
    with pytest.raises(BackendUnavailableError, match=match) as caught:
        ask(url, timeout)
    message = str(caught.value)
    assert len(message) < MAX_MESSAGE
    assert "\n" not in message
    assert url in message
    return message


def answered(stub: ChatStub, ask: Ask, status: int, body: bytes, match: str) -> str:
    """The refusal of an answer ``status`` with ``body``."""
    stub.responder = lambda _: (status, body)
    return refused(ask, stub.url, match)


class HttpFailureContract:
    """The checks every HTTP backend passes; a subclass named ``Test...`` sets :meth:`ask` to its client."""

    @staticmethod
    def ask(url: str, timeout: float) -> object:
        """One request of the client under test."""
        raise NotImplementedError

    @pytest.mark.parametrize(("status", "body", "message"), ERROR_STATUSES)
    def test_error_statuses_become_backend_unavailable(
        self, stub: ChatStub, status: int, body: bytes, message: str
    ) -> None:
        answered(stub, self.ask, status, body, message)

    def test_a_slow_server_times_out(self, stub: ChatStub) -> None:
        def slow(body: Any) -> tuple[int, bytes]:
            stub.release.wait(timeout=5)  # released when the stub stops
            return 500, b""

        stub.responder = slow
        refused(self.ask, stub.url, r"cannot be reached.*timed out", timeout=0.2)

    def test_a_closed_port_is_unavailable(self) -> None:
        with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        refused(self.ask, f"http://127.0.0.1:{port}/v1", "cannot be reached", timeout=2)
