"""What a backend answers for cross-agent graph queries (``mabos graph query``). The catalogue in
reasoning/graph_queries.py does the rest (arithmetic, path enumeration, grouping) in Python, so
every backend gives identical results for the same data."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kg.models import (
    RelationKind,
)

#: Goal statuses that are not final: a goal in one of these can still fall behind (what ``open_goals`` reads).
OPEN_GOAL_STATUSES = ("pending", "active", "suspended")


@dataclass(frozen=True)
class GraphNodeHead:
    """What names a BDI node and what it says: the part of a node that a query's result shows."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    content: str
    status: str


@dataclass(frozen=True)
class GraphNodeRow(GraphNodeHead):
    """A BDI node as a graph query sees it: its head, then the fields of its kind (None where a kind has none)."""

    certainty: float | None = None
    priority: int | None = None
    progress: float | None = None
    deadline: datetime | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class GraphEdgeRow:
    """One stored relation with both of its ends."""

    uid: str
    kind: str
    scope: str
    source: GraphNodeRow
    target: GraphNodeRow


@dataclass(frozen=True)
class LineageRecordRow:
    """A fact or memory item on a lineage (kind ``fact`` or ``memory:<type>``)."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    label: str
    created_at: datetime
    retracted: bool = False


class GraphQueryBackend(Protocol):
    """Candidate rows for the cross-agent graph queries; ``scopes=None`` means every scope.

    Implementations: ``kg.store.sqlite.graph_queries.SqliteGraphQueries`` (``source`` "local") and
    ``kg.store.typedb.graph_queries.TypeDBGraphQueries`` (``source`` "typedb").
    """

    @property
    def source(self) -> str:
        """Which backend answers: ``local`` (embedded store) or ``typedb``."""
        ...

    def open_goals(self, *, scopes: Sequence[str] | None) -> builtins.list[GraphNodeRow]:
        """Goals with a deadline whose status is one of :data:`OPEN_GOAL_STATUSES`, ordered by uid."""
        ...

    def active_beliefs(self, *, scopes: Sequence[str] | None) -> builtins.list[GraphNodeRow]:
        """Beliefs whose status is active, ordered by uid."""
        ...

    def edges(
        self, kind: RelationKind, *, scopes: Sequence[str] | None, sources: Sequence[str] | None = None
    ) -> builtins.list[GraphEdgeRow]:
        """Relations of ``kind`` (between BDI nodes) whose edge and ends are in ``scopes``, only those
        leaving ``sources`` when given, ordered by (source uid, target uid)."""
        ...

    def lineage_links(self, uids: Sequence[str], *, direction: str, max_depth: int) -> builtins.list[tuple[str, str]]:
        """(child, parent) links reachable from ``uids`` within ``max_depth`` steps, towards parents
        (``ancestors``) or children (``descendants``): records' ``derived_from`` plus ``derived-from``
        relations, in any scope (the caller filters), sorted."""
        ...

    def lineage_records(self, uids: Sequence[str]) -> builtins.list[LineageRecordRow]:
        """The facts (retracted ones too) and memory items among ``uids``, in any scope, ordered by uid."""
        ...
