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
(listed in ``ignored``) nor written through (listed in ``foreign``).
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, get_args

from kg.clock import Clock
from kg.errors import InputError
from kg.memory import files
from kg.models import Model, UtcDatetime, agent_scope

HierarchyScope = Literal["week", "month", "quarter", "all"]
Level = Literal["daily", "weekly", "monthly", "quarterly"]
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
SNIPPET_CHARS = 160
MAX_LIMIT = 1000

LABEL_RE: dict[Level, re.Pattern[str]] = {
    "daily": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "weekly": re.compile(r"^\d{4}-W\d{2}$"),
    "monthly": re.compile(r"^\d{4}-\d{2}$"),
    "quarterly": re.compile(r"^\d{4}-Q[1-4]$"),
}
HEADER_RE = re.compile(
    r"^<!-- mabos-summary (?P<format>\S+) (?P<level>\w+) (?P<label>\S+) sources=sha256:(?P<hash>[0-9a-f]{64}) -->$"
)
_TITLE_RE = re.compile(r"^# Daily log \d{4}-\d{2}-\d{2}\s*$")
_HEADING_RE = re.compile(r"^#{1,6}\s+(.*)$")
_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_WORD_RE = re.compile(r"\w+")
_STOPWORD_TEXT = (
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is "
    "it its just more most no not of on or our out over she so some such than that the their them then there these "
    "they this those to too under up was we were what when where which while who why will with would you your "
    "about after again also because before being both down during each few further here itself only other own same "
    "should through until very"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


# ---------------------------------------------------------------------------------- daily logs


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One entry of a daily log: a structured entry, or a paragraph, heading or bullet of free text."""

    day: date
    line: int  # 1-based line of the entry's first line in its daily log
    text: str
    type: str = "note"
    time: str | None = None
    uid: str | None = None
    importance: float | None = None
    tags: tuple[str, ...] = ()


def parse_daily_log(text: str, day: date) -> list[LogEntry]:
    """The entries of a daily log; free text before (or instead of) structured entries counts as notes."""
    lines = _normalize(text).split("\n")
    headers = [(i, m) for i, line in enumerate(lines) if (m := files.DAILY_ENTRY_RE.match(line))]
    entries = _notes(lines, 0, headers[0][0] if headers else len(lines), day)
    for n, (i, match) in enumerate(headers):
        end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
        tags, text = files.entry_content(lines[i + 1 : end])
        entries.append(LogEntry(day=day, line=i + 1, text=text, type=match["type"],
                                time=match["time"], uid=match["uid"], importance=_float(match["importance"]),
                                tags=tags))  # fmt: skip
    return entries


def _notes(lines: list[str], start: int, end: int, day: date) -> list[LogEntry]:
    """Free text as notes: a heading, a bullet item or a paragraph is one note."""
    notes: list[LogEntry] = []
    block: list[str] = []
    first = start

    def close() -> None:
        if block:
            notes.append(LogEntry(day=day, line=first + 1, text=" ".join(block)))
            block.clear()

    for i in range(start, end):
        line = lines[i].strip()
        skip = not line or line.startswith("<!--") or _TITLE_RE.match(line)
        heading = _HEADING_RE.match(line)
        if skip or heading or _BULLET_RE.match(line):
            close()  # a blank line, a heading or a bullet ends the note before it
        if skip:
            continue
        if not block:
            first = i
        block.append(heading[1].strip() if heading else _BULLET_RE.sub("", line))
        if heading:
            close()
    close()
    return [note for note in notes if note.text]


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _float(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def words(text: str) -> list[str]:
    """Lowercased words of ``text`` (letters, digits and ``_``), in order."""
    return _WORD_RE.findall(text.lower())


def summary_terms(text: str) -> list[str]:
    """Words worth counting in a summary: longer than 3, not a stop word, not a number or an id."""
    return [w for w in words(text) if 3 < len(w) < 24 and w not in STOPWORDS and not w.isdigit()]


class DailyLog:
    """A daily log on disk: its bytes' hash now, its entries and counts when first asked for."""

    def __init__(self, day: date, path: Path) -> None:
        self.day = day
        self.path = path
        self._data = path.read_bytes()
        self.hash = hashlib.sha256(self._data).hexdigest()

    @cached_property
    def entries(self) -> list[LogEntry]:
        """Parsed entries (invalid UTF-8 is replaced, never fatal)."""
        return parse_daily_log(self._data.decode("utf-8", errors="replace"), self.day)

    @cached_property
    def stats(self) -> Stats:
        """Counts of this day's entries."""
        return Stats.of(self.entries)


@dataclass
class Stats:
    """Entry counts by type, tag and term: merged day by day into weeks, months and quarters."""

    types: Counter[str] = field(default_factory=Counter)
    tags: Counter[str] = field(default_factory=Counter)
    terms: Counter[str] = field(default_factory=Counter)
    entries: int = 0

    @classmethod
    def of(cls, entries: Iterable[LogEntry]) -> Stats:
        """Counts of some entries."""
        stats = cls()
        for entry in entries:
            stats.entries += 1
            stats.types[entry.type] += 1
            stats.tags.update(entry.tags)
            stats.terms.update(summary_terms(entry.text))
        return stats

    def add(self, other: Stats) -> Stats:
        """Add ``other``'s counts to these (in place) and return self."""
        self.types.update(other.types)
        self.tags.update(other.tags)
        self.terms.update(other.terms)
        self.entries += other.entries
        return self


def summary_scope(agent_id: str) -> str:
    """The scope of an agent's summaries: its own (only it reads its folder; see the module docstring)."""
    return agent_scope(agent_id)


def _agent_root(workspace: Path, agent_id: str) -> Path | None:
    """The agent's folder with symlinks resolved; None when it is missing or is itself a link elsewhere."""
    folder = files.agent_dir(workspace, agent_id)
    try:
        real = folder.resolve(strict=True)
        expected = workspace.resolve(strict=True) / "agents" / agent_id
    except OSError:
        return None
    return real if real == expected else None


def _inside(path: Path, root: Path | None) -> bool:
    """Whether ``path`` (symlinks resolved, the file itself need not exist) lies inside ``root``."""
    return root is not None and path.resolve().is_relative_to(root)


def _own_daily_logs(workspace: Path, agent_id: str) -> tuple[dict[date, Path], list[str]]:
    """The agent's daily logs that really lie in its folder, and the names of those that point elsewhere."""
    root = _agent_root(workspace, agent_id)
    found, outside = {}, []
    for day, path in files.daily_logs(workspace, agent_id).items():
        if _inside(path, root):
            found[day] = path
        else:
            outside.append(f"{path.name} (a link outside the agent's folder)")
    return found, outside


def load_daily_logs(workspace: Path, agent_id: str) -> tuple[list[DailyLog], list[str]]:
    """The agent's daily logs by date, and the names that look like daily logs but are no real date or lie
    outside the agent's folder."""
    directory = files.memory_dir(workspace, agent_id)
    found, outside = _own_daily_logs(workspace, agent_id)
    ignored = []
    if directory.is_dir():
        valid = {path.name for path in files.daily_logs(workspace, agent_id).values()}
        ignored = sorted(
            p.name for p in directory.iterdir() if files.DAILY_LOG_RE.match(p.name) and p.name not in valid
        )
    return [DailyLog(day, path) for day, path in found.items()], sorted(ignored + outside)


# ------------------------------------------------------------------------------------- periods


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


# ------------------------------------------------------------------------------------- rendering


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


# ------------------------------------------------------------------------------------- building


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


# ------------------------------------------------------------------------------------- search


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


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a query (stop words dropped unless nothing else is left)."""
    terms = list(dict.fromkeys(_stem(w) for w in words(query)))
    content = [t for t in terms if t not in STOPWORDS]
    return content or terms


def search_hierarchy(workspace: Path, agent_id: str, query: str, *, level: Level = "weekly",
                     limit: int = 10) -> list[HierarchyHit]:  # fmt: skip
    """Lexical search over one level of the hierarchy, ranked by query-term overlap.

    At the ``daily`` level each entry (the text under one heading) is scored; at the summary levels
    each summary file. Ranking: the share of the query's terms present, then their occurrences, then
    file and line order. Each hit cites the file and the span of the lines that matched. A missing
    directory gives no hits.
    """
    if level not in get_args(Level):
        raise InputError("level", f"must be one of daily, weekly, monthly, quarterly; got {level!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    terms = query_terms(query)
    if not terms:
        raise InputError("query", "must contain at least one word")
    hits: list[HierarchyHit] = []
    for label, path in _level_files(workspace, agent_id, level):
        text = _normalize(path.read_text(encoding="utf-8", errors="replace"))
        for match in _match_sections(text.split("\n"), terms, by_heading=level == "daily"):
            hits.append(HierarchyHit(level=level, period=label, path=path, **match))
    hits.sort(key=lambda hit: (-hit.score, -hit.term_hits, str(hit.path), hit.line_start))
    return hits[:limit]


def _level_files(workspace: Path, agent_id: str, level: Level) -> list[tuple[str, Path]]:
    if level == "daily":
        return [(day.isoformat(), path) for day, path in _own_daily_logs(workspace, agent_id)[0].items()]
    directory = files.memory_dir(workspace, agent_id) / level
    if not directory.is_dir():
        return []
    root = _agent_root(workspace, agent_id)
    found = [(p.stem, p) for p in directory.iterdir()
             if p.suffix == ".md" and LABEL_RE[level].match(p.stem) and _inside(p, root)]  # fmt: skip
    return sorted(found)


def _match_sections(lines: list[str], terms: list[str], *, by_heading: bool) -> list[dict[str, Any]]:
    """Score each section by the query terms it contains.

    A daily log's sections run from one heading to the next (one entry each); a summary is scored as
    a whole, so that terms found in different parts of it (top entries, top terms) add up.
    """
    bounds = [i for i, line in enumerate(lines) if i and line.startswith("#")] if by_heading else []
    starts, ends = [0, *bounds], [*bounds, len(lines)]
    return [m for start, end in zip(starts, ends, strict=True) if (m := _match(lines, start, end, terms))]


def _match(lines: list[str], start: int, end: int, terms: list[str]) -> dict[str, Any] | None:
    wanted = set(terms)
    hit_lines: list[int] = []
    seen: Counter[str] = Counter()
    for i in range(start, end):
        found = [t for t in map(_stem, words(lines[i])) if t in wanted] if not lines[i].startswith("<!--") else []
        if found:
            hit_lines.append(i)
            seen.update(found)
    if not hit_lines:
        return None
    matched = [t for t in terms if t in seen]
    return {
        "line_start": hit_lines[0] + 1,
        "line_end": hit_lines[-1] + 1,
        "score": round(len(matched) / len(terms), 4),
        "term_hits": sum(seen.values()),
        "matched": matched,
        "snippet": " | ".join(lines[i].strip() for i in hit_lines[:3])[: SNIPPET_CHARS * 2],
    }
