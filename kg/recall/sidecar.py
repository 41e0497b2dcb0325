"""The workspace's vector index (``.mabos/vectors/``) kept in step with the store.

The store is the source of truth; the index is derived data. Every insert, content change or delete of a
memory item appends a row to the store's index queue in the same transaction (migration 3), so what the
saved index lacks is always known. :meth:`VectorSidecar.sync` embeds the queued items (through the
embedding cache, so an item is embedded once per model), adds them to the in-memory index, and - once
enough work has accumulated, or when asked - saves the index and forgets the queue rows it covered. A
crash between the save and the forgetting only repeats work.

The saved index is used only when its manifest names this store (``store_meta.store_id``), the same model
and dimension, and its files match their hashes; otherwise it is rebuilt from the store - never a wrong answer.
It is built and kept up to date by ``mabos index update``, the servers' idle indexer and the nightly job
(:meth:`VectorSidecar.sync`). The build saves a checkpoint every ``save_every`` items (the manifest's ``build``
entry: how far the scan of the store got), so a build that is killed resumes where its last checkpoint stopped
instead of starting again.

A recall only reads (:meth:`VectorSidecar.view`): the saved index as it is, and the items it lacks - up to a
``limit`` of queued items, or the whole store when it holds no more than that and no usable index exists - for
the caller to score exactly. Beyond the limit, items wait for an indexing pass (BM25 finds them meanwhile).

One process writes at a time (an advisory lock file, :class:`filelock.FileLock`); a process that finds the saved
index changed by another one reloads it before writing. Reading takes no lock: a save writes new data files and
the manifest last, so a reader sees one generation or the other, and retries once if a save removed the files of
the generation it had started to load.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import InputError, logger
from kg.layout import LOCK_FILE, VECTORS_DIR
from kg.models import MemoryItem
from kg.ports import Embedder, GraphStore
from kg.recall.sidecar_state import (
    Build,
    IndexUnavailableError,
    IndexView,
    SyncReport,
    manifest_stamp,
    position,
    read_manifest,
)
from kg.recall.vector_files import UnusableError, load_manifest

if TYPE_CHECKING:  # the index class loads with the first index read or build: a BM25 recall opens none
    from kg.recall.vectors import FaissVectorIndex, VectorIndexConfig


#: Items embedded per batch while indexing.
BATCH = 256
#: Without an explicit save, the index is saved once this many queue rows are covered (or when small).
SAVE_EVERY = 1000
SMALL_INDEX = 20_000
#: Queue rows read per pass when there is no limit (a larger backlog takes several passes).
PENDING_MAX = 1_000_000

Progress = Callable[[int, int], None]


def embedding_text(item: MemoryItem) -> str:
    """What the vector of an item is computed from."""
    return item.content


class VectorSidecar:
    """The vector index of one store, in ``directory``; thread-safe, one writing process at a time."""

    def __init__(self, directory: Path, store: GraphStore, embedder: Embedder, *,
                 config: VectorIndexConfig | None = None, save_every: int = SAVE_EVERY,
                 batch: int = BATCH) -> None:  # fmt: skip
        self.directory = Path(directory)
        self.store = store
        self.embedder = embedder
        self.config = config
        self.save_every = save_every
        self.batch = batch
        self._lock = threading.RLock()
        self._index: FaissVectorIndex | None = None
        self._stamp: tuple[int, int, int] | None = None  # the manifest this in-memory index was loaded from
        self._covered = 0  # queue position up to which the in-memory index is complete
        self._unsaved = 0  # queue rows covered since the last save
        self._build: Build | None = None  # set while the in-memory index is a partial build

    # ------------------------------------------------------------------ reading

    def index(self, *, inline_limit: int | None = None, progress: Progress | None = None) -> FaissVectorIndex:
        """The index with (up to ``inline_limit``) pending items added; IndexUnavailableError when it
        must be rebuilt from more than ``inline_limit`` items."""
        return self.loaded(self.sync(limit=inline_limit, progress=progress))

    def loaded(self, report: SyncReport) -> FaissVectorIndex:
        """The in-memory index after ``report``'s pass; IndexUnavailableError with its reason if unusable."""
        if not report.usable or self._index is None:
            raise IndexUnavailableError(report.reason, report.backlog)
        return self._index

    def backlog(self) -> int:
        """Items the in-memory index (or, before loading, the saved one) has not seen."""
        with self._lock:
            return self.store.index_queue.count(self._covered)

    def view(self, *, limit: int) -> IndexView:
        """The index as saved (reloaded if another process saved since) and up to ``limit`` queued items it lacks;
        without a usable index, every item when the store holds at most ``limit`` (counting what a build in
        progress has not reached). Writes nothing: no embedding, no save, no lock file.

        Raises:
            IndexUnavailableError: no usable index and more than ``limit`` items to search without one.
        """
        if limit < 0:
            raise InputError("limit", f"must be >= 0, got {limit}")
        with self._lock:
            before = manifest_stamp(self.directory)
            reason = self._reload_if_changed()
            if reason.startswith("unusable") and manifest_stamp(self.directory) != before:
                reason = self._reload_if_changed()  # a save replaced the files while they were read: once more
            queue = self.store.index_queue
            if self._index is not None and self._build is None:
                rows = queue.pending(self._covered, limit)
                uids = list(dict.fromkeys(uid for _, uid in rows))
                items = self.store.memory.get_many(uids)
                backlog = queue.count(rows[-1][0] if rows else self._covered)  # what is left past the limit
                return IndexView(self._index, [items[u] for u in uids if u in items], frozenset(uids), backlog)
            build = self._build
            left = self._item_count() - (build.done if build is not None else 0)
            if left > limit:
                raise IndexUnavailableError(f"vector index {reason}: {left} items to index (run 'mabos index "
                                            "update'; the nightly job builds it too)", left)  # fmt: skip
            rest = [item for _, item in self.store.memory.scan(build.after if build else 0, max(left, 1))]
            if build is None:
                return IndexView(None, rest)
            return IndexView(self._index, rest, frozenset(i.uid for i in rest), queue.count(build.upto))

    # ------------------------------------------------------------------ writing

    def sync(
        self, *, limit: int | None = None, save: bool | None = None, progress: Progress | None = None
    ) -> SyncReport:
        """Add up to ``limit`` pending items (None: all); rebuild first if the saved index is unusable and
        the store holds at most ``limit`` items. ``save`` True/False forces/skips the save (default: when
        enough was added or the index is small)."""
        if limit is not None and limit < 0:
            raise InputError("limit", f"must be >= 0, got {limit}")
        with self._lock, self._file_lock():
            reason = self._reload_if_changed()
            if self._index is None or self._build is not None:
                total = self._item_count()
                left = total - (self._build.done if self._build is not None else 0)
                if limit is not None and left > limit:
                    return SyncReport(usable=False, backlog=left, reason=f"vector index {reason}: {left} items to "
                                      "index (run 'mabos index update'; the nightly job builds it too)")  # fmt: skip
                return self._continue_build(progress, reason)
            return self._catch_up(limit, save, progress)

    def rebuild(self, *, progress: Progress | None = None) -> SyncReport:
        """Drop the index and index every item of the store again."""
        with self._lock, self._file_lock():
            self._index, self._build = None, None
            return self._continue_build(progress, "rebuilt on request")

    def reindex_agent(self, agent_id: str, *, progress: Progress | None = None) -> SyncReport:
        """Embed one agent's items again (the whole index is rebuilt if the saved one is unusable)."""
        with self._lock, self._file_lock():
            reason = self._reload_if_changed()
            if self._index is None or self._build is not None:
                return self._continue_build(progress, reason)
            items: list[MemoryItem] = []
            after = 0
            while batch := self.store.memory.scan(after, 4 * self.batch):
                after = batch[-1][0]
                items.extend(item for _, item in batch if item.agent_id == agent_id)
            for start in range(0, len(items), self.batch):
                chunk = items[start : start + self.batch]
                self._embed_into(self._index, chunk, batch=True)
                if progress:
                    progress(start + len(chunk), len(items))
            self._unsaved += 1
            self._save()
            return SyncReport(usable=True, indexed=len(items), saved=True,
                              backlog=self.store.index_queue.count(self._covered))  # fmt: skip

    def save(self) -> bool:
        """Save unsaved additions now; whether anything was written.

        If another process saved in the meantime, its files are loaded and the queue (which still holds
        this process's unsaved rows) is applied to them instead: neither process's work is lost.
        """
        if self._index is None or self._build is not None or not self._unsaved:
            return False
        with self._lock, self._file_lock():
            if self._index is None or self._build is not None or not self._unsaved:
                return False
            if manifest_stamp(self.directory) != self._stamp:
                self._reload_if_changed()
                if self._index is None:
                    return False  # unusable now: the queue keeps everything for the next pass
                return self._catch_up(None, True, None).saved
            self._save()
            return True

    def status(self) -> dict[str, Any]:
        """Saved index facts, the backlog and whether the saved index is usable (no model load needed)."""
        from kg.recall.vectors import FaissVectorIndex  # noqa: PLC0415

        with self._lock:
            store_id = self.store.index_queue.store_id()
            index, reason = FaissVectorIndex.try_load(self.directory, model=self.embedder.model,
                                                      dimension=self.embedder.dimension, store_checksum=store_id,
                                                      config=self.config)  # fmt: skip
            items = self._item_count()
            try:
                build = Build.of(read_manifest(self.directory)) if index is not None else None
            except UnusableError as exc:  # a build entry that is none: the index cannot be used
                index, reason, build = None, f"manifest: {exc}", None
            saved = index.status() if index is not None else {}
            state = "ready" if index is not None else ("missing" if reason == "no manifest" else "unusable")
            if build is not None:
                state, reason = "building", f"being built ({build.done} of {items} items)"
            return {
                "directory": str(self.directory), "model": self.embedder.model, "dimension": self.embedder.dimension,
                "state": state, "reason": reason or None, "items": items,
                "indexed": len(index) if index is not None else 0,
                "backlog": self.store.index_queue.count() if index is not None and build is None
                else items - (build.done if build is not None else 0),
                "kind": saved.get("kind"), "tombstones": saved.get("tombstones", 0), "files": saved.get("files", {}),
                "store_id": store_id,
            }  # fmt: skip

    # ------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """Hold the index folder's lock file (kept on release: kg.tempfiles looks for it) for a write."""
        from filelock import FileLock  # noqa: PLC0415 - a write's import: a recall that only reads never loads it

        self.directory.mkdir(parents=True, exist_ok=True)
        with FileLock(self.directory / LOCK_FILE, preserve_lock_file=True):
            yield

    def _reload_if_changed(self) -> str:
        """(Re)load the saved index unless the in-memory one is current; the reason when unusable."""
        stamp = manifest_stamp(self.directory)
        if self._index is not None and stamp == self._stamp:
            return ""
        self._index, self._covered, self._unsaved, self._build = None, 0, 0, None
        if stamp is None:
            return "missing"
        store_id = self.store.index_queue.store_id()
        try:
            manifest = load_manifest(self.directory)
            covered = position(manifest, "queue_position", 0)
            build = Build.of(manifest)
        except (OSError, ValueError, RecursionError, UnusableError) as exc:  # RecursionError: JSON nested too deep
            return f"unusable (manifest: {str(exc)[:200]})"
        from kg.recall.vectors import FaissVectorIndex  # noqa: PLC0415

        index, reason = FaissVectorIndex.try_load(self.directory, model=self.embedder.model,
                                                  dimension=self.embedder.dimension, store_checksum=store_id,
                                                  config=self.config)  # fmt: skip
        if index is None:
            return f"unusable ({reason})"
        self._index, self._stamp, self._covered, self._build = index, stamp, covered, build
        if build is not None:
            return f"being built ({build.done} of {self._item_count()} items)"
        return ""

    def _embed_into(self, index: FaissVectorIndex, items: list[MemoryItem], *, batch: bool) -> None:
        index.add([i.uid for i in items], self.embedder.embed([embedding_text(i) for i in items], batch=batch))

    def _item_count(self) -> int:
        return int(self.store.stats()["memory_items"])

    def _continue_build(self, progress: Progress | None, reason: str) -> SyncReport:
        """Build the index from the store, from the last checkpoint if there is one; save every ``save_every``."""
        log = logger("mabos.recall")  # a build logs; a recall that only reads imports no logging (issue 33)
        queue = self.store.index_queue
        if self._index is None or self._build is None:
            log.info("building the vector index in %s (%s)", self.directory, reason)
            # items queued after `upto` are picked up by the next pass: the build covers the queue up to it
            self._build = Build(after=0, upto=queue.last(), done=0)
            from kg.recall.vectors import FaissVectorIndex  # noqa: PLC0415

            self._index = FaissVectorIndex(self.directory, model=self.embedder.model,
                                           dimension=self.embedder.dimension, store_checksum=queue.store_id(),
                                           config=self.config)  # fmt: skip
        else:
            log.info("resuming the vector index build in %s after %d items", self.directory, self._build.done)
        index, build = self._index, self._build
        total, indexed, since_save = self._item_count(), 0, 0
        while batch := self.store.memory.scan(build.after, self.batch):
            items = [item for _, item in batch]
            self._embed_into(index, items, batch=True)
            build.after, build.done = batch[-1][0], build.done + len(items)
            indexed, since_save = indexed + len(items), since_save + len(items)
            if since_save >= self.save_every:
                self._checkpoint()
                since_save = 0
            if progress:
                progress(build.done, max(total, build.done))
        self._build, self._covered, self._unsaved = None, build.upto, 1
        self._save()
        return SyncReport(usable=True, rebuilt=True, indexed=indexed, saved=True, backlog=queue.count(self._covered),
                          reason=reason)  # fmt: skip

    def _checkpoint(self) -> None:
        """Save the partial index with how far the build got; the queue is kept whole until the build ends."""
        if self._index is None or self._build is None:
            raise IndexUnavailableError("no build in progress")
        store_id = self.store.index_queue.store_id()
        self._index.save(store_checksum=store_id, extra={"queue_position": 0, "build": self._build.as_dict()})
        self._stamp = manifest_stamp(self.directory)

    def _catch_up(self, limit: int | None, save: bool | None, progress: Progress | None) -> SyncReport:
        if self._index is None:
            raise IndexUnavailableError("vector index not loaded")
        queue = self.store.index_queue
        rows = queue.pending(self._covered, PENDING_MAX if limit is None else limit)
        wanted = list(dict.fromkeys(uid for _, uid in rows))
        indexed = removed = 0
        for start in range(0, len(wanted), self.batch):
            chunk = wanted[start : start + self.batch]
            items = self.store.memory.get_many(chunk)
            present = [items[u] for u in chunk if u in items]
            if present:
                self._embed_into(self._index, present, batch=len(present) > 1)
            removed += self._index.remove([u for u in chunk if u not in items])
            indexed += len(present)
            if progress:
                progress(min(start + self.batch, len(wanted)), len(wanted))
        if rows:
            self._covered = max(self._covered, rows[-1][0])
            self._unsaved += len(rows)
        should_save = save if save is not None else (
            self._unsaved >= self.save_every or (self._unsaved > 0 and len(self._index) <= SMALL_INDEX))  # fmt: skip
        if should_save and self._unsaved:
            self._save()
        backlog = queue.count(self._covered)
        return SyncReport(usable=True, indexed=indexed, removed=removed, saved=bool(should_save), backlog=backlog)

    def _save(self) -> None:
        if self._index is None:
            raise IndexUnavailableError("vector index not loaded")
        # the queue position rides in the manifest: what the saved files cover, for every process
        store_id = self.store.index_queue.store_id()
        self._index.save(store_checksum=store_id, extra={"queue_position": self._covered})
        self.store.index_queue.done(self._covered)
        self._stamp, self._unsaved = manifest_stamp(self.directory), 0


__all__ = [
    "BATCH",
    "LOCK_FILE",
    "PENDING_MAX",
    "SAVE_EVERY",
    "SMALL_INDEX",
    "VECTORS_DIR",
    "IndexUnavailableError",
    "IndexView",
    "Progress",
    "SyncReport",
    "VectorSidecar",
    "embedding_text",
]
