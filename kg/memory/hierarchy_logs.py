"""Daily logs as the time hierarchy reads them: entries parsed back from their headers (quoted content lines
stay content), words and terms, per-day statistics, and the logs that really lie in the agent's folder."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from pathlib import Path

from kg.memory import files
from kg.memory.hierarchy_models import Level
from kg.models import agent_scope
from kg.text.stopwords import LOG_STOPWORDS
from kg.text.words import WORD_CHARS_RE

SNIPPET_CHARS = 160


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
    return WORD_CHARS_RE.findall(text.lower())


def summary_terms(text: str) -> list[str]:
    """Words worth counting in a summary: longer than 3, not a stop word, not a number or an id."""
    return [w for w in words(text) if 3 < len(w) < 24 and w not in LOG_STOPWORDS and not w.isdigit()]


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
