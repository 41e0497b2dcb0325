"""Recall answered by an agent's Markdown files: asked for (``source="files"``), or standing in when the database or
the vector index cannot answer (the fallback, ``fallback: true``).

Both are reads: the Markdown index is read as the files are now without writing its sidecar
(:mod:`kg.recall.markdown_index`), and a files search keeps the chunk vectors the embedding cache lacked only once its
answer is complete. :func:`recall_or_files` is the one place that decides when the files stand in for the database.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from kg.errors import BackendUnavailableError, CorruptStoreError
from kg.memory.recall_search import RecallResult
from kg.memory.requests import RecallRequest
from kg.recall.engine import RecallEngine


class Recalls(Protocol):
    """What :func:`recall_or_files` asks of a workspace's memory service (:class:`kg.memory.service.MemoryService`)."""

    def recall(self, agent_id: str, query: RecallRequest, /) -> RecallResult: ...


class HasMemory(Protocol):
    """What :func:`recall_or_files` opens: a workspace, for its memory service."""

    @property
    def memory(self) -> Recalls: ...


def recall_or_files(open_workspace: Callable[[], HasMemory], path: Path, agent_id: str,
                    request: RecallRequest) -> RecallResult:  # fmt: skip
    """A recall through the workspace ``open_workspace`` opens, or, when the database cannot be opened (corrupt,
    unreadable, locked), the agent's Markdown files under ``path`` answer it (``fallback``, and ``reason`` why).

    The one place that decides this for every caller: the ``memory_recall`` tool, and so ``mabos memory recall``
    (which opens its workspace only when the tool asks). A vector index that cannot be used inside an open
    workspace falls back the same way from :meth:`MemoryService.recall`.
    """
    try:
        memory = open_workspace().memory
    except (CorruptStoreError, BackendUnavailableError) as exc:
        return answer_from_files(path, asked(agent_id, request), limit=request.limit, reason=str(exc))
    return memory.recall(agent_id, request)


def asked(agent_id: str, request: RecallRequest) -> RecallResult:
    """The result of a recall before it is answered: what was asked (the mode used is set by the answer)."""
    return RecallResult(agent_id=agent_id, query=request.query, mode=request.mode, requested_mode=request.mode,
                        fusion=request.fusion, mmr=request.mmr)  # fmt: skip


def search_agent_files(workspace: Path, engine: RecallEngine, result: RecallResult, *, now: datetime, limit: int,
                       explain: bool, min_score: float) -> RecallResult:  # fmt: skip
    """``result`` answered from the agent's Markdown files through the hybrid engine's pipeline (``source="files"``;
    the caller has checked the agent), then the chunk vectors it computed kept in the embedding cache."""
    from kg.recall.file_search import search_files  # noqa: PLC0415 - with the Markdown index: files only
    from kg.recall.markdown_index import MarkdownIndex  # noqa: PLC0415

    found = search_files(
        MarkdownIndex(workspace), result.agent_id, result.query, embedder=engine.embedder, limit=limit, now=now,
        mode=result.requested_mode, fusion=result.fusion, mmr=result.mmr, min_score=min_score, explain=explain,
        settings=engine.settings,
    )  # fmt: skip
    result.files, result.mode, result.notes = found.hits, found.mode, found.notes
    engine.remember(found.unsaved)  # the answer is complete: chunk vectors it computed go to the cache
    return result


def answer_from_files(workspace: Path, result: RecallResult, *, limit: int, reason: str) -> RecallResult:
    """``result`` answered by the file fallback (the database or vector index cannot be used: ``reason``)."""
    from kg.recall.fallback import fallback_recall  # noqa: PLC0415 - the Markdown index: only when it answers

    answer = fallback_recall(workspace, result.agent_id, result.query, limit=limit, reason=reason)
    result.fallback, result.reason, result.files, result.mode = True, reason, answer.hits, "bm25"
    return result


__all__ = ["HasMemory", "answer_from_files", "asked", "recall_or_files", "search_agent_files"]
