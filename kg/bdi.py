"""BDI graph service: beliefs, desires, goals, intentions, plans, steps, their links and paths."""

from __future__ import annotations

import builtins
from typing import Any

from kg.bdi_requests import (
    BdiAddRequest,
    BdiListRequest,
    BdiUpdateRequest,
    GraphLinkRequest,
    GraphPathRequest,
    GraphRelationsRequest,
    node_fields,
)
from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import (
    GRAPH_NODE_KINDS,
    NODE_MODELS,
    BDINode,
    GraphPath,
    NodeKind,
    Relation,
    RelationKind,
    parse,
)
from kg.models.request import requested
from kg.ports import GraphStore
from kg.scopes import ScopePolicy

_ID_KIND = {NodeKind.PLAN_STEP: "plan_step"}
#: At most this many nodes in a list from Python (reasoning reads whole graphs; the tool's default is the
#: request's, for an agent's context).
LIST_LIMIT = 1000


def relation_kind(value: str) -> RelationKind:
    """Parse a relation kind."""
    try:
        return RelationKind(value)
    except ValueError:
        raise InputError(
            "relation", f"must be one of {', '.join(k.value for k in RelationKind)}, got {value!r}"
        ) from None


class BDIService:
    """Nodes and edges of agents' BDI graphs, with scope checks."""

    def __init__(self, store: GraphStore, policy: ScopePolicy, clock: Clock) -> None:
        self.store = store
        self.policy = policy
        self.clock = clock

    def add(self, kind: NodeKind | str | BdiAddRequest, agent_id: str, content: str | None = None,
            **fields: Any) -> BDINode:  # fmt: skip
        """Create a node owned by ``agent_id`` in a scope it may write: a request, or its kind, text and fields as
        arguments, validated into one (a field its kind does not use, or a status it does not allow, is refused)."""
        request = requested(BdiAddRequest, kind, {"content": content, **fields}, first="kind")
        scope = self.policy.check_write(agent_id, request.scope)
        now = self.clock.now()
        data = {"uid": new_id(_ID_KIND.get(request.kind, request.kind.value)), "agent_id": agent_id, "scope": scope,
                "content": request.content, "created_at": now, "updated_at": now}  # fmt: skip
        data.update({k: v for k, v in node_fields(request).items() if v is not None})
        return self.store.bdi.add(parse(NODE_MODELS[request.kind], data))

    def get(self, agent_id: str, uid: str) -> BDINode:
        """A node visible to the agent."""
        scopes = self.policy.readable(agent_id)
        try:
            node = self.store.bdi.get(uid)
        except NotFoundError:
            node = None
        if node is None or node.scope not in scopes:
            raise NotFoundError(f"uid: no node {uid!r} visible to {agent_id!r}")
        return node

    def list(self, agent_id: str, kind: NodeKind | str | BdiListRequest | None = None,
             **filters: Any) -> builtins.list[BDINode]:  # fmt: skip
        """Nodes visible to the agent: a request, or a kind and the ``scope``, ``owner``, ``status``, ``limit``
        filters as arguments, validated into one (Python callers' default limit is :data:`LIST_LIMIT`)."""
        if not isinstance(kind, BdiListRequest) and filters.get("limit") is None:
            filters = {**filters, "limit": LIST_LIMIT}
        request = requested(BdiListRequest, kind, filters, first="kind")
        scopes = self.policy.narrow(agent_id, request.scope)
        return self.store.bdi.list(scopes=scopes, kind=request.kind, agent_id=request.owner, status=request.status,
                                   limit=request.limit)  # fmt: skip

    def update(self, agent_id: str, uid: str | BdiUpdateRequest, **changes: Any) -> BDINode:
        """Change fields of a node the agent may write: a request, or the node's uid and the changes as arguments,
        validated into one (at least one field)."""
        request = requested(BdiUpdateRequest, uid, changes, first="uid")
        node = self.get(agent_id, request.uid)
        self.policy.check_write(agent_id, node.scope)
        given = {k: v for k, v in {"content": request.content, **node_fields(request)}.items() if v is not None}
        if not given:
            raise InputError("changes", "nothing to update; give at least one field")
        return self.store.bdi.update(request.uid, given, updated_by=agent_id)

    def link(self, agent_id: str, relation: RelationKind | str | GraphLinkRequest, source_uid: str | None = None,
             target_uid: str | None = None, *, scope: str | None = None) -> Relation:  # fmt: skip
        """Create a typed edge (a request, or its relation, ends and scope); both ends must be visible to the
        agent, the edge's scope writable by it."""
        given = relation.value if isinstance(relation, RelationKind) else relation
        ends = {"source_uid": source_uid, "target_uid": target_uid, "scope": scope}
        request = requested(GraphLinkRequest, given, ends, first="relation")
        readable = self.policy.readable(agent_id)
        target_scope = self.policy.check_write(agent_id, request.scope)
        for role, uid in (("source", request.source_uid), ("target", request.target_uid)):
            info = self.store.relations.node_info(uid)
            if info is None or info[1] not in readable:  # someone else's private record looks absent
                raise NotFoundError(f"{role}: no record {uid!r} visible to {agent_id!r}")
        edge = parse(Relation, {"uid": new_id("relation"), "agent_id": agent_id, "scope": target_scope,
                                "created_at": self.clock.now(), "kind": relation_kind(request.relation),
                                "source_uid": request.source_uid, "target_uid": request.target_uid})  # fmt: skip
        return self.store.relations.link(edge)

    def relations(self, agent_id: str, uid: str | GraphRelationsRequest) -> builtins.list[Relation]:
        """Edges touching a visible node (a request, or the node's uid)."""
        request = requested(GraphRelationsRequest, uid, {}, first="uid")
        return self.store.relations.relations(request.uid, scopes=self.policy.readable(agent_id))

    def paths(self, agent_id: str, kinds: builtins.list[str] | GraphPathRequest, *, start_uid: str | None = None,
              relation: str | None = None, limit: int | None = None) -> builtins.list[GraphPath]:  # fmt: skip
        """Paths through visible nodes whose kinds follow ``kinds`` (e.g. belief, goal, plan): a request, or its
        kinds and fields."""
        request = requested(GraphPathRequest, kinds, {"start_uid": start_uid, "relation": relation, "limit": limit},
                            first="kinds")  # fmt: skip
        rel = relation_kind(request.relation) if request.relation else None
        names = [{"step": "plan_step", "plan-step": "plan_step"}.get(k, k) for k in request.kinds]
        for kind in names:
            if kind not in GRAPH_NODE_KINDS:
                raise InputError("kinds", f"unknown node kind {kind!r}; known: {', '.join(GRAPH_NODE_KINDS)}")
        return self.store.relations.paths(names, scopes=self.policy.readable(agent_id), start_uid=request.start_uid,
                                          relation=rel, limit=request.limit)  # fmt: skip
