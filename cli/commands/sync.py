"""``mabos sync push`` (and the nightly job, workspace import/export): the workspace and the outside world."""

from __future__ import annotations

import click

from cli import render
from cli.commands.sync_nightly import nightly
from cli.commands.sync_workspace import export_workspace, import_workspace
from cli.common import Session, example, typedb_options
from cli.options import Cli, request_options
from cli.progress import progress
from cli.tools.typedb import PushResult, SyncAgentDataInput


@click.group("sync")
def sync() -> None:
    """Push the outbox to TypeDB, run the nightly job, import and export workspaces."""


@sync.command("push", help=example(
    "Send the outbox's unacknowledged events to TypeDB, oldest first, in batches of --batch, each batch one "
    "transaction, acknowledged only after it committed; idempotent, and a crashed push resumes where it stopped. "
    "Syncs the schema first if it changed. Exit code 3 when TypeDB is unreachable (the outbox is left as it was).",
    "mabos sync push --batch 500 --json",
))  # fmt: skip
@request_options(SyncAgentDataInput, agent_id=Cli(hidden=True), batch=Cli(bounded=True))
@typedb_options
def push(out: Session, *, request: SyncAgentDataInput) -> None:
    ws = out.workspace()
    with progress("pushing", ws.ports.outbox.counts()["pending"]) as update:
        report = out.run("typedb_sync_agent_data", request, PushResult,
                         progress=lambda pushed: update(pushed.sent))  # fmt: skip
    summary = f"pushed {report.sent} events in {report.batches} batches; {report.pending_left} left"
    out.emit(report, render.done(summary), render.key_values("by aggregate", sorted(report.by_aggregate.items())))


sync.add_command(nightly)
sync.add_command(import_workspace)
sync.add_command(export_workspace)

__all__ = ["sync"]
