"""The flat (exact) vector index in NumPy: rows with their ids, scored by inner product, saved as one ``.npy`` file.

Below ``hnsw_threshold`` live vectors the index is exact, and exact search is one matrix-vector product: FAISS adds
nothing to it but its import, which took 176 million instructions of a cold hybrid recall (more than a quarter of
what the vector branch adds; ``docs/decisions/2026-11-29-cold-hybrid-recall.md``). So a flat index is these rows,
and FAISS is imported only for HNSW. Rows stay in the order of their ids (ids are allocated increasing, a removal
keeps the order), so the saved file lines up with the id map's sorted ids.

A query is scored with ``einsum`` (NumPy's own loop, one thread, no BLAS): BLAS would start its threads for a
large index, and two threads collapse under load (``docs/vector-index.md``, decision 5); the queued items a recall
scores beside the index (:func:`kg.recall.vector_branch.exact_scores`) use the same function, so an item gets the
same similarity before and after it is indexed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from kg.recall.vector_files import UnusableError

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Ids = npt.NDArray[np.int64]


def inner_products(matrix: Any, query: Any) -> Any:
    """``matrix @ query`` (float32) on this thread, without BLAS."""
    return np.einsum("ij,j->i", np.asarray(matrix, dtype=np.float32), np.asarray(query, dtype=np.float32))


class FlatRows:
    """Exact inner-product search over ``(id, vector)`` rows; the subset of a FAISS ``IndexIDMap`` the index uses."""

    def __init__(self, dimension: int, ids: Ids | None = None, matrix: Matrix | None = None) -> None:
        self.dimension = dimension
        self._ids: Ids = np.empty(0, dtype=np.int64) if ids is None else ids
        self._matrix: Matrix = np.empty((0, dimension), dtype=np.float32) if matrix is None else matrix
        self._count = len(self._ids)

    @property
    def ntotal(self) -> int:
        """Rows held."""
        return self._count

    def rows(self) -> tuple[Ids, Matrix]:
        """The ids and the vectors, in id order (views, not copies)."""
        return self._ids[: self._count], self._matrix[: self._count]

    def add_with_ids(self, matrix: Matrix, ids: Ids) -> None:
        """Append rows (ids larger than every id held: the caller allocates them increasing)."""
        needed = self._count + len(ids)
        if needed > len(self._ids) or not self._matrix.flags.writeable:  # grow by doubling: batches add in O(batch)
            capacity = max(needed, 2 * len(self._ids), 64)
            grown_ids = np.empty(capacity, dtype=np.int64)
            grown = np.empty((capacity, self.dimension), dtype=np.float32)
            grown_ids[: self._count], grown[: self._count] = self.rows()
            self._ids, self._matrix = grown_ids, grown
        self._ids[self._count : needed] = ids
        self._matrix[self._count : needed] = matrix
        self._count = needed

    def remove_ids(self, ids: Ids) -> None:
        """Drop the rows of ``ids``; the others keep their order."""
        kept = ~np.isin(self._ids[: self._count], ids)
        held_ids, held = self.rows()
        self._ids, self._matrix = held_ids[kept].copy(), held[kept].copy()
        self._count = len(self._ids)

    def search(self, query: Any, fetch: int) -> tuple[list[float], list[int]]:
        """The ``fetch`` best rows for ``query`` (one vector): their scores and ids, best first."""
        ids, matrix = self.rows()
        scores = inner_products(matrix, query)
        if fetch < len(scores):
            best = np.argpartition(-scores, fetch - 1)[:fetch]
            best = best[np.argsort(-scores[best], kind="stable")]
        else:
            best = np.argsort(-scores, kind="stable")
        return scores[best].tolist(), ids[best].tolist()

    def write(self, path: Path) -> None:
        """Save the vectors (``.npy``, in id order; the ids are in the index's id map)."""
        with path.open("wb") as handle:
            np.save(handle, np.ascontiguousarray(self.rows()[1]), allow_pickle=False)

    @classmethod
    def read(cls, handle: BinaryIO, ids: list[int], dimension: int) -> FlatRows:
        """The rows saved by :meth:`write` for ``ids`` (sorted), from the open file; UnusableError when the file
        does not fit them."""
        name = Path(str(getattr(handle, "name", "rows"))).name
        matrix = np.load(handle, allow_pickle=False)
        if matrix.dtype != np.float32 or matrix.shape != (len(ids), dimension):
            raise UnusableError(f"{name}: {matrix.dtype} {matrix.shape}, not float32 ({len(ids)}, {dimension})")
        held = np.asarray(ids, dtype=np.int64)
        if not (np.diff(held) > 0).all():  # a repeated id would hide a row's item
            raise UnusableError("the id map's ids are not increasing")
        if not np.isfinite(np.einsum("ij->", matrix, dtype=np.float64)):  # one pass: a NaN or an infinity anywhere
            raise UnusableError(f"{name}: rows hold values that are not finite")
        return cls(dimension, held, matrix)


__all__ = ["FlatRows", "inner_products"]
