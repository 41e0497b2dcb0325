"""The ``mabos`` command: root group, command registration and the one place errors are reported.

Exit codes: 0 ok; 1 user error (one line on stderr, ``error: <field>: <rule>``, no traceback);
2 usage error (click's own report); 3 backend unavailable. Anything unexpected is reported as one
``internal error: ...`` line with exit code 1; ``MABOS_DEBUG=1`` shows its traceback instead.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from cli.commands import COMMANDS
from cli.commands.ui import ui
from cli.common import example, workspace_option
from kg.errors import MabosError

DEBUG_ENV = "MABOS_DEBUG"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def debugging() -> bool:
    """Whether ``MABOS_DEBUG`` asks for tracebacks."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn mabos and unexpected errors into one stderr line and an exit code; let click's pass."""
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except MabosError as exc:
        if debugging():
            traceback.print_exc()
        click.echo(f"error: {_one_line(str(exc))}", err=True)
        raise click.exceptions.Exit(exc.exit_code) from exc
    except Exception as exc:
        if debugging():
            raise
        hint = f"(set {DEBUG_ENV}=1 for the traceback)"
        click.echo(f"internal error: {type(exc).__name__}: {_one_line(str(exc))} {hint}", err=True)
        raise click.exceptions.Exit(1) from exc


class MabosGroup(click.Group):
    """The root group: runs every subcommand inside :func:`reported_errors`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands in the order they were added (workspace, agents, facts, BDI, graph, scopes)."""
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        """Invoke the chosen subcommand, reporting errors as one line and an exit code."""
        with reported_errors():
            return super().invoke(ctx)


@click.group(
    cls=MabosGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=example(
        "Knowledge-graph memory for BDI agents: facts, beliefs, goals and plans in a local workspace.\n\n"
        "Every command takes --json (machine-readable output) and --workspace (also accepted here, "
        "before the command). Exit codes: 0 ok, 1 user error, 2 usage error, 3 backend unavailable.",
        "mabos init --workspace ./w",
        "mabos --workspace ./w agent add sales-agent --name Sales",
        "mabos demo",
    ),
)
@workspace_option
@click.version_option(package_name="mabos", prog_name="mabos")
def cli() -> None:
    """Root of the ``mabos`` command tree."""


for _command in COMMANDS:
    cli.add_command(_command)
cli.add_command(ui)  # the web console (issue 23)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``mabos``); exits with the command's exit code."""
    cli.main(args=argv, prog_name="mabos")


if __name__ == "__main__":  # python -m cli.main
    main()
