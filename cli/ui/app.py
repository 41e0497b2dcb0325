"""The console's Starlette application: eight pages, their JSON twins under ``/api``, and three POST actions.

Each page is one data function (:mod:`cli.ui.pages`, :mod:`cli.ui.review`, :mod:`cli.ui.graphview`) rendered by a
Jinja2 template, or returned as JSON by ``/api/<page>``. Library calls run on worker lanes (:mod:`cli.ui.lanes`):
threads with their own workspace handle, one running request per agent, a deadline per request, so the event loop
stays free and one agent's slow request never holds up another's. GETs compute nothing unbounded; the actions that
do work (approve, reject, run a reasoning method) are POSTs with the CSRF token. A library error becomes the CLI's
one-line message: in the page (with the form kept) or as ``{"error": ...}`` with status 400 (bad input), 403
(scope), 404 (not found), 503 (backend unavailable) or 504 (deadline).

Every response carries the Content-Security-Policy of :mod:`cli.ui.security` (no inline script at all).

With ``index_when_idle`` the console builds the vector index while no request is in flight
(:mod:`cli.ui.indexing`): a request stops a pass at once, and the header, ``/api/overview`` and ``/api/index`` show
the progress.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from cli.idle_index import IdleIndexer
from cli.loopback import DEFAULT_HOST
from cli.ui import graphview, pages, review
from cli.ui.context import Console, int_arg, plain, text_arg
from cli.ui.indexing import RequestsFirst, index_endpoint, index_status
from cli.ui.lanes import DEFAULT_DEADLINE, DEFAULT_LANES, DeadlineError, Lanes
from cli.ui.security import CSRF_HEADER, Guard, SecurityHeaders, TokenGate
from kg.errors import BackendUnavailableError, InputError, MabosError, NotFoundError, ScopeError

STATIC = Path(__file__).with_name("static")
log = logging.getLogger("mabos.ui")
T = TypeVar("T")
PageData = Callable[[Console, str, Mapping[str, str]], dict[str, Any]]

#: path, template name, title, data function
PageSpec = tuple[str, str, str, PageData]
PAGES: list[PageSpec] = [
    ("overview", "overview.html", "Overview", pages.overview),
    ("graph", "graph.html", "Graph", graphview.page_data),
    ("facts", "facts.html", "Facts", pages.facts),
    ("memory", "memory.html", "Memory", pages.memory),
    ("ontology", "ontology.html", "Ontology", review.ontology),
    ("reasoning", "reasoning.html", "Reasoning", review.reasoning),
    ("conversation", "conversation.html", "Conversation", review.conversation),
    ("sync", "sync.html", "Sync", review.sync),
]
ONTOLOGY, REASONING = PAGES[4], PAGES[5]


def status_of(exc: MabosError) -> int:
    """The HTTP status of a library error."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ScopeError):
        return 403
    if isinstance(exc, BackendUnavailableError):
        return 503
    if isinstance(exc, DeadlineError):
        return 504
    return 400


def one_line(exc: MabosError) -> str:
    """The CLI's message for an error (``field: rule``), on one line."""
    return " ".join(str(exc).split())


def internal(exc: Exception) -> str:
    """The CLI's line for an unexpected error."""
    log.exception("console: unexpected error")
    return f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"


class ConsoleApp:
    """Routes bound to the worker :class:`Lanes`, one :class:`Guard` and the template environment."""

    def __init__(self, lanes: Lanes, guard: Guard, indexer: IdleIndexer | None = None) -> None:
        self.lanes = lanes
        self.gate = Lanes(lanes.first.path, lanes.first.agent, count=1, deadline=lanes.deadline)  # token checks
        self.guard = guard
        self.indexer = indexer
        self.templates = Environment(loader=PackageLoader("cli.ui", "templates"),
                                     autoescape=select_autoescape(["html"]))  # fmt: skip
        self.templates.filters["short"] = lambda value, width=80: _short(str(value), int(width))

    async def off_loop(self, request: Request, work: Callable[[Console], Response], agent: str | None = None
                       ) -> Response:  # fmt: skip
        """Run ``work`` on a lane in the turn of the request's agent; past the deadline, a one-line 504."""
        key = (agent or request.query_params.get("agent") or request.state.bound_agent or "").strip()
        try:
            return await self.lanes.run(key, work, what=f"{request.method} {request.url.path}")
        except DeadlineError as exc:
            if request.url.path.startswith("/api/"):
                return JSONResponse({"error": one_line(exc)}, status_code=504)
            return PlainTextResponse(f"error: {one_line(exc)}", status_code=504)

    async def agent_token(self, secret: str) -> str | None:
        """The agent an API token belongs to while it is live (checked on the token lane), else None."""

        def check(console: Console) -> str | None:
            info = console.ws.tokens.verify(secret)
            return info.agent_id if info is not None else None

        return await self.gate.run("", check, what="the token check")

    # ------------------------------------------------------------------------------------------ pages

    def page(self, name: str, template: str, title: str, data: PageData) -> Callable[[Request], Any]:
        """The HTML endpoint of one page."""

        async def endpoint(request: Request) -> Response:
            return await self.off_loop(request, lambda c: self._render_page(c, request, (name, template, title, data)))

        return endpoint

    def _render_page(self, console: Console, request: Request, spec: PageSpec, *, params: dict[str, str] | None = None,
                     failed: MabosError | None = None) -> Response:  # fmt: skip
        name, template, title, data = spec
        params = dict(request.query_params) if params is None else params
        error, status, agent, content = None, 200, None, {}
        try:
            agent = console.acting(params.get("agent"), request.state.bound_agent)
            if agent is not None:
                content = data(console, agent, params)
        except MabosError as exc:
            error, status = one_line(exc), status_of(exc)
        except Exception as exc:  # a bug: one line, as the CLI reports it, and the page still renders
            error, status = internal(exc), 500
        if failed is not None:  # an action that failed: its message, over the page as it now stands
            error, status = one_line(failed), status_of(failed)
        try:
            agents = console.agents(request.state.bound_agent)
        except MabosError:
            agents = []
        html = self.templates.get_template(template).render(
            page=name, title=title, agent=agent, agents=agents, data=content, params=params, error=error,
            csrf=self.guard.csrf, pages=[(p[0], p[2]) for p in PAGES], flash=params.get("done"),
            index=index_status(self.indexer, request.state.bound_agent),
        )  # fmt: skip
        return HTMLResponse(html, status_code=status)

    def api(self, data: PageData, *, with_index: bool = False) -> Callable[[Request], Any]:
        """The JSON endpoint of one page (``with_index``: plus the indexing state as ``"index"``)."""

        async def endpoint(request: Request) -> Response:
            return await self.off_loop(request, lambda c: self._json(c, request, data, with_index=with_index))

        return endpoint

    def _json(self, console: Console, request: Request, data: PageData, *, with_index: bool = False,
              params: dict[str, str] | None = None) -> Response:  # fmt: skip
        params = dict(request.query_params) if params is None else params
        try:
            agent = console.acting(params.get("agent"), request.state.bound_agent)
            if agent is None:
                raise NotFoundError("agent: the workspace has no agents (create one with 'mabos agent add')")
            body = plain(data(console, agent, params))
            if with_index:
                body["index"] = index_status(self.indexer, request.state.bound_agent)
            return JSONResponse(body)
        except MabosError as exc:
            return JSONResponse({"error": one_line(exc)}, status_code=status_of(exc))
        except Exception as exc:
            return JSONResponse({"error": internal(exc)}, status_code=500)

    # ------------------------------------------------------------------------------------------ graph

    def graph_data(self, console: Console, agent: str, params: Mapping[str, str]) -> dict[str, Any]:
        """``/api/graph``: ``{"nodes": [...], "edges": [...], ...}`` of a capped view."""
        kinds = graphview.parse_kinds(text_arg(params, "types"))
        limit = int_arg(params, "limit", graphview.DEFAULT_LIMIT, 1, graphview.MAX_LIMIT)
        view = graphview.build_view(console, agent, kinds=kinds, scope=text_arg(params, "scope"), limit=limit)
        return view.model_dump(mode="json")

    def node_data(self, console: Console, agent: str, params: Mapping[str, str]) -> dict[str, Any]:
        """``/api/graph/node?id=``: a node's record, history and neighbours."""
        node_id = text_arg(params, "id")
        if node_id is None:
            raise InputError("id", "required (a node id from /api/graph)")
        return graphview.node_detail(console, agent, node_id).model_dump(mode="json")

    # ------------------------------------------------------------------------------------------ actions

    def action(self, verb: str, *, as_json: bool) -> Callable[[Request], Any]:
        """POST approve/reject: the form posts and redirects back; the API answers JSON."""

        async def endpoint(request: Request) -> Response:
            form = await request.form()
            fields = {k: str(v) for k, v in form.items()}
            csrf = request.headers.get(CSRF_HEADER) or fields.get("csrf")
            agent = fields.get("agent") or request.query_params.get("agent")
            return await self.off_loop(request, lambda c: self._act(c, request, verb, fields, csrf, as_json=as_json),
                                       agent)  # fmt: skip

        return endpoint

    def _act(self, console: Console, request: Request, verb: str, fields: dict[str, str], csrf: str | None, *,
             as_json: bool) -> Response:  # fmt: skip
        agent_param = fields.get("agent") or request.query_params.get("agent")
        uid = fields.get("uid", "").strip()
        try:
            if not self.guard.csrf_ok(csrf):
                raise ScopeError("csrf: missing or wrong CSRF token; reload the page and try again")
            agent = console.acting(agent_param, request.state.bound_agent)
            if agent is None:
                raise NotFoundError("agent: the workspace has no agents")
            if not uid:
                raise InputError("uid", "required (the proposal's uid)")
            if verb == "approve":
                result = review.approve(console, agent, uid)
            else:
                result = review.reject(console, agent, uid, fields.get("reason", ""))
        except MabosError as exc:
            if as_json:
                return JSONResponse({"error": one_line(exc)}, status_code=status_of(exc))
            params = {"agent": agent_param or "", "proposal": uid} if uid else {"agent": agent_param or ""}
            return self._render_page(console, request, ONTOLOGY, params=params, failed=exc)
        if as_json:
            return JSONResponse(plain(result))
        query = urlencode({"agent": agent, "proposal": uid, "done": result["done"]})
        return RedirectResponse(f"/ontology?{query}", status_code=303)

    def compute(self, *, as_json: bool) -> Callable[[Request], Any]:
        """POST a reasoning run (backward proof, abduction, the router): it computes, so it needs the CSRF token
        (a GET of the page only shows the forms)."""

        async def endpoint(request: Request) -> Response:
            form = await request.form()
            fields = {k: str(v) for k, v in form.items()}
            csrf = request.headers.get(CSRF_HEADER) or fields.get("csrf")
            agent = fields.get("agent") or request.query_params.get("agent")
            return await self.off_loop(request, lambda c: self._compute(c, request, fields, csrf, as_json=as_json),
                                       agent)  # fmt: skip

        return endpoint

    def _compute(self, console: Console, request: Request, fields: dict[str, str], csrf: str | None, *,
                 as_json: bool) -> Response:  # fmt: skip
        params = {k: v for k, v in fields.items() if k != "csrf"}
        if not self.guard.csrf_ok(csrf):
            refused = ScopeError("csrf: missing or wrong CSRF token; reload the page and try again")
            if as_json:
                return JSONResponse({"error": one_line(refused)}, status_code=403)
            return self._render_page(console, request, REASONING, params=params, failed=refused)
        if as_json:
            return self._json(console, request, review.run_reasoning, params=params)
        return self._render_page(console, request, (*REASONING[:3], review.run_reasoning), params=params)


def _short(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


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
    loopback); ``lanes`` and ``deadline``: the worker lanes and each request's deadline (:mod:`cli.ui.lanes`).
    """
    guard = Guard(token=token, required=token is not None or require_token, host=host)
    indexer = IdleIndexer(Path(workspace), idle=index_when_idle) if index_when_idle else None
    app = ConsoleApp(Lanes(Path(workspace), agent, count=lanes, deadline=deadline), guard, indexer)
    guard.agent_tokens = app.agent_token
    routes: list[Route | Mount] = []
    for name, template, title, data in PAGES:
        routes.append(Route("/" if name == "overview" else f"/{name}", app.page(name, template, title, data)))
        api_data = app.graph_data if name == "graph" else data
        routes.append(Route(f"/api/{name}", app.api(api_data, with_index=name == "overview")))
    routes += [
        Route("/api/index", index_endpoint),
        Route("/api/graph/node", app.api(app.node_data)),
        Route("/ontology/approve", app.action("approve", as_json=False), methods=["POST"]),
        Route("/ontology/reject", app.action("reject", as_json=False), methods=["POST"]),
        Route("/api/ontology/approve", app.action("approve", as_json=True), methods=["POST"]),
        Route("/api/ontology/reject", app.action("reject", as_json=True), methods=["POST"]),
        Route("/reasoning", app.compute(as_json=False), methods=["POST"]),
        Route("/api/reasoning", app.compute(as_json=True), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as indexing:
            if indexer is not None:
                await indexing.enter_async_context(indexer.running())  # stops the loop and any pass on shutdown
            yield
        app.lanes.close()
        app.gate.close()

    # the headers on every answer; the token check next: a request that is refused never stops an index pass
    middleware = [Middleware(SecurityHeaders), Middleware(TokenGate, guard=guard),
                  Middleware(RequestsFirst, indexer=indexer)]  # fmt: skip
    starlette = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    starlette.state.console = app
    starlette.state.indexer = indexer
    return starlette


__all__ = ["PAGES", "ConsoleApp", "create_app"]
