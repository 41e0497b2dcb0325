"""BDI node tools: add, list and update beliefs, desires, goals, intentions, plans and plan steps.

Three generic tools with a ``kind`` field (``bdi_add``, ``bdi_list``, ``bdi_update``) rather than one per kind: the
kinds share one node shape and differ only in which optional fields they use (:data:`KIND_FIELDS`) and which
statuses they allow (:data:`kg.models.NODE_STATUSES`). ``mabos belief|desire|goal|intention|plan|step
add|list|update`` run these tools, so the CLI, the Python API and MCP share one validation and the scope checks of
:class:`kg.bdi.BDIService`: a node is written only in a scope the agent may write, listed and updated only when
the agent may read (and, to update, write) its scope.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.ids import PREFIXES
from kg.models import NODE_STATUSES, BDINode, HierarchyLevel, NodeKind
from kg.models.base import Priority, RecordId, Text, Unit, UtcDatetime

GROUP = "bdi"

#: The optional fields each kind uses besides ``content`` and ``status``; any other is refused for that kind.
KIND_FIELDS: dict[NodeKind, tuple[str, ...]] = {
    NodeKind.BELIEF: ("certainty",),
    NodeKind.DESIRE: ("priority", "urgency"),
    NodeKind.GOAL: ("hierarchy_level", "priority", "progress", "deadline", "urgency"),
    NodeKind.INTENTION: ("priority", "deadline"),
    NodeKind.PLAN: ("hierarchy_level",),
    NodeKind.PLAN_STEP: ("sequence",),
}
_OPTIONAL = ("certainty", "priority", "urgency", "hierarchy_level", "progress", "deadline", "sequence")
_ALIASES = {"step": "plan_step", "plan-step": "plan_step"}
_KIND_OF_PREFIX = {PREFIXES[k.value]: k for k in NodeKind}
#: Every status of any kind (a node's kind narrows it: :data:`kg.models.NODE_STATUSES`).
Status = Literal["active", "revised", "withdrawn", "satisfied", "dropped", "pending", "achieved", "failed", "abandoned",
                 "suspended", "completed", "draft", "in_progress", "done", "skipped"]  # fmt: skip
_STATUSES = "; ".join(f"{k.value}: {', '.join(s)}" for k, s in NODE_STATUSES.items())


def _kind_alias(value: Any) -> Any:
    return _ALIASES.get(value, value) if isinstance(value, str) else value


def _check_fields(kind: NodeKind, model: BaseModel) -> None:
    """Refuse an optional field the kind does not use, and a status it does not allow (ValueError for pydantic)."""
    for name in _OPTIONAL:
        if getattr(model, name) is not None and name not in KIND_FIELDS[kind]:
            uses = ", ".join(("status", *KIND_FIELDS[kind]))
            raise ValueError(f"{name}: a {kind.value} has no {name} (its fields: {uses})")
    _check_status(kind, getattr(model, "status", None))


def _check_status(kind: NodeKind | None, status: str | None) -> None:
    if kind is not None and status is not None and status not in NODE_STATUSES[kind]:
        raise ValueError(
            f"status: a {kind.value} status must be one of {', '.join(NODE_STATUSES[kind])}; got {status!r}"
        )


class NodeFields(ToolInput):
    """The optional node fields of ``bdi_add`` and ``bdi_update`` (each kind uses some of them)."""

    status: Status | None = Field(default=None, description=f"The node's status, by kind: {_STATUSES}.")
    certainty: Unit | None = Field(default=None, description="belief: how sure, 0..1 (default 1).")
    priority: Priority | None = Field(default=None, description="desire, goal, intention: 1 (low) to 10 (high).")
    urgency: Unit | None = Field(default=None, description="desire, goal: 0..1.")
    hierarchy_level: HierarchyLevel | None = Field(
        default=None, description="goal, plan: strategic, tactical or operational."
    )
    progress: Unit | None = Field(default=None, description="goal: share done, 0..1.")
    deadline: UtcDatetime | None = Field(default=None, description="goal, intention: ISO-8601; a naive time is UTC.")
    sequence: int | None = Field(default=None, ge=0, le=1_000_000, description="plan_step: position in its plan.")


class BdiAddInput(NodeFields):
    """Arguments of ``bdi_add``."""

    kind: NodeKind = Field(description="belief, desire, goal, intention, plan or plan_step ('step' is accepted).")
    content: Text = Field(description="The node's text: a belief's statement, a goal's or plan's name.")
    scope: str | None = Field(
        default=None, max_length=256, description="Where it lives (default the agent's own scope agent:<id>)."
    )

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> BdiAddInput:
        _check_fields(self.kind, self)
        return self


class BdiUpdateInput(NodeFields):
    """Arguments of ``bdi_update``: the node and the fields to change (at least one)."""

    uid: RecordId = Field(description="The node's uid, e.g. 'G-01J...' (its prefix gives the kind).")
    kind: NodeKind | None = Field(default=None, description="If given, the uid must be a node of this kind.")
    content: Text | None = Field(default=None, description="New text.")

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> BdiUpdateInput:
        kind = _KIND_OF_PREFIX.get(self.uid.split("-", 1)[0])
        if kind is None or (self.kind is not None and kind is not self.kind):
            wanted = self.kind.value if self.kind is not None else "BDI node (belief, desire, goal ...)"
            raise ValueError(f"uid: {self.uid!r} is not a {wanted} id")
        _check_fields(kind, self)
        return self


class BdiListInput(ToolInput):
    """Arguments of ``bdi_list``."""

    kind: NodeKind | None = Field(default=None, description="Only this kind ('step' is accepted); default every kind.")
    scope: str | None = Field(default=None, max_length=256, description="Only this one readable scope.")
    owner: str | None = Field(default=None, max_length=128, description="Only nodes owned by this agent.")
    status: Status | None = Field(default=None, description=f"Only this status, by kind: {_STATUSES}.")
    limit: int = Field(default=100, ge=1, le=100_000, description="At most this many nodes (1..100000).")

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _status_of_kind(self) -> BdiListInput:
        _check_status(self.kind, self.status)
        return self


class BdiNodes(BaseModel):
    """Nodes found by ``bdi_list``."""

    nodes: list[BDINode] = Field(description="The nodes the agent can read, in the store's order.")
    count: int = Field(description="How many nodes were returned.")


def _fields(args: NodeFields) -> dict[str, Any]:
    return {name: getattr(args, name) for name in ("status", *_OPTIONAL)}


_ADD = (
    "Add a node to the agent's BDI graph: a belief (what it holds true, with certainty), desire (what it wants, "
    "priority), goal (a concrete objective: hierarchy level, priority, progress, deadline), intention (a goal it "
    "committed to), plan or plan_step (sequence). Only the fields of that kind are accepted. It lives in the agent's "
    "own scope unless a writable scope is given. Link nodes with graph_link. Returns the node with its uid."
)
_LIST = (
    "List the BDI nodes the agent can read (its own, shared scopes it was granted, global), optionally of one kind, "
    "scope, owner or status. Use it to see current beliefs, open goals, active intentions or a plan's steps before "
    "deciding. Returns the nodes and their count."
)
_UPDATE = (
    "Change fields of one BDI node the agent may write: its text, status (e.g. a goal achieved, a belief revised), "
    "certainty, priority, progress, deadline ... (only the fields of its kind). Give at least one field. Returns the "
    "node as changed."
)


@tool("bdi_add", group=GROUP, description=_ADD)
def bdi_add(ctx: ToolContext, args: BdiAddInput) -> BDINode:
    """Create a node through the BDI service (its write-scope check)."""
    agent = ctx.agent_for(args)
    return ctx.workspace().bdi.add(args.kind, agent, args.content, scope=args.scope, **_fields(args))


@tool("bdi_list", group=GROUP, description=_LIST)
def bdi_list(ctx: ToolContext, args: BdiListInput) -> BdiNodes:
    """List nodes through the BDI service (readable scopes only)."""
    filters = args.model_dump(include={"scope", "owner", "status", "limit"})
    nodes = ctx.workspace().bdi.list(ctx.agent_for(args), args.kind, **filters)
    return BdiNodes(nodes=nodes, count=len(nodes))


@tool("bdi_update", group=GROUP, description=_UPDATE)
def bdi_update(ctx: ToolContext, args: BdiUpdateInput) -> BDINode:
    """Update a node through the BDI service (read and write scope checks)."""
    return ctx.workspace().bdi.update(ctx.agent_for(args), args.uid, content=args.content, **_fields(args))


__all__ = ["KIND_FIELDS", "BdiAddInput", "BdiListInput", "BdiNodes", "BdiUpdateInput", "Status"]
