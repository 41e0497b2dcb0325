"""SQLite adapter of the outbox port.

Events live in ``outbox_log``; the ``outbox`` view (migration 10) expands a fact's compact creation event to
its payload. Reads go through the view, acknowledgements and counts straight to the table (they need no
payload).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kg.models import OutboxEvent
from kg.store.sqlite.db import SqliteAdapter


class SqliteOutboxStore(SqliteAdapter):
    """Outbox events of the embedded store."""

    def pending(self, *, limit: int = 500, after_seq: int = 0) -> list[OutboxEvent]:
        """Unacknowledged events after ``after_seq``, oldest first."""
        rows = self.db.read(
            "SELECT * FROM outbox WHERE acked_at IS NULL AND seq > ? ORDER BY seq LIMIT ?", (after_seq, limit)
        )
        return [OutboxEvent.model_validate({**dict(r), "payload": json.loads(r["payload"])}) for r in rows]

    def ack(self, seqs: Sequence[int]) -> int:
        """Mark events acknowledged (idempotent)."""
        if not seqs:
            return 0
        with self.db.write() as conn:
            now = self.db.now()
            total = 0
            for start in range(0, len(seqs), 900):
                chunk = list(seqs[start : start + 900])
                cur = conn.execute(
                    "UPDATE outbox_log SET acked_at = ? WHERE acked_at IS NULL "
                    f"AND seq IN ({','.join('?' * len(chunk))})",
                    [now, *chunk],
                )
                total += cur.rowcount
        return total

    def counts(self, *, scopes: Sequence[str] | None = None, agent_id: str | None = None) -> dict[str, int]:
        """How many events wait and how many were acknowledged; with ``scopes``, only events in those scopes or
        ``agent_id``'s own unscoped ones (what one agent may see)."""
        query = "SELECT COUNT(*) - COUNT(acked_at) AS pending, COUNT(acked_at) AS acked FROM outbox_log"
        params: list[str | None] = []
        if scopes is not None:
            marks = ",".join("?" * len(scopes)) or "NULL"
            query += f" WHERE scope IN ({marks}) OR (scope IS NULL AND agent_id = ?)"
            params = [*scopes, agent_id]
        row = self.db.read(query, params)[0]
        return {"pending": int(row["pending"]), "acked": int(row["acked"])}
