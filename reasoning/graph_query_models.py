"""Parameters and results of the cross-agent graph queries (``mabos graph query NAME``).

Parameter models are each query's request: they validate caller input (parse them with :func:`kg.models.parse`
for one-line errors naming the field), and ``mabos graph query NAME`` generates its options from them (their
descriptions are the options' help); result models are what every backend's answer is turned into, so the JSON is the
same whichever backend answered. The queries themselves are in :mod:`reasoning.graph_queries`.
"""

from __future__ import annotations

from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, Field, field_validator

from kg.ids import PREFIXES, is_id
from kg.models import Model, RecordId, Unit, UtcDatetime

#: Node kinds a path may start at, and kinds it may end at.
PATH_START_KINDS = ("belief", "desire", "goal", "plan")
PATH_END_KINDS = ("goal", "plan", "plan_step")
MAX_PATH_DEPTH = 8
LineageRelation = Literal["root", "ancestor", "descendant"]
Limit = Annotated[int, Field(ge=1, le=10_000)]
LIMIT = "At most this many results."
_KIND_ALIASES = {"step": "plan_step", "plan-step": "plan_step"}
_KIND_OF_PREFIX = {prefix: kind for kind, prefix in PREFIXES.items()}


def _endpoint(value: str, allowed: tuple[str, ...]) -> str:
    """``kind``, ``uid`` or ``kind:uid`` -> ``kind`` or ``kind:uid`` (kind checked against the uid's prefix)."""
    text = value.strip()
    kind, _, uid = text.partition(":") if ":" in text else ("", "", text)
    if not uid:
        raise ValueError(f"must be a uid, kind:uid or one of {', '.join(allowed)}; got {value[:80]!r}")
    if not kind and not is_id(uid):
        kind, uid = uid, ""
    kind = _KIND_ALIASES.get(kind, kind)
    if uid:
        if not is_id(uid):
            raise ValueError(f"{uid[:80]!r} is not a record uid such as B-01J...")
        uid_kind = _KIND_OF_PREFIX.get(uid.split("-", 1)[0], "")
        if kind and kind != uid_kind:
            raise ValueError(f"{uid} is a {uid_kind or 'record'} uid, not a {kind}")
        kind = uid_kind
    if kind not in allowed:
        raise ValueError(f"must be a uid, kind:uid or one of {', '.join(allowed)}; got {value[:80]!r}")
    return f"{kind}:{uid}" if uid else kind


# ------------------------------------------------------------------------------------------ parameters


class GoalsBehindParams(Model):
    """``goals-behind``: open goals whose progress lags the time elapsed towards their deadline."""

    tolerance: Unit = Field(default=0.0, description="Gap (0..1) to exceed.")
    at: UtcDatetime | None = Field(default=None, description="Judge at this moment (default: now).")
    limit: Limit = Field(default=100, description=LIMIT)


class PathsParams(Model):
    """``paths``: belief -> goal -> plan chains (and desire -> goal, goal -> subgoal, plan -> step)."""

    start: str = Field(default="belief", description="Start kind, uid or kind:uid.")
    to: str = Field(default="plan", description="End kind, uid or kind:uid.")
    max_depth: int = Field(default=4, ge=1, le=MAX_PATH_DEPTH, description="Most relations on a path (1..8).")
    limit: Limit = Field(default=100, description=LIMIT)

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        return _endpoint(value, PATH_START_KINDS)

    @field_validator("to")
    @classmethod
    def _to(cls, value: str) -> str:
        return _endpoint(value, PATH_END_KINDS)


class BeliefConflictsParams(Model):
    """``belief-conflicts``: active beliefs about one subject that say different things."""

    min_certainty: Unit = Field(default=0.6, description="Certainty both must exceed.")
    limit: Limit = Field(default=100, description=LIMIT)


class LineageParams(Model):
    """``lineage``: what a fact or memory item was derived from, and what was derived from it."""

    uid: RecordId
    direction: Literal["ancestors", "descendants", "both"] = "both"
    max_depth: int = Field(default=10, ge=1, le=50, description="Most derivation steps (1..50).")


class BeliefHoldersParams(Model):
    """``belief-holders``: which agents hold an active belief about a subject."""

    subject: Annotated[str, Field(min_length=1, max_length=1024)]
    match: Literal["subject", "contains"] = "subject"
    min_certainty: Unit = Field(default=0.0, description="Least certainty counted.")

    @field_validator("subject")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty or only whitespace")
        return value


class BlockedStepsParams(Model):
    """``blocked-steps``: open plan steps waiting on dependencies that are not done."""

    limit: Limit = Field(default=100, description=LIMIT)


# ------------------------------------------------------------------------------------------ results


class NodeRef(Model):
    """A BDI node in a result."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    content: str
    status: str


class GoalBehind(Model):
    """A goal behind schedule: ``expected_progress`` is the share of its created-to-deadline time elapsed."""

    uid: str
    agent_id: str
    scope: str
    content: str
    status: str
    priority: int | None
    progress: float
    expected_progress: float
    gap: float
    created_at: UtcDatetime
    deadline: UtcDatetime
    overdue: bool


class PathResult(Model):
    """One directed path: ``relations[i]`` links ``nodes[i]`` to ``nodes[i + 1]``."""

    nodes: list[NodeRef]
    relations: list[str]


class BeliefRef(Model):
    """An active belief in a result."""

    uid: str
    agent_id: str
    scope: str
    content: str
    certainty: float | None


class AffectedGoal(Model):
    """A goal supported by conflicting beliefs (``supported_by``: their uids)."""

    uid: str
    agent_id: str
    scope: str
    content: str
    status: str
    supported_by: list[str]


class BeliefConflictResult(Model):
    """Beliefs about one subject that disagree, and the goals they support."""

    subject: str
    pairs: int
    beliefs: list[BeliefRef]
    goals: list[AffectedGoal]


class LineageNode(Model):
    """A fact or memory item on a lineage; ``parents``/``children`` list the uids shown in the same result."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    label: str
    created_at: UtcDatetime
    retracted: bool
    relation: LineageRelation
    depth: int
    parents: list[str]
    children: list[str]


class BeliefHolder(Model):
    """An agent holding active beliefs about the subject."""

    agent_id: str
    beliefs: list[BeliefRef]


class BlockedStep(Model):
    """An open step with unfinished dependencies.

    ``waiting_on``: its direct dependencies that are not done or skipped; ``root_blockers``: the unfinished
    steps at the bottom of those chains (nothing unfinished below them); ``in_cycle``: its dependencies
    lead back to it, so it can never start as things stand.
    """

    uid: str
    agent_id: str
    scope: str
    content: str
    status: str
    plans: list[str]
    waiting_on: list[NodeRef]
    root_blockers: list[str]
    in_cycle: bool


T = TypeVar("T", bound=BaseModel)


class GraphQueryResult(BaseModel, Generic[T]):
    """The answer to one graph query: what was asked, who answered (``source``) and the results."""

    query: str
    source: str = Field(description="The backend that answered: local (embedded store) or typedb.")
    agent: str | None = Field(description="Whose visibility applied; null for every agent (operator view).")
    scopes: list[str] | None = Field(description="Scopes read; null for every scope.")
    at: UtcDatetime
    parameters: dict[str, object]
    count: int
    truncated: bool = False
    results: list[T]
