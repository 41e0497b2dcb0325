"""Ports of the outbox: changes waiting to be replayed to the shared graph, and word that one was committed."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
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


class CommitNotifier(Protocol):
    """Calls listeners after every committed write transaction (the outbox may then hold new events).

    Write-through (``sync.write_through``) listens to push each change right away. A listener runs on the
    committing thread after the commit, so it must be cheap; one that raises is logged, never propagated (the
    write it hears about is already committed).
    """

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each commit from now on."""
        ...

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        """Stop calling ``listener`` (nothing happens when it was not subscribed)."""
        ...

    def subscribed(self, listener: Callable[[], None]) -> bool:
        """Whether ``listener`` is called after each commit."""
        ...
