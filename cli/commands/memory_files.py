"""``mabos memory checkpoint`` and ``mabos memory hierarchy build|search``: an agent's memory files.

:data:`checkpoint` and :data:`hierarchy` are attached to the ``memory`` group; each body runs one tool of
:mod:`cli.tools.memory` (``memory_checkpoint``, ``memory_build_hierarchy``, ``memory_hierarchy_search``) and emits.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import get_args

import click
from rich.console import Group, RenderableType
from rich.text import Text

from cli import render
from cli.common import Session, agent_option, example, mabos_options
from cli.tools.memory import CheckpointResult, HierarchyHits
from kg.memory.hierarchy import HierarchyResult, HierarchyScope, Level

DATE = click.DateTime(formats=["%Y-%m-%d"])


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
@agent_option
@click.option("--context", default=None, help="What the agent is working on (required unless --show-latest).")
@click.option("--decision", "decisions", multiple=True, help="An active decision (repeatable).")
@click.option("--finding", "findings", multiple=True, help="A key finding (repeatable).")
@click.option("--next-step", "next_steps", multiple=True, help="A next step (repeatable).")
@click.option("--question", "questions", multiple=True, help="An open question (repeatable).")
@click.option("--show-latest", is_flag=True, help="Print the newest checkpoint instead of writing one.")
@mabos_options
def checkpoint(out: Session, *, agent: str, context: str | None, decisions: tuple[str, ...],
               findings: tuple[str, ...], next_steps: tuple[str, ...], questions: tuple[str, ...],
               show_latest: bool) -> None:  # fmt: skip
    """Write or show a checkpoint."""
    entries = {"decisions": list(decisions), "findings": list(findings), "next_steps": list(next_steps),
               "open_questions": list(questions)}  # fmt: skip
    if show_latest and (context is not None or any(entries.values())):
        raise click.UsageError("--show-latest takes no --context, --decision, --finding, --next-step or --question")
    if not show_latest and context is None:
        raise click.UsageError("--context is required (or give --show-latest)")
    arguments = {"show_latest": True} if show_latest else {"context": context, **entries}
    result = out.run("memory_checkpoint", {"agent_id": agent, **arguments}, CheckpointResult)
    out.emit(result, _checkpoint_view(result, agent, out.workspace().path, written=not show_latest))


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
@agent_option
@click.option("--scope", type=click.Choice(get_args(HierarchyScope)), default="all", show_default=True,
              help="Which summaries to build.")  # fmt: skip
@click.option("--since", type=DATE, default=None, metavar="YYYY-MM-DD", help="Only periods ending on or after it.")
@mabos_options
def build(out: Session, *, agent: str, scope: str, since: datetime | None) -> None:
    """Build the time hierarchy."""
    arguments = {"agent_id": agent, "scope": scope, "since": since.date() if since else None}
    result = out.run("memory_build_hierarchy", arguments, HierarchyResult)
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
@agent_option
@click.argument("query")
@click.option("--level", type=click.Choice(get_args(Level)), default="weekly", show_default=True,
              help="Which files to search.")  # fmt: skip
@click.option("--limit", type=int, default=10, show_default=True, help="At most this many hits.")
@mabos_options
def search(out: Session, *, agent: str, query: str, level: str, limit: int) -> None:
    """Search the time hierarchy."""
    arguments = {"agent_id": agent, "query": query, "level": level, "limit": limit}
    found = out.run("memory_hierarchy_search", arguments, HierarchyHits)
    hits, root = found.hits, out.workspace().path
    rows = [(f"{_relative(h.path, root)}:{h.line_start}-{h.line_end}", f"{h.score:.2f}", h.snippet) for h in hits]
    out.emit(hits, render.table(f"{level.capitalize()} hits", ("where", "score", "text"), rows),
             render.count(hits, "hit", limit))  # fmt: skip


__all__ = ["build", "checkpoint", "hierarchy", "search"]
