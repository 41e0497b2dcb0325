"""Agent service: create and list agents; each gets ``agents/<id>/`` in the workspace.

:class:`AgentAddRequest` is ``agent add``'s request (issue 34: a use case's parameters are declared once): the
service takes it, and ``mabos agent add`` generates its ``AGENT_ID`` argument and options from it."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from pydantic import Field

from kg.clock import Clock
from kg.ids import new_id
from kg.models import Agent, agent_scope, parse
from kg.models.agents import CommitmentStrategy
from kg.models.base import AgentId, OptionalLabel
from kg.models.request import Request, requested
from kg.ports import GraphStore


class AgentAddRequest(Request):
    """Create an agent: its id, and how it is shown and behaves."""

    agent_id: AgentId = Field(
        description="The new agent's id: lowercase letters, digits, '-' and '_' (it names a directory)."
    )
    name: OptionalLabel | None = Field(default=None, description="Display name (default: the id).")
    role: OptionalLabel | None = Field(default=None, description="Role, e.g. seller.")
    department: OptionalLabel | None = Field(default=None, description="Department, e.g. sales.")
    commitment_strategy: CommitmentStrategy | None = Field(
        default=None, description="How firmly the agent holds its intentions (default open-minded)."
    )


class AgentService:
    """Agents of a workspace."""

    def __init__(self, store: GraphStore, clock: Clock, agents_dir: Path | None) -> None:
        self.store = store
        self.clock = clock
        self.agents_dir = agents_dir

    def add(self, request: AgentAddRequest | str, **fields: Any) -> Agent:
        """Create an agent (its name defaults to its id) and its directory: an :class:`AgentAddRequest`, or the
        agent's id with the request's other fields as keywords."""
        request = requested(AgentAddRequest, request, fields, first="agent_id")
        now = self.clock.now()
        given = request.model_dump(exclude_none=True, exclude={"name"})
        agent = parse(
            Agent,
            {
                "uid": new_id("agent"),
                "scope": agent_scope(request.agent_id),
                "name": request.name or request.agent_id,
                "created_at": now,
                "updated_at": now,
                **given,
            },
        )
        self.store.agents.create(agent)
        if self.agents_dir is not None:
            (self.agents_dir / agent.agent_id / "memory").mkdir(parents=True, exist_ok=True)
        return agent

    def get(self, agent_id: str) -> Agent:
        """One agent."""
        return self.store.agents.get(agent_id)

    def list(self) -> builtins.list[Agent]:
        """Every agent."""
        return self.store.agents.list()
