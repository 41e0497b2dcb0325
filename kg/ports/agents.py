"""Ports of agents and scope grants."""

from __future__ import annotations

import builtins
from typing import Protocol

from kg.models import (
    Agent,
    Grant,
)


class AgentStore(Protocol):
    """Agents."""

    def create(self, agent: Agent) -> Agent:
        """Store a new agent; :class:`~kg.errors.ConflictError` if the id is taken."""
        ...

    def get(self, agent_id: str) -> Agent:
        """The agent with this id, or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(self) -> builtins.list[Agent]:
        """Every agent, ordered by id."""
        ...

    def exists(self, agent_id: str) -> bool:
        """Whether the agent exists."""
        ...


class ScopeStore(Protocol):
    """Grants of scopes to agents."""

    def grant(self, grant: Grant) -> Grant:
        """Record a grant (idempotent)."""
        ...

    def revoke(self, agent_id: str, scope: str, *, revoked_by: str) -> bool:
        """Remove a grant; whether one existed."""
        ...

    def grants(self, agent_id: str) -> builtins.list[Grant]:
        """Grants held by an agent, ordered by scope."""
        ...
