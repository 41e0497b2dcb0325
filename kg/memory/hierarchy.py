"""Time hierarchy (R2): weekly, monthly and quarterly summaries of an agent's daily logs.

Summaries live next to the daily logs (``agents/<id>/memory/``)::

    weekly/YYYY-Www.md      ISO week, Monday to Sunday, from the daily logs of that week
    monthly/YYYY-MM.md      from the daily logs of the month, broken down by the weeks it touches
                            (a week that spans two months contributes its days to each)
    quarterly/YYYY-Qq.md    from the monthly summaries of the quarter

They are extractive and deterministic (no LLM): counts of entries per type, the most important
entries (importance parsed from the entry headers of :func:`kg.memory.files.daily_log_entry`; text
without that shape counts as ``note`` entries), the most frequent tags and terms, and the sources.
The first line of a summary records a hash of its sources::

    <!-- mabos-summary v1 weekly 2025-W01 sources=sha256:<hex> -->

A weekly or monthly hash covers the bytes of its daily logs, a quarterly hash the hashes of its
months, so a rebuild rewrites only summaries that are missing or stale, and touching one daily log
rebuilds exactly its week, month and quarter. Summaries are never deleted, and a summary file without
that first line (written by hand or by another tool) is left as it is and reported as ``foreign``.

**Scope.** A summary is derived from its agent's daily logs, which hold that agent's own writes (in any
scope it could write), and it lives in the agent's folder, which only that agent reads: its scope is
``agent:<id>`` (:func:`summary_scope`), the narrowest there is, so it never spreads an entry wider than the
log it came from (:mod:`kg.scopes`). Only files whose real path lies inside the agent's own folder count:
a daily log or summary folder that is a symlink to elsewhere (another agent's folder) is neither read
(listed in ``ignored``) nor written through (listed in ``foreign``)."""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Literal

from kg.clock import Clock
from kg.errors import InputError
from kg.memory import files
from kg.memory.hierarchy_logs import (
    HEADER_RE,
    SNIPPET_CHARS,
    DailyLog,
    LogEntry,
    Stats,
    _agent_root,
    _inside,
    load_daily_logs,
    parse_daily_log,
    summary_scope,
)
from kg.memory.hierarchy_models import MAX_LIMIT, HierarchyHit, HierarchyResult, HierarchyScope, Level
from kg.memory.hierarchy_search import query_terms, search_hierarchy

SummaryLevel = Literal["weekly", "monthly", "quarterly"]


FORMAT = "v1"


LEVELS_OF_SCOPE: dict[str, tuple[SummaryLevel, ...]] = {
    "week": ("weekly",),
    "month": ("monthly",),
    "quarter": ("quarterly",),
    "all": ("weekly", "monthly", "quarterly"),
}


TOP_ENTRIES: dict[SummaryLevel, int] = {"weekly": 10, "monthly": 15, "quarterly": 20}


TOP_TERMS = 10


@dataclass(frozen=True, order=True)
class Period:
    """A week, month or quarter: its label (``2025-W01``, ``2025-01``, ``2025-Q1``) and its days."""

    start: date
    end: date
    level: SummaryLevel
    label: str

    def path(self, memory: Path) -> Path:
        """Where its summary lives under ``memory/``."""
        return memory / self.level / f"{self.label}.md"

    def following(self) -> Period:
        """The next period of the same level."""
        return period_of(self.level, self.end + timedelta(days=1))


def period_of(level: SummaryLevel, day: date) -> Period:
    """The week (ISO), month or quarter that contains ``day``."""
    if level == "weekly":
        year, week, weekday = day.isocalendar()
        start = day - timedelta(days=weekday - 1)
        return Period(start, start + timedelta(days=6), level, f"{year}-W{week:02d}")
    if level == "monthly":
        start = day.replace(day=1)
        return Period(start, _next_month(start) - timedelta(days=1), level, f"{day:%Y-%m}")
    quarter = (day.month - 1) // 3 + 1
    start = date(day.year, 3 * quarter - 2, 1)
    return Period(start, _next_month(_next_month(_next_month(start))) - timedelta(days=1), level,
                  f"{day.year}-Q{quarter}")  # fmt: skip


def _next_month(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1)


def group_by(level: SummaryLevel, logs: Iterable[DailyLog]) -> dict[Period, list[DailyLog]]:
    """Daily logs grouped by the period of ``level`` that contains them, in date order."""
    groups: dict[Period, list[DailyLog]] = {}
    for log in sorted(logs, key=lambda item: item.day):
        groups.setdefault(period_of(level, log.day), []).append(log)
    return groups


def sources_hash(level: SummaryLevel, logs: list[DailyLog]) -> str:
    """The hash a summary records: daily logs' bytes (weeks, months), or its months' hashes (quarters)."""
    digest = hashlib.sha256(f"mabos-summary {FORMAT} {level}\n".encode())
    if level == "quarterly":
        for month, members in group_by("monthly", logs).items():
            digest.update(f"{month.label}\0{sources_hash('monthly', members)}\n".encode())
    else:
        for log in logs:
            digest.update(f"{log.path.name}\0{log.hash}\n".encode())
    return digest.hexdigest()


def recorded_header(path: Path) -> tuple[str, str] | None:
    """(format, sources hash) recorded in an existing summary; None if missing or not written by mabos."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            first = handle.readline().rstrip("\r\n")
    except (FileNotFoundError, IsADirectoryError):
        return None
    match = HEADER_RE.match(first)
    return (match["format"], match["hash"]) if match else None


def _entry_line(entry: LogEntry) -> str:
    text = " ".join(entry.text.split())
    if len(text) > SNIPPET_CHARS:
        text = text[: SNIPPET_CHARS - 3].rstrip() + "..."
    head = " ".join(p for p in (entry.day.isoformat(), entry.time, entry.type) if p)
    if entry.importance is not None:
        head += f" ({entry.importance:.2f})"
    if entry.uid:
        head += f" {entry.uid}"
    return f"- {head}: {text} ({entry.day.isoformat()}.md:{entry.line})"


def _importance_key(entry: LogEntry) -> tuple[float, int, int]:
    # Most important first; among equals the earlier entry (date, then line) wins.
    return (entry.importance if entry.importance is not None else -1.0, -entry.day.toordinal(), -entry.line)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _counts(counter: Counter[str], limit: int | None = None) -> list[str]:
    ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [f"- {name}: {n}" for name, n in ranked] or ["_None._"]


def render_summary(period: Period, logs: list[DailyLog], agent_id: str, digest: str) -> str:
    """The Markdown summary of ``period`` from its daily logs (deterministic: same logs, same bytes)."""
    stats = Stats()
    for log in logs:
        stats.add(log.stats)
    entries = (entry for log in logs for entry in log.entries)
    top = heapq.nlargest(TOP_ENTRIES[period.level], entries, key=_importance_key)
    out = [
        f"<!-- mabos-summary {FORMAT} {period.level} {period.label} sources=sha256:{digest} -->",
        f"# {period.level.capitalize()} summary {period.label}",
        "",
        f"Agent {agent_id}, {period.start.isoformat()} to {period.end.isoformat()}: "
        f"{_count(stats.entries, 'entry', 'entries')} in {_count(len(logs), 'daily log')}.",
        "",
        "## Entries by type",
        "",
        *_counts(stats.types),
        "",
        "## Most important",
        "",
        *([_entry_line(entry) for entry in top] or ["_None._"]),
        "",
        "## Top tags",
        "",
        *_counts(stats.tags, TOP_TERMS),
        "",
        "## Top terms",
        "",
        *_counts(stats.terms, TOP_TERMS),
        "",
        *_breakdown(period, logs),
        "## Sources",
        "",
        *_sources(period, logs),
    ]
    return "\n".join(out) + "\n"


def _breakdown(period: Period, logs: list[DailyLog]) -> list[str]:
    """Monthly: the weeks it touches; quarterly: its months (with links to their summaries)."""
    if period.level == "weekly":
        return []
    part: SummaryLevel = "weekly" if period.level == "monthly" else "monthly"
    lines = [f"## {'Weeks' if part == 'weekly' else 'Months'}", ""]
    for sub, members in group_by(part, logs).items():
        entries = _count(sum(log.stats.entries for log in members), "entry", "entries")
        unit = "month" if period.level == "monthly" else "quarter"
        lines.append(
            f"- [{sub.label}](../{part}/{sub.label}.md): {entries} in {_count(len(members), 'day')} of this {unit}"
        )
    return [*lines, ""]


def _sources(period: Period, logs: list[DailyLog]) -> list[str]:
    if period.level == "quarterly":
        months = group_by("monthly", logs)
        return [f"- ../monthly/{m.label}.md sha256:{sources_hash('monthly', ms)[:12]}" for m, ms in months.items()]
    return [f"- ../{log.path.name} sha256:{log.hash[:12]}" for log in logs]


def build_hierarchy(workspace: Path, agent_id: str, *, scope: HierarchyScope = "all", since: date | None = None,
                    clock: Clock) -> HierarchyResult:  # fmt: skip
    """Write the missing or stale weekly, monthly and/or quarterly summaries of an agent's daily logs.

    Args:
        workspace: The workspace directory.
        agent_id: The agent (validated: it becomes a directory name).
        scope: ``week``, ``month``, ``quarter`` or ``all`` levels.
        since: Only periods that end on or after this date.
        clock: Tells the build time recorded in the result.

    Returns:
        The summaries created, updated and unchanged, the periods skipped for lack of daily logs and
        the ignored file names. A missing memory directory gives an empty result, not an error.
    """
    if scope not in LEVELS_OF_SCOPE:
        raise InputError("scope", f"must be one of week, month, quarter, all; got {scope!r}")
    memory = files.memory_dir(workspace, agent_id)
    logs, ignored = load_daily_logs(workspace, agent_id)
    root = _agent_root(workspace, agent_id)
    created: list[Path] = []
    updated: list[Path] = []
    unchanged: list[Path] = []
    skipped: list[str] = []
    foreign: list[Path] = []
    for level in LEVELS_OF_SCOPE[scope]:
        groups = group_by(level, logs)
        for period in _span(level, groups, since):
            members = groups.get(period)
            if members is None:
                skipped.append(period.label)
                continue
            path, digest = period.path(memory), sources_hash(level, members)
            previous = recorded_header(path)
            if not _inside(path, root) or (previous is None and path.exists()):
                foreign.append(path)
            elif previous is not None and previous[1] == digest and previous[0] == FORMAT:
                unchanged.append(path)
            else:
                files.atomic_write(path, render_summary(period, members, agent_id, digest))
                (created if previous is None else updated).append(path)
    return HierarchyResult(agent_id=agent_id, scope=scope, since=since, built_at=clock.now(),
                           daily_logs=len(logs), created=created, updated=updated, unchanged=unchanged,
                           skipped=skipped, foreign=foreign, ignored=ignored)  # fmt: skip


def _span(level: SummaryLevel, groups: dict[Period, list[DailyLog]], since: date | None) -> list[Period]:
    """Every period from the first to the last with a daily log, ending on or after ``since``."""
    if not groups:
        return []
    periods, current, last = [], min(groups), max(groups)
    while current <= last:
        if since is None or current.end >= since:
            periods.append(current)
        current = current.following()
    return periods


__all__ = [
    "FORMAT",
    "HEADER_RE",
    "MAX_LIMIT",
    "HierarchyHit",
    "HierarchyResult",
    "HierarchyScope",
    "Level",
    "build_hierarchy",
    "parse_daily_log",
    "period_of",
    "query_terms",
    "search_hierarchy",
    "summary_scope",
]
