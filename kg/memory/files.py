"""Where an agent's Markdown files live, and how they are written (atomically: temp file + rename).

Layout under ``<workspace>/agents/<agent_id>/`` (design §3, the OpenClaw-MABOS layout)::

    memory/YYYY-MM-DD.md                 daily log (one entry per stored memory item)
    memory/weekly/YYYY-Www.md            weekly summary (ISO week)
    memory/monthly/YYYY-MM.md            monthly summary
    memory/quarterly/YYYY-Qq.md          quarterly summary
    memory/checkpoints/YYYY-MM-DD-HHmm.md
    memory/bdi-conflicts/YYYY-MM-DD.md   conflict reports of the BDI cycle
    memory/mabos-memory-items.md         materialized memory items
    mabos-facts.md, mabos-beliefs.md     materialized facts and beliefs
    MEMORY.md                            long-term memory overview (written by consolidation)
    Beliefs.md, Desires.md, Goals.md, Intentions.md, Plans.md, Learnings.md   cognitive files

A reader never sees a half-written file: every write goes to a temporary file in the same directory
(``.<name>.<pid>-<random>.tmp``: removed when found after its writer died, see :mod:`kg.tempfiles`), is
flushed to disk, then renamed over the target. Daily logs are the exception: they only grow, by appends of
whole entries (:func:`atomic_append`: one ``write`` and one ``fsync``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kg.faces import LazyPatterns
from kg.layout import agent_dir, atomic_write, create_new


def memory_dir(workspace: Path, agent_id: str) -> Path:
    """``agents/<id>/memory``."""
    return agent_dir(workspace, agent_id) / "memory"


def daily_log_path(workspace: Path, agent_id: str, day: date) -> Path:
    """``agents/<id>/memory/YYYY-MM-DD.md``."""
    return memory_dir(workspace, agent_id) / f"{day.isoformat()}.md"


def daily_logs(workspace: Path, agent_id: str) -> dict[date, Path]:
    """Existing daily logs by date (files whose names are not real dates are ignored)."""
    found: dict[date, Path] = {}
    directory = memory_dir(workspace, agent_id)
    if not directory.is_dir():
        return found
    for path in directory.iterdir():
        match = _pattern("DAILY_LOG_RE").match(path.name)
        if match and path.is_file():
            try:
                found[date(int(match[1]), int(match[2]), int(match[3]))] = path
            except ValueError:
                continue
    return dict(sorted(found.items()))


#: Where a directory is no descriptor (Windows), the lock file :func:`directory_lock` holds in it instead.
LOCK_FILE = ".lock"
#: How often a waiting holder tries the lock again (filelock polls; an append holds it for about one fsync).
POLL_SECONDS = 0.002
#: Whether a directory can be opened and locked itself (POSIX; tests turn it off to run the Windows way).
LOCK_DIRECTORY_ITSELF = sys.platform != "win32"


@contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (other holders wait) while the block changes files in it.

    It serialises read-modify-write updates across processes and across this process's threads. On POSIX the
    directory itself is locked (:func:`filelock.lock_descriptor`, ``flock`` on a descriptor each holder opens):
    no lock file is left behind, and the kernel drops the lock when its holder exits, however it exits. Where a
    directory cannot be opened (Windows) a hidden :data:`LOCK_FILE` in it is locked (:class:`filelock.FileLock`).
    Not re-entrant: a block holding the lock must not take it again.
    """
    from filelock import FileLock, lock_descriptor  # noqa: PLC0415 - about 20 modules: loaded by the first lock

    directory.mkdir(parents=True, exist_ok=True)
    if not LOCK_DIRECTORY_ITSELF:
        with FileLock(directory / LOCK_FILE, poll_interval=POLL_SECONDS):
            yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        lock_descriptor(fd, poll_interval=POLL_SECONDS)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def atomic_append(path: Path, text: str, *, header: str = "") -> None:
    """Append ``text`` to ``path`` with one ``write`` and one ``fsync`` (``header`` first when the file is new).

    Appends from several processes are serialised by a lock on the file's directory, so none is lost or
    interleaved; the cost does not grow with the file (it used to be rewritten and renamed on every append).
    A reader sees the file grow by whole appends. A tail cut by a crash (no final line break) is closed with a
    blank line first, so the next entry still starts on a line of its own.
    """
    with directory_lock(path.parent):
        append_locked(path, text, header=header)


def append_locked(path: Path, text: str, *, header: str = "") -> None:
    """:func:`atomic_append` for a caller that already holds :func:`directory_lock` on ``path.parent``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            text = header + text
        elif not _ends_with_newline(path, size):
            text = "\n\n" + text
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    if size == 0:
        _fsync_directory(path.parent)  # the new file's name is durable too


def _ends_with_newline(path: Path, size: int) -> bool:
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on a directory
        pass
    finally:
        os.close(fd)


def read_log(path: Path) -> str:
    """A daily log's text with its line breaks made ``\n`` (empty when there is no file)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def logged_uids(path: Path) -> set[str]:
    """The uids of the entry headers in a daily log (empty when there is no file)."""
    return _header_uids(read_log(path))


def _header_uids(text: str) -> set[str]:
    """The uids of the entry headers in a log's text (:func:`read_log`)."""
    return {match["uid"] for match in _pattern("DAILY_ENTRY_RE").finditer(text)}


#: Up to this many uids, :func:`logged_among` looks for each one's header from the end of the log instead of
#: reading every header.
FEW_UIDS = 64


def logged_among(text: str, uids: Collection[str]) -> set[str]:
    """The uids among ``uids`` that have an entry header in ``text`` (:func:`read_log`): the same answer as
    ``set(uids) & logged_uids(path)``. For a few uids each one's header is searched for from the end of the log (the
    entries a catch-up checks are the newest), so a long log is not parsed whole for them (issue 33)."""
    if len(uids) > FEW_UIDS:
        return set(uids) & _header_uids(text)
    header = _pattern("DAILY_ENTRY_RE")
    found: set[str] = set()
    for uid in uids:
        needle, end = f" {uid} (importance ", len(text)
        while (at := text.rfind(needle, 0, end)) >= 0:  # a header holds its uid once, as " <uid> (importance "
            start, stop = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            match = header.fullmatch(text, start, len(text) if stop < 0 else stop)  # that whole line a header?
            if match is not None and match["uid"] == uid:
                found.add(uid)
                break
            end = at
    return found


def daily_log_entry(*, when: datetime, uid: str, type_: str, importance: float, store: str,
                    tags: list[str], content: str) -> str:  # fmt: skip
    """One daily-log entry; parsers rely on this shape::

    ## 14:03 decision M-01J... (importance 0.80, store working)
    tags: auth, jwt

    JWT uses RS256

    The content is written in its :func:`log_form`, and every content line that a reader could take for
    structure (a heading such as another entry's header, a ``tags:`` line, a ``>`` quote) is quoted with
    ``> ``: no content can forge an entry. :func:`entry_content` reads it back.
    """
    tag_line = f"tags: {', '.join(tags)}\n" if tags else ""
    structure = _pattern("_STRUCTURE_RE")
    body = "\n".join(f"> {line}" if structure.match(line) else line for line in log_form(content).split("\n"))
    return f"## {when:%H:%M} {type_} {uid} (importance {importance:.2f}, store {store})\n{tag_line}\n{body}\n\n"


def log_form(content: str) -> str:
    """The content as a daily log holds it: line breaks as ``\\n`` (a lone ``\\r`` too: readers split on it),
    without surrounding blank space; everything else as it is."""
    return content.replace("\r\n", "\n").replace("\r", "\n").strip()


def entry_content(lines: list[str]) -> tuple[tuple[str, ...], str]:
    """The tags and content of one entry from the lines after its header (the inverse of
    :func:`daily_log_entry`): the ``tags:`` line, the blank line, then the content lines, unquoted."""
    body = list(lines)
    tags: tuple[str, ...] = ()
    if body and body[0].startswith("tags:"):
        tags = tuple(t.strip() for t in body.pop(0)[5:].split(",") if t.strip())
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    return tags, "\n".join(line[2:] if line.startswith("> ") else line for line in body)


def daily_log_header(day: date) -> str:
    """First line of a new daily log."""
    return f"# Daily log {day.isoformat()}\n\n"


#: The patterns of a daily log's name, an entry's header and a content line that looks like log structure (quoted
#: in an entry: headings, as an entry header is one, quotes, the escape itself, and ``tags:``, the line after a
#: header; leading blank space does not hide them), by name. Each is compiled on first use and then kept as a module
#: attribute: every workspace open imports this module, and an open whose logs are complete up to the mark uses
#: none (issue 33).
_LAZY_PATTERNS = LazyPatterns(
    __name__,
    {
        "DAILY_LOG_RE": r"^(\d{4})-(\d{2})-(\d{2})\.md$",
        "DAILY_ENTRY_RE": (
            r"^## (?P<time>\d{2}:\d{2}) (?P<type>\w+) (?P<uid>[A-Z]-[0-9A-Z]{26}) "
            r"\(importance (?P<importance>[\d.]+), store (?P<store>\w+)\)$",
            re.M,
        ),
        "_STRUCTURE_RE": r"^\s*(?:#|>|tags:)",
    },
)
_pattern = _LAZY_PATTERNS.compiled

if TYPE_CHECKING:
    DAILY_LOG_RE: re.Pattern[str]
    DAILY_ENTRY_RE: re.Pattern[str]
else:
    __getattr__ = _LAZY_PATTERNS.module_getattr


# agent_dir, atomic_write and create_new live in kg.layout (recall and ontology use them too); kept importable here.
__all__ = [
    "DAILY_ENTRY_RE",
    "DAILY_LOG_RE",
    "LOCK_FILE",
    "agent_dir",
    "append_locked",
    "atomic_append",
    "atomic_write",
    "create_new",
    "daily_log_entry",
    "daily_log_header",
    "daily_log_path",
    "daily_logs",
    "directory_lock",
    "entry_content",
    "log_form",
    "logged_among",
    "logged_uids",
    "memory_dir",
    "read_log",
]
