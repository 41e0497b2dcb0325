"""What the vector sidecar (:mod:`kg.recall.sidecar`) reports and keeps in its manifest.

:class:`SyncReport` is what an indexing pass did, :class:`IndexView` what a recall searches, and
:class:`IndexUnavailableError` why neither can use the index. The manifest (``manifest.json`` in the index folder,
:mod:`kg.recall.vector_files`) names the saved generation's files and carries the queue position they cover and, while
a build is in progress, its checkpoint (:class:`Build`); :func:`manifest_stamp` tells a process whether another one
saved since it loaded. They live apart from the sidecar's machinery because the memory service and the recall engine
name them whether or not an index is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import BackendUnavailableError
from kg.models import MemoryItem, Model
from kg.recall.vector_files import MANIFEST, UnusableError, load_manifest

if TYPE_CHECKING:
    from kg.recall.vectors import FaissVectorIndex


class SyncReport(Model):
    """What one indexing pass did."""

    usable: bool
    rebuilt: bool = False
    indexed: int = 0
    removed: int = 0
    saved: bool = False
    backlog: int = 0
    reason: str = ""


@dataclass
class Build:
    """A build in progress: the store was scanned up to position ``after`` (``done`` items); when it ends,
    the index covers the queue up to ``upto`` (its position when the build started)."""

    after: int
    upto: int
    done: int

    @classmethod
    def of(cls, manifest: dict[str, Any]) -> Build | None:
        """The manifest's ``build`` entry (None for a finished index); UnusableError when it is not one."""
        entry = manifest.get("build")
        if entry is None:
            return None
        if not isinstance(entry, dict):
            raise UnusableError(f"build is {type(entry).__name__}, not an object")
        return cls(after=position(entry, "after"), upto=position(entry, "upto"), done=position(entry, "done"))

    def as_dict(self) -> dict[str, int]:
        """The manifest's ``build`` entry."""
        return {"after": self.after, "upto": self.upto, "done": self.done}


class IndexUnavailableError(BackendUnavailableError):
    """The index cannot be used, and the store holds too many items to search without it; the message says why.

    ``backlog`` counts the items still to index.
    """

    def __init__(self, reason: str, backlog: int = 0) -> None:
        super().__init__(reason)
        self.backlog = backlog


@dataclass(frozen=True)
class IndexView:
    """What a recall searches, read without writing anything (:meth:`VectorSidecar.view`).

    Attributes:
        index: The saved (or this process's) index; None when there is no usable one.
        pending: Items the index lacks or holds an old vector of, to be scored exactly by the caller.
        stale: Uids whose vectors in ``index`` must not be used (``pending``'s, and deleted items').
        backlog: Items left for the next indexing pass (found by BM25 only meanwhile).
    """

    index: FaissVectorIndex | None
    pending: list[MemoryItem] = field(default_factory=list)
    stale: frozenset[str] = frozenset()
    backlog: int = 0


#: The largest queue position SQLite can hold (a signed 64-bit integer).
MAX_POSITION = 2**63 - 1


def position(entry: dict[str, Any], key: str, default: int | None = None) -> int:
    """``entry[key]`` as a queue position or count: an integer (not a bool) in 0..MAX_POSITION; UnusableError naming
    ``key`` otherwise (the manifest is read from disk: anything may be there)."""
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
        raise UnusableError(f"{key} is {str(value)[:40]!r}, not an integer in 0..2^63-1")
    return value


def manifest_stamp(directory: Path) -> tuple[int, int, int] | None:
    """The manifest's inode, modification time and size (None when there is none): changes with every save."""
    try:
        st = os.stat(directory / MANIFEST)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_manifest(directory: Path) -> dict[str, Any]:
    """The saved manifest ({} when missing or unreadable)."""
    try:
        return load_manifest(directory)
    except (OSError, ValueError, RecursionError, UnusableError):  # RecursionError: JSON nested past Python's limit
        return {}


__all__ = [
    "MAX_POSITION",
    "Build",
    "IndexUnavailableError",
    "IndexView",
    "SyncReport",
    "manifest_stamp",
    "position",
    "read_manifest",
]
