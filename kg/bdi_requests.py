"""The BDI graph's requests: what adding, listing and updating nodes, linking two records, listing a record's
edges and finding kind-sequence paths take, each declared once.

:class:`kg.bdi.BDIService` accepts these models (``add``, ``list``, ``update``, ``link``, ``relations``,
``paths``); the tools ``bdi_add``, ``bdi_list``, ``bdi_update`` (cli/tools/bdi.py), ``graph_link``,
``graph_relations`` and ``graph_path`` (cli/tools/graph_links.py) are these models plus ``agent_id``, and ``mabos
belief|desire|goal|intention|plan|step add|list|update`` and ``mabos graph link|relations|path`` generate their
parameters from them (docs/decisions/2026-11-28-request-models.md).

The three node tools have a ``kind`` field rather than one per kind: the kinds share one node shape and differ
only in which optional fields they use (:data:`KIND_FIELDS`) and which statuses they allow
(:data:`kg.models.NODE_STATUSES`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from kg.ids import PREFIXES
from kg.models import NODE_STATUSES, HierarchyLevel, NodeKind
from kg.models.base import Priority, RecordId, Text, Unit, UtcDatetime
from kg.models.bdi import MAX_PATH_LENGTH
from kg.models.request import Request

#: The relations an agent may create (``agent-owns`` is implied by a record's owner, never stored).
LinkKind = Literal["belief-supports-goal", "desire-motivates-goal", "goal-requires-plan", "goal-decomposition",
                   "plan-contains-step", "step-depends-on", "agent-has-skill", "decision-resolves-goal",
                   "derived-from", "case-used-plan"]  # fmt: skip
MAX_PATHS = 10_000
_KINDS = "belief, desire, goal, intention, plan, plan_step (or step), fact, case, agent, memory, memory:<type>"


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


def node_fields(request: NodeFields) -> dict[str, Any]:
    """The node fields of a request (status and the optional fields; None where not given)."""
    return {name: getattr(request, name) for name in ("status", *_OPTIONAL)}


class NodeFields(Request):
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


class BdiAddRequest(NodeFields):
    """A node to add: its kind, text, scope and the fields of its kind."""

    kind: NodeKind = Field(description="belief, desire, goal, intention, plan or plan_step ('step' is accepted).")
    content: Text = Field(description="The node's text: a belief's statement, a goal's or plan's name.")
    scope: str | None = Field(
        default=None, max_length=256, description="Where it lives (default the agent's own scope agent:<id>)."
    )

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> BdiAddRequest:
        _check_fields(self.kind, self)
        return self


class BdiUpdateRequest(NodeFields):
    """The node and the fields to change (at least one)."""

    uid: RecordId = Field(description="The node's uid, e.g. 'G-01J...' (its prefix gives the kind).")
    kind: NodeKind | None = Field(default=None, description="If given, the uid must be a node of this kind.")
    content: Text | None = Field(default=None, description="New text.")

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> BdiUpdateRequest:
        kind = _KIND_OF_PREFIX.get(self.uid.split("-", 1)[0])
        if kind is None or (self.kind is not None and kind is not self.kind):
            wanted = self.kind.value if self.kind is not None else "BDI node (belief, desire, goal ...)"
            raise ValueError(f"uid: {self.uid!r} is not a {wanted} id")
        _check_fields(kind, self)
        return self


class BdiListRequest(Request):
    """Which nodes to list."""

    kind: NodeKind | None = Field(default=None, description="Only this kind ('step' is accepted); default every kind.")
    scope: str | None = Field(default=None, max_length=256, description="Only this one readable scope.")
    owner: str | None = Field(default=None, max_length=128, description="Only nodes owned by this agent.")
    status: Status | None = Field(default=None, description=f"Only this status, by kind: {_STATUSES}.")
    limit: int = Field(default=100, ge=1, le=100_000, description="At most this many nodes (1..100000).")

    _kind = field_validator("kind", mode="before")(_kind_alias)

    @model_validator(mode="after")
    def _status_of_kind(self) -> BdiListRequest:
        _check_status(self.kind, self.status)
        return self


class GraphLinkRequest(Request):
    """A typed edge to create between two records the agent can see."""

    relation: LinkKind = Field(
        description="The edge's kind (source -> target): belief-supports-goal, desire-motivates-goal, "
        "goal-requires-plan, goal-decomposition (parent -> subgoal), plan-contains-step, step-depends-on (dependent "
        "-> dependency), agent-has-skill (agent -> skill memory), decision-resolves-goal (decision memory -> goal), "
        "derived-from (fact or memory -> its source), case-used-plan."
    )
    source_uid: RecordId = Field(description="The source record's uid, e.g. 'B-01J...' for belief-supports-goal.")
    target_uid: RecordId = Field(description="The target record's uid, e.g. 'G-01J...'.")
    scope: str | None = Field(
        default=None, max_length=256, description="Where the edge lives (default the agent's own scope)."
    )


class GraphRelationsRequest(Request):
    """The record whose edges to list."""

    uid: RecordId = Field(description="The record whose edges to list (either end), e.g. 'G-01J...'.")


class GraphPathRequest(Request):
    """The node kinds a path goes through, in order, and where and along what it may go."""

    kinds: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        min_length=1,
        max_length=MAX_PATH_LENGTH,
        description=f"The node kinds along the path, in order (1..{MAX_PATH_LENGTH}), e.g. ['belief', 'goal', "
        f"'plan']; kinds: {_KINDS}.",
    )
    start_uid: RecordId | None = Field(default=None, description="Start the paths at this node (its kind: kinds[0]).")
    relation: LinkKind | None = Field(default=None, description="Follow only edges of this relation.")
    limit: int = Field(default=100, ge=1, le=MAX_PATHS, description="At most this many paths (1..10000).")


__all__ = [
    "KIND_FIELDS",
    "MAX_PATHS",
    "BdiAddRequest",
    "BdiListRequest",
    "BdiUpdateRequest",
    "GraphLinkRequest",
    "GraphPathRequest",
    "GraphRelationsRequest",
    "LinkKind",
    "NodeFields",
    "Status",
    "node_fields",
]
