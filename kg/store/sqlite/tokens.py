"""SQLite adapter of the API token port (:class:`kg.ports.TokenStore`): table ``api_tokens`` (migration 8)."""

from __future__ import annotations

import builtins
import sqlite3
from datetime import datetime

from kg.errors import ConflictError, NotFoundError
from kg.models import format_ts, to_utc
from kg.ports import TokenRecord
from kg.store.sqlite.db import SqliteAdapter


def _dt(text: str) -> datetime:
    return to_utc(datetime.fromisoformat(text))


def _record(row: sqlite3.Row) -> TokenRecord:
    return TokenRecord(
        token_id=str(row["token_id"]),
        agent_id=str(row["agent_id"]),
        secret_hash=str(row["secret_hash"]),
        label=str(row["label"]),
        created_at=_dt(row["created_at"]),
        expires_at=_dt(row["expires_at"]) if row["expires_at"] else None,
        revoked_at=_dt(row["revoked_at"]) if row["revoked_at"] else None,
    )


def _ts(value: datetime | None) -> str | None:
    return format_ts(value) if value is not None else None


class SqliteTokenStore(SqliteAdapter):
    """API tokens in the embedded store (local credentials: no outbox event)."""

    def add(self, token: TokenRecord) -> None:
        """Insert a new token."""
        with self.db.write() as conn:
            try:
                conn.execute(
                    "INSERT INTO api_tokens(token_id, agent_id, secret_hash, label, created_at, expires_at, "
                    "revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (token.token_id, token.agent_id, token.secret_hash, token.label, format_ts(token.created_at),
                     _ts(token.expires_at), _ts(token.revoked_at)),
                )  # fmt: skip
            except sqlite3.IntegrityError as exc:
                if "FOREIGN KEY" in str(exc):
                    raise NotFoundError(f"agent: no agent {token.agent_id!r}") from None
                raise ConflictError(f"token: a token {token.token_id!r} already exists") from None

    def get(self, token_id: str) -> TokenRecord | None:
        """One token by id, or None."""
        rows = self.db.read("SELECT * FROM api_tokens WHERE token_id = ?", (token_id,))
        return _record(rows[0]) if rows else None

    def list(self, agent_id: str | None = None) -> builtins.list[TokenRecord]:
        """Tokens (of one agent), oldest first."""
        if agent_id is None:
            rows = self.db.read("SELECT * FROM api_tokens ORDER BY created_at, token_id")
        else:
            rows = self.db.read(
                "SELECT * FROM api_tokens WHERE agent_id = ? ORDER BY created_at, token_id", (agent_id,)
            )
        return [_record(r) for r in rows]

    def revoke(self, token_id: str, *, at: datetime) -> TokenRecord | None:
        """Mark a token revoked; a second revoke keeps the first time."""
        with self.db.write() as conn:
            conn.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
                (format_ts(at), token_id),
            )
        return self.get(token_id)
