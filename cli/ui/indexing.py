"""The console's idle-time vector indexing (:mod:`cli.idle_index`): requests first, progress in the page.

* :class:`RequestsFirst` (ASGI middleware, inside the token check) tells the indexer when a request starts and ends:
  a request that arrives while a pass runs stops that pass at once (its last checkpoint stays), and the idle clock
  restarts when the request ends. Requests that never touch the workspace (``/static/...`` and the progress itself,
  ``/api/index``, which the page polls) do not count, so looking at the progress does not stop it.
* :func:`index_status` is what ``/api/index``, ``/api/overview`` (``"index"``) and the header's indicator show:
  the state and a line of text, with item counts only for the console's operator (loopback, or the console's own
  token). A caller with an agent's API token sees the state alone: the index covers every agent's items, and how
  many there are is not that agent's to know.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from cli.idle_index import IdleIndexer
from cli.ui.security import ASGIApp, Receive, Scope, Send

#: Paths that read nothing from the workspace: they never stop an index pass.
QUIET = ("/static/", "/api/index")

_TEXT = {
    "waiting": "waiting for an idle moment",
    "indexing": "indexing",
    "paused": "paused by a request; resumes when the console is idle",
    "up to date": "up to date",
    "unavailable": "unavailable",
    "failed": "the last pass failed; retried later (see the console's log)",
    "stopped": "stopped",
    "off": "off (--no-index-when-idle)",
}
_COUNTED = {
    "indexing": "indexing: {done} of {total} items",
    "paused": "paused at {done} of {total} items by a request; resumes when the console is idle",
}


class RequestsFirst:
    """ASGI middleware: every request but the quiet ones is a call the idle indexer yields to."""

    def __init__(self, app: ASGIApp, indexer: IdleIndexer | None) -> None:
        self.app = app
        self.indexer = indexer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request; around it, the indexer knows a request is in flight."""
        indexer = self.indexer
        if indexer is None or scope["type"] != "http" or str(scope.get("path", "")).startswith(QUIET):
            await self.app(scope, receive, send)
            return
        indexer.call_started()
        try:
            await self.app(scope, receive, send)
        finally:
            indexer.call_ended()


def index_status(indexer: IdleIndexer | None, bound_agent: str | None) -> dict[str, Any]:
    """The indexing state for one request: ``state`` and ``text`` always; for the operator (``bound_agent`` None)
    also ``done``, ``total``, ``backlog``, ``passes`` and ``message``."""
    if indexer is None:
        return {"state": "off", "text": _TEXT["off"]}
    progress = indexer.progress()
    state = str(progress["state"])
    if bound_agent is not None:
        return {"state": state, "text": _TEXT[state]}
    text = _TEXT[state]
    if state in _COUNTED and progress["total"]:
        text = _COUNTED[state].format(**progress)
    elif state == "waiting" and progress["backlog"]:
        text = f"{text}: {progress['backlog']} items to index"
    elif state == "unavailable" and progress["message"]:
        text = f"{text}: {progress['message']}"
    return {**progress, "text": text}


async def index_endpoint(request: Request) -> Response:
    """``/api/index``: :func:`index_status` for this request (no workspace access, so it answers at once)."""
    indexer: IdleIndexer | None = request.app.state.indexer
    return JSONResponse(index_status(indexer, request.state.bound_agent))


__all__ = ["QUIET", "RequestsFirst", "index_endpoint", "index_status"]
