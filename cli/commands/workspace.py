"""``mabos init``, ``mabos status`` and ``mabos demo``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from cli import render
from cli.common import Session, mabos_options, typedb_options
from cli.demo import DEFAULT_DEMO_PATH, build_demo
from kg.errors import BackendUnavailableError, CorruptStoreError
from kg.workspace import CONFIG_FILE, init_workspace


@click.command("init")
@click.option("--name", default=None, help="Workspace name (lowercase, digits, - and _); default: from the folder.")
@mabos_options
def init(out: Session, name: str | None) -> None:
    """Create a workspace and say where it is.

    Idempotent: an existing workspace is left as it is.

    The workspace is --workspace, else $MABOS_WORKSPACE, else ./mabos-workspace.

    Example:

    \b
      mabos init --workspace ./my-workspace --name sales-team
    """
    existed = (out.path / CONFIG_FILE).exists()
    ws = out.adopt(init_workspace(out.path, name=name))
    where = str(ws.path.resolve())
    name = ws.config.name
    said = f"Workspace '{name}' already exists at {where}" if existed else f"Created workspace '{name}' at {where}"
    out.emit(
        {"workspace": where, "name": name, "created": not existed},
        render.done(said),
        render.note(f"Next: mabos --workspace {ws.path} agent add <agent-id> --name <name>"),
    )


@click.command("status")
@typedb_options
def status(out: Session) -> None:
    """Show counts of the workspace's records and the rung each part stands on.

    Agents, grants, facts, BDI nodes, relations, memory items and outbox events; then the degradation
    ladder: TypeDB (up, down, off), the embedded store, the vector index and the Markdown files, each with
    the reason and what answers in its place (docs/degradation.md). When the database cannot be opened, the
    ladder still shows (the Markdown files answer recall) and the exit code is 3.

    Example:

    \b
      mabos status --workspace ./my-workspace --json
    """
    # Lazy: only this command needs the TypeDB status code behind the ladder.
    from sync.ladder import ladder, ladder_without_store  # noqa: PLC0415

    try:
        ws = out.workspace()
    except (CorruptStoreError, BackendUnavailableError) as exc:
        found = ladder_without_store(out.path, str(exc))
        out.emit({"workspace": str(out.path), "ladder": found}, render.ladder_table(found))
        click.echo(f"error: {exc}", err=True)  # the one-line error every command gives, the ladder on stdout
        raise click.exceptions.Exit(BackendUnavailableError.exit_code) from None
    counts = ws.status()
    counts["ladder"] = ladder(ws, override=out.typedb)
    out.emit(counts, render.status_table(counts), render.ladder_table(counts["ladder"]))


@click.command("demo")
@mabos_options
def demo(out: Session) -> None:
    """Build a demo workspace and tour what mabos can do.

    The demo goes to --workspace, else ./mabos-demo. A previous demo there is wiped and
    rebuilt; any other workspace or non-empty directory is refused (exit code 1).

    Example:

    \b
      mabos demo
      mabos demo --workspace /tmp/mabos-demo --json
    """
    report = build_demo(out.explicit_path or Path(DEFAULT_DEMO_PATH))
    lines: list[Text] = []
    for section in report.sections:
        lines.append(Text(f"\n== {section.title} ==", style="bold"))
        lines.extend(Text(f"  {line}") for line in section.lines)
    lines.append(render.done(f"\nDemo workspace: {report.workspace}"))
    lines.append(Text("Try:"))
    lines.extend(Text(f"  {command}") for command in report.try_commands)
    out.emit(report.as_json(), *lines)
