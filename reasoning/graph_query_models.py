"""Parameters and results of the cross-agent graph queries (``mabos graph query NAME``).

Parameter models are each query's request: they validate caller input (parse them with :func:`kg.models.parse`
for one-line errors naming the field), and ``mabos graph query NAME`` generates its options from them (their
descriptions are the options' help); result models are what every backend's answer is turned into, so the JSON is the
same whichever backend answered. The queries themselves are in :mod:`reasoning.graph_queries`.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Annotated, Any, Generic, Literal, TypeVar, Union, get_args, get_origin

import annotated_types
import pydantic.dataclasses
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    PlainSerializer,
    PlainValidator,
    WrapSerializer,
    WrapValidator,
    field_validator,
)
from pydantic.fields import FieldInfo

from kg.ids import PREFIXES, is_id
from kg.models import Model, RecordId, Unit, UtcDatetime
from kg.ports.graph_queries import GraphNodeHead

#: Node kinds a path may start at, and kinds it may end at.
PATH_START_KINDS = ("belief", "desire", "goal", "plan")
PATH_END_KINDS = ("goal", "plan", "plan_step")
MAX_PATH_DEPTH = 8
LineageRelation = Literal["root", "ancestor", "descendant"]
Limit = Annotated[int, Field(ge=1, le=10_000)]
LIMIT = "At most this many results."
_KIND_ALIASES = {"step": "plan_step", "plan-step": "plan_step"}
_KIND_OF_PREFIX = {prefix: kind for kind, prefix in PREFIXES.items()}
#: What a query model's field checks beyond its schema: its model runs them, a flat request of every query does not.
_CHECKS = (AfterValidator, BeforeValidator, PlainValidator, WrapValidator, PlainSerializer, WrapSerializer)
_UNIONS = (Union, types.UnionType)


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

    tolerance: Unit = Field(default=0.0, description="Report only goals behind by more than this (0..1).")
    at: UtcDatetime | None = Field(default=None, description="Judge at this ISO-8601 moment (default: now).")
    limit: Limit = Field(default=100, description=LIMIT)


class PathsParams(Model):
    """``paths``: belief/desire -> goal (-> subgoal) -> plan (-> step) chains."""

    start: str = Field(
        default="belief", description="Where paths start: belief, desire, goal, plan, a uid, or kind:uid."
    )
    to: str = Field(default="plan", description="Where paths end: goal, plan, step, a uid, or kind:uid.")
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
    """``belief-conflicts``: beliefs about one subject that disagree, across agents, with the goals they support."""

    min_certainty: Unit = Field(default=0.6, description="Both beliefs more certain than this.")
    limit: Limit = Field(default=100, description=LIMIT)


class LineageParams(Model):
    """``lineage``: what a fact or memory item was derived from, and what was derived from it."""

    uid: RecordId = Field(description="The fact or memory uid.")
    direction: Literal["ancestors", "descendants", "both"] = Field(
        default="both",
        description="ancestors (what it was derived from), descendants (what was derived from it) or both.",
    )
    max_depth: int = Field(default=10, ge=1, le=50, description="Most derivation steps (1..50).")


class BeliefHoldersParams(Model):
    """``belief-holders``: which agents hold an active belief about a subject."""

    subject: Annotated[str, Field(min_length=1, max_length=1024)] = Field(
        description="The subject, e.g. 'acme revenue'."
    )
    match: Literal["subject", "contains"] = Field(
        default="subject",
        description="subject (the belief's derived subject equals it) or contains (the belief's text contains it).",
    )
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


QueryName = Literal["goals-behind", "paths", "belief-conflicts", "lineage", "belief-holders", "blocked-steps"]
#: Each catalogue query's parameter model (:data:`reasoning.graph_queries.CATALOGUE` runs them), in this order.
QUERY_PARAMS: dict[QueryName, type[Model]] = {
    "goals-behind": GoalsBehindParams,
    "paths": PathsParams,
    "belief-conflicts": BeliefConflictsParams,
    "lineage": LineageParams,
    "belief-holders": BeliefHoldersParams,
    "blocked-steps": BlockedStepsParams,
}


def query_names_text() -> str:
    """What each query answers and its parameters, from the models (the description of a ``name`` field)."""
    return " ".join(
        f"{name}: {_summary(model).removeprefix(f'``{name}``: ')} ({', '.join(model.model_fields)})."
        for name, model in QUERY_PARAMS.items()
    )


def any_query_fields() -> dict[str, Any]:
    """The parameters of every query, each once, as the fields of one flat request (``pydantic.create_model``):
    what an agent's ``graph_query`` takes beside the query's name.

    Each field is optional (None: the chosen query's default applies), in the order the catalogue first names it,
    with the type and the bounds its JSON schema shows; a field several queries take has the widest of their
    bounds, and its description says which queries take it, what it means to each, and each one's default. The
    chosen query's model validates its parameters (its own bounds, validators and defaults) when it runs.
    """
    taken: dict[str, list[tuple[str, FieldInfo]]] = {}
    for name, model in QUERY_PARAMS.items():
        for field, info in model.model_fields.items():
            taken.setdefault(field, []).append((name, info))
    return {field: _any_query_field(field, infos) for field, infos in taken.items()}


def _any_query_field(field: str, infos: list[tuple[str, FieldInfo]]) -> tuple[Any, FieldInfo]:
    kinds = {_bare(info.annotation) for _, info in infos}
    if len(kinds) != 1:
        raise TypeError(f"{field}: the graph queries give it different types")
    groups: dict[tuple[str, str], list[str]] = {}
    for name, info in infos:
        groups.setdefault((info.description or "", _default_text(info)), []).append(name)
    text = ". ".join(
        f"{', '.join(names)}: {_with_default(about, default)}" for (about, default), names in groups.items()
    )
    bounds = _widest(field, [[m for m in info.metadata if not isinstance(m, _CHECKS)] for _, info in infos])
    kind: Any = kinds.pop() | None
    if bounds:
        kind = Annotated[(kind, *bounds)]
    return kind, FieldInfo(default=None, description=f"{text}.")


def _bare(annotation: Any) -> Any:
    """``annotation`` without ``None`` and ``Annotated``: ``UtcDatetime | None`` is ``datetime``."""
    members = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) in _UNIONS else []
    if len(members) == 1:
        return _bare(members[0])
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def _default_text(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    default = info.get_default()
    if default is None:
        return ""
    return f"default {default:g}" if isinstance(default, float) else f"default {default}"


def _with_default(about: str, default: str) -> str:
    """``about`` (lowered, without its full stop) and ``default``, in the range that ends it (``(1..8; default 4)``)
    or in parentheses of its own."""
    text = about.removesuffix(".")
    text = text[:1].lower() + text[1:]
    if not default:
        return text
    ranged = text.endswith(")") and ".." in text[text.rfind("(") :]
    return f"{text[:-1]}; {default})" if ranged else f"{text} ({default})"


def _summary(model: type[Model]) -> str:
    return (model.__doc__ or "").strip().splitlines()[0].removesuffix(".")


def _widest(field: str, lists: list[list[Any]]) -> list[Any]:
    """The constraints of a field several queries take: the lowest lower bound, the highest upper bound; any other
    constraint must be the same for each."""
    merged: dict[type, Any] = {}
    for metadata in lists:
        for item in metadata:
            prior = merged.setdefault(type(item), item)
            if prior == item:
                continue
            if isinstance(item, annotated_types.Ge):
                merged[type(item)] = annotated_types.Ge(min(prior.ge, item.ge))
            elif isinstance(item, annotated_types.Le):
                merged[type(item)] = annotated_types.Le(max(prior.le, item.le))
            else:
                raise TypeError(f"{field}: the graph queries constrain it differently ({prior!r}, {item!r})")
    return list(merged.values())


# ------------------------------------------------------------------------------------------ results


@pydantic.dataclasses.dataclass(frozen=True, config=Model.model_config)
class NodeRef(GraphNodeHead):
    """A BDI node in a result."""

    # The port's head as a published result: its fields are declared once, in kg.ports.graph_queries. A dataclass
    # (a Model cannot extend one) with a Model's configuration: it refuses unknown fields, and its JSON schema is the
    # one a Model with these fields would have (title NodeRef, this docstring, the same keys in the same order).

    @classmethod
    def of(cls, row: GraphNodeHead) -> NodeRef:
        """The head of a node row."""
        return cls(**{f.name: getattr(row, f.name) for f in dataclasses.fields(GraphNodeHead)})


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
