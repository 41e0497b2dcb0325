"""Agents and scope grants."""

from enum import StrEnum

from kg.models.base import AgentId, Model, Name, OptionalLabel, Record, Scope, UtcDatetime


class CommitmentStrategy(StrEnum):
    """How firmly an agent holds on to its intentions (design §5, R5)."""

    SINGLE_MINDED = "single-minded"
    OPEN_MINDED = "open-minded"
    CAUTIOUS = "cautious"


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
