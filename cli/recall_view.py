"""Human rendering of a recall: the hits (or file spans), how they were found and, with --explain, why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli import render

if TYPE_CHECKING:  # --json never imports rich (cli/render.py makes the renderings on first use)
    from rich.console import RenderableType
    from rich.table import Table

    from kg.memory.service import RecallResult
    from kg.recall.fusion_types import ScoreBreakdown

#: Components shown by --explain, in pipeline order (docs/recall-scoring.md defines each).
EXPLAIN_FIELDS = (
    "bm25_raw", "bm25_norm", "bm25_rank", "vector_sim", "vector_norm", "vector_rank", "rrf", "fused",
    "floor_applied", "bonus", "coverage", "importance", "importance_blend", "tier", "age_days", "recency", "frequency",
    "importance_confidence", "decay_boost", "decayed", "mmr_penalty", "final",
)  # fmt: skip


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def explain_line(breakdown: ScoreBreakdown) -> str:
    """``bm25_norm=0.8 vector_norm=0.6 ... final=0.52`` for one result."""
    return " ".join(f"{name}={_fmt(getattr(breakdown, name))}" for name in EXPLAIN_FIELDS)


def recall_view(result: RecallResult, *, explain: bool) -> list[RenderableType]:
    """Summary line, the table of hits or file spans, then notes (and explanations with ``explain``)."""
    parts: list[RenderableType] = []
    how = f"mode {result.mode}" + (f", fusion {result.fusion}" if result.mode in ("hybrid",) else "")
    if result.fallback:
        parts.append(render.note(f"answered from the Markdown files (fallback): {result.reason}"))
    if result.files or result.fallback:
        parts.append(render.note(f"{len(result.files)} file spans ({how})"))
        parts.append(_files_table(result))
    else:
        parts.append(render.note(f"{len(result.hits)} recalled item{'' if len(result.hits) == 1 else 's'} ({how})"))
        parts.append(_hits_table(result))
    if explain:
        for n, hit in enumerate(result.hits, 1):
            if hit.explain is not None:
                parts.append(render.note(f"#{n} {hit.item.uid}: {explain_line(hit.explain)}"))
        for n, span in enumerate(result.files, 1):
            if span.explain is not None:
                parts.append(render.note(f"#{n} {span.path}:{span.line_start}: {explain_line(span.explain)}"))
    parts.extend(render.note(f"note: {text}") for text in result.notes)
    return parts


def _hits_table(result: RecallResult) -> Table:
    return render.table(
        "recall",
        ["score", "bm25", "vector", "depth", "uid", "type", "store", "importance", "content"],
        [(f"{h.score:.3f}", f"{h.bm25:.2f}", f"{h.vector:.2f}", "" if h.depth is None else h.depth, h.item.uid,
          h.item.type.value, h.item.store.value, f"{h.item.importance:.2f}", h.item.content)
         for h in result.hits],
    )  # fmt: skip


def _files_table(result: RecallResult) -> Table:
    return render.table(
        "recall (files)",
        ["score", "file", "lines", "method", "text"],
        [(f"{f.score:.3f}", f.path, f"{f.line_start}-{f.line_end}", f.method, f.text.strip()[:200])
         for f in result.files],
    )  # fmt: skip
