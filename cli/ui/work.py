"""What a console worker process does with one request (:class:`ConsoleWork`, run by :mod:`cli.ui.lanes`).

The event loop (:mod:`cli.ui.app`) turns a request into a :class:`Job`: plain data that crosses a pipe (the route,
its query or form fields, the agent a token fixes, the CSRF token for the forms, whether the POST carried it, the
index state for the header). A worker runs the page's data function on its own workspace handle and renders the
answer (the page's HTML by its Jinja2 template, or JSON, or a redirect after an action) into an :class:`Answer`,
which the loop sends back unchanged. So everything that reads the workspace, and the rendering, runs where it can
be killed at the deadline; the loop only routes.

A library error becomes the CLI's one-line message: in the page (with the form kept) or as ``{"error": ...}`` with
status 400 (bad input), 403 (scope), 404 (not found), 503 (backend unavailable) or 504 (deadline).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from cli.ui import graphview, pages, review
from cli.ui.context import Console, int_arg, plain, text_arg
from cli.workers import DeadlineError
from kg.errors import BackendUnavailableError, InputError, MabosError, NotFoundError, ScopeError
from kg.errors import one_line as text_line

log = logging.getLogger("mabos.ui")
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
SPECS = {spec[0]: spec for spec in PAGES}
ONTOLOGY, REASONING = SPECS["ontology"], SPECS["reasoning"]
CSRF_REFUSED = "csrf: missing or wrong CSRF token; reload the page and try again"


def status_of(exc: MabosError) -> int:
    """The HTTP status of a library error."""
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ScopeError):
        return 403
    if isinstance(exc, DeadlineError):
        return 504
    if isinstance(exc, BackendUnavailableError):
        return 503
    return 400


def one_line(exc: MabosError) -> str:
    """The CLI's message for an error (``field: rule``), on one line and clipped as the CLI clips it."""
    return text_line(str(exc))


def internal(exc: Exception) -> str:
    """The CLI's line for an unexpected error (a ``MemoryError`` goes on up: it ends the worker, which the pool
    replaces, and the caller gets the memory limit's error)."""
    if isinstance(exc, MemoryError):
        raise exc
    log.exception("console: unexpected error")
    return f"internal error: {type(exc).__name__}: {text_line(str(exc))}"


@dataclass(frozen=True)
class Job:
    """One request's work: plain data (it crosses a pipe to a worker).

    Attributes:
        route: ``page`` (HTML), ``api`` (its JSON twin), ``approve`` / ``reject`` (review actions) or ``reasoning``
            (a reasoning run).
        page: the page's name in :data:`PAGES`; for ``api`` also ``graph/node``.
        params: the query parameters (GET) or the form's fields without the CSRF token (POST).
        bound: the agent a per-agent token fixes (None: any agent may be chosen).
        csrf: the console's CSRF token, which the pages' forms carry.
        csrf_ok: whether a POST carried that token.
        as_json: a POST's answer as JSON (``/api/...``) rather than a page or a redirect.
        index: the idle indexer's state for this caller (the header; ``/api/overview`` adds it as ``"index"``).
    """

    route: str
    page: str
    params: dict[str, str]
    bound: str | None = None
    csrf: str = ""
    csrf_ok: bool = False
    as_json: bool = False
    index: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A worker's answer: the status, the body and its media type (a redirect has ``location``)."""

    status: int
    body: bytes = b""
    media_type: str = "application/json"
    location: str | None = None


def json_answer(data: Any, status: int = 200) -> Answer:
    """``data`` as JSON, encoded as Starlette's ``JSONResponse`` encodes it."""
    body = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
    return Answer(status, body.encode("utf-8"))


def error_answer(exc: MabosError) -> Answer:
    """A library error as ``{"error": ...}`` with its status."""
    return json_answer({"error": one_line(exc)}, status_of(exc))


class ConsoleWork:
    """A console worker's handler (:class:`cli.workers.Handler`): one :class:`Job` in, one :class:`Answer` out.

    Args:
        path: the workspace directory (opened here, in the worker, and kept).
        agent: the console's start agent (``mabos ui --agent``).
    """

    def __init__(self, path: Path, agent: str | None = None) -> None:
        from cli.ui.rendering import render  # noqa: PLC0415 - compiles the templates: in a worker only (preloaded)

        self.console = Console(path, agent=agent)
        self.render = render
        try:
            self.console.tools.workspace()  # warm: open now; a workspace that cannot open is retried by a request
        except Exception as exc:
            log.warning("console worker %s: the workspace did not open yet: %s", os.getpid(), exc)

    def __call__(self, job: Job) -> Answer:
        """Run one request's work (an error is an answer, never an exception, but for ``MemoryError``)."""
        try:
            if job.route == "page":
                return self.page(job, SPECS[job.page])
            if job.route == "api":
                return self.json(job, API_DATA[job.page])
            if job.route in ("approve", "reject"):
                return self.act(job)
            if job.route == "reasoning":
                return self.reason(job)
            raise ValueError(f"unknown console route {job.route!r}")
        except Exception as exc:  # a bug (a template that failed, say): one line, and the worker serves on
            line = internal(exc)
            if job.route == "api" or job.as_json:
                return json_answer({"error": line}, 500)
            return Answer(500, f"error: {line}".encode(), "text/plain; charset=utf-8")

    def close(self) -> None:
        """Close the workspace."""
        self.console.close()

    # ------------------------------------------------------------------------------------------ pages and JSON

    def page(self, job: Job, spec: PageSpec, *, params: dict[str, str] | None = None,
             failed: MabosError | None = None) -> Answer:  # fmt: skip
        """A page rendered for the request (``failed``: an action's error, shown over the page as it now stands)."""
        name, template, title, data = spec
        params = job.params if params is None else params
        error, status, agent, content = None, 200, None, {}
        try:
            agent = self.console.acting(params.get("agent"), job.bound)
            if agent is not None:
                content = data(self.console, agent, params)
        except MabosError as exc:
            error, status = one_line(exc), status_of(exc)
        except Exception as exc:  # a bug: one line, as the CLI reports it, and the page still renders
            error, status = internal(exc), 500
        if failed is not None:
            error, status = one_line(failed), status_of(failed)
        try:
            agents = self.console.agents(job.bound)
        except MabosError:
            agents = []
        html = self.render(
            template,
            page=name, title=title, agent=agent, agents=agents, data=content, params=params, error=error,
            csrf=job.csrf, pages=[(p[0], p[2]) for p in PAGES], flash=params.get("done"), index=job.index,
        )  # fmt: skip
        return Answer(status, html.encode("utf-8"), "text/html; charset=utf-8")

    def json(self, job: Job, data: PageData, *, params: dict[str, str] | None = None) -> Answer:
        """A page's data as JSON (``/api/overview`` with the index state as ``"index"``)."""
        params = job.params if params is None else params
        try:
            agent = self.console.acting(params.get("agent"), job.bound)
            if agent is None:
                raise NotFoundError("agent: the workspace has no agents (create one with 'mabos agent add')")
            body = plain(data(self.console, agent, params))
            if job.page == "overview":
                body["index"] = job.index
            return json_answer(body)
        except MabosError as exc:
            return error_answer(exc)
        except Exception as exc:
            return json_answer({"error": internal(exc)}, 500)

    # ------------------------------------------------------------------------------------------ actions

    def act(self, job: Job) -> Answer:
        """Approve or reject a proposal: the form redirects back to it; the API answers JSON."""
        fields = job.params
        agent_param, uid = fields.get("agent"), fields.get("uid", "").strip()
        try:
            if not job.csrf_ok:
                raise ScopeError(CSRF_REFUSED)
            agent = self.console.acting(agent_param, job.bound)
            if agent is None:
                raise NotFoundError("agent: the workspace has no agents")
            if not uid:
                raise InputError("uid", "required (the proposal's uid)")
            if job.route == "approve":
                result = review.approve(self.console, agent, uid)
            else:
                result = review.reject(self.console, agent, uid, fields.get("reason", ""))
        except MabosError as exc:
            if job.as_json:
                return error_answer(exc)
            params = {"agent": agent_param or "", "proposal": uid} if uid else {"agent": agent_param or ""}
            return self.page(job, ONTOLOGY, params=params, failed=exc)
        if job.as_json:
            return json_answer(plain(result))
        query = urlencode({"agent": agent, "proposal": uid, "done": result["done"]})
        return Answer(303, location=f"/ontology?{query}")

    def reason(self, job: Job) -> Answer:
        """A reasoning run (backward proof, abduction, the router): it computes, so it needs the CSRF token."""
        if not job.csrf_ok:
            refused = ScopeError(CSRF_REFUSED)
            return error_answer(refused) if job.as_json else self.page(job, REASONING, failed=refused)
        if job.as_json:
            return self.json(job, review.run_reasoning)
        return self.page(job, (*REASONING[:3], review.run_reasoning))


# ------------------------------------------------------------------------------------------------ graph JSON


def graph_data(console: Console, agent: str, params: Mapping[str, str]) -> dict[str, Any]:
    """``/api/graph``: ``{"nodes": [...], "edges": [...], ...}`` of a capped view."""
    kinds = graphview.parse_kinds(text_arg(params, "types"))
    limit = int_arg(params, "limit", graphview.DEFAULT_LIMIT, 1, graphview.MAX_LIMIT)
    view = graphview.build_view(console, agent, kinds=kinds, scope=text_arg(params, "scope"), limit=limit)
    return view.model_dump(mode="json")


def node_data(console: Console, agent: str, params: Mapping[str, str]) -> dict[str, Any]:
    """``/api/graph/node?id=``: a node's record, history and neighbours."""
    node_id = text_arg(params, "id")
    if node_id is None:
        raise InputError("id", "required (a node id from /api/graph)")
    return graphview.node_detail(console, agent, node_id).model_dump(mode="json")


#: The data of each ``/api/<name>`` route.
API_DATA: dict[str, PageData] = {**{spec[0]: spec[3] for spec in PAGES}, "graph": graph_data, "graph/node": node_data}


__all__ = [
    "API_DATA",
    "PAGES",
    "Answer",
    "ConsoleWork",
    "Job",
    "error_answer",
    "internal",
    "json_answer",
    "one_line",
    "status_of",
]
