"""Ports of memory items and the embedding index queue."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, Required, TypedDict, Unpack

from kg.models import (
    MemoryItem,
    MemoryQuery,
)


@dataclass(frozen=True)
class StoreLimits:
    """Capacity rules the memory store applies in the same transaction as an insert."""

    working_capacity: int = 7
    short_term_capacity: int = 200
    short_term_ttl_seconds: int = 7_200


@dataclass(frozen=True)
class MemoryWriteResult:
    """What a memory write did besides inserting: items moved or archived by the capacity rules."""

    demoted: tuple[str, ...] = ()
    archived: tuple[str, ...] = ()


class MemoryWrite(TypedDict, total=False):
    """How :meth:`MemoryStore.add` writes: the capacity rules ``limits`` (required) applied at ``now`` (required),
    and ``updates``, field changes of stored items (as :meth:`MemoryStore.update`; default none)."""

    limits: Required[StoreLimits]
    now: Required[datetime]
    updates: Sequence[tuple[str, dict[str, Any]]]


class MemoryStore(Protocol):
    """Memory items in the working, short-term and long-term stores."""

    def add(self, items: Sequence[MemoryItem], **write: Unpack[MemoryWrite]) -> MemoryWriteResult:
        """Insert items and apply ``updates`` (see :meth:`update`), then in the same transaction, per
        owning agent: archive expired short-term items,
        demote the oldest working items past capacity to short-term (with a fresh TTL), and archive the
        lowest-importance short-term items past capacity (never deleting anything)."""
        ...

    def update(self, changes: Sequence[tuple[str, dict[str, Any]]], *, now: datetime) -> None:
        """Apply field changes (store, tier, importance, expires_at, archived_at ...) in one transaction."""
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, MemoryItem]:
        """Items by uid (any scope; callers filter)."""
        ...

    def list(self, query: MemoryQuery) -> builtins.list[MemoryItem]:
        """Items matching the filters, ordered by (created_at, uid)."""
        ...

    def search(self, text: str, query: MemoryQuery) -> builtins.list[tuple[MemoryItem, float]]:
        """Full-text matches (any term) with their BM25 score (lower is better), best first."""
        ...

    def scan(self, after: int, limit: int) -> builtins.list[tuple[int, MemoryItem]]:
        """Up to ``limit`` items in insertion order after position ``after`` (0: the start), with positions."""
        ...

    def filter_items(self, uids: Iterable[str], query: MemoryQuery) -> dict[str, MemoryItem]:
        """The items of ``uids`` that match ``query``'s filters, by uid (text, order and limit ignored)."""
        ...

    def archive_expired(self, agent_id: str, *, now: datetime) -> builtins.list[str]:
        """Archive the agent's short-term items whose TTL has passed; return their uids."""
        ...

    def touch(self, uids: Sequence[str], *, now: datetime, importance: Mapping[str, float] | None = None) -> None:
        """Count an access (local usage statistics: not replicated through the outbox); in the same write, set
        the recalculated ``importance`` of some of the items."""
        ...

    def counts(self, agent_id: str) -> dict[str, dict[str, int]]:
        """``{store: {"active": n, "archived": m}}`` for an agent's own items."""
        ...


class IndexQueue(Protocol):
    """Memory items the vector index has not seen yet, filled in the same transaction as each write."""

    def store_id(self) -> str:
        """The store's identity: a vector index built for another store is rebuilt, never used."""
        ...

    def pending(self, after: int, limit: int) -> builtins.list[tuple[int, str]]:
        """The oldest ``limit`` entries after position ``after`` as (position, uid)."""
        ...

    def count(self, after: int = 0) -> int:
        """Distinct uids waiting after position ``after``."""
        ...

    def last(self) -> int:
        """The newest position (0 when empty)."""
        ...

    def done(self, upto: int) -> int:
        """Forget the entries at or before ``upto``; how many."""
        ...
