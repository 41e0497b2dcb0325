"""``mabos sync nightly``: the nightly maintenance job (the lead attaches :data:`nightly` to the ``sync`` group).

Its options are generated from :class:`sync.nightly_requests.NightlyRequest`; the body makes one call to
:func:`sync.nightly.nightly` with a progress observer and emits the report; the exit code is the report's (0 ok,
1 a step failed, 3 only backends unavailable).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from cli import render
from cli.common import Session, example, mabos_options, typedb_option
from cli.options import Cli, request_options
from sync.nightly import EXIT_OK, NightlyReport, StepResult, StepStatus
from sync.nightly import nightly as run_nightly_job
from sync.nightly_requests import NightlyRequest
from sync.nightly_steps import STEP_NAMES

_STYLE = {StepStatus.OK: "green", StepStatus.SKIPPED: "yellow", StepStatus.FAILED: "red"}


class _Bars:
    """One progress line per step on stderr (nothing when stderr is not a terminal)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def _task(self, name: str) -> TaskID:
        if name not in self.tasks:
            self.tasks[name] = self.progress.add_task(name, total=None)
        return self.tasks[name]

    def step_started(self, name: str) -> None:
        self._task(name)

    def step_progress(self, name: str, done: int, total: int | None) -> None:
        self.progress.update(self._task(name), completed=done, total=total)

    def step_finished(self, result: StepResult) -> None:
        label = f"[{_STYLE[result.status]}]{result.name}: {result.status.value}[/]"
        self.progress.update(self._task(result.name), description=label, total=1, completed=1)


@contextmanager
def _bars(*, shown: bool) -> Iterator[_Bars]:
    """Progress on stderr, only on a terminal and never with --json."""
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not (shown and console.is_terminal)) as progress:  # fmt: skip
        yield _Bars(progress)


def _render(report: NightlyReport) -> list[RenderableType]:
    rows = [(r.name, r.status.value, f"{r.duration_s:.2f}", r.message) for r in report.steps]
    table = render.table(f"Nightly run {report.date}", ("step", "status", "seconds", "message"), rows)
    where = f"report: {', '.join(report.files)}"
    if report.exit_code == EXIT_OK:
        return [table, render.done(f"all steps ok or skipped; {where}")]
    return [table, render.note(f"failed: {', '.join(report.failed)} (exit code {report.exit_code}); {where}")]


@click.command(
    "nightly",
    help=example(
        "Run the nightly maintenance job: tiers (and decay), consolidate, hierarchy, bdi-cycle, infer (persisted), "
        "materialize, vector-index, markdown-index, then TypeDB schema (if the ontology changed) and push.\n\n"
        "Per-agent steps run for each --agent (repeatable) or every agent (--all). Every step runs even when "
        "another fails. Writes .mabos/reports/nightly-YYYY-MM-DD.json and .md (a second run that day replaces "
        "them); a second run while one is going is refused. Without TypeDB configured, schema and push are "
        "skipped. Exit code: 0 no step failed; 3 every failed step failed only because a backend (TypeDB) "
        "was unreachable; 1 otherwise. Guide: docs/nightly.md.",
        "mabos sync nightly --all",
        "mabos sync nightly --agent sales-agent --skip vector-index --typedb localhost:1729 --json",
    ),
)
@request_options(NightlyRequest, agents=Cli(flag="--agent", short="-a", metavar="AGENT"), all_agents=Cli(flag="--all"),
                 skip=Cli(choices=STEP_NAMES))  # fmt: skip
@typedb_option
@mabos_options
def nightly(out: Session, *, request: NightlyRequest) -> None:
    """Run the nightly job; JSON is the report (also written to .mabos/reports/)."""
    if (
        bool(request.agents) == request.all_agents
    ):  # the library may run no agent's steps; the command asks for a choice
        raise click.UsageError("give --agent AGENT (repeatable) or --all")
    with _bars(shown=not out.as_json) as bars:
        report = run_nightly_job(out.workspace(), request, typedb=out.typedb, observer=bars)
    out.emit(report, *_render(report))
    if report.exit_code != EXIT_OK:
        first = next(r for r in report.steps if r.status is StepStatus.FAILED)
        click.echo(f"error: nightly: {', '.join(report.failed)} failed ({first.name}: {first.message})", err=True)
        raise click.exceptions.Exit(report.exit_code)


__all__ = ["nightly"]
