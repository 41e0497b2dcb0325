"""``mabos sync import-workspace`` and ``mabos sync export-workspace``: the OpenClaw-MABOS layout in and out.

Both commands are attached to the ``sync`` group; each body makes one call into :mod:`sync.workspace_io`
and emits the report (a progress bar on stderr while it works, only on a terminal and never with --json).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.text import Text

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, options_for
from sync import workspace_io
from sync.workspace_io import Progress as ProgressCallback
from sync.workspace_io import WorkspaceReport
from sync.workspace_io.requests import WorkspaceExportRequest, WorkspaceImportRequest

#: How the two commands spell the request's fields: PATH a directory argument, --agent/-a the agents.
_FILES = {
    "path": Cli(params=(click.Argument(["path"], type=click.Path(path_type=Path, file_okay=False)),),
                build=lambda path: path),
    "agents": Cli(flag="--agent", short="-a", metavar="AGENT"),
}  # fmt: skip

#: The request of one direction of the transfer.
Request = WorkspaceImportRequest | WorkspaceExportRequest


@contextmanager
def _progress(out: Session) -> Iterator[ProgressCallback | None]:
    """A callback driving a progress bar on stderr (None when it would not be seen or would pollute JSON)."""
    if out.as_json or not sys.stderr.isatty():
        yield None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   console=Console(stderr=True), transient=True)  # fmt: skip
    tasks: dict[str, TaskID] = {}
    with bar:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _transfer(name: str, help_text: str, model: type[Request], work: Callable[..., WorkspaceReport]) -> click.Command:
    """``mabos sync NAME``: PATH and --agent from the request ``model`` (:data:`_FILES`), then
    ``work(workspace, request, progress=...)`` with a progress bar, then the report: as JSON with its totals per
    kind, or as a table and a line per skipped or refused record."""

    def transfer(out: Session, *, request: Request) -> None:
        with _progress(out) as progress:
            report = work(out.workspace(), request, progress=progress)
        out.emit(report.model_dump(mode="json") | {"totals": report.totals}, *_report(report))

    return click.command(name, help=help_text)(options_for(model, _FILES)(mabos_options(transfer)))


def _report(report: WorkspaceReport) -> list[RenderableType]:
    columns = ("exported",) if report.direction == "export" else ("created", "updated", "unchanged", "skipped",
                                                                   "refused")  # fmt: skip
    rows = [(kind, *(getattr(counts, c) for c in columns)) for kind, counts in report.totals.items()]
    verb = "Exported to" if report.direction == "export" else "Dry run of" if report.dry_run else "Imported from"
    human: list[RenderableType] = [render.table(f"{verb} {report.path}", ("kind", *columns), rows)]
    for agent in report.agents:
        human += [render.note(f"{agent.agent_id}: skipped {s.kind} {s.uid} ({s.where}): {s.reason}")
                  for s in agent.skipped]  # fmt: skip
        human += [Text(f"refused: {agent.agent_id}: {s.kind} {s.uid} ({s.where}): {s.reason}", style="red")
                  for s in agent.refused]  # fmt: skip
        human += [Text(f"warning: {w}", style="yellow") for w in agent.warnings]
    human += [render.note(f"ignored: {line}") for line in report.ignored]
    agents = ", ".join(a.agent_id for a in report.agents) or "no agents"
    human.append(render.done(f"{len(report.agents)} agent(s): {agents}" + (" (nothing written)" if report.dry_run
                                                                           else "")))  # fmt: skip
    return human


import_workspace = _transfer(
    "import-workspace",
    example(
        "Import an OpenClaw-MABOS workspace directory (agents/<id>/memory-store.json, facts.json, rules.json, "
        "cases.json, Beliefs.md, Desires.md, Goals.md, Intentions.md, Plans.md).\n\n"
        "Everything is validated first: a bad file stops the import with one line naming the file, the record "
        "and the field, and nothing is written. Records keep their ids (ids of the original system become "
        "stable mabos ids), timestamps, confidences and lineage; importing the same directory again adds "
        "nothing. Agents that do not exist are created. --dry-run reports what would happen.\n\n"
        "The files under agents/<id>/ are treated as that agent's own writes: a record in a scope the agent may "
        "not write (another agent's, an ungranted project) is refused, and so is a uid naming another agent's "
        "record; each is listed in the report with its reason.",
        "mabos sync import-workspace ~/openclaw/workspace --dry-run",
        "mabos sync import-workspace ./export --agent cfo --json",
    ),
    WorkspaceImportRequest,
    workspace_io.import_workspace,
)
export_workspace = _transfer(
    "export-workspace",
    example(
        "Export agents to a directory in the OpenClaw-MABOS layout.\n\n"
        "Writes agents/<id>/ with memory-store.json, facts.json, rules.json, cases.json, Beliefs.md, "
        "Desires.md, Goals.md, Intentions.md, Plans.md (plus mabos-agent.json and mabos-relations.json) and "
        "a manifest mabos-export.json. Each file is written atomically and only if it changed; a file that "
        "exists and was not written by mabos is never overwritten (the export stops first and names it).",
        "mabos sync export-workspace ./export",
        "mabos sync export-workspace ./export --agent sales-agent --json",
    ),
    WorkspaceExportRequest,
    workspace_io.export_workspace,
)

__all__ = ["export_workspace", "import_workspace"]
