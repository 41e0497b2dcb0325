"""What an import or export of a workspace did, per agent and record kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field

from kg.models import Model
from kg.models.base import new_list

#: Record kinds in the order files are read and written.
KINDS = ("agent", "fact", "memory", "belief", "desire", "goal", "intention", "plan", "plan_step", "relation",
         "rule", "case")  # fmt: skip
#: ``progress(stage, done, total)``: called as agents are read, checked and written.
Progress = Callable[[str, int, int], None]


class KindCounts(Model):
    """Records of one kind: exported, or created / updated / unchanged / skipped / refused by an import."""

    exported: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    refused: int = 0


class Skipped(Model):
    """A record an import left out, and why (skipped: kept as stored; refused: not the agent's to write)."""

    kind: str
    uid: str
    where: str
    reason: str


class AgentReport(Model):
    """One agent's records."""

    agent_id: str
    counts: dict[str, KindCounts] = Field(default_factory=dict)
    skipped: list[Skipped] = Field(default_factory=new_list)
    refused: list[Skipped] = Field(default_factory=new_list)
    files: list[str] = Field(default_factory=new_list)
    warnings: list[str] = Field(default_factory=new_list)

    def count(self, kind: str, status: str, n: int = 1) -> None:
        """Add ``n`` to one counter."""
        counts = self.counts.setdefault(kind, KindCounts())
        setattr(counts, status, getattr(counts, status) + n)


class WorkspaceReport(Model):
    """An import or export of the OpenClaw-MABOS layout at ``path``."""

    direction: Literal["import", "export"]
    path: str
    dry_run: bool = False
    agents: list[AgentReport] = Field(default_factory=new_list)
    ignored: list[str] = Field(default_factory=new_list)

    @property
    def totals(self) -> dict[str, KindCounts]:
        """Counts summed over the agents, by kind."""
        totals: dict[str, KindCounts] = {}
        for agent in self.agents:
            for kind, counts in agent.counts.items():
                total = totals.setdefault(kind, KindCounts())
                for name in KindCounts.model_fields:
                    setattr(total, name, getattr(total, name) + getattr(counts, name))
        return {kind: totals[kind] for kind in KINDS if kind in totals}
