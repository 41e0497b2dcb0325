"""The BDI graph: node kinds, relation kinds with their roles, nodes, relations and paths."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from kg.errors import InputError, NotFoundError
from kg.models.base import (
    MAX_NAME,
    Model,
    Priority,
    Record,
    RecordId,
    Text,
    Unit,
    UtcDatetime,
    describe_validation_error,
)
from kg.models.memory import MemoryType


class HierarchyLevel(StrEnum):
    """Level of a goal (or plan) in the goal hierarchy."""

    STRATEGIC = "strategic"
    TACTICAL = "tactical"
    OPERATIONAL = "operational"


class NodeKind(StrEnum):
    """Kinds of nodes of the BDI graph."""

    BELIEF = "belief"
    DESIRE = "desire"
    GOAL = "goal"
    INTENTION = "intention"
    PLAN = "plan"
    PLAN_STEP = "plan_step"


class RelationKind(StrEnum):
    """Typed graph edges (design §2)."""

    AGENT_OWNS = "agent-owns"
    BELIEF_SUPPORTS_GOAL = "belief-supports-goal"
    DESIRE_MOTIVATES_GOAL = "desire-motivates-goal"
    GOAL_REQUIRES_PLAN = "goal-requires-plan"
    GOAL_DECOMPOSITION = "goal-decomposition"
    PLAN_CONTAINS_STEP = "plan-contains-step"
    STEP_DEPENDS_ON = "step-depends-on"
    AGENT_HAS_SKILL = "agent-has-skill"
    DECISION_RESOLVES_GOAL = "decision-resolves-goal"
    DERIVED_FROM = "derived-from"
    CASE_USED_PLAN = "case-used-plan"


class RelationSpec(BaseModel):
    """Roles of a relation and which node kinds may play them.

    Node kinds are ``agent``, the :class:`NodeKind` values, ``fact``, ``case`` and
    ``memory:<type>`` (a memory item of that type); ``memory`` matches every memory type.
    """

    model_config = ConfigDict(frozen=True)

    source_role: str
    source_kinds: tuple[str, ...]
    target_role: str
    target_kinds: tuple[str, ...]


RELATION_SPECS: dict[RelationKind, RelationSpec] = {
    RelationKind.AGENT_OWNS: RelationSpec(
        source_role="owner",
        source_kinds=("agent",),
        target_role="owned",
        target_kinds=(*(k.value for k in NodeKind), "fact", "memory", "case"),
    ),
    RelationKind.BELIEF_SUPPORTS_GOAL: RelationSpec(
        source_role="belief", source_kinds=("belief",), target_role="goal", target_kinds=("goal",)
    ),
    RelationKind.DESIRE_MOTIVATES_GOAL: RelationSpec(
        source_role="desire", source_kinds=("desire",), target_role="goal", target_kinds=("goal",)
    ),
    RelationKind.GOAL_REQUIRES_PLAN: RelationSpec(
        source_role="goal", source_kinds=("goal",), target_role="plan", target_kinds=("plan",)
    ),
    RelationKind.GOAL_DECOMPOSITION: RelationSpec(
        source_role="parent", source_kinds=("goal",), target_role="subgoal", target_kinds=("goal",)
    ),
    RelationKind.PLAN_CONTAINS_STEP: RelationSpec(
        source_role="plan", source_kinds=("plan",), target_role="step", target_kinds=("plan_step",)
    ),
    RelationKind.STEP_DEPENDS_ON: RelationSpec(
        source_role="dependent",
        source_kinds=("plan_step",),
        target_role="dependency",
        target_kinds=("plan_step",),
    ),
    RelationKind.AGENT_HAS_SKILL: RelationSpec(
        source_role="agent", source_kinds=("agent",), target_role="skill", target_kinds=("memory:skill",)
    ),
    RelationKind.DECISION_RESOLVES_GOAL: RelationSpec(
        source_role="decision",
        source_kinds=("memory:decision",),
        target_role="goal",
        target_kinds=("goal",),
    ),
    RelationKind.DERIVED_FROM: RelationSpec(
        source_role="derived",
        source_kinds=("fact", "memory"),
        target_role="source",
        target_kinds=("fact", "memory"),
    ),
    RelationKind.CASE_USED_PLAN: RelationSpec(
        source_role="case", source_kinds=("case",), target_role="plan", target_kinds=("plan",)
    ),
}


#: Every kind a graph node can have (``memory`` alone matches every memory type).
GRAPH_NODE_KINDS: tuple[str, ...] = (
    "agent",
    *(k.value for k in NodeKind),
    "fact",
    "case",
    "memory",
    *(f"memory:{t.value}" for t in MemoryType),
)


def kind_matches(node_kind: str, allowed: tuple[str, ...]) -> bool:
    """Whether a node kind (``goal``, ``memory:skill`` ...) is one of ``allowed``."""
    return node_kind in allowed or node_kind.split(":", 1)[0] in allowed


class BDINode(Record):
    """Common shape of beliefs, desires, goals, intentions, plans and plan steps.

    ``content`` is the node's text (a belief's statement, a goal's or plan's name). Optional
    numeric fields are ``None`` where a kind does not use them.
    """

    kind: NodeKind
    content: Text
    status: Annotated[str, Field(min_length=1, max_length=32)]
    certainty: Unit | None = None
    priority: Priority | None = None
    urgency: Unit | None = None
    progress: Unit | None = None
    deadline: UtcDatetime | None = None
    hierarchy_level: HierarchyLevel | None = None
    sequence: int | None = Field(default=None, ge=0)
    updated_at: UtcDatetime

    @model_validator(mode="after")
    def _status_known(self) -> BDINode:
        allowed = NODE_STATUSES[self.kind]
        if self.status not in allowed:
            raise ValueError(
                f"status: a {self.kind.value} status must be one of {', '.join(allowed)}; got {self.status!r}"
            )
        return self


#: Allowed statuses per node kind; the first is the default.
NODE_STATUSES: dict[NodeKind, tuple[str, ...]] = {
    NodeKind.BELIEF: ("active", "revised", "withdrawn"),
    NodeKind.DESIRE: ("active", "satisfied", "dropped"),
    NodeKind.GOAL: ("pending", "active", "achieved", "failed", "abandoned", "suspended"),
    NodeKind.INTENTION: ("active", "suspended", "completed", "dropped"),
    NodeKind.PLAN: ("draft", "active", "completed", "failed", "abandoned"),
    NodeKind.PLAN_STEP: ("pending", "in_progress", "done", "failed", "skipped"),
}


class Belief(BDINode):
    """Something the agent holds true, with a certainty."""

    kind: Literal[NodeKind.BELIEF] = NodeKind.BELIEF
    status: str = "active"
    certainty: Unit | None = 1.0


class _Wanted(BDINode):
    """What desires and intentions share: they start active, with a middling priority."""

    status: str = "active"
    priority: Priority | None = 5


class Desire(_Wanted):
    """Something the agent wants."""

    kind: Literal[NodeKind.DESIRE] = NodeKind.DESIRE


class Goal(BDINode):
    """A concrete objective, placed in the strategic/tactical/operational hierarchy."""

    kind: Literal[NodeKind.GOAL] = NodeKind.GOAL
    status: str = "pending"
    priority: Priority | None = 5
    progress: Unit | None = 0.0
    hierarchy_level: HierarchyLevel | None = HierarchyLevel.TACTICAL


class Intention(_Wanted):
    """A goal the agent has committed to pursue."""

    kind: Literal[NodeKind.INTENTION] = NodeKind.INTENTION


class Plan(BDINode):
    """A way to reach a goal: an ordered set of steps."""

    kind: Literal[NodeKind.PLAN] = NodeKind.PLAN
    status: str = "draft"


class PlanStep(BDINode):
    """One step of a plan; ``sequence`` orders steps inside their plan."""

    kind: Literal[NodeKind.PLAN_STEP] = NodeKind.PLAN_STEP
    status: str = "pending"
    sequence: int | None = Field(default=0, ge=0)


NODE_MODELS: dict[NodeKind, type[BDINode]] = {
    NodeKind.BELIEF: Belief,
    NodeKind.DESIRE: Desire,
    NodeKind.GOAL: Goal,
    NodeKind.INTENTION: Intention,
    NodeKind.PLAN: Plan,
    NodeKind.PLAN_STEP: PlanStep,
}


#: Fields of a node that ``update`` may change.
NODE_MUTABLE_FIELDS = frozenset(
    {
        "content",
        "status",
        "certainty",
        "priority",
        "urgency",
        "progress",
        "deadline",
        "hierarchy_level",
        "sequence",
    }
)


def check_node_changes(changes: Mapping[str, Any]) -> None:
    """InputError naming the first field of ``changes`` that a node update may not change."""
    unknown = sorted(set(changes) - NODE_MUTABLE_FIELDS)
    if unknown:
        raise InputError(unknown[0], f"cannot be changed (changeable: {', '.join(sorted(NODE_MUTABLE_FIELDS))})")


def changed_node(current: BDINode, changes: Mapping[str, Any], now: datetime) -> BDINode:
    """``current`` with ``changes`` applied and ``updated_at`` set to ``now``, validated as its kind's model."""
    try:
        return type(current).model_validate({**current.model_dump(), **changes, "updated_at": now})
    except ValidationError as exc:
        raise describe_validation_error(exc) from None


class Relation(Record):
    """A typed edge between two records (see :data:`RELATION_SPECS` for the roles)."""

    kind: RelationKind
    source_uid: RecordId
    target_uid: RecordId


def link_ends(relation: Relation) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """``(uid, role, allowed kinds)`` of both ends of a new edge, once the edge itself is allowed.

    Raises:
        InputError: ``agent-owns`` (implied by ``agent_id``, never stored) or an edge from a node to itself.
    """
    spec = RELATION_SPECS[relation.kind]
    if relation.kind is RelationKind.AGENT_OWNS:
        raise InputError("kind", "agent-owns is implied by each record's agent_id and is not stored")
    if relation.source_uid == relation.target_uid:
        raise InputError("target", "a relation cannot link a node to itself")
    return (
        (relation.source_uid, spec.source_role, spec.source_kinds),
        (relation.target_uid, spec.target_role, spec.target_kinds),
    )


def check_link_end(relation: Relation, uid: str, role: str, allowed: tuple[str, ...], kind: str | None) -> None:
    """NotFoundError when the end ``uid`` is no record (``kind`` None); InputError when it cannot play ``role``."""
    if kind is None:
        raise NotFoundError(f"{role}: no record {uid!r}")
    if not kind_matches(kind, allowed):
        raise InputError(role, f"{relation.kind.value} needs a {' or '.join(allowed)} here, got a {kind}")


#: The most node kinds one path query may name.
MAX_PATH_LENGTH = 8


def check_path_kinds(kinds: Sequence[str]) -> None:
    """InputError unless ``kinds`` names 1 to :data:`MAX_PATH_LENGTH` non-empty node kinds."""
    if not 1 <= len(kinds) <= MAX_PATH_LENGTH:
        raise InputError("kinds", f"a path has 1 to {MAX_PATH_LENGTH} node kinds")
    for kind in kinds:
        if not kind or len(kind) > MAX_NAME:
            raise InputError("kinds", "node kinds must be non-empty names")


class GraphPath(Model):
    """One path found by a path query: alternating node uids and relation kinds."""

    nodes: list[str]
    kinds: list[str]
    relations: list[str]
    labels: list[str]
