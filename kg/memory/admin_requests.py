"""What the memory's upkeep and file tools take: consolidation, a checkpoint, the time hierarchy; each declared once.

Apart from :mod:`kg.memory.requests` (store, recall, listing) so that a recall's request imports neither these
models nor the hierarchy's types: ``mabos memory recall`` builds only what it uses (issue 33). The
``memory_consolidate``, ``memory_checkpoint``, ``memory_build_hierarchy`` and ``memory_hierarchy_search`` tools
(:mod:`cli.tools.memory_admin`) are these models plus ``agent_id``; their commands generate their options from them
(docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from datetime import date

from pydantic import Field

from kg.limits import MAX_QUERY_TEXT
from kg.memory.hierarchy_models import MAX_LIMIT as MAX_HIERARCHY_LIMIT
from kg.memory.hierarchy_models import HierarchyScope, Level
from kg.models.base import new_list
from kg.models.request import Request


class ConsolidateRequest(Request):
    """Which memories consolidation considers, and whether it only reports."""

    dry_run: bool = Field(default=False, description="Only report what would happen; change nothing.")
    summarize: bool = Field(
        default=True, description="Merge memories with similar tags into one; false promotes each one as it is."
    )
    min_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Candidates are at least this important (default 0.6)."
    )
    min_access_count: int | None = Field(
        default=None, ge=0, description="Short-term candidates were recalled at least this often (default 2)."
    )


class CheckpointRequest(Request):
    """A checkpoint of the agent's working context to write, or ``show_latest`` to read the newest one back."""

    context: str | None = Field(
        default=None, description="What the agent is working on (required when writing a checkpoint)."
    )
    decisions: list[str] = Field(default_factory=new_list, description="Active decisions.")
    findings: list[str] = Field(default_factory=new_list, description="Key findings.")
    next_steps: list[str] = Field(default_factory=new_list, description="Next steps.")
    open_questions: list[str] = Field(default_factory=new_list, description="Open questions.")
    show_latest: bool = Field(
        default=False, description="Return the newest checkpoint instead of writing one (with nothing else given)."
    )


class BuildHierarchyRequest(Request):
    """Which summaries of the time hierarchy to build."""

    scope: HierarchyScope = Field(default="all", description="Which summaries to build: week, month, quarter or all.")
    since: date | None = Field(default=None, description="Only periods ending on or after this date (YYYY-MM-DD).")


class HierarchySearchRequest(Request):
    """What to look for in one level of the time hierarchy."""

    query: str = Field(
        max_length=MAX_QUERY_TEXT,
        description="Words to look for (lexical: query-term overlap; at most 100,000 characters).",
    )
    level: Level = Field(
        default="weekly",
        description="daily searches the entries of the daily logs; weekly, monthly and quarterly the summaries.",
    )
    limit: int = Field(
        default=10, ge=1, le=MAX_HIERARCHY_LIMIT, description=f"At most this many hits (1..{MAX_HIERARCHY_LIMIT})."
    )


__all__ = [
    "MAX_HIERARCHY_LIMIT",
    "BuildHierarchyRequest",
    "CheckpointRequest",
    "ConsolidateRequest",
    "HierarchySearchRequest",
]
