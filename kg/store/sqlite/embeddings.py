"""SQLite adapter of the embedding cache (the ``EmbeddingCache`` port of :mod:`kg.ports`).

Vectors are BLOBs of float32, little-endian, whatever the machine's byte order. The cache is derived
data: its writes append no outbox event, and a broken table reads as :class:`~kg.errors.BackendUnavailableError`
so the caller embeds instead.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence

from kg.errors import BackendUnavailableError, InputError
from kg.store.sqlite.db import SqliteAdapter

#: Hashes per ``IN (...)`` list: well under SQLite's 999 bound parameters of older builds.
CHUNK = 500


def encode_vector(vector: Sequence[float]) -> bytes:
    """float32 little-endian bytes of a vector."""
    values = array("f", vector)
    if sys.byteorder != "little":  # pragma: no cover - big-endian machines
        values.byteswap()
    return values.tobytes()


def decode_vector(blob: bytes) -> list[float]:
    """The vector stored by :func:`encode_vector` (each value exactly its float32)."""
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder != "little":  # pragma: no cover - big-endian machines
        values.byteswap()
    return values.tolist()


def _is_hash(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


class SqliteEmbeddingCache(SqliteAdapter):
    """Cached vectors keyed by (model, SHA-256 of the text) in the ``embeddings`` table."""

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        """Cached vectors of ``model`` for those hashes that have one."""
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, list[float]] = {}
        try:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                rows = self.db.read(
                    "SELECT content_hash, vector FROM embeddings "
                    f"WHERE model = ? AND content_hash IN ({','.join('?' * len(chunk))})",
                    [model, *chunk],
                )
                found.update((str(r["content_hash"]), decode_vector(r["vector"])) for r in rows)
        except sqlite3.DatabaseError as exc:
            raise BackendUnavailableError(f"store: embedding cache unreadable ({exc})") from exc
        return found

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store (or replace) vectors by content hash, in one transaction."""
        if not model:
            raise InputError("model", "must not be empty")
        rows = []
        for content_hash, vector in vectors.items():
            if not _is_hash(content_hash):
                raise InputError("content_hash", "must be a lowercase hex SHA-256 (64 characters)")
            if len(vector) == 0:
                raise InputError("vector", "must not be empty")
            rows.append((model, content_hash, len(vector), encode_vector(vector)))
        if not rows:
            return
        try:
            with self.db.write() as conn:
                now = self.db.now()
                conn.executemany(
                    "INSERT INTO embeddings(model, content_hash, dimension, vector, created_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(model, content_hash) DO UPDATE SET "
                    "dimension = excluded.dimension, vector = excluded.vector, created_at = excluded.created_at",
                    [(*row, now) for row in rows],
                )
        except sqlite3.DatabaseError as exc:
            raise BackendUnavailableError(f"store: embedding cache not writable ({exc})") from exc

    def count(self, model: str | None = None) -> int:
        """How many vectors are cached (for one model, or all)."""
        if model is None:
            return int(self.db.read("SELECT COUNT(*) FROM embeddings")[0][0])
        return int(self.db.read("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model,))[0][0])


__all__ = ["CHUNK", "SqliteEmbeddingCache", "decode_vector", "encode_vector"]
