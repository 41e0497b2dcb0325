"""Pydantic v2 models for every record of design.md §2, shared by every backend.

Conventions:

* every record has ``uid`` (time-ordered, prefixed: ``F-...``), ``agent_id``, ``scope`` and
  ``created_at``;
* timestamps are aware UTC datetimes; a naive input is read as UTC, other offsets are converted,
  and JSON output always uses ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (fixed width, so text order is time
  order);
* unknown fields are refused (``extra="forbid"``) so a typo never silently drops data.

Use :func:`parse` to build a model from untrusted input: it raises :class:`kg.errors.InputError`
naming the field and the rule instead of pydantic's multi-line report.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)

from kg.errors import InputError
from kg.ids import PREFIXES, new_id

# --------------------------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------------------------

# \Z, not $: "$" also matches before a trailing newline, which would let "abc\n" through.
AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\Z")
SCOPE_NAME_RE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"
SCOPE_RE = re.compile(rf"^(global|agent:[a-z0-9][a-z0-9_-]{{0,63}}|(project|user|custom):{SCOPE_NAME_RE})\Z")

MAX_CONTENT = 65_536  # characters of free text (memory content, beliefs, goals ...)
MAX_TERM = 1_024  # characters of a fact subject or predicate
MAX_OBJECT = 8_192  # characters of a fact object
MAX_NAME = 256
MAX_TAGS = 64
MAX_LIST = 1_000


def format_ts(value: datetime) -> str:
    """Render a datetime (naive means UTC) as fixed-width ISO-8601 UTC (``...ffffffZ``)."""
    utc = to_utc(value)
    # %Y is not zero-padded below year 1000 on glibc: pad it so the text stays fixed-width and parseable.
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")


def to_utc(value: datetime) -> datetime:
    """Read naive datetimes as UTC and convert aware ones to UTC."""
    if value.tzinfo is UTC:
        return value
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00: a ValueError so that parse() reports the field
        raise ValueError("must lie between 0001-01-01 and 9999-12-31 once converted to UTC") from None


def _parse_ts(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("z", "Z")):
            text = text[:-1] + "+00:00"
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"must be an ISO-8601 timestamp such as 2024-05-01T12:00:00Z, got {value!r}") from None
    return value


UtcDatetime = Annotated[
    datetime,
    BeforeValidator(_parse_ts),
    AfterValidator(to_utc),
    PlainSerializer(format_ts, return_type=str, when_used="json"),
]


def _check_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _check_agent_id(value: str) -> str:
    if not AGENT_ID_RE.match(value):
        raise ValueError(
            "must match [a-z0-9][a-z0-9_-]{0,63} (lowercase letters, digits, '-' and '_'; "
            f"it becomes a directory name), got {value[:80]!r}"
        )
    return value


def _check_scope(value: str) -> str:
    if not SCOPE_RE.match(value):
        raise ValueError(
            "must be 'global', 'agent:<agent-id>', 'project:<name>', 'user:<name>' or "
            f"'custom:<name>', got {value[:80]!r}"
        )
    return value


def _check_finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


Text = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT), AfterValidator(_check_text)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME), AfterValidator(_check_text)]
OptionalLabel = Annotated[str, Field(max_length=MAX_NAME)]
Term = Annotated[str, Field(min_length=1, max_length=MAX_TERM), AfterValidator(_check_text)]
ObjectText = Annotated[str, Field(min_length=1, max_length=MAX_OBJECT), AfterValidator(_check_text)]
AgentId = Annotated[str, AfterValidator(_check_agent_id)]
Scope = Annotated[str, AfterValidator(_check_scope)]
Unit = Annotated[float, Field(ge=0.0, le=1.0), AfterValidator(_check_finite)]
Priority = Annotated[int, Field(ge=1, le=10)]
Tag = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[^\s,]+$")]
RecordId = Annotated[str, Field(pattern=r"^[A-Z]{1,3}-[0-9A-HJKMNP-TV-Z]{26}$")]


def agent_scope(agent_id: str) -> str:
    """The private scope of an agent."""
    return f"agent:{agent_id}"


# --------------------------------------------------------------------------------------------
# Enums
# --------------------------------------------------------------------------------------------


class CommitmentStrategy(StrEnum):
    """How firmly an agent holds on to its intentions (design §5, R5)."""

    SINGLE_MINDED = "single-minded"
    OPEN_MINDED = "open-minded"
    CAUTIOUS = "cautious"


class MemoryType(StrEnum):
    """Kinds of memory items."""

    EVENT = "event"
    DECISION = "decision"
    OUTCOME = "outcome"
    LESSON = "lesson"
    FACT = "fact"
    OBSERVATION = "observation"
    PREFERENCE = "preference"
    GOAL = "goal"
    SKILL = "skill"
    IDENTITY = "identity"


class MemoryStoreKind(StrEnum):
    """The three memory stores."""

    WORKING = "working"
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"


class Tier(StrEnum):
    """Decay tier of a memory item."""

    CORE = "core"
    WORKING = "working"
    PERIPHERAL = "peripheral"


class ObjectKind(StrEnum):
    """Whether a fact's object names an entity or is a literal value."""

    ENTITY = "entity"
    LITERAL = "literal"


class RuleType(StrEnum):
    """Rule kinds."""

    INFERENCE = "inference"
    CONSTRAINT = "constraint"
    POLICY = "policy"


class Operator(StrEnum):
    """Comparison operators of rule conditions."""

    EQ = "eq"
    NE = "ne"
    GT = "gt"
    LT = "lt"
    GTE = "gte"
    LTE = "lte"
    CONTAINS = "contains"


class Severity(StrEnum):
    """Severity of a constraint violation."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"


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


# --------------------------------------------------------------------------------------------
# Base
# --------------------------------------------------------------------------------------------


class Model(BaseModel):
    """Base of every mabos model: unknown fields refused, assignments validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False)


class Record(Model):
    """Fields every stored record has."""

    uid: RecordId
    agent_id: AgentId
    scope: Scope
    created_at: UtcDatetime

    @model_validator(mode="before")
    @classmethod
    def _default_scope(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("scope") and isinstance(data.get("agent_id"), str):
            data = {**data, "scope": agent_scope(data["agent_id"])}
        return data


# --------------------------------------------------------------------------------------------
# Agents and scopes
# --------------------------------------------------------------------------------------------


class Agent(Record):
    """An agent; its id names its private scope and its directory under ``agents/``."""

    name: Name
    role: OptionalLabel = ""
    department: OptionalLabel = ""
    commitment_strategy: CommitmentStrategy = CommitmentStrategy.OPEN_MINDED
    updated_at: UtcDatetime


class Grant(Model):
    """Permission for an agent to read and write a scope beyond its own and ``global``."""

    agent_id: AgentId
    scope: Scope
    granted_by: Name
    created_at: UtcDatetime


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


class MemoryItem(Record):
    """One remembered item in the working, short-term or long-term store."""

    content: Text
    type: MemoryType = MemoryType.OBSERVATION
    store: MemoryStoreKind = MemoryStoreKind.SHORT_TERM
    importance: Unit = 0.5
    confidence: Unit = 1.0
    source: OptionalLabel = "agent"
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    accessed_at: UtcDatetime | None = None
    access_count: int = Field(default=0, ge=0)
    derived_from: list[RecordId] = Field(default_factory=list, max_length=MAX_LIST)
    tier: Tier = Tier.WORKING
    expires_at: UtcDatetime | None = None
    archived_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None


class MemoryQuery(Model):
    """Filters over memory items (the text of a search is passed separately)."""

    scopes: list[Scope] = Field(min_length=1)
    agent_id: AgentId | None = None
    types: list[MemoryType] = Field(default_factory=list)
    stores: list[MemoryStoreKind] = Field(default_factory=list)
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    min_importance: Unit = 0.0
    created_after: UtcDatetime | None = None
    valid_at: UtcDatetime | None = None  # existed then and not yet archived (archived items included)
    include_archived: bool = False
    only_archived: bool = False
    order: Literal["created", "importance"] = "created"  # importance: most important, then newest
    limit: int = Field(default=1_000, ge=1, le=1_000_000)


# --------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------

_NUMBERISH = re.compile(r"^[-+$€£¥]?\s*[\d.,]+\s*(%|[kKmMbB]n?)?$")
_ENTITYISH = re.compile(r"^[A-Za-z_][\w.:/-]*$")


def infer_object_kind(obj: str) -> ObjectKind:
    """Guess whether an object is an entity (an identifier such as ``acme``) or a literal."""
    if _ENTITYISH.match(obj) and not _NUMBERISH.match(obj) and obj.lower() not in {"true", "false"}:
        return ObjectKind.ENTITY
    return ObjectKind.LITERAL


class FactInput(Model):
    """What a caller gives to assert a fact; the store fills in uid and times."""

    agent_id: AgentId
    subject: Term
    predicate: Term
    object: ObjectText
    object_kind: ObjectKind | None = None
    scope: Scope | None = None
    confidence: Unit = 1.0
    source: OptionalLabel = "agent"
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    derived_from: list[RecordId] = Field(default_factory=list, max_length=MAX_LIST)
    rule_id: RecordId | None = None

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        # Filled before validation (not by assignment afterwards, which would validate twice).
        if isinstance(data, dict):
            if data.get("object_kind") is None and isinstance(data.get("object"), str):
                data = {**data, "object_kind": infer_object_kind(data["object"])}
            if data.get("scope") is None and isinstance(data.get("agent_id"), str):
                data = {**data, "scope": agent_scope(data["agent_id"])}
        return data

    @model_validator(mode="after")
    def _check(self) -> FactInput:
        if self.valid_from and self.valid_until and self.valid_until <= self.valid_from:
            raise ValueError("valid_until: must be later than valid_from")
        return self


class Fact(Record):
    """A (subject, predicate, object) statement with world-time validity and system-time history."""

    subject: Term
    predicate: Term
    object: ObjectText
    object_kind: ObjectKind
    confidence: Unit
    source: OptionalLabel
    valid_from: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    updated_at: UtcDatetime
    updated_by: AgentId
    retracted_at: UtcDatetime | None = None
    retracted_by: AgentId | None = None
    derived_from: list[RecordId] = Field(default_factory=list)
    rule_id: RecordId | None = None

    @property
    def derived(self) -> bool:
        """Whether the fact was produced by inference rather than asserted."""
        return bool(self.rule_id or self.derived_from)


class AssertStatus(StrEnum):
    """What an assert did."""

    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


class AssertOutcome(NamedTuple):
    """Result of one assert in a batch (a tuple: bulk loads make hundreds of thousands)."""

    uid: str
    status: AssertStatus


class LiveTriple(NamedTuple):
    """A live fact reduced to what reasoning over the whole store needs (a tuple: there may be millions)."""

    uid: str
    subject: str
    predicate: str
    object: str
    confidence: float
    rule_id: str | None
    scope: str
    object_kind: str  # "entity" or "literal"


def pattern_parts(pattern: str) -> tuple[str, ...]:
    """Literal segments of a query pattern, split at its wildcards.

    ``*`` matches any run of characters; ``\\*`` is a literal star and ``\\\\`` a literal backslash.
    ``"acme"`` -> ``("acme",)`` (exact), ``"ac*e"`` -> ``("ac", "e")``, ``"*"`` -> ``("", "")`` (anything).
    """
    parts, current, chars = [], [], iter(pattern)
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            current.append(nxt if nxt in ("*", "\\") else ch + nxt)
        elif ch == "*":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return tuple(parts)


class FactQuery(Model):
    """A fact pattern query: ``*`` in subject/predicate/object is a wildcard (``\\*`` a literal star)."""

    scopes: list[Scope] = Field(min_length=1)
    subject: Annotated[str, Field(max_length=MAX_TERM)] = "*"
    predicate: Annotated[str, Field(max_length=MAX_TERM)] = "*"
    object: Annotated[str, Field(max_length=MAX_OBJECT)] = "*"
    min_confidence: Unit = 0.0
    valid_at: UtcDatetime | None = None
    as_of: UtcDatetime | None = None
    include_derived: bool = True
    only_derived: bool = False
    include_retracted: bool = False
    limit: int = Field(default=100, ge=1, le=100_000)


# --------------------------------------------------------------------------------------------
# Rules and cases
# --------------------------------------------------------------------------------------------

_VAR = re.compile(r"^\?[A-Za-z_]\w*$")


def _is_var(term: str) -> bool:
    return bool(_VAR.match(term))


class RuleCondition(Model):
    """One condition: a triple pattern (``?var`` subject/object) and an operator on the object."""

    subject: Term
    predicate: Term
    object: ObjectText
    operator: Operator = Operator.EQ


class RuleConclusion(Model):
    """The triple an inference rule concludes."""

    subject: Term
    predicate: Term
    object: ObjectText


class Rule(Record):
    """An inference, constraint or policy rule over the fact store."""

    name: Name
    description: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    type: RuleType = RuleType.INFERENCE
    conditions: list[RuleCondition] = Field(min_length=1, max_length=64)
    conclusion: RuleConclusion | None = None
    violation_message: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    severity: Severity = Severity.WARNING
    action: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    escalate: bool = False
    confidence_factor: Unit = 0.9
    enabled: bool = True
    domain: OptionalLabel = "general"

    @model_validator(mode="after")
    def _conclusion_bound(self) -> Rule:
        if self.type is RuleType.INFERENCE and self.conclusion is None:
            raise ValueError("conclusion: an inference rule needs a conclusion")
        if self.conclusion is not None:
            bound = {t for c in self.conditions for t in (c.subject, c.predicate, c.object) if _is_var(t)}
            for term in (self.conclusion.subject, self.conclusion.predicate, self.conclusion.object):
                if _is_var(term) and term not in bound:
                    raise ValueError(f"conclusion: variable {term} is not bound by any condition")
        return self


class CaseSituation(Model):
    """The situation of a case: what was believed and wanted, and the context."""

    beliefs: list[Annotated[str, Field(max_length=MAX_NAME * 4)]] = Field(default_factory=list, max_length=MAX_LIST)
    desires: list[Annotated[str, Field(max_length=MAX_NAME * 4)]] = Field(default_factory=list, max_length=MAX_LIST)
    context: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class CaseSolution(Model):
    """What was done."""

    plan_id: RecordId | None = None
    actions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=list, max_length=MAX_LIST)


class CaseOutcome(Model):
    """How it went."""

    success: bool
    metrics: dict[str, float] = Field(default_factory=dict)
    lessons: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=list, max_length=MAX_LIST)

    @field_validator("metrics")
    @classmethod
    def _finite_metrics(cls, value: dict[str, float]) -> dict[str, float]:
        for key, number in value.items():
            if not math.isfinite(number):
                raise ValueError(f"metric {key!r} must be a finite number")
        return value


class Case(Record):
    """A past case for case-based reasoning."""

    situation: CaseSituation
    solution: CaseSolution
    outcome: CaseOutcome


# --------------------------------------------------------------------------------------------
# BDI graph
# --------------------------------------------------------------------------------------------


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


class Desire(BDINode):
    """Something the agent wants."""

    kind: Literal[NodeKind.DESIRE] = NodeKind.DESIRE
    status: str = "active"
    priority: Priority | None = 5


class Goal(BDINode):
    """A concrete objective, placed in the strategic/tactical/operational hierarchy."""

    kind: Literal[NodeKind.GOAL] = NodeKind.GOAL
    status: str = "pending"
    priority: Priority | None = 5
    progress: Unit | None = 0.0
    hierarchy_level: HierarchyLevel | None = HierarchyLevel.TACTICAL


class Intention(BDINode):
    """A goal the agent has committed to pursue."""

    kind: Literal[NodeKind.INTENTION] = NodeKind.INTENTION
    status: str = "active"
    priority: Priority | None = 5


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


class Relation(Record):
    """A typed edge between two records (see :data:`RELATION_SPECS` for the roles)."""

    kind: RelationKind
    source_uid: RecordId
    target_uid: RecordId


class GraphPath(Model):
    """One path found by a path query: alternating node uids and relation kinds."""

    nodes: list[str]
    kinds: list[str]
    relations: list[str]
    labels: list[str]


# --------------------------------------------------------------------------------------------
# Checkpoints, ontology proposals, outbox
# --------------------------------------------------------------------------------------------


class Checkpoint(Record):
    """A snapshot of an agent's working context."""

    context: Text
    decisions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=list, max_length=MAX_LIST)
    findings: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=list, max_length=MAX_LIST)
    next_steps: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=list, max_length=MAX_LIST)
    open_questions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=list, max_length=MAX_LIST
    )


class ProposalNodeType(StrEnum):
    """What an ontology proposal adds."""

    CLASS = "class"
    OBJECT_PROPERTY = "object_property"
    DATATYPE_PROPERTY = "datatype_property"


class ProposalStatus(StrEnum):
    """Life cycle of an ontology proposal."""

    PENDING = "pending"
    VALIDATED = "validated"
    INVALID = "invalid"
    APPROVED_MERGED = "approved-merged"
    REJECTED = "rejected"


class ValidationCheck(Model):
    """One check of a proposal validation."""

    check: Name
    ok: bool
    message: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class ProposalStatusChange(Model):
    """One step of a proposal's life: the status it reached, who moved it there, when, and why."""

    status: ProposalStatus
    by: AgentId
    at: UtcDatetime
    note: Annotated[str, Field(max_length=MAX_CONTENT)] = ""


class OntologyProposal(Record):
    """A concept or property an agent proposes for the shared ontology.

    ``node_id`` is the local name (``DropshipFulfillment``); the domain file gives the prefix.
    ``parent_class``, ``domain_class`` and ``range`` are CURIEs (``biz:Party``, ``xsd:string``), full IRIs or
    local names of the proposal's own domain. ``history`` holds every status change, oldest first; data
    written before it existed reads back with one ``pending`` entry (the proposer at ``created_at``).
    """

    domain: Name
    node_type: ProposalNodeType
    node_id: Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")]
    label: Name
    parent_class: OptionalLabel | None = None
    domain_class: OptionalLabel | None = None
    range: OptionalLabel | None = None
    sbvr_definition: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    sbvr_synonyms: list[Name] = Field(default_factory=list, max_length=MAX_TAGS)
    rationale: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    multi_valued: bool = False  # datatype properties only: several values per owner (TypeQL @card(0..))
    proposed_by: AgentId
    status: ProposalStatus = ProposalStatus.PENDING
    validation_result: list[ValidationCheck] = Field(default_factory=list)
    history: list[ProposalStatusChange] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _default_history(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("history") and data.get("proposed_by") and data.get("created_at"):
            first = {"status": ProposalStatus.PENDING, "by": data["proposed_by"], "at": data["created_at"]}
            data = {**data, "history": [first]}
        return data

    @property
    def updated_at(self) -> datetime:
        """When the status last changed (``created_at`` without history)."""
        return self.history[-1].at if self.history else self.created_at


class OutboxEvent(Model):
    """A change waiting to be replayed to the shared graph (written with the change itself)."""

    seq: int
    aggregate: str
    op: str
    record_uid: str
    agent_id: str | None
    scope: str | None
    payload: dict[str, Any]
    created_at: UtcDatetime
    acked_at: UtcDatetime | None = None


# --------------------------------------------------------------------------------------------
# Parsing untrusted input
# --------------------------------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def _loc_part(part: str | int) -> str:
    # a dict key of the input can be any text: quote it when it is not a plain name, so the message stays one line
    text = str(part)
    return text if re.fullmatch(r"[\w\-]{1,64}", text) else repr(text[:40])


def describe_validation_error(exc: ValidationError) -> InputError:
    """Turn pydantic's report into one :class:`InputError` naming the first bad field."""
    err = exc.errors(include_url=False)[0]
    field = ".".join(_loc_part(p) for p in err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not field:  # a model-level rule: its message starts with "<field>: "
        named = re.match(r"^([A-Za-z_][\w.]*): (.*)$", msg, re.S)
        field, msg = (named.group(1), named.group(2)) if named else (exc.title, msg)
    value = err.get("input")
    if err["type"] != "value_error" and isinstance(value, str | int | float) and not isinstance(value, bool):
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg = f"{msg} (got {shown})"
    return InputError(field, msg)


def parse(model: type[M], data: dict[str, Any]) -> M:
    """Validate ``data`` into ``model`` or raise :class:`InputError` naming the field and the rule."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise describe_validation_error(exc) from None


def new_record_id(kind: str) -> str:
    """A fresh id for a record kind (see :data:`kg.ids.PREFIXES`)."""
    if kind not in PREFIXES:
        raise InputError("kind", f"unknown record kind {kind!r}")
    return new_id(kind)
