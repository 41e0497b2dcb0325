"""The vector sidecar (design §4): nearest neighbours by inner product, keyed by record uid.

Derived data, rebuilt from the store whenever :meth:`FaissVectorIndex.load` returns None. On disk:
``manifest.json`` (written last) names ``index-<sha16>.npy`` (flat) or ``index-<sha16>.faiss`` (HNSW) and
``ids-<sha16>.json`` with their sha256, each file written temp + fsync + rename (:mod:`kg.recall.vector_files`),
so a torn save leaves the old generation intact and any damage is caught by a hash. Flat (exact, in NumPy:
:mod:`kg.recall.flat_rows`, no FAISS import) below ``hnsw_threshold`` live vectors, FAISS HNSW from it on; HNSW
cannot remove rows, so its deletes are tombstones until a rebuild. Details: ``docs/vector-index.md``.
"""

from __future__ import annotations

import builtins
import importlib
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from kg.errors import InputError
from kg.recall.vector_files import (
    MANIFEST,
    UnusableError,
    load_manifest,
    remove_unreferenced,
    verified,
    write_file,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]


class _OnFirstUse:
    """A module imported when one of its attributes is first read: faiss and NumPy take a noticeable part of a CLI
    start, and a command that opens the workspace without searching vectors (``mabos fact query``, a BM25 recall)
    never needs them."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module = importlib.import_module(self._name)
        self.__dict__.update(module.__dict__)  # later reads are plain attributes
        return getattr(module, attribute)


faiss: Any = _OnFirstUse("faiss")
if not TYPE_CHECKING:  # the type checker reads the real module (imported above for it)
    np = _OnFirstUse("numpy")

FORMAT_VERSION = 1
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class VectorIndexConfig:
    """Tuning of :class:`FaissVectorIndex` (not persisted: the caller passes it again on load)."""

    hnsw_threshold: int = 50_000  # live vectors from which the index is HNSW
    hnsw_m: int = 32
    ef_construction: int = 40  # faiss's default; the reference measurements used it
    ef_search: int = 64
    max_tombstone_share: float = 0.2  # HNSW is rebuilt when tombstones exceed this share of its rows


class FaissVectorIndex:
    """A :class:`~kg.ports.VectorIndex` (flat in NumPy, HNSW in FAISS), persisted in ``directory`` (one writer);
    thread-safe."""

    def __init__(self, directory: Path, *, model: str, dimension: int, store_checksum: str = "",
                 config: VectorIndexConfig | None = None) -> None:  # fmt: skip
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InputError("dimension", f"must be a positive integer, got {dimension!r}")
        self.directory = Path(directory)
        self.model = model
        self.dimension = dimension
        self.store_checksum = store_checksum
        self.config = config or VectorIndexConfig()
        self._lock = threading.RLock()
        self._ids: dict[str, int] = {}  # live uid -> faiss id
        self._uids: dict[int, str] = {}  # live faiss id -> uid (tombstoned ids are absent)
        self._tombstones: set[int] = set()
        self._next_id = 0
        self._kind = "flat"
        self._index: Any = self._new_index("flat")  # kg.recall.flat_rows.FlatRows, or a FAISS IndexIDMap (HNSW)
        self._dirty = False

    @property
    def kind(self) -> str:
        """``flat`` (exact) or ``hnsw``."""
        return self._kind

    def __len__(self) -> int:
        """Number of live vectors."""
        return len(self._ids)

    def __contains__(self, uid: object) -> bool:
        """Whether ``uid`` has a vector."""
        return uid in self._ids

    def add(self, uids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Insert or replace vectors; InputError (nothing changed) on a bad uid, dimension or value."""
        keys = _check_uids(uids)
        matrix = self._matrix(vectors, "vectors")
        if len(keys) != matrix.shape[0]:
            raise InputError("vectors", f"need one vector per uid: {len(keys)} uids, {matrix.shape[0]} vectors")
        if not keys:
            return
        with self._lock:
            self._drop([self._ids[uid] for uid in keys if uid in self._ids])
            new = list(range(self._next_id, self._next_id + len(keys)))
            self._next_id += len(keys)
            self._ids.update(zip(keys, new, strict=True))
            self._uids.update(zip(new, keys, strict=True))
            self._index.add_with_ids(matrix, np.asarray(new, dtype=np.int64))
            self._dirty = True
            self._settle()

    def remove(self, uids: Sequence[str]) -> int:
        """Delete vectors; how many existed."""
        with self._lock:
            ids = [self._ids.pop(uid) for uid in dict.fromkeys(uids) if uid in self._ids]
            if ids:
                self._drop(ids)
                self._dirty = True
                self._settle()
            return len(ids)

    def search(self, vector: Sequence[float], k: int, *,
               allowed: Callable[[str], bool] | None = None) -> builtins.list[tuple[str, float]]:  # fmt: skip
        """Up to ``k`` (uid, inner product) pairs, best first, ties by uid, only uids ``allowed`` accepts.

        Over-fetches (x4 per round, up to every row) until the ``k``-th allowed hit scores above the next
        candidate, so ties at the cut are all seen; ``allowed`` is asked lazily, at most once per uid.
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InputError("k", f"must be a non-negative integer, got {k!r}")
        query = self._matrix([vector], "vector")
        verdicts: dict[str, bool] = {}

        def keep(uid: str) -> bool:
            if uid not in verdicts:
                verdicts[uid] = allowed is None or bool(allowed(uid))
            return verdicts[uid]

        with self._lock:
            rows = self._index.ntotal
            if k == 0 or not self._ids:
                return []
            fetch = (2 * k + 16) * rows // len(self._ids)  # rows / live: room for tombstones
            fetch = min(rows, fetch if self._kind == "hnsw" else max(fetch, 1024))  # flat: any k costs one scan
            while True:
                hits, settled = self._hits(*self._raw_search(query, fetch), k, keep)
                if settled or fetch >= rows:
                    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:k]
                fetch = min(rows, fetch * 4)

    def save(self, *, store_checksum: str | None = None, now: datetime | None = None,
             extra: dict[str, Any] | None = None) -> Path:  # fmt: skip
        """Write index, id map and manifest (last) atomically; return the manifest's path.

        ``extra`` adds the caller's keys to the manifest (they cannot replace the index's own)."""
        with self._lock:
            if store_checksum is not None:
                self.store_checksum = store_checksum
            self.directory.mkdir(parents=True, exist_ok=True)
            files = {
                "index": write_file(self.directory, "index", ".faiss", lambda p: faiss.write_index(self._index, str(p)))
                if self._kind == "hnsw" else write_file(self.directory, "index", ".npy", self._index.write),
                "ids": write_file(self.directory, "ids", ".json", lambda p: p.write_bytes(self._map_bytes())),
            }  # fmt: skip
            manifest = (extra or {}) | {
                "format_version": FORMAT_VERSION, "model": self.model, "dimension": self.dimension,
                "count": len(self), "kind": self._kind, "store_checksum": self.store_checksum,
                "created_at": (now or datetime.now(UTC)).isoformat(), "tombstones": len(self._tombstones),
                "files": files,
            }  # fmt: skip
            write_file(self.directory, MANIFEST, "", lambda p: p.write_text(json.dumps(manifest, indent=2) + "\n"))
            remove_unreferenced(self.directory, {entry["name"] for entry in files.values()})
            self._dirty = False
            return self.directory / MANIFEST

    @classmethod
    def load(cls, directory: Path, *, model: str, dimension: int, store_checksum: str, count: int | None = None,
             config: VectorIndexConfig | None = None) -> FaissVectorIndex | None:  # fmt: skip
        """The saved index, or None (logged, never raised) when files are missing, damaged or do not match
        ``model``, ``dimension``, ``store_checksum`` (and ``count`` when given): the caller rebuilds."""
        return cls.try_load(directory, model=model, dimension=dimension, store_checksum=store_checksum, count=count,
                            config=config)[0]  # fmt: skip

    @classmethod
    def try_load(cls, directory: Path, *, model: str, dimension: int, store_checksum: str, count: int | None = None,
                 config: VectorIndexConfig | None = None) -> tuple[FaissVectorIndex | None, str]:  # fmt: skip
        """Like :meth:`load`, with the reason when it is None (``""`` when loaded)."""
        try:
            return cls._load(Path(directory), model=model, dimension=dimension, store_checksum=store_checksum,
                             count=count, config=config), ""  # fmt: skip
        except UnusableError as exc:
            logger.info("vector index in %s not used: %s", directory, exc)
            return None, str(exc)
        except Exception as exc:
            logger.warning("vector index in %s unreadable: %s: %s", directory, type(exc).__name__, exc)
            return None, f"unreadable ({type(exc).__name__}: {exc})"

    def status(self, *, store_checksum: str | None = None) -> dict[str, Any]:
        """Counts, kind, file sizes; ``stale`` when the saved files do not describe this index built for
        ``store_checksum`` (default: its own). Cheap: hashes are checked by :meth:`load`, not here."""
        expected = self.store_checksum if store_checksum is None else store_checksum
        with self._lock:
            try:
                manifest = load_manifest(self.directory)
                files = {MANIFEST: (self.directory / MANIFEST).stat().st_size}
                files |= {e["name"]: (self.directory / e["name"]).stat().st_size for e in manifest["files"].values()}
                saved = manifest.get("store_checksum") == expected and manifest.get("count") == len(self)
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, UnusableError):
                files, saved = {}, False
            return {
                "directory": str(self.directory), "model": self.model, "dimension": self.dimension,
                "kind": self._kind, "count": len(self), "rows": int(self._index.ntotal),
                "tombstones": len(self._tombstones), "files": files, "unsaved_changes": self._dirty,
                "stale": self._dirty or not saved or self.store_checksum != expected,
            }  # fmt: skip

    # -- internals ---------------------------------------------------------------------------------

    def _new_index(self, kind: str) -> Any:
        if kind != "hnsw":
            from kg.recall.flat_rows import FlatRows  # noqa: PLC0415 - NumPy loads with the first vector

            return FlatRows(self.dimension)
        base = faiss.IndexHNSWFlat(self.dimension, self.config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        base.hnsw.efConstruction = self.config.ef_construction
        base.hnsw.efSearch = self.config.ef_search
        return faiss.IndexIDMap(base)  # own uid map instead of IndexIDMap2: no per-id reverse map in memory

    def _matrix(self, rows: Sequence[Sequence[float]], field: str) -> Matrix:
        if len(rows) == 0:
            return np.empty((0, self.dimension), dtype=np.float32)
        try:
            with np.errstate(all="ignore"):  # overflow to inf is reported below, not as a warning
                matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InputError(field, f"must be lists of {self.dimension} numbers") from exc
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:
            raise InputError(field, f"each vector must have {self.dimension} values (dimension)")
        if not np.isfinite(matrix).all():
            raise InputError(field, "values must be finite float32 numbers (no NaN, no infinity)")
        return np.ascontiguousarray(matrix)

    def _raw_search(self, query: Matrix, fetch: int) -> tuple[list[float], list[int]]:
        if self._kind != "hnsw":
            scores, ids = self._index.search(query[0], fetch)
            return list(scores), list(ids)
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)  # single query: 2 threads collapse under load (reference measurements)
        try:
            params = faiss.SearchParametersHNSW(efSearch=max(self.config.ef_search, fetch))
            scores, ids = self._index.search(query, fetch, params=params)
        finally:
            faiss.omp_set_num_threads(threads)  # builds keep their threads
        return scores[0].tolist(), ids[0].tolist()

    def _hits(self, scores: list[float], ids: list[int], k: int,
              keep: Callable[[str], bool]) -> tuple[list[tuple[str, float]], bool]:  # fmt: skip
        """Allowed live hits in score order; settled once the ``k``-th beats the next candidate."""
        hits: list[tuple[str, float]] = []
        for score, faiss_id in zip(scores, ids, strict=True):
            if len(hits) >= k and score < hits[k - 1][1]:
                return hits, True
            uid = self._uids.get(faiss_id)  # None for -1 (no result) and tombstones
            if uid is not None and keep(uid):
                hits.append((uid, score))
        return hits, False

    def _drop(self, ids: list[int]) -> None:
        """Forget ``ids`` (already gone from ``_ids``): remove rows (flat) or tombstone them (HNSW)."""
        for faiss_id in ids:
            self._uids.pop(faiss_id, None)
        if not ids:
            return
        if self._kind == "flat":
            self._index.remove_ids(np.asarray(ids, dtype=np.int64))
        else:
            self._tombstones.update(ids)

    def _settle(self) -> None:
        """Switch to HNSW at the threshold; compact HNSW (back to flat below half the threshold)."""
        threshold = self.config.hnsw_threshold
        if self._kind == "flat" and len(self) >= threshold:
            self._rebuild("hnsw")
        elif self._kind == "hnsw" and len(self._tombstones) > self.config.max_tombstone_share * self._index.ntotal:
            self._rebuild("hnsw" if len(self) >= threshold // 2 else "flat")

    def _rebuild(self, kind: str) -> None:
        rows = self._index.ntotal
        if self._kind == "hnsw":
            ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
            vectors = self._index.index.reconstruct_n(0, rows) if rows else np.empty((0, self.dimension), np.float32)
        else:
            ids, vectors = self._index.rows()
        order = np.argsort(ids, kind="stable")  # flat rows are kept in id order
        ids, vectors = ids[order], vectors[order]
        live = np.fromiter((faiss_id in self._uids for faiss_id in ids.tolist()), dtype=bool, count=rows)
        index = self._new_index(kind)
        index.add_with_ids(np.ascontiguousarray(vectors[live]), ids[live])
        self._index, self._kind, self._tombstones = index, kind, set()

    def _map_bytes(self) -> bytes:
        ids = sorted(self._uids)
        body = {"next_id": self._next_id, "ids": ids, "uids": [self._uids[i] for i in ids],
                "tombstones": sorted(self._tombstones)}  # fmt: skip
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def _load(cls, directory: Path, *, model: str, dimension: int, store_checksum: str, count: int | None,
              config: VectorIndexConfig | None) -> FaissVectorIndex:  # fmt: skip
        try:  # written by a rename: a link may lead out of the workspace, a FIFO would hold the read
            manifest = load_manifest(directory)
        except FileNotFoundError as exc:
            raise UnusableError("no manifest") from exc
        expected = {"format_version": FORMAT_VERSION, "model": model, "dimension": dimension,
                    "store_checksum": store_checksum} | ({} if count is None else {"count": count})  # fmt: skip
        for key, value in expected.items():
            if manifest.get(key) != value:
                raise UnusableError(f"manifest {key} is {manifest.get(key)!r}, expected {value!r}")
        files, kind = manifest["files"], manifest["kind"]
        with verified(directory, files["ids"]) as handle:  # each file checked and read as one open file
            mapping = json.loads(handle.read())
        ids, uids, tombstones = [int(i) for i in mapping["ids"]], list(mapping["uids"]), set(mapping["tombstones"])
        with verified(directory, files["index"]) as handle:
            if str(files["index"]["name"]).endswith(".npy"):  # flat: NumPy rows in id order, no FAISS
                from kg.recall.flat_rows import FlatRows  # noqa: PLC0415

                if kind != "flat" or tombstones:
                    raise UnusableError(f"flat rows, manifest says {kind} with {len(tombstones)} tombstones")
                index: Any = FlatRows.read(handle, ids, dimension)
                rows = ids
            else:
                index = cls._read_faiss(handle, kind, dimension)
                held = index.rows()[0] if kind == "flat" else faiss.vector_to_array(index.id_map)
                rows = sorted(held.tolist())
        if len(set(uids)) != len(uids) or len(ids) != len(uids) or not all(isinstance(u, str) for u in uids):
            raise UnusableError("id map is inconsistent")
        next_id = mapping["next_id"]
        if isinstance(next_id, bool) or not isinstance(next_id, int) or not 0 <= next_id < 2**62:
            raise UnusableError(f"id map's next id {str(next_id)[:40]} is not an integer in 0..2^62")
        if rows != sorted([*ids, *tombstones]) or (rows and rows[-1] >= next_id):
            raise UnusableError("id map does not match the index rows")
        if len(ids) != manifest["count"]:
            raise UnusableError(f"{len(ids)} vectors, manifest says {manifest['count']}")
        loaded = cls(directory, model=model, dimension=dimension, store_checksum=store_checksum, config=config)
        loaded._index, loaded._kind, loaded._tombstones, loaded._next_id = index, kind, tombstones, next_id
        loaded._uids, loaded._ids = dict(zip(ids, uids, strict=True)), dict(zip(uids, ids, strict=True))
        return loaded

    @staticmethod
    def _read_faiss(handle: BinaryIO, kind: str, dimension: int) -> Any:
        """A saved FAISS index, read from the open file (HNSW; a flat one from before flat rows were NumPy files is
        read as rows)."""
        index = faiss.read_index(faiss.PyCallbackIOReader(handle.read))
        base = faiss.downcast_index(index.index)
        actual = "hnsw" if isinstance(base, faiss.IndexHNSWFlat) else "flat"
        if not isinstance(index, faiss.IndexIDMap) or not isinstance(base, faiss.IndexHNSWFlat | faiss.IndexFlatIP):
            raise UnusableError(f"unexpected index type {type(index).__name__}/{type(base).__name__}")
        if actual != kind or index.d != dimension or index.metric_type != faiss.METRIC_INNER_PRODUCT:
            raise UnusableError(f"index is {actual} d={index.d}, manifest says {kind} d={dimension}")
        if actual == "hnsw":
            return index
        from kg.recall.flat_rows import FlatRows  # noqa: PLC0415

        ids = faiss.vector_to_array(index.id_map).astype(np.int64)
        order = np.argsort(ids, kind="stable")
        vectors = index.index.reconstruct_n(0, index.ntotal) if index.ntotal else np.empty((0, dimension), np.float32)
        return FlatRows(dimension, ids[order], np.ascontiguousarray(vectors[order]))


def _check_uids(uids: Sequence[str]) -> list[str]:
    keys = list(uids)
    if isinstance(uids, str) or not all(isinstance(uid, str) and uid for uid in keys):
        raise InputError("uids", "must be a sequence of non-empty strings")
    if len(set(keys)) != len(keys):
        raise InputError("uids", "must be unique within one call")
    return keys
