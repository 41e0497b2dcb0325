"""Who may use the console: loopback by default, a token everywhere else, a CSRF token on every POST.

* Bound to a loopback address (any of 127.0.0.0/8, ``::1``) with no token, the console answers only requests whose
  ``Host`` names the bound address or a loopback name (else 421) and whose ``Origin``, when a browser sends one, is
  such an address too (else 403): a web page cannot reach it through DNS rebinding, nor make it work for it
  (:mod:`cli.loopback`).
* With a token (``--token`` or ``MABOS_UI_TOKEN``), or bound to any other host, every request must carry a token:
  the console's own (any agent may be chosen) or an agent's API token (``mabos token create --agent A``, checked
  by :meth:`kg.tokens.TokenService.verify` on every request, so a revoked token stops working at once), which
  fixes the acting agent. A token comes as ``Authorization: Bearer <token>``, or as the cookie set when a page is
  opened once with ``?token=<token>`` (the console then redirects to the same address without the token, so it
  does not stay in the address bar).
* Every response carries a Content-Security-Policy (:data:`CSP`) that allows scripts from the console's own
  ``/static`` files only: no inline script, no inline event handler, no plugin, no ``<base>``, no framing.
* The actions (approve, reject, run a reasoning method) are POSTs that must carry the console's CSRF token (form
  field ``csrf`` or header ``X-CSRF-Token``): a page of another site cannot read it, so it cannot forge the request.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from cli.loopback import DEFAULT_HOST, host_allowed, is_loopback, origin_allowed
from kg.errors import InputError

TOKEN_ENV = "MABOS_UI_TOKEN"  # noqa: S105 - the variable's name, not a token
TOKEN_COOKIE = "mabos_ui_token"  # noqa: S105 - the cookie's name
CSRF_HEADER = "x-csrf-token"
MIN_TOKEN_LENGTH = 16
#: The console's Content-Security-Policy: scripts only from its own files (never inline, never an ``on*=``
#: attribute, never ``javascript:``); inline styles stay allowed because the pages size bars with ``style=`` and
#: cytoscape.js adds one ``<style>`` element (a style cannot run script).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # not no-referrer: a browser then sends "Origin: null" on its own POSTs
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def check_bind(host: str, token: str | None, agent_tokens: int = 0) -> None:
    """Refuse to listen off loopback without a token (the console's, or ``agent_tokens`` live API tokens), and
    refuse a guessable console token."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise InputError("token", f"must be at least {MIN_TOKEN_LENGTH} characters")
    if not is_loopback(host) and not token and agent_tokens == 0:
        raise InputError("token", f"required when --host is not a loopback address (got {host!r}); give --token, "
                                  f"set {TOKEN_ENV} or create agent tokens with 'mabos token create'")  # fmt: skip


#: Checks an agent's API token: the agent it belongs to, or None (unknown, revoked, expired).
AgentTokens = Callable[[str], Awaitable[str | None]]


@dataclass
class Guard:
    """The console's credentials.

    Args:
        token: the console's own token (any agent may be chosen with it), or None.
        required: whether every request must carry a token (a console token was given, or the host is not
            loopback); when not, the console answers loopback ``Host`` names only.
        agent_tokens: the check of agents' API tokens (each fixes its agent), when tokens are required.
        host: the address the console is bound to (the ``Host``/``Origin`` allow-list follows it on loopback).
    """

    token: str | None = None
    required: bool = False
    agent_tokens: AgentTokens | None = None
    host: str = DEFAULT_HOST
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    async def bound_agent(self, given: str) -> str | bool | None:
        """For a presented secret: False when it is not valid, else the agent it fixes (None: any agent)."""
        if self.token is not None and hmac.compare_digest(given.encode(), self.token.encode()):
            return None
        if self.agent_tokens is not None:
            agent = await self.agent_tokens(given)
            if agent is not None:
                return agent
        return False

    def csrf_ok(self, given: str | None) -> bool:
        """Whether a POST carries the console's CSRF token."""
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


def _presented(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.cookies.get(TOKEN_COOKIE)


def _without_token(request: Request) -> str:
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    return request.url.path + (f"?{urlencode(kept)}" if kept else "")


class _HttpMiddleware:
    """An ASGI middleware that acts on HTTP requests only: anything else (lifespan) goes on to the app untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request."""
        raise NotImplementedError


class TokenGate(_HttpMiddleware):
    """ASGI middleware enforcing :class:`Guard` on every HTTP request (static files included)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        super().__init__(app)
        self.guard = guard

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let a request through with ``scope["state"]["bound_agent"]`` set, or answer it with 401/400/303."""
        request = Request(scope)
        response = await self._check(request, scope)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _loopback_refusal(self, request: Request) -> Response | None:
        """Without tokens (loopback): a foreign ``Host`` is 421, a foreign ``Origin`` 403 (DNS rebinding)."""
        if not host_allowed(request.headers.get("host"), self.guard.host):
            return PlainTextResponse("error: host: this console answers its loopback address only", 421)
        if not origin_allowed(request.headers.get("origin"), self.guard.host):
            return PlainTextResponse("error: origin: this console answers its own pages only", 403)
        return None

    async def _check(self, request: Request, scope: Scope) -> Response | None:
        state = scope.setdefault("state", {})
        state["bound_agent"] = None
        if not self.guard.required:
            return self._loopback_refusal(request)
        login = request.query_params.get("token")
        if login is not None:
            if await self.guard.bound_agent(login) is False:
                return PlainTextResponse("error: token: wrong token", 401)
            redirect = RedirectResponse(_without_token(request), status_code=303)
            redirect.set_cookie(TOKEN_COOKIE, login, httponly=True, samesite="strict", path="/")
            return redirect
        given = _presented(request)
        bound = await self.guard.bound_agent(given) if given else False
        if bound is False:
            message = "error: token: required (Authorization: Bearer <token>, or open the console once with ?token=)"
            return PlainTextResponse(message, 401, headers={"WWW-Authenticate": "Bearer"})
        state["bound_agent"] = bound
        return None


#: The largest request body the console reads (its forms and API posts are a few hundred bytes: a CSRF token, an id,
#: a question); a bigger one is answered 413 before it is read, also when it comes chunked without a length.
MAX_BODY_BYTES = 1_000_000


class BodyCap(_HttpMiddleware):
    """ASGI middleware refusing a request body over :data:`MAX_BODY_BYTES` in one line (413), read or declared."""

    def __init__(self, app: ASGIApp, cap: int = MAX_BODY_BYTES) -> None:
        super().__init__(app)
        self.cap = cap

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a ``receive`` that counts; answer 413 at the first byte past the cap."""
        too_big = PlainTextResponse(f"error: body: at most {self.cap} bytes", 413)
        declared = Request(scope).headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.cap:
            await too_big(scope, receive, send)
            return
        seen = 0

        async def counted() -> MutableMapping[str, Any]:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.cap:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _BodyTooLarge:
            await too_big(scope, receive, send)


class _BodyTooLarge(Exception):
    """Internal signal of :class:`BodyCap`: the body grew past the cap while the app read it (answered 413)."""


class SecurityHeaders(_HttpMiddleware):
    """ASGI middleware adding :data:`SECURITY_HEADERS` (the CSP first) to every HTTP response, refusals included."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the request; add the headers to its response's start."""

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


__all__ = [
    "CSP",
    "CSRF_HEADER",
    "MAX_BODY_BYTES",
    "TOKEN_COOKIE",
    "TOKEN_ENV",
    "BodyCap",
    "Guard",
    "SecurityHeaders",
    "TokenGate",
    "check_bind",
]
