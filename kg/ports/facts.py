"""Port of facts."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Protocol

from kg.models import (
    AssertOutcome,
    Fact,
    FactInput,
    FactQuery,
    LiveTriple,
)


class FactStore(Protocol):
    """Facts with world-time validity, system-time history and lineage."""

    def assert_many(self, facts: Sequence[FactInput], *, asserted_by: str) -> builtins.list[AssertOutcome]:
        """Upsert facts in one transaction: an identical live (scope, s, p, o) is updated."""
        ...

    def retract(
        self,
        *,
        scopes: Sequence[str],
        retracted_by: str,
        uids: Sequence[str] = (),
        subject: str | None = None,
        predicate: str | None = None,
    ) -> builtins.list[str]:
        """Mark matching live facts retracted (never deleted); return their uids."""
        ...

    def query(self, query: FactQuery) -> builtins.list[Fact]:
        """Facts matching a pattern, ordered by (created_at, uid)."""
        ...

    def get_many(self, uids: Iterable[str], *, as_of: datetime | None = None) -> dict[str, Fact]:
        """Facts by uid (any scope; the caller filters), as they were at ``as_of`` when given."""
        ...

    def live_triples(
        self, *, scopes: Sequence[str], valid_at: datetime, derived: bool | None = None, batch: int = 50_000
    ) -> Iterator[LiveTriple]:
        """Live facts of the scopes valid at ``valid_at`` (only asserted or only derived when asked), lightly."""
        ...

    def search(self, text: str, *, scopes: Sequence[str], limit: int = 20) -> builtins.list[Fact]:
        """Full-text search over live facts (FTS5 where available)."""
        ...
