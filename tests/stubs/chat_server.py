"""A stub OpenAI-compatible chat server for tests: it stands in for an LLM, the one thing tests may not run.

It listens on 127.0.0.1 on a free port, in a background thread, answers ``POST .../chat/completions`` with a
configurable text (or status and body), and records every request (path, headers, parsed JSON body). It never
generates anything: what a "model" says is what the test told the stub to say.

Usage::

    with ChatStub() as stub:
        stub.reply = "Alice decided to ship v2 on 3 May."
        chat = OpenAIChatModel(stub.url, "stub-model")
        ...
        assert stub.requests[0].body["model"] == "stub-model"

Set ``stub.responder`` to a function of the parsed body returning ``(status, bytes)`` for anything else
(error statuses, malformed JSON, a slow answer that waits on ``stub.release``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

#: (status, body) for a request's parsed JSON body.
Responder = Callable[[Any], tuple[int, bytes]]

#: A runaway client gets 429 after this many requests instead of hammering the stub.
MAX_REQUESTS = 50


@dataclass(frozen=True)
class Recorded:
    """One request the stub received."""

    path: str
    headers: dict[str, str]
    body: Any


def completion(text: str | None, *, model: str = "stub-model", finish_reason: str = "stop") -> bytes:
    """An OpenAI chat-completions response body whose assistant message is ``text``."""
    return json.dumps(
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    ).encode()


class _QuietServer(ThreadingHTTPServer):
    """A server that does not print a traceback when a client it kept waiting (a timeout test) has gone."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class ChatStub:
    """The stub server (a context manager: started on enter, stopped on exit).

    Attributes:
        url: the base URL to configure (``http://127.0.0.1:<port>/v1``).
        reply: the assistant text of the default answer (a list: one reply per request, the last repeated).
        status: the HTTP status of the default answer.
        responder: when set, answers instead of ``reply``/``status``.
        requests: what was received, in order.
        release: set at exit, so that a deliberately slow responder waiting on it lets go.
    """

    def __init__(self) -> None:
        self.url = ""
        self.reply: str | list[str] = "stub summary"
        self.status = 200
        self.responder: Responder | None = None
        self.requests: list[Recorded] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def answer(self, body: Any) -> tuple[int, bytes]:
        """The default answer: ``reply`` (the n-th of a list for the n-th request) with ``status``."""
        if self.responder is not None:
            return self.responder(body)
        text = self.reply
        if isinstance(text, list):  # the n-th reply for the n-th request, the last one repeated
            text = text[min(len(self.requests), len(text)) - 1]
        return self.status, completion(text, model=str(body.get("model", "stub-model")))

    def start(self) -> ChatStub:
        """Listen on a free port of 127.0.0.1 in a daemon thread."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 5  # seconds per socket read: a stuck client cannot hold a thread forever

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with stub._lock:
                    if len(stub.requests) >= MAX_REQUESTS:
                        status, payload = 429, b'{"error": "too many requests to the stub"}'
                    else:
                        body = json.loads(raw)
                        stub.requests.append(Recorded(self.path, dict(self.headers.items()), body))
                        status, payload = -1, b""
                if status == -1:
                    status, payload = stub.answer(body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release waiting responders, stop serving and close the port."""
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatStub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


__all__ = ["MAX_REQUESTS", "ChatStub", "Recorded", "Responder", "completion"]
