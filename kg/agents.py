"""Agent service: create and list agents; each gets ``agents/<id>/`` in the workspace."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from kg.clock import Clock
from kg.ids import new_id
from kg.models import Agent, agent_scope, parse
from kg.ports import GraphStore


class AgentService:
    """Agents of a workspace."""

    def __init__(self, store: GraphStore, clock: Clock, agents_dir: Path | None) -> None:
        self.store = store
        self.clock = clock
        self.agents_dir = agents_dir

    def add(self, agent_id: str, *, name: str | None = None, **fields: Any) -> Agent:
        """Create an agent (its name defaults to its id) and its directory."""
        now = self.clock.now()
        agent = parse(
            Agent,
            {
                "uid": new_id("agent"),
                "agent_id": agent_id,
                "scope": agent_scope(agent_id) if isinstance(agent_id, str) else None,
                "name": name or agent_id,
                "created_at": now,
                "updated_at": now,
                **{k: v for k, v in fields.items() if v is not None},
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
