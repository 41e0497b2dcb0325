"""Port of facts."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol, overload

from kg.errors import InputError
from kg.models import (
    AssertOutcome,
    Fact,
    FactInput,
    FactQuery,
    LiveTriple,
    ObjectKind,
)


class FactRow(NamedTuple):
    """A validated fact to assert, as a tuple: what :class:`FactInput` holds after validation (same field names),
    without building a model. Only :func:`kg.facts_fast.fast_row` makes them, from items it proved the model
    accepts; bulk writes take them where they take a ``FactInput``."""

    agent_id: str
    subject: str
    predicate: str
    object: str
    object_kind: ObjectKind
    scope: str
    confidence: float
    source: str
    valid_from: datetime | None
    valid_until: datetime | None
    derived_from: list[str]
    rule_id: str | None

    def to_input(self) -> FactInput:
        """The same fact as the model (validated again: for stores that need the model)."""
        return FactInput.model_validate(self._asdict())


class FactColumns(Sequence[FactRow]):
    """Facts of one agent, scope and source, with confidence 1 and no validity, lineage or rule, held as columns
    (a screened batch of an RDF import: :func:`kg.facts_fast.triple_rows`). It reads as the sequence of their
    :class:`FactRow` tuples, each made when asked for; a store's ``prepare`` may take the columns as they are
    instead (no tuple per fact)."""

    __slots__ = ("agent_id", "kinds", "objects", "predicates", "scope", "source", "subjects")

    def __init__(self, agent_id: str, scope: str, source: str, *, subjects: Sequence[str], predicates: Sequence[str],
                 objects: Sequence[str], kinds: Sequence[ObjectKind]) -> None:  # fmt: skip
        if not len(subjects) == len(predicates) == len(objects) == len(kinds):
            raise InputError("columns", "must hold one value per fact each")
        self.agent_id, self.scope, self.source = agent_id, scope, source
        self.subjects, self.predicates, self.objects, self.kinds = subjects, predicates, objects, kinds

    def __len__(self) -> int:
        return len(self.subjects)

    @overload
    def __getitem__(self, index: int) -> FactRow: ...
    @overload
    def __getitem__(self, index: slice) -> builtins.list[FactRow]: ...
    def __getitem__(self, index: int | slice) -> FactRow | builtins.list[FactRow]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        return FactRow(self.agent_id, self.subjects[index], self.predicates[index], self.objects[index],
                       self.kinds[index], self.scope, 1.0, self.source, None, None, [], None)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PreparedFacts:
    """A batch of validated facts made ready for one store's write by :meth:`FactStore.prepare`.

    ``payload`` is the adapter's own (its row tuples, say); only the adapter that prepared it may write it.
    """

    facts: Sequence[FactInput | FactRow]
    asserted_by: str
    payload: Any = None


class FactStore(Protocol):
    """Facts with world-time validity, system-time history and lineage."""

    def assert_many(self, facts: Sequence[FactInput], *, asserted_by: str) -> builtins.list[AssertOutcome]:
        """Upsert facts in one transaction: an identical live (scope, s, p, o) is updated."""
        ...

    def prepare(self, facts: Sequence[FactInput | FactRow], *, asserted_by: str) -> PreparedFacts:
        """The CPU-only part of :meth:`assert_many` (no I/O, no lock; safe in another thread): row building.

        ``assert_prepared(prepare(facts, asserted_by=a))`` is ``assert_many(facts, asserted_by=a)``; a bulk
        caller prepares the next batch while the store writes the current one.
        """
        ...

    def assert_prepared(self, prepared: PreparedFacts) -> builtins.list[AssertOutcome]:
        """Write a batch from :meth:`prepare` in one transaction (the upsert of :meth:`assert_many`)."""
        ...

    def bulk(self) -> AbstractContextManager[None]:
        """One write transaction around several :meth:`assert_prepared` calls: committed at the end of the block,
        rolled back on an exception (a bulk caller whose source may still fail keeps its batches uncommitted)."""
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
