"""Recall from the Markdown files alone, for when the database or the vector index cannot answer.

:func:`fallback_recall` never opens ``.mabos/kg.sqlite`` or the vector sidecar: it answers from the
Markdown index (:mod:`kg.recall.markdown_index`, BM25 over the chunks of the agent's daily logs,
summaries, checkpoints and materialized files) and, when BM25 finds nothing (only stopwords, part of
a word, a single CJK character ...), from a case-insensitive substring scan of the same files' lines.
It writes nothing (not even the index sidecar: :meth:`MarkdownIndex.view` reads the files that changed
since it was written). Every hit says ``fallback: true``, the ``method`` that found it and the caller's
``reason``, and the switch is logged on the ``mabos.recall`` logger (a warning with the reason; the
substring step at info).

    result = fallback_recall(ws_path, "sales-agent", "refund policy", limit=5,
                             reason="database is corrupt: file is not a database")
    for hit in result.hits:
        print(hit.path, hit.line_start, hit.line_end, hit.score, hit.text)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from kg import layout
from kg.models import Model
from kg.recall.file_hits import FileHit, FileMethod, MarkdownHit
from kg.recall.markdown_index import MarkdownIndex

log = logging.getLogger("mabos.recall")

FallbackMethod = Literal["bm25", "substring"]


class FallbackResult(Model):
    """What the file fallback found; ``method`` is None when nothing matched."""

    agent_id: str
    query: str
    reason: str
    method: FallbackMethod | None
    hits: list[FileHit]
    files: int
    chunks: int
    fallback: Literal[True] = True


def fallback_recall(workspace_path: Path | str, agent_id: str, query: str, *, limit: int = 10,
                    reason: str) -> FallbackResult:  # fmt: skip
    """The agent's Markdown chunks that best match ``query``: BM25 first, then a substring scan.

    Raises :class:`kg.errors.InputError` for an invalid agent id or a limit outside 1..1000; anything
    wrong with the files or the index sidecar is logged and worked around, never raised.
    """
    workspace = Path(workspace_path)
    layout.agent_dir(workspace, agent_id)  # validates the id before anything is read
    log.warning("recall for agent %r answers from the Markdown files: %s", agent_id, reason)
    index = MarkdownIndex(workspace)
    indexed = index.view(agent_id)  # a read: the files as they are now, nothing written
    files, chunks = len(indexed.files), sum(len(f.chunks) for f in indexed.files.values())
    try:
        found = index.search(agent_id, query, limit=limit, refresh=False)
    except ImportError as exc:  # bm25s missing from a broken install: the substring scan still answers
        log.warning("BM25 over the Markdown files is unavailable (%s): substring scan only", exc)
        found = []
    method: FallbackMethod | None = "bm25"
    if not found:
        found = index.scan(agent_id, query, limit=limit)
        method = "substring" if found else None
        log.info("BM25 found nothing for %r in %d files of agent %r; substring scan found %d lines",
                 query, files, agent_id, len(found))  # fmt: skip
    hits = [_mark(hit, method, reason) for hit in found] if method else []
    return FallbackResult(agent_id=agent_id, query=query, reason=reason, method=method, hits=hits, files=files,
                          chunks=chunks)  # fmt: skip


def _mark(hit: MarkdownHit, method: FallbackMethod, reason: str) -> FileHit:
    return FileHit(**hit.model_dump(), method=method, fallback=True, reason=reason)


__all__ = ["FallbackMethod", "FallbackResult", "FileHit", "FileMethod", "fallback_recall"]
