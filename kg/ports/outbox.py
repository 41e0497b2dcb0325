"""Port of the outbox: changes waiting to be replayed to the shared graph."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Protocol

from kg.models import (
    OutboxEvent,
)


class OutboxStore(Protocol):
    """Change events written with each mutation, waiting to be replayed."""

    def pending(self, *, limit: int = 500, after_seq: int = 0) -> builtins.list[OutboxEvent]:
        """Unacknowledged events in order."""
        ...

    def ack(self, seqs: Sequence[int]) -> int:
        """Acknowledge events; return how many were newly acknowledged."""
        ...

    def counts(self, *, scopes: Sequence[str] | None = None, agent_id: str | None = None) -> dict[str, int]:
        """``{"pending": n, "acked": m}``; with ``scopes``, only events in those scopes (and ``agent_id``'s own
        unscoped ones): what one agent may see."""
        ...
