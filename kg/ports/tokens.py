"""Port of API tokens (hashed secrets per agent, expiry, revocation)."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class TokenRecord:
    """One API token as stored (:mod:`kg.tokens`): the secret only as its hash."""

    token_id: str
    agent_id: str
    secret_hash: str
    label: str
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


class TokenStore(Protocol):
    """API tokens (local credentials: never replicated, no outbox event)."""

    def add(self, token: TokenRecord) -> None:
        """Insert a new token; NotFoundError for an unknown agent."""
        ...

    def get(self, token_id: str) -> TokenRecord | None:
        """One token by id, or None."""
        ...

    def list(self, agent_id: str | None = None) -> builtins.list[TokenRecord]:
        """Tokens (of one agent), oldest first."""
        ...

    def revoke(self, token_id: str, *, at: datetime) -> TokenRecord | None:
        """Mark a token revoked (once: a second revoke keeps the first time); None when there is no such token."""
        ...
