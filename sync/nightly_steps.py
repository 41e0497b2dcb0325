"""The steps of the nightly job (``mabos sync nightly``), in the order they run.

Each step is a thin call into the service that the matching CLI command wraps. A step runs either once
per selected agent (``for_agent``) or once for the workspace (``for_workspace``) and returns JSON-able
counts; a workspace step raises :class:`StepSkipped` when there is nothing it can do (TypeDB not
configured, no embedder); any other exception means the step (for that agent) failed. The runner in
:mod:`sync.nightly` isolates the steps.

Order (see ``docs/nightly.md`` for why): the daily logs completed from the store first (they feed the
hierarchy), the extraction of the day's conversations (it feeds the memory steps), then the local maintenance
(tiers, consolidate, hierarchy,
bdi-cycle, infer), then the derived views of tonight's state (materialize, vector-index,
markdown-index), and the shared graph last (schema, push), so that tonight's changes reach TypeDB
tonight rather than a day late.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.errors import BackendUnavailableError
from kg.extraction.workspace import configured_service, reweigh, save_report
from kg.memory.consolidation import consolidate
from kg.memory.daily_log import catch_up
from kg.memory.hierarchy import build_hierarchy
from kg.memory.materialize import FileStatus, materialize
from kg.recall.file_search import embed_chunks
from kg.recall.markdown_index import MarkdownIndex
from kg.workspace import Workspace
from reasoning.bdi.cycle import run_cycle
from reasoning.service import Reasoner
from sync.replay import PushReport
from sync.shared_graph import push_outbox, sync_schema, typedb_settings

#: ``progress(done, total)``: how far the running step is (``total`` None while unknown).
Progress = Callable[[int, int | None], None]
Counts = dict[str, Any]


class StepSkipped(Exception):
    """Raised by a step that cannot run here (TypeDB not configured, no embedder); the message says why."""


@dataclass
class StepContext:
    """What a step gets: the open workspace, the ``--typedb`` override and a progress callback."""

    ws: Workspace
    typedb: str | None = None
    progress: Progress = field(default=lambda done, total: None)


@dataclass(frozen=True)
class Step:
    """One named step of the nightly job.

    Attributes:
        name: Step name, as given to ``--skip`` and shown in the report.
        description: One line for the docs and the report.
        summary: ``str.format`` template over the step's counts (summed over agents), the ok message.
        for_agent: ``(ctx, agent_id) -> counts``, run once per selected agent; or
        for_workspace: ``(ctx) -> counts``, run once.
    """

    name: str
    description: str
    summary: str
    for_agent: Callable[[StepContext, str], Counts] | None = None
    for_workspace: Callable[[StepContext], Counts] | None = None


def daily_logs_step(ctx: StepContext) -> Counts:
    """Daily logs completed from the store (as every open does): entries of items committed before a crash."""
    report = catch_up(ctx.ws.path, ctx.ws.ports)
    return {"checked": report.checked, "appended": len(report.appended), "mark": report.mark_after}


def extract_step(ctx: StepContext, agent_id: str) -> Counts:
    """Extraction (``mabos memory extract`` as ``[extraction]`` configures it): messages not yet extracted become
    memory items and facts; the report is saved under ``.mabos/extraction-reports/``; then the importance of
    extracted items is recomputed (:func:`kg.extraction.workspace.reweigh`)."""
    report = configured_service(ctx.ws).extract(agent_id)
    totals = report.totals()
    if report.windows or report.summaries:
        save_report(ctx.ws, report, "nightly")
    return {"windows": totals["windows"], "items": totals["items_written"], "facts": totals["facts_asserted"],
            "invalidated": totals["facts_invalidated"], "failed": totals["windows_failed"],
            "reweighed": reweigh(ctx.ws, agent_id)}  # fmt: skip


def consolidate_step(ctx: StepContext, agent_id: str) -> Counts:
    """Memory consolidation (``mabos memory consolidate``): promote and merge important memories."""
    result = consolidate(ctx.ws, agent_id)
    return {"candidates": result.candidates, "groups": len(result.groups), "merged": len(result.archived),
            "promoted": len(result.promoted)}  # fmt: skip


def hierarchy_step(ctx: StepContext, agent_id: str) -> Counts:
    """Time hierarchy (``mabos memory hierarchy build``): missing or stale weekly/monthly/quarterly summaries."""
    result = build_hierarchy(ctx.ws.path, agent_id, scope="all", clock=ctx.ws.clock)
    return {"daily_logs": result.daily_logs, "created": len(result.created), "updated": len(result.updated),
            "unchanged": len(result.unchanged)}  # fmt: skip


def bdi_cycle_step(ctx: StepContext, agent_id: str) -> Counts:
    """BDI maintenance (``mabos bdi cycle``): conflicts, stale intentions, desire priorities."""
    result = run_cycle(ctx.ws, agent_id)
    report = result.details.report_path
    if report and Path(report).is_relative_to(ctx.ws.path):
        report = Path(report).relative_to(ctx.ws.path).as_posix()
    return {"conflicts": result.conflicts_detected, "intentions_pruned": result.stale_intentions_pruned,
            "desires_prioritized": result.desires_prioritized, "chunks": result.chunks_processed,
            "conflict_report": report}  # fmt: skip


def tiers_step(ctx: StepContext, agent_id: str) -> Counts:
    """Tier management and decay: archive expired short-term items, then apply the tier rules."""
    expired = ctx.ws.memory.prune_expired(agent_id)
    changes = ctx.ws.memory.apply_tier_rules(agent_id)
    moves = Counter(change.new_tier.value for change in changes)
    return {"expired": len(expired), "moved": len(changes), "to_core": moves["core"],
            "to_working": moves["working"], "to_peripheral": moves["peripheral"]}  # fmt: skip


def infer_step(ctx: StepContext, agent_id: str) -> Counts:
    """Forward inference with persistence (``mabos infer forward --persist``), within the workspace's bounds."""
    report = Reasoner.for_workspace(ctx.ws).forward(agent_id, persist=True, limit=1)
    return {"facts": report.facts, "rules": report.rules, "derived": report.total_derived, "created": report.created,
            "updated": report.updated, "unchanged": report.unchanged, "retracted": len(report.retracted),
            "fixpoint": report.fixpoint, "stopped_by": report.stopped_by or ""}  # fmt: skip


def materialize_step(ctx: StepContext, agent_id: str) -> Counts:
    """Markdown materialization (``mabos memory materialize``): the agent's read-only ``mabos-*.md`` files."""
    files = materialize(ctx.ws, agent_id).files
    written = sum(1 for f in files if f.status is FileStatus.WRITTEN)
    return {"files": len(files), "written": written, "unchanged": len(files) - written,
            "records": sum(f.records for f in files)}  # fmt: skip


def vector_index_step(ctx: StepContext) -> Counts:
    """Vector index maintenance (``mabos index update``): embed the backlog and save the index."""
    if ctx.ws.vectors is None:
        raise StepSkipped("no embedder (recall.embedder or MABOS_EMBEDDER is 'none'); recall runs BM25-only")
    report = ctx.ws.vectors.sync(save=True, progress=ctx.progress)
    if not report.usable:
        raise BackendUnavailableError(f"vector index: {report.reason}")
    return {"indexed": report.indexed, "removed": report.removed, "backlog": report.backlog,
            "rebuilt": report.rebuilt, "saved": report.saved}  # fmt: skip


def markdown_index_step(ctx: StepContext, agent_id: str) -> Counts:
    """Markdown index (the other half of ``mabos index update``): re-chunk the agent's changed files, then embed the
    chunks the embedding cache lacks (when an embedder can run), so a hybrid recall of files reads them cached."""
    index = MarkdownIndex(ctx.ws.path)
    stats = index.refresh(agent_id)
    try:
        embedded = embed_chunks(index, agent_id, ctx.ws.embedder)
    except BackendUnavailableError:  # no model now: the recall embeds them (BM25 answers without an embedder)
        embedded = 0
    return {"files": stats.files, "chunks": stats.chunks, "added": len(stats.added), "changed": len(stats.changed),
            "removed": len(stats.removed), "embedded": embedded}  # fmt: skip


def _require_typedb(ctx: StepContext) -> None:
    if typedb_settings(ctx.ws, ctx.typedb) is None:
        raise StepSkipped("not configured (no --typedb, MABOS_TYPEDB_ADDRESS or [typedb] address)")


def schema_step(ctx: StepContext) -> Counts:
    """TypeDB schema sync, only when the ontology (or the target) changed since the last sync."""
    _require_typedb(ctx)
    report = sync_schema(ctx.ws, if_changed=True, override=ctx.typedb)
    return {key: report[key] for key in ("address", "database", "created", "changed", "defined", "queries")}


def push_step(ctx: StepContext) -> Counts:
    """Outbox push (``mabos sync push``): replay the unacknowledged events to TypeDB."""
    _require_typedb(ctx)
    pending = int(ctx.ws.ports.outbox.counts()["pending"])
    ctx.progress(0, pending)

    def progress(report: PushReport) -> None:
        ctx.progress(report.sent, max(pending, report.sent))

    report = push_outbox(ctx.ws, progress=progress, override=ctx.typedb)
    return {"sent": report.sent, "batches": report.batches, "acknowledged": report.acknowledged,
            "pending_left": report.pending_left, "by_aggregate": dict(report.by_aggregate)}  # fmt: skip


STEPS: tuple[Step, ...] = (
    Step("daily-logs", "daily logs completed from the store", "{appended} entries appended, {checked} items checked",
         for_workspace=daily_logs_step),
    Step("extract", "memory and fact extraction from conversations", "{items} items and {facts} facts from "
         "{windows} windows ({invalidated} facts closed, {failed} windows failed)", for_agent=extract_step),
    Step("tiers", "tier management and decay", "{expired} expired archived, {moved} tier moves", for_agent=tiers_step),
    Step("consolidate", "memory consolidation", "{candidates} candidates, {groups} merged groups, {promoted} promoted",
         for_agent=consolidate_step),
    Step("hierarchy", "weekly/monthly/quarterly summaries", "{created} created, {updated} updated, "
         "{unchanged} unchanged from {daily_logs} daily logs", for_agent=hierarchy_step),
    Step("bdi-cycle", "BDI maintenance cycle", "{conflicts} conflicts, {intentions_pruned} intentions dropped, "
         "{desires_prioritized} desires re-prioritised", for_agent=bdi_cycle_step),
    Step("infer", "forward inference (persisted)", "{derived} derived: {created} new, {updated} updated, "
         "{unchanged} unchanged, {retracted} retracted", for_agent=infer_step),
    Step("materialize", "Markdown materialization", "{written} files written, {unchanged} unchanged",
         for_agent=materialize_step),
    Step("vector-index", "vector index maintenance", "{indexed} items embedded, {backlog} waiting",
         for_workspace=vector_index_step),
    Step("markdown-index", "Markdown index refresh", "{chunks} chunks of {files} files",
         for_agent=markdown_index_step),
    Step("schema", "TypeDB schema sync (if changed)", "defined: {defined} (changed: {changed})",
         for_workspace=schema_step),
    Step("push", "outbox push to TypeDB", "{sent} events sent, {pending_left} pending", for_workspace=push_step),
)  # fmt: skip

#: Step names in run order (the choices of ``--skip``).
STEP_NAMES: tuple[str, ...] = tuple(step.name for step in STEPS)

__all__ = ["STEPS", "STEP_NAMES", "Counts", "Progress", "Step", "StepContext", "StepSkipped"]
