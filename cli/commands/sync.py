"""``mabos sync push`` (and the nightly job, workspace import/export): the workspace and the outside world."""

from __future__ import annotations

import click

from cli import render
from cli.commands.sync_nightly import nightly
from cli.commands.sync_workspace import export_workspace, import_workspace
from cli.common import Session, example, typedb_options
from cli.progress import progress
from cli.tools.typedb import PushResult


@click.group("sync")
def sync() -> None:
    """Push the outbox to TypeDB, run the nightly job, import and export workspaces."""


@sync.command("push", help=example(
    "Send the outbox's unacknowledged events to TypeDB, oldest first, in batches of --batch, each batch one "
    "transaction, acknowledged only after it committed; idempotent, and a crashed push resumes where it stopped. "
    "Syncs the schema first if it changed. Exit code 3 when TypeDB is unreachable (the outbox is left as it was).",
    "mabos sync push --batch 500 --json",
))  # fmt: skip
@click.option("--batch", type=click.IntRange(1, 10_000), default=500, show_default=True, help="Events per transaction.")
@typedb_options
def push(out: Session, *, batch: int) -> None:
    ws = out.workspace()
    with progress("pushing", ws.ports.outbox.counts()["pending"]) as update:
        report = out.run("typedb_sync_agent_data", {"batch": batch}, PushResult,
                         progress=lambda pushed: update(pushed.sent))  # fmt: skip
    summary = f"pushed {report.sent} events in {report.batches} batches; {report.pending_left} left"
    out.emit(report, render.done(summary), render.key_values("by aggregate", sorted(report.by_aggregate.items())))


sync.add_command(nightly)
sync.add_command(import_workspace)
sync.add_command(export_workspace)

__all__ = ["sync"]
