"""Ports of the BDI graph: nodes and typed relations."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, Protocol, Required, TypedDict, Unpack

from kg.models import (
    BDINode,
    GraphPath,
    NodeKind,
    Relation,
    RelationKind,
)

#: Nodes one :meth:`BDIStore.list` returns when ``limit`` is not given.
NODE_LIMIT = 1000
#: Paths one :meth:`RelationStore.paths` returns when ``limit`` is not given.
PATH_LIMIT = 100


class NodeFilter(TypedDict, total=False):
    """Which nodes :meth:`BDIStore.list` returns: those in ``scopes`` (required), of ``kind``, owned by
    ``agent_id`` and with ``status`` when given (None: any), at most ``limit`` (default :data:`NODE_LIMIT`)."""

    scopes: Required[Sequence[str]]
    kind: NodeKind | None
    agent_id: str | None
    status: str | None
    limit: int


class PathSearch(TypedDict, total=False):
    """Which paths :meth:`RelationStore.paths` returns: every node and edge in ``scopes`` (required), starting at
    ``start_uid`` and over edges of ``relation`` only when given, at most ``limit`` (default :data:`PATH_LIMIT`)."""

    scopes: Required[Sequence[str]]
    start_uid: str | None
    relation: RelationKind | None
    limit: int


class BDIStore(Protocol):
    """Beliefs, desires, goals, intentions, plans and steps."""

    def add(self, node: BDINode) -> BDINode:
        """Store a new node."""
        ...

    def get(self, uid: str) -> BDINode:
        """A node by uid, or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(self, **where: Unpack[NodeFilter]) -> builtins.list[BDINode]:
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

    def paths(self, kinds: Sequence[str], **options: Unpack[PathSearch]) -> builtins.list[GraphPath]:
        """Paths whose nodes have ``kinds`` in order (edges followed in either direction)."""
        ...
