"""Access statistics of recalled items, recorded after the answer (issue 33: a recall reads; writes happen after).

A recall that returns items counts one access of each (``access_count``, ``accessed_at``: the decay's frequency
term and the tier rules read them) and, in the same write, recalculates the importance of the formula-weighted
ones (:mod:`kg.memory.importance`; those changes get outbox events, so they reach TypeDB like any other). The
recall computes its answer first, reading only; :meth:`AccessLog.record` then makes that one write.

If the write cannot be made - the store is read-only, or stayed locked by another writer past every retry - the
answer is still given (with a note), and the access is kept in this process and written before the next one: the
count is not lost while the process lives. ``flush`` writes what is waiting (a long-lived server or a closing
workspace may call it).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from kg.errors import BackendUnavailableError, logger
from kg.memory.importance import recalculated
from kg.ports import MemoryStore


class Access(NamedTuple):
    """One recall's returned items, accessed at ``at`` (a named tuple: cheaper to define than a dataclass)."""

    uids: tuple[str, ...]
    at: datetime


class AccessLog:
    """Accesses waiting to be written to one store (thread-safe); normally none wait."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._waiting: list[Access] = []
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        """Recalls whose accesses are not written yet."""
        with self._lock:
            return len(self._waiting)

    def record(self, uids: Sequence[str], at: datetime) -> str | None:
        """Count one access of each of ``uids`` at ``at``, with any earlier access still waiting; None when written,
        else why not (the accesses wait for the next write)."""
        with self._lock:
            if uids:
                self._waiting.append(Access(tuple(dict.fromkeys(uids)), at))
        return self.flush()

    def flush(self) -> str | None:
        """Write the waiting accesses, oldest first (one write each, normally one); None when none is left, else why
        not."""
        with self._lock:
            while self._waiting:
                access = self._waiting[0]
                try:
                    self._write(access)
                except BackendUnavailableError as exc:
                    logger("mabos.memory").warning(
                        "access counts of %d recalls wait for the next write: %s", len(self._waiting), exc
                    )
                    return f"access counts not written yet ({len(self._waiting)} recalls waiting): {exc}"
                self._waiting.pop(0)
        return None

    def _write(self, access: Access) -> None:
        items = self.store.get_many(access.uids).values()  # as stored now: counts of waiting recalls included
        importance = recalculated(items, access.at, accessed=access.uids)
        self.store.touch(access.uids, now=access.at, importance=importance)


__all__ = ["Access", "AccessLog"]
