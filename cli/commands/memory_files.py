"""``mabos memory checkpoint`` and ``mabos memory hierarchy build|search``: an agent's memory files.

:data:`checkpoint` and :data:`hierarchy` are attached to the ``memory`` group; each body runs one tool of
:mod:`cli.tools.memory_admin` (``memory_checkpoint``, ``memory_build_hierarchy``, ``memory_hierarchy_search``) and
emits.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Group, RenderableType
from rich.text import Text

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, acting, request_options
from cli.tools.memory_admin import (
    BuildHierarchyInput,
    CheckpointInput,
    CheckpointResult,
    HierarchyHits,
    HierarchySearchInput,
)
from kg.memory.hierarchy_models import HierarchyResult


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------------- checkpoint


@click.command(
    "checkpoint",
    help=example(
        "Write a checkpoint of the agent's working context, or show the latest one.\n\n"
        "Writes agents/<id>/memory/checkpoints/YYYY-MM-DD-HHmm.md (UTC) with the sections Current Task "
        "Context, Active Decisions, Key Findings, Next Steps and Open Questions. --decision, --finding, "
        "--next-step and --question are repeatable. --show-latest prints the newest checkpoint instead "
        '(JSON: {"path": null, "checkpoint": null} when there is none).',
        'mabos memory checkpoint --agent sales-agent --context "Closing the Acme deal" '
        '--decision "Offer the annual plan" --next-step "Send the quote"',
        "mabos memory checkpoint --agent sales-agent --show-latest --json",
    ),
)
@request_options(CheckpointInput, decisions=Cli(flag="--decision"), findings=Cli(flag="--finding"),
                 next_steps=Cli(flag="--next-step"), open_questions=Cli(flag="--question"))  # fmt: skip
@mabos_options
def checkpoint(out: Session, *, request: CheckpointInput) -> None:
    """Write or show a checkpoint."""
    entries = request.decisions or request.findings or request.next_steps or request.open_questions
    if request.show_latest and (request.context is not None or entries):
        raise click.UsageError("--show-latest takes no --context, --decision, --finding, --next-step or --question")
    if not request.show_latest and request.context is None:
        raise click.UsageError("--context is required (or give --show-latest)")
    result = out.run("memory_checkpoint", request, CheckpointResult)
    out.emit(result, _checkpoint_view(result, acting(request), out.workspace().path, written=not request.show_latest))


def _checkpoint_view(result: CheckpointResult, agent: str, root: Path, *, written: bool) -> RenderableType:
    if result.path is None or result.checkpoint is None:
        return render.note(f"No checkpoint yet for {agent}.")
    if written:
        return render.done(f"Checkpoint {result.checkpoint.uid} written to {_relative(result.path, root)}")
    text = result.path.read_text(encoding="utf-8", errors="replace")
    return Group(render.note(str(result.path)), Text(text.split("\n", 1)[-1].rstrip()))


# ---------------------------------------------------------------------------------- hierarchy


@click.group("hierarchy")
def hierarchy() -> None:
    """Weekly, monthly and quarterly summaries of the daily logs (the time hierarchy).

    Summaries are extractive (no LLM) and record a hash of their sources: a build rewrites only
    the missing or stale ones.
    """


@hierarchy.command(
    "build",
    help=example(
        "Build the missing or stale summaries of an agent's daily logs.\n\n"
        "Weekly (ISO week) summaries come from the daily logs, monthly ones from the dailies and weeks "
        "of the month, quarterly ones from the months. --scope picks the levels; --since keeps only "
        "periods that end on or after that date. Weeks without a daily log are skipped, never an error.",
        "mabos memory hierarchy build --agent sales-agent",
        "mabos memory hierarchy build --agent sales-agent --scope week --since 2026-01-01 --json",
    ),
)
@request_options(BuildHierarchyInput)
@mabos_options
def build(out: Session, *, request: BuildHierarchyInput) -> None:
    """Build the time hierarchy."""
    result = out.run("memory_build_hierarchy", request, HierarchyResult)
    out.emit(result, *_build_report(result, out.workspace().path))


def _build_report(result: HierarchyResult, root: Path) -> list[RenderableType]:
    rows = [(_relative(p, root), "created") for p in result.created]
    rows += [(_relative(p, root), "updated") for p in result.updated]
    report: list[RenderableType] = [render.table("Summaries written", ("file", "status"), rows)]
    counts = f"{len(result.created)} created, {len(result.updated)} updated, {len(result.unchanged)} unchanged"
    report.append(render.done(f"{counts} from {result.daily_logs} daily logs"))
    if result.skipped:
        report.append(render.note(f"Skipped (no daily log): {', '.join(result.skipped)}"))
    report += [render.note(f"Kept (not written by mabos): {_relative(p, root)}") for p in result.foreign]
    if result.ignored:
        report.append(render.note(f"Ignored (not a real date): {', '.join(result.ignored)}"))
    return report


@hierarchy.command(
    "search",
    help=example(
        "Search one level of the time hierarchy (lexical: query-term overlap).\n\n"
        "--level daily searches the entries of the daily logs; weekly, monthly and quarterly search the "
        "summaries. Each hit cites the file and the lines that matched.",
        'mabos memory hierarchy search --agent sales-agent "acme pricing" --level weekly',
        'mabos memory hierarchy search --agent sales-agent "jwt" --level daily --limit 5 --json',
    ),
)
@request_options(HierarchySearchInput, query=Cli(argument=True))
@mabos_options
def search(out: Session, *, request: HierarchySearchInput) -> None:
    """Search the time hierarchy."""
    found = out.run("memory_hierarchy_search", request, HierarchyHits)
    hits, root = found.hits, out.workspace().path
    rows = [(f"{_relative(h.path, root)}:{h.line_start}-{h.line_end}", f"{h.score:.2f}", h.snippet) for h in hits]
    out.emit(hits, render.table(f"{request.level.capitalize()} hits", ("where", "score", "text"), rows),
             render.count(hits, "hit", request.limit))  # fmt: skip


__all__ = ["build", "checkpoint", "hierarchy", "search"]
