"""Ports of the BDI graph: nodes and typed relations."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Protocol

from kg.models import (
    BDINode,
    GraphPath,
    NodeKind,
    Relation,
    RelationKind,
)


class BDIStore(Protocol):
    """Beliefs, desires, goals, intentions, plans and steps."""

    def add(self, node: BDINode) -> BDINode:
        """Store a new node."""
        ...

    def get(self, uid: str) -> BDINode:
        """A node by uid, or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(
        self,
        *,
        scopes: Sequence[str],
        kind: NodeKind | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        limit: int = 1000,
    ) -> builtins.list[BDINode]:
        """Nodes in the given scopes, ordered by (created_at, uid)."""
        ...

    def update(self, uid: str, changes: dict[str, Any], *, updated_by: str) -> BDINode:
        """Change mutable fields of a node; return it as stored."""
        ...


class RelationStore(Protocol):
    """Typed edges and graph traversal."""

    def link(self, relation: Relation) -> Relation:
        """Store an edge after checking both ends exist and play the relation's roles."""
        ...

    def unlink(self, uid: str, *, removed_by: str) -> None:
        """Remove an edge."""
        ...

    def relations(self, uid: str, *, scopes: Sequence[str]) -> builtins.list[Relation]:
        """Edges touching a node, in visible scopes."""
        ...

    def node_info(self, uid: str) -> tuple[str, str] | None:
        """(kind, scope) of any record (kinds: ``goal``, ``fact``, ``memory:skill`` ...), None if unknown."""
        ...

    def paths(
        self,
        kinds: Sequence[str],
        *,
        scopes: Sequence[str],
        start_uid: str | None = None,
        relation: RelationKind | None = None,
        limit: int = 100,
    ) -> builtins.list[GraphPath]:
        """Paths whose nodes have ``kinds`` in order (edges followed in either direction)."""
        ...
