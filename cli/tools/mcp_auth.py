"""Bearer tokens in front of the MCP server over HTTP (issue 18): who may call, and as which agent.

:class:`TokenGate` wraps the SDK's streamable HTTP app (ASGI). For every HTTP request:

- ``Authorization: Bearer <secret>`` present: the secret must verify (:meth:`kg.tokens.TokenService.verify`: known,
  unrevoked, unexpired) or the answer is ``401``; a token of another agent than the server's bound one is ``403``.
  A verified request carries the SDK's :class:`~mcp.server.auth.middleware.bearer_auth.AuthenticatedUser` with the
  token's agent as ``client_id``: the SDK ties each session to it (another token cannot take the session over) and
  the tool server acts as that agent only.
- No header: ``401`` when tokens are required (off loopback, or ``--require-token``); on loopback without that, the
  request passes as before tokens existed (agent bound per server or named per call).

A malformed header (another scheme, an empty secret) counts as a wrong token, never as no token.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from cli.loopback import is_loopback
from kg.tokens import TokenInfo

#: Checks a secret: the live token it belongs to, or None (:meth:`kg.tokens.TokenService.verify`).
Verifier = Callable[[str], TokenInfo | None]
#: The one scope a token grants: acting as its agent.
AGENT_SCOPE = "agent"


class TokenGate:
    """ASGI middleware: verify bearer tokens and attach the token's agent (see the module text)."""

    def __init__(self, app: ASGIApp, verify: Verifier | None, *, required: bool, bound_agent: str | None) -> None:
        if required and verify is None:
            raise ValueError("a gate that requires tokens needs a verifier")
        self.app = app
        self.verify = verify
        self.required = required
        self.bound_agent = bound_agent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization")
        if header is None:
            if self.required:
                await _deny(send, 401, "token: required (send Authorization: Bearer <secret>; see mabos token create)")
                return
            await self.app(scope, receive, send)
            return
        scheme, _, secret = header.partition(" ")
        info = None
        if scheme.lower() == "bearer" and secret.strip() and self.verify is not None:
            info = await anyio.to_thread.run_sync(self.verify, secret.strip())
        if info is None:
            await _deny(send, 401, "token: not valid (unknown, revoked or expired)")
            return
        if self.bound_agent is not None and info.agent_id != self.bound_agent:
            await _deny(send, 403, f"token: it acts as {info.agent_id!r}; this server serves {self.bound_agent!r} only")
            return
        expires = int(info.expires_at.timestamp()) if info.expires_at is not None else None
        access = AccessToken(token=info.token_id, client_id=info.agent_id, scopes=[AGENT_SCOPE], expires_at=expires)
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials([AGENT_SCOPE])
        await self.app(scope, receive, send)


async def _deny(send: Send, status: int, message: str) -> None:
    error = "invalid_token" if status == 401 else "insufficient_scope"
    body = json.dumps({"error": error, "error_description": message}).encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", f'Bearer error="{error}"'.encode()))
    start: dict[str, Any] = {"type": "http.response.start", "status": status, "headers": headers}
    await send(start)
    await send({"type": "http.response.body", "body": body})


__all__ = ["AGENT_SCOPE", "TokenGate", "Verifier", "is_loopback"]
