"""Who may use the console: loopback by default, a token everywhere else, a CSRF token on every POST.

* Bound to a loopback address with no token, the console answers only requests whose ``Host`` is a loopback
  name (so a web page cannot reach it through DNS rebinding).
* With a token (``--token`` or ``MABOS_UI_TOKEN``), or bound to any other host, every request must carry a token:
  the console's own (any agent may be chosen) or an agent's API token (``mabos token create --agent A``, checked
  by :meth:`kg.tokens.TokenService.verify` on every request, so a revoked token stops working at once), which
  fixes the acting agent. A token comes as ``Authorization: Bearer <token>``, or as the cookie set when a page is
  opened once with ``?token=<token>`` (the console then redirects to the same address without the token, so it
  does not stay in the address bar).
* The two actions (approve, reject) are POSTs that must carry the console's CSRF token (form field ``csrf`` or
  header ``X-CSRF-Token``): a page of another site cannot read it, so it cannot forge the request.
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

from cli.loopback import is_loopback
from kg.errors import InputError

TOKEN_ENV = "MABOS_UI_TOKEN"  # noqa: S105 - the variable's name, not a token
TOKEN_COOKIE = "mabos_ui_token"  # noqa: S105 - the cookie's name
CSRF_HEADER = "x-csrf-token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")
MIN_TOKEN_LENGTH = 16

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
    """

    token: str | None = None
    required: bool = False
    agent_tokens: AgentTokens | None = None
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


class TokenGate:
    """ASGI middleware enforcing :class:`Guard` on every HTTP request (static files included)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let a request through with ``scope["state"]["bound_agent"]`` set, or answer it with 401/400/303."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = await self._check(request, scope)
        if response is not None:
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _check(self, request: Request, scope: Scope) -> Response | None:
        state = scope.setdefault("state", {})
        state["bound_agent"] = None
        if not self.guard.required:
            if not is_loopback(request.url.hostname or ""):
                return PlainTextResponse("error: host: this console answers loopback addresses only", 400)
            return None
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


__all__ = [
    "CSRF_HEADER",
    "TOKEN_COOKIE",
    "TOKEN_ENV",
    "Guard",
    "TokenGate",
    "check_bind",
]
