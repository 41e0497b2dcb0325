"""Memory items, memory queries and context checkpoints."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import (
    Field,
)

from kg.models.base import (
    MAX_CONTENT,
    MAX_LIST,
    MAX_TAGS,
    AgentId,
    Model,
    OptionalLabel,
    Record,
    RecordId,
    Scope,
    Tag,
    Text,
    Unit,
    UtcDatetime,
    new_list,
)


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


class MemoryItem(Record):
    """One remembered item in the working, short-term or long-term store."""

    content: Text
    type: MemoryType = MemoryType.OBSERVATION
    store: MemoryStoreKind = MemoryStoreKind.SHORT_TERM
    importance: Unit = 0.5
    confidence: Unit = 1.0
    source: OptionalLabel = "agent"
    tags: list[Tag] = Field(default_factory=new_list, max_length=MAX_TAGS)
    accessed_at: UtcDatetime | None = None
    access_count: int = Field(default=0, ge=0)
    derived_from: list[RecordId] = Field(default_factory=new_list, max_length=MAX_LIST)
    tier: Tier = Tier.WORKING
    expires_at: UtcDatetime | None = None
    archived_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None


class MemoryQuery(Model):
    """Filters over memory items (the text of a search is passed separately)."""

    scopes: list[Scope] = Field(min_length=1)
    agent_id: AgentId | None = None
    types: list[MemoryType] = Field(default_factory=new_list)
    stores: list[MemoryStoreKind] = Field(default_factory=new_list)
    tags: list[Tag] = Field(default_factory=new_list, max_length=MAX_TAGS)
    min_importance: Unit = 0.0
    created_after: UtcDatetime | None = None
    valid_at: UtcDatetime | None = None  # existed then and not yet archived (archived items included)
    include_archived: bool = False
    only_archived: bool = False
    order: Literal["created", "importance"] = "created"  # importance: most important, then newest
    limit: int = Field(default=1_000, ge=1, le=1_000_000)


class Checkpoint(Record):
    """A snapshot of an agent's working context."""

    context: Text
    decisions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=new_list, max_length=MAX_LIST
    )
    findings: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(default_factory=new_list, max_length=MAX_LIST)
    next_steps: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=new_list, max_length=MAX_LIST
    )
    open_questions: list[Annotated[str, Field(max_length=MAX_CONTENT)]] = Field(
        default_factory=new_list, max_length=MAX_LIST
    )
