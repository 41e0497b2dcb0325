"""The time hierarchy's vocabulary and results: its levels and scopes, the search limit, a build's result and a
search hit.

Apart from the hierarchy's code (:mod:`kg.memory.hierarchy`, :mod:`kg.memory.hierarchy_logs`,
:mod:`kg.memory.hierarchy_search`, which re-export these names) because the memory requests and tools name them
in their types: ``mabos memory recall`` loads neither the log parser nor its patterns (issue 33).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

from kg.models import Model, UtcDatetime

Level = Literal["daily", "weekly", "monthly", "quarterly"]
HierarchyScope = Literal["week", "month", "quarter", "all"]
MAX_LIMIT = 1000


class HierarchyHit(Model):
    """A section of a daily log or summary that matches a query, with the lines that matched."""

    level: Level
    period: str
    path: Path
    line_start: int
    line_end: int
    score: float  # share of the query's terms the section contains, 0..1
    term_hits: int  # occurrences of query terms in the section (the tie-breaker)
    matched: list[str]
    snippet: str


class HierarchyResult(Model):
    """What :func:`build_hierarchy` did: summaries created, updated (stale), left unchanged, skipped."""

    agent_id: str
    scope: HierarchyScope
    since: date | None
    built_at: UtcDatetime
    daily_logs: int
    created: list[Path]
    updated: list[Path]
    unchanged: list[Path]
    skipped: list[str]  # periods without a daily log inside the span of the logs (skipped, no error)
    foreign: list[Path]  # summary files without a mabos-summary header: written by someone else, kept
    ignored: list[str]  # files named like daily logs whose date does not exist (e.g. 2024-02-30.md)

    @property
    def written(self) -> list[Path]:
        """Summaries written by this build (created or updated)."""
        return [*self.created, *self.updated]


__all__ = ["MAX_LIMIT", "HierarchyHit", "HierarchyResult", "HierarchyScope", "Level"]
