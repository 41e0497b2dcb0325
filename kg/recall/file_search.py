"""Hybrid search over an agent's Markdown files, through the same fusion pipeline as memory items.

The BM25 branch is the Markdown index's (bm25s over ~400-token chunks); the vector branch embeds every
chunk once (cached by content hash in the store's embedding cache) and compares it with the query by
cosine. Both feed :func:`kg.recall.fusion.rank` with :class:`~kg.recall.decay.ChunkMeta` (neutral
importance; the date of a daily log or summary file from its name, else the time of the search), so
``--fusion``, ``--mmr``, ``--min-score`` and ``--explain`` mean the same as for items. Of chunks that
overlap in one file only the best is returned. Results cite the file and the line span.

A read (issue 33): the chunks are the index's view of the files (:meth:`MarkdownIndex.view`, no sidecar written),
and chunk vectors the embedding cache lacked are computed without being stored: :func:`search_files` returns them
(``FileSearch.unsaved``) for the caller to keep once the answer is complete. The query's vector is never stored.
:func:`embed_chunks` computes and keeps them ahead of the recall, on the write path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kg.errors import BackendUnavailableError
from kg.ports import Embedder
from kg.recall.chunking import Chunk
from kg.recall.decay import ChunkMeta
from kg.recall.embedding_cache import CachedEmbedder
from kg.recall.engine import RecallSettings, check_mode, check_query
from kg.recall.fallback import FileHit
from kg.recall.fusion import rank
from kg.recall.fusion_types import FusionMethod, ScoreBreakdown
from kg.recall.markdown_index import MarkdownIndex, searchable_text
from kg.recall.modes import RecallMode

if TYPE_CHECKING:
    import numpy as np

_DATE_IN_NAME = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


@dataclass
class FileSearch:
    """What :func:`search_files` found: the hits, the mode that ran, notes (why it fell back), and the chunk vectors
    it computed that the embedding cache lacked (by content hash; not stored yet)."""

    hits: list[FileHit]
    mode: RecallMode
    notes: list[str]
    unsaved: dict[str, list[float]] = field(default_factory=dict)


def chunk_date(path: str, default: datetime) -> datetime:
    """The date in a file's name (``memory/2026-11-20.md``), else ``default``."""
    match = _DATE_IN_NAME.search(Path(path).name)
    if match:
        try:
            return datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=UTC)
        except ValueError:
            pass
    return default


def search_files(index: MarkdownIndex, agent_id: str, text: str, *, embedder: Embedder | None, limit: int,
                 now: datetime, mode: RecallMode = "hybrid", fusion: FusionMethod = "weighted", mmr: bool = False,
                 min_score: float = 0.0, explain: bool = False,
                 settings: RecallSettings | None = None) -> FileSearch:  # fmt: skip
    """The best ``limit`` chunks of the agent's files, the mode that ran and notes (why it fell back); writes
    nothing (see the module docstring)."""
    mode, text = check_mode(mode), check_query(text)
    settings = settings or RecallSettings()
    cand = settings.candidates(limit)
    chunks = {c.id: c for c in index.chunks(agent_id)}
    notes: list[str] = []
    used: RecallMode = mode
    vector: list[tuple[str, float]] = []
    vectors: dict[str, np.ndarray] = {}
    unsaved: dict[str, list[float]] = {}
    if mode != "bm25" and chunks:
        try:
            if embedder is None:
                raise BackendUnavailableError("embedder: none configured")
            vector, vectors, unsaved = _vector_branch(list(chunks.values()), text, embedder, cand)
        except BackendUnavailableError as exc:
            used = "bm25"
            notes.append(f"vector search unavailable, BM25 only: {exc}")
    bm25 = [] if used == "vector" else index.search(agent_id, text, limit=min(cand, 1000), refresh=False)
    metas = {cid: ChunkMeta(created_at=chunk_date(c.path, now)) for cid, c in chunks.items()}
    ranked = rank([(h.chunk_id, -h.score) for h in bm25], vector, metas, now=now, limit=cand, fusion=fusion,
                  settings=settings.fusion, decay=settings.decay, mmr=mmr, vectors=vectors,
                  min_score=min_score)  # fmt: skip
    hits: list[FileHit] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    for r in ranked:
        chunk = chunks[r.uid]
        spans = taken.setdefault(chunk.path, [])
        if any(chunk.line_start <= end and start <= chunk.line_end for start, end in spans):
            continue
        spans.append((chunk.line_start, chunk.line_end))
        hits.append(_hit(chunk, agent_id, r.score, used, r.breakdown if explain else None))
        if len(hits) == limit:
            break
    return FileSearch(hits, used, notes, unsaved)


def embed_chunks(index: MarkdownIndex, agent_id: str, embedder: Embedder | None, *, batch: int = 32) -> int:
    """Embed the agent's chunks the embedding cache lacks and keep them, ``batch`` at a time (a pass that is stopped
    keeps what it finished): the write path's half of a hybrid recall of files (the servers' idle pass, the nightly
    job, ``mabos index update``), so that the recall finds every vector cached. How many were embedded; nothing
    without a caching embedder."""
    if not isinstance(embedder, CachedEmbedder):
        return 0
    texts = list(dict.fromkeys(searchable_text(c) for c in index.chunks(agent_id, refresh=False)))
    done = 0
    for start in range(0, len(texts), batch):
        _, fresh = embedder.embed_unsaved(texts[start : start + batch], batch=True)
        embedder.remember(fresh)
        done += len(fresh)
    return done


def _vector_branch(chunks: list[Chunk], text: str, embedder: Embedder, cand: int
                   ) -> tuple[list[tuple[str, float]], dict[str, np.ndarray], dict[str, list[float]]]:  # fmt: skip
    import numpy as np  # noqa: PLC0415 - loaded with the model (a BM25 recall imports this module without it)

    [query], _ = _embed(embedder, [text], batch=False)
    embedded, unsaved = _embed(embedder, [searchable_text(c) for c in chunks], batch=True)
    matrix = np.asarray(embedded, dtype=np.float32)
    sims = matrix @ np.asarray(query, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")[:cand]
    found = [(chunks[k].id, float(sims[k])) for k in order]
    return found, {chunks[k].id: matrix[k] for k in order}, unsaved


def _embed(embedder: Embedder, texts: Sequence[str], *, batch: bool
           ) -> tuple[list[list[float]], dict[str, list[float]]]:  # fmt: skip
    """Vectors of ``texts``, and those a cached embedder computed now (not stored: the caller keeps them later)."""
    if isinstance(embedder, CachedEmbedder):
        return embedder.embed_unsaved(texts, batch=batch)
    return embedder.embed(texts, batch=batch), {}


def _hit(chunk: Chunk, agent_id: str, score: float, mode: RecallMode, explain: ScoreBreakdown | None) -> FileHit:
    return FileHit(path=chunk.path, line_start=chunk.line_start, line_end=chunk.line_end, heading=chunk.heading,
                   text=chunk.text, score=round(score, 6), agent_id=agent_id, chunk_id=chunk.id, method=mode,
                   explain=explain)  # fmt: skip
