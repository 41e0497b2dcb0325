"""Temporary files left by interrupted atomic writes: how they are named, and removing them when safe.

Every atomic write of mabos writes ``.<name>.<...>.tmp`` beside its target, then renames it over the target; a
process killed in between leaves the temp file behind. :func:`remove_stale` (run when a workspace is opened)
deletes such files, never one a live writer may still rename:

* names that embed the writer's process id (``.<name>.<pid>-<random>.tmp``, :func:`temp_prefix`): when that
  process no longer exists;
* the vector index folder: all of them, when its lock (``index.lock``, held by every index write) is free at
  that moment (nothing there while it is held);
* any other ``.<name>.tmp`` (older versions, fixed names): when untouched for :data:`MAX_AGE_SECONDS`.

Only regular files whose names start with ``.`` and end with ``.tmp`` are candidates, only in the workspace's
root, ``.mabos/``, ``.mabos/vectors/``, ``.mabos/mdindex/`` (the Markdown index's sidecars, written where the files
are written), ``agents/`` and ``ontologies/``. A workspace is used by processes of
one machine (SQLite's WAL mode needs that too), so a process id names the same process for every reader.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

#: Age after which a temp file without a process id is taken for a leftover.
MAX_AGE_SECONDS = 3600
_TEMP_RE = re.compile(r"^\..+\.tmp$")
_PID_RE = re.compile(r"\.(?P<pid>\d{1,10})(?:-[^.]*)?\.tmp$")


def temp_prefix(path: Path) -> str:
    """The prefix of a temp file for ``path`` written by this process (``mkstemp(prefix=..., suffix=".tmp")``)."""
    return f".{path.name}.{os.getpid()}-"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid < 2**22  # another user's live process (or a number no pid can be)
    return True


def _temps(directory: Path, *, recursive: bool) -> Iterator[Path]:
    if not directory.is_dir():
        return
    walk = os.walk(directory) if recursive else [(str(directory), [], os.listdir(directory))]
    for parent, _, names in walk:
        for name in names:
            if _TEMP_RE.match(name):
                yield Path(parent) / name


def _stale(path: Path, now: float) -> bool:
    match = _PID_RE.search(path.name)
    if match and not _alive(int(match["pid"])):
        return True
    try:
        return path.is_file() and now - path.stat().st_mtime > MAX_AGE_SECONDS
    except OSError:
        return False


@contextlib.contextmanager
def _free_lock(lock_file: Path) -> Iterator[bool]:
    """Whether nobody holds ``lock_file`` (held for the block when free); False when it does not exist."""
    if not lock_file.exists():
        yield False
        return
    from filelock import FileLock, Timeout  # noqa: PLC0415 - only when there is something to remove

    lock = FileLock(lock_file, timeout=0)
    try:
        lock.acquire()
    except (Timeout, OSError):  # held by a writer, or a lock file we may not open
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def remove_stale(root: Path, *, vectors: Path, vector_lock: str) -> list[Path]:
    """Delete the leftover temp files of a workspace (see the module text); the paths deleted."""
    now = time.time()
    removed: list[Path] = []
    candidates = [
        *_temps(root, recursive=False),
        *_temps(root / ".mabos", recursive=False),
        *_temps(root / ".mabos" / "mdindex", recursive=False),
        *_temps(root / "agents", recursive=True),
        *_temps(root / "ontologies", recursive=True),
    ]
    # a busy index folder is left alone; one without temp files needs no lock (nor filelock imported)
    leftovers = any(_temps(vectors, recursive=False))
    with _free_lock(vectors / vector_lock) if leftovers else contextlib.nullcontext(False) as idle:
        for path in _temps(vectors, recursive=False) if idle else ():
            with contextlib.suppress(OSError):
                if path.is_file():
                    path.unlink()
                    removed.append(path)
    for path in candidates:
        with contextlib.suppress(OSError):  # another process may be removing it too
            if path.is_file() and _stale(path, now):
                path.unlink()
                removed.append(path)
    return removed
