"""The write path's index upkeep shared by ``mabos index update`` and ``mabos demo``: embed the vector index's
backlog and save it, refresh every agent's Markdown index and embed the chunks the embedding cache lacks, so that the
next recall only reads (a recall never writes its indexes: docs/decisions/2026-11-28-recall-reads.md)."""

from __future__ import annotations

from cli.progress import progress
from kg.errors import BackendUnavailableError
from kg.recall.file_search import embed_chunks
from kg.recall.markdown_index import MarkdownIndex, RefreshStats
from kg.recall.sidecar import VectorSidecar
from kg.recall.sidecar_state import SyncReport
from kg.workspace import Workspace


def sidecar(ws: Workspace) -> VectorSidecar:
    """The workspace's vector index, or a one-line error when no embedder is configured."""
    if ws.vectors is None:
        raise BackendUnavailableError("embedder: none configured (recall.embedder or MABOS_EMBEDDER is 'none')")
    return ws.vectors


def update_indexes(ws: Workspace) -> tuple[SyncReport, list[RefreshStats], int]:
    """``mabos index update``'s work (also the end of ``mabos demo``): embed the vector index's backlog and save it,
    refresh every agent's Markdown index and embed the chunks the embedding cache lacks, so that the next recall
    only reads. The vector report, the agents' Markdown summaries and how many chunk vectors were added."""
    with progress("embedding") as update:
        report = sidecar(ws).sync(save=True, progress=update)
    markdown = MarkdownIndex(ws.path)
    files = markdown.refresh_all()
    if not report.usable:
        raise BackendUnavailableError(report.reason)
    return report, files, sum(embed_chunks(markdown, f.agent_id, ws.embedder) for f in files)
