"""The console's Starlette application: eight pages, their JSON twins under ``/api``, and three POST actions.

Each route turns its request into a :class:`~cli.ui.work.Job` and runs it in a worker process
(:mod:`cli.ui.lanes`): the page's data function (:mod:`cli.ui.pages`, :mod:`cli.ui.review`, :mod:`cli.ui.graphview`)
and its Jinja2 template, or its JSON, are computed there, one running request per agent, within a deadline past
which the worker is killed (504); so the event loop only routes, and one agent's slow request never holds up
another's. GETs compute nothing unbounded (every request is bounded by the deadline, and the work is stopped at
it); the actions that do work (approve, reject, run a reasoning method) are POSTs with the CSRF token. A library
error becomes the CLI's one-line message: in the page (with the form kept) or as ``{"error": ...}`` with status 400
(bad input), 403 (scope), 404 (not found), 503 (backend or worker unavailable) or 504 (deadline).

Every response carries the Content-Security-Policy of :mod:`cli.ui.security` (no inline script at all).

With ``index_when_idle`` the console builds the vector index while no request is in flight
(:mod:`cli.ui.indexing`): a request stops a pass at once, and the header, ``/api/overview`` and ``/api/index`` show
the progress.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from cli.idle_index import IdleIndexer
from cli.loopback import DEFAULT_HOST
from cli.ui.indexing import RequestsFirst, index_endpoint, index_status
from cli.ui.lanes import DEFAULT_DEADLINE, DEFAULT_LANES, Lanes, TokenCheck
from cli.ui.security import CSRF_HEADER, BodyCap, Guard, SecurityHeaders, TokenGate
from cli.ui.work import PAGES, Answer, Job, one_line, status_of
from cli.workers import WorkerError

STATIC = Path(__file__).with_name("static")
log = logging.getLogger("mabos.ui")
Endpoint = Callable[[Request], Any]


class ConsoleApp:
    """Routes bound to the worker :class:`Lanes`, the :class:`TokenCheck` and one :class:`Guard`."""

    def __init__(self, lanes: Lanes, tokens: TokenCheck, guard: Guard, indexer: IdleIndexer | None = None) -> None:
        self.lanes = lanes
        self.tokens = tokens
        self.guard = guard
        self.indexer = indexer

    def job(self, request: Request, route: str, page: str, params: dict[str, str], **more: Any) -> Job:
        """The request's work as plain data for a worker."""
        bound = request.state.bound_agent
        return Job(route=route, page=page, params=params, bound=bound, csrf=self.guard.csrf,
                   index=index_status(self.indexer, bound), **more)  # fmt: skip

    async def answer(self, request: Request, job: Job, agent: str | None = None) -> Response:
        """Run ``job`` in a worker in the turn of the request's agent; its answer, or the one-line error of a
        deadline (504, the worker killed) or a worker that ended (503)."""
        key = (agent or request.query_params.get("agent") or request.state.bound_agent or "").strip()
        try:
            done = await self.lanes.run(key, job, what=f"{request.method} {request.url.path}")
        except WorkerError as exc:
            if request.url.path.startswith("/api/"):
                return JSONResponse({"error": one_line(exc)}, status_code=status_of(exc))
            return PlainTextResponse(f"error: {one_line(exc)}", status_code=status_of(exc))
        return _response(done)

    def page(self, name: str) -> Endpoint:
        """The HTML endpoint of one page."""

        async def endpoint(request: Request) -> Response:
            return await self.answer(request, self.job(request, "page", name, dict(request.query_params)))

        return endpoint

    def api(self, name: str) -> Endpoint:
        """The JSON endpoint of one page (``graph/node``: a node of the graph)."""

        async def endpoint(request: Request) -> Response:
            return await self.answer(request, self.job(request, "api", name, dict(request.query_params)))

        return endpoint

    def post(self, route: str, *, as_json: bool) -> Endpoint:
        """A POST that writes (``approve``, ``reject``) or computes (``reasoning``): it needs the CSRF token (form
        field ``csrf`` or header ``X-CSRF-Token``); a page of another site can send it but cannot read the token."""
        page = "reasoning" if route == "reasoning" else "ontology"

        async def endpoint(request: Request) -> Response:
            form = await request.form()
            fields = {k: str(v) for k, v in form.items() if k != "csrf"}
            csrf = request.headers.get(CSRF_HEADER) or (str(form["csrf"]) if "csrf" in form else None)
            agent = fields.get("agent") or request.query_params.get("agent")
            if agent and "agent" not in fields:
                fields["agent"] = agent
            job = self.job(request, route, page, fields, csrf_ok=self.guard.csrf_ok(csrf), as_json=as_json)
            return await self.answer(request, job, agent)

        return endpoint

    async def agent_token(self, secret: str) -> str | None:
        """The agent an API token belongs to while it is live, else None (checked in this process)."""
        return await self.tokens.agent(secret)


def _response(done: Answer) -> Response:
    if done.location is not None:
        return RedirectResponse(done.location, status_code=done.status)
    return Response(done.body, status_code=done.status, media_type=done.media_type)


def create_app(
    workspace: Path | str,
    *,
    agent: str | None = None,
    token: str | None = None,
    require_token: bool = False,
    index_when_idle: float = 0,
    host: str = DEFAULT_HOST,
    lanes: int = DEFAULT_LANES,
    deadline: float = DEFAULT_DEADLINE,
) -> Starlette:
    """The console on ``workspace``, acting as ``agent`` by default.

    With ``token`` or ``require_token`` (a non-loopback host), every request must carry the console's token or an
    agent's API token (which fixes the acting agent); the caller checks the bind address first with
    :func:`cli.ui.security.check_bind`. ``index_when_idle``: seconds without a request before the vector index
    backlog is indexed in the background while the app runs (:mod:`cli.ui.indexing`); 0 (the default here) turns it
    off (``mabos ui`` turns it on). ``host``: the address served (the Host/Origin allow-list follows it on
    loopback); ``lanes`` and ``deadline``: the worker processes and each request's deadline (:mod:`cli.ui.lanes`).
    """
    guard = Guard(token=token, required=token is not None or require_token, host=host)
    indexer = IdleIndexer(Path(workspace), idle=index_when_idle) if index_when_idle else None
    lanes_ = Lanes(Path(workspace), agent, count=lanes, deadline=deadline)
    app = ConsoleApp(lanes_, TokenCheck(Path(workspace), deadline), guard, indexer)
    guard.agent_tokens = app.agent_token
    routes: list[Route | Mount] = []
    for name, _template, _title, _data in PAGES:
        routes.append(Route("/" if name == "overview" else f"/{name}", app.page(name)))
        routes.append(Route(f"/api/{name}", app.api(name)))
    routes += [
        Route("/api/index", index_endpoint),
        Route("/api/graph/node", app.api("graph/node")),
        Route("/ontology/approve", app.post("approve", as_json=False), methods=["POST"]),
        Route("/ontology/reject", app.post("reject", as_json=False), methods=["POST"]),
        Route("/api/ontology/approve", app.post("approve", as_json=True), methods=["POST"]),
        Route("/api/ontology/reject", app.post("reject", as_json=True), methods=["POST"]),
        Route("/reasoning", app.post("reasoning", as_json=False), methods=["POST"]),
        Route("/api/reasoning", app.post("reasoning", as_json=True), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            await app.lanes.start()  # warm: the first requests find their workers open
            async with AsyncExitStack() as indexing:
                if indexer is not None:
                    await indexing.enter_async_context(indexer.running())  # stops the loop and any pass on shutdown
                yield
        finally:
            app.lanes.close()
            app.tokens.close()

    # the headers on every answer; the token check next: a request that is refused never stops an index pass
    middleware = [Middleware(SecurityHeaders), Middleware(TokenGate, guard=guard), Middleware(BodyCap),
                  Middleware(RequestsFirst, indexer=indexer)]  # fmt: skip
    starlette = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    starlette.state.console = app
    starlette.state.indexer = indexer
    return starlette


__all__ = ["PAGES", "ConsoleApp", "create_app"]
