"""The TypeDB replay target: outbox batches applied to the shared graph in one write transaction each."""

from __future__ import annotations

from collections.abc import Sequence

from kg.models import OutboxEvent
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.writes import batch_queries


class TypeDBTarget:
    """Applies outbox events to a TypeDB database (``sync.replay.ReplayTarget``).

    The whole batch is one write transaction: it commits entirely or not at all, so the source
    acknowledges a batch only when TypeDB holds every event of it. The queries are idempotent
    (:mod:`kg.store.typedb.writes`), so a resent batch changes nothing.
    """

    def __init__(self, client: TypeDBClient) -> None:
        self.client = client

    def apply(self, events: Sequence[OutboxEvent]) -> None:
        """Apply ``events`` in order in one write transaction."""
        self.client.write(batch_queries(events))


__all__ = ["TypeDBTarget"]
