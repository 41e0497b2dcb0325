"""Outbox events: changes waiting to be replayed to the shared graph."""

from __future__ import annotations

from typing import Any

from kg.models.base import Model, UtcDatetime


class OutboxEvent(Model):
    """A change waiting to be replayed to the shared graph (written with the change itself)."""

    seq: int
    aggregate: str
    op: str
    record_uid: str
    agent_id: str | None
    scope: str | None
    payload: dict[str, Any]
    created_at: UtcDatetime
    acked_at: UtcDatetime | None = None
