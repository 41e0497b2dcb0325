"""API tokens: a secret that lets a remote caller act as one agent (MCP over HTTP; the web console later).

A token's secret reads ``mabos_<id>_<random>``: ``<id>`` is 12 hex digits (the token's public id, shown by
``mabos token list`` and taken by ``mabos token revoke``), ``<random>`` is :func:`secrets.token_urlsafe` of 32 bytes.
The secret is returned once, by :meth:`TokenService.create`; the store keeps only its SHA-256. A slow password hash
would add nothing here: the secret is 256 random bits, not something a person chose, so guessing it from its hash is
as hard as guessing it; and :meth:`TokenService.verify` runs on every HTTP request. Hashes are compared with
:func:`hmac.compare_digest`.

:meth:`TokenService.verify` is the one check every server uses: ``verify(secret) -> TokenInfo | None`` is None for
anything but a well-formed, known, unrevoked, unexpired token.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.models import AGENT_ID_RE
from kg.ports import TokenRecord, TokenStore

PREFIX = "mabos"
_SECRET = re.compile(r"\Amabos_([0-9a-f]{12})_[A-Za-z0-9_-]{43}\Z")
_DURATION = re.compile(r"\A\s*(\d{1,6})\s*([mhdw])\s*\Z")
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
#: The longest lifetime a token may be given (``--expires``); without one a token lives until revoked.
MAX_LIFETIME = timedelta(days=3660)
MAX_LABEL = 200

TokenStatus = Literal["active", "revoked", "expired"]


class TokenInfo(BaseModel):
    """What may be shown about a token: never its secret nor its hash."""

    model_config = ConfigDict(frozen=True)

    token_id: str
    agent_id: str
    label: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    status: TokenStatus


class CreatedToken(BaseModel):
    """A new token and its secret (shown once: only its hash is stored)."""

    token: TokenInfo
    secret: str


def hash_secret(secret: str) -> str:
    """The stored form of a secret: SHA-256, hex."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_lifetime(text: str, field: str = "expires") -> timedelta:
    """``30d``, ``12h``, ``90m`` or ``2w`` as a duration (at least a minute, at most :data:`MAX_LIFETIME`)."""
    found = _DURATION.match(text) if isinstance(text, str) else None
    if found is None:
        raise InputError(field, f"must be a number and a unit m, h, d or w (e.g. 30d), got {text!r}")
    lifetime = int(found.group(1)) * _UNITS[found.group(2)]
    if not timedelta(minutes=1) <= lifetime <= MAX_LIFETIME:
        raise InputError(field, f"must be between 1m and {MAX_LIFETIME.days}d, got {text!r}")
    return lifetime


class TokenService:
    """Create, list, revoke and verify API tokens."""

    def __init__(self, store: TokenStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def _info(self, record: TokenRecord) -> TokenInfo:
        status: TokenStatus = "active"
        if record.revoked_at is not None:
            status = "revoked"
        elif record.expires_at is not None and record.expires_at <= self.clock.now():
            status = "expired"
        return TokenInfo(token_id=record.token_id, agent_id=record.agent_id, label=record.label,
                         created_at=record.created_at, expires_at=record.expires_at, revoked_at=record.revoked_at,
                         status=status)  # fmt: skip

    def create(self, agent_id: str, *, lifetime: timedelta | None = None, label: str = "") -> CreatedToken:
        """A new token for ``agent_id`` (which must exist), valid for ``lifetime`` (None: until revoked)."""
        if not isinstance(agent_id, str) or not AGENT_ID_RE.match(agent_id):
            raise InputError("agent", f"must be an agent id (lower-case letters, digits, - and _), got {agent_id!r}")
        if lifetime is not None and not timedelta(minutes=1) <= lifetime <= MAX_LIFETIME:
            raise InputError("expires", f"must be between 1m and {MAX_LIFETIME.days}d")
        if not isinstance(label, str) or len(label) > MAX_LABEL or any(c in label for c in "\r\n\0"):
            raise InputError("label", f"must be one line of at most {MAX_LABEL} characters")
        token_id = secrets.token_hex(6)
        secret = f"{PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
        now = self.clock.now()
        record = TokenRecord(token_id=token_id, agent_id=agent_id, secret_hash=hash_secret(secret), label=label,
                             created_at=now, expires_at=now + lifetime if lifetime is not None else None)  # fmt: skip
        self.store.add(record)
        return CreatedToken(token=self._info(record), secret=secret)

    def list(self, agent_id: str | None = None) -> list[TokenInfo]:
        """Every token (of one agent), oldest first, with its status."""
        return [self._info(r) for r in self.store.list(agent_id)]

    def revoke(self, token_id: str) -> TokenInfo:
        """Revoke a token at once (a second revoke changes nothing); NotFoundError for an unknown id."""
        record = self.store.revoke(token_id, at=self.clock.now()) if isinstance(token_id, str) else None
        if record is None:
            raise NotFoundError(f"token: no token {token_id!r} (see 'mabos token list')")
        return self._info(record)

    def verify(self, secret: str) -> TokenInfo | None:
        """The token a secret belongs to, if it is live (known, unrevoked, unexpired); else None."""
        found = _SECRET.match(secret) if isinstance(secret, str) else None
        if found is None:
            return None
        record = self.store.get(found.group(1))
        if record is None or not hmac.compare_digest(hash_secret(secret), record.secret_hash):
            return None
        info = self._info(record)
        return info if info.status == "active" else None

    def active_count(self) -> int:
        """How many tokens a caller could use now."""
        return sum(1 for info in self.list() if info.status == "active")


__all__ = ["CreatedToken", "TokenInfo", "TokenService", "TokenStatus", "hash_secret", "parse_lifetime"]
