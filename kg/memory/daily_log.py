"""Daily logs as derived data: written after each store commits, completed from the store when that failed.

``store_item`` commits the item, then appends its entry to ``agents/<id>/memory/YYYY-MM-DD.md`` (one ``write``
and one ``fsync``), holding the lock of the agent's memory directory across both steps. A process killed in
between leaves an item the store has and the log lacks; :func:`catch_up` (run when a workspace is opened,
and so by every command and the nightly job) finds it and appends it.

The store keeps a high-water mark (``daily_logs``, a memory item position): every item at or below it has its
entry. The catch-up reads the items after the mark, checks each against the uids already in its daily log
(the process may have died after the append but before anything else: an entry is never written twice),
appends the missing ones, then moves the mark to the last item it read. Holding the directory lock while it
checks means no writer is between its commit and its append for that agent at that moment, so a missing
entry is really missing, never about to be written. An open that finds nothing missing does not write the store
for the mark; the process's first write moves it (:func:`settle_with_next_write`), so later opens do not read
the same logs again. Items made by consolidation (``source`` ``consolidation``) have no daily-log entry (they
are listed in ``MEMORY.md``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from kg.errors import logger

if TYPE_CHECKING:  # annotations only: an open that finds nothing to repair loads no memory model
    from kg.models import MemoryItem
    from kg.ports import CommitNotifier, MemoryStore

# kg.memory.files (the logs' paths, entries and locks) is imported where a log is read or written: an open whose
# logs are complete up to the mark reads none (issue 33)


#: The mark's name in the store.
MARK = "daily_logs"
#: Items read per scan step.
CHUNK = 2000
#: Items checked (with nothing to repair) after which an open moves the mark.
SETTLE_AFTER = 1000
#: ``source`` of items that get no daily-log entry.
UNLOGGED_SOURCES = frozenset({"consolidation"})


class Marks(Protocol):
    """The port of high-water marks of derived data (``kg.store.sqlite.marks.SqliteMarks``)."""

    def get(self, name: str) -> int:
        """The mark (0 when never set)."""
        ...

    def advance(self, name: str, position: int) -> int:
        """Move the mark up to ``position`` (never down); the mark afterwards."""
        ...

    def memory_after(self, position: int, limit: int) -> list[tuple[int, str, str, date, str]]:
        """Memory items after ``position`` in insertion order: (position, uid, agent id, day created, source)."""
        ...


class LogPorts(Protocol):
    """The ports a catch-up reads (``ws.ports``): the marks, and the memory store only to append a missing entry
    (so an open that finds nothing missing does not load the memory adapter)."""

    @property
    def memory(self) -> MemoryStore:
        """Memory items."""
        ...

    @property
    def marks(self) -> Marks:
        """High-water marks."""
        ...


def entry_of(item: MemoryItem) -> str:
    """The daily-log entry of ``item``."""
    from kg.memory.files import daily_log_entry  # noqa: PLC0415

    return daily_log_entry(when=item.created_at, uid=item.uid, type_=item.type.value, importance=item.importance,
                           store=item.store.value, tags=item.tags, content=item.content)  # fmt: skip


def append_items(workspace: Path, agent_id: str, items: Iterable[MemoryItem]) -> dict[date, Path]:
    """Append the entries of ``items`` (one agent's; the caller holds the lock of its memory directory) to their
    daily logs: one write and one fsync per day. The logs written, by day."""
    from kg.memory.files import append_locked, daily_log_header, daily_log_path  # noqa: PLC0415

    by_day: dict[date, list[MemoryItem]] = defaultdict(list)
    for item in items:
        by_day[item.created_at.date()].append(item)
    written: dict[date, Path] = {}
    for day, day_items in sorted(by_day.items()):
        path = daily_log_path(workspace, agent_id, day)
        append_locked(path, "".join(entry_of(i) for i in day_items), header=daily_log_header(day))
        written[day] = path
    return written


class CatchUp(NamedTuple):
    """What one catch-up did: items checked after the mark, entries appended, the mark before and after, and the
    position up to which every item's entry is now known to be in its log (``verified``: the mark may stay below
    it; a named tuple: every workspace open makes one, and a dataclass's generated methods cost each process ~2 M
    instructions)."""

    checked: int
    appended: list[str]
    mark_before: int
    mark_after: int
    verified: int


def catch_up(workspace: Path, ports: LogPorts, *, settle_after: int = 1) -> CatchUp:
    """Append the entry of every item after the mark that its daily log lacks, then move the mark.

    The mark moves only if an entry was appended or at least ``settle_after`` items were checked: an open of
    the workspace (``settle_after`` :data:`SETTLE_AFTER`) then writes nothing when there was nothing to repair
    (it re-reads the few logs of the items since the mark instead), while the check stays short.
    """
    marks = ports.marks
    checked, appended, mark_before = 0, [], marks.get(MARK)
    position = mark_before
    seen: dict[Path, tuple[int, str]] = {}  # per daily log: its size when read, its text
    while batch := marks.memory_after(position, CHUNK):
        position = batch[-1][0]
        by_agent: dict[str, list[tuple[str, date]]] = defaultdict(list)
        for _, uid, agent_id, day, source in batch:
            if source not in UNLOGGED_SOURCES:
                by_agent[agent_id].append((uid, day))
                checked += 1
        for agent_id, entries in sorted(by_agent.items()):
            appended += _complete(workspace, ports, agent_id, entries, seen)
    settle = appended or checked >= settle_after
    moved = position > mark_before and settle
    mark_after = marks.advance(MARK, position) if moved else mark_before
    if appended:
        missing = "daily logs: %d entries were missing (a writer stopped after its commit); appended"
        logger().warning(missing, len(appended))
    return CatchUp(checked, appended, mark_before, mark_after, position)


class SettlePorts(Protocol):
    """The ports :func:`settle_with_next_write` uses: the marks, and word after each commit."""

    @property
    def marks(self) -> Marks:
        """High-water marks."""
        ...

    @property
    def commits(self) -> CommitNotifier:
        """Listeners called after each committed write."""
        ...


def settle_with_next_write(ports: SettlePorts, report: CatchUp) -> bool:
    """Move the mark up to ``report.verified`` after the process's next committed write, when the catch-up left it
    below (``settle_after`` not reached, nothing appended). Whether a move is pending.

    An open that only reads leaves the store as it was, so without this every open re-read the logs of the items
    after the mark, up to :data:`SETTLE_AFTER` of them (issue 33). A process that writes anyway (a store, a recall's
    access record, a fact) then moves the mark in a small transaction of its own right after its first commit:
    entries are only appended, so what the open found stays true. Only the items the open checked are covered,
    never items committed since (by this process or another), whose entries are checked by a later open.
    """
    if report.verified <= report.mark_after:
        return False
    done = False

    def settle() -> None:
        nonlocal done
        if done:  # the move's own commit calls the listeners again
            return
        done = True
        try:
            ports.marks.advance(MARK, report.verified)
        except Exception as exc:  # derived data: a later open checks these items again
            logger().info("daily logs: mark not moved (%s); a later open checks again", exc)

    ports.commits.subscribe(settle)
    return True


def _complete(workspace: Path, ports: LogPorts, agent_id: str, entries: Sequence[tuple[str, date]],
              seen: dict[Path, tuple[int, str]]) -> list[str]:  # fmt: skip
    """Append the entries of ``entries`` (uid, day) that their logs lack. ``seen`` caches each log's text with the
    size it was read at; a log that grew since (another writer appended) is read again.

    The logs are read first without the lock: an entry found there stays there (entries are only appended), so
    when none is missing, as at almost every open, no lock is taken. A missing one is checked again under the
    lock, where no writer is between its commit and its append."""
    from kg.memory.files import directory_lock, memory_dir  # noqa: PLC0415

    if not _missing(workspace, agent_id, entries, seen):
        return []
    with directory_lock(memory_dir(workspace, agent_id)):
        missing = _missing(workspace, agent_id, entries, seen)
        if missing:
            found = ports.memory.get_many(missing)
            items = [found[u] for u in missing if u in found]
            for path in append_items(workspace, agent_id, items).values():
                seen.pop(path, None)  # read again when needed
    return missing


def _missing(workspace: Path, agent_id: str, entries: Sequence[tuple[str, date]],
             seen: dict[Path, tuple[int, str]]) -> list[str]:  # fmt: skip
    """The uids of ``entries`` that their daily logs lack (``seen``: see :func:`_complete`)."""
    from kg.memory.files import daily_log_path, logged_among, read_log  # noqa: PLC0415

    by_day: dict[date, list[str]] = defaultdict(list)
    for uid, day in entries:
        by_day[day].append(uid)
    logged: set[str] = set()
    for day, uids in by_day.items():
        path = daily_log_path(workspace, agent_id, day)
        size = path.stat().st_size if path.exists() else 0
        if path not in seen or seen[path][0] != size:
            seen[path] = (size, read_log(path))
        logged |= logged_among(seen[path][1], uids)
    return [uid for uid, _ in entries if uid not in logged]
