"""The ``mabos`` command: root group, command registration and the one place errors are reported.

Exit codes: 0 ok; 1 user error (one line on stderr, ``error: <field>: <rule>``, no traceback);
2 usage error (click's own report); 3 backend unavailable. A path the file system refuses (too long, missing, no
permission) is ``error: <path>: <reason>``, exit code 1. Anything else unexpected is reported as one
``internal error: ...`` line with exit code 1; ``MABOS_DEBUG=1`` shows its traceback instead. A line is clipped
as every mabos message is (:func:`kg.errors.clip`: 600 characters, a path 200), saying how much was left out.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from cli import pydantic_plugins
from cli.commands import COMMAND_TABLE, LazyCommands
from kg.errors import MabosError, clip, one_line

DEBUG_ENV = "MABOS_DEBUG"


#: The most characters of a file name an error line shows.
NAME_CHARS = 200


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
            import traceback  # noqa: PLC0415 - the error path only (traceback imports linecache and tokenize)

            traceback.print_exc()
        click.echo(f"error: {one_line(str(exc))}", err=True)
        raise click.exceptions.Exit(exc.exit_code) from exc
    except Exception as exc:
        if debugging():
            raise
        if isinstance(exc, OSError) and exc.filename is not None:
            # the file system refused a path the user named (too long, missing, not a directory, no permission):
            # the user's to fix, in one line naming the path, not an internal error
            name = one_line(clip(os.fsdecode(exc.filename), NAME_CHARS))
            click.echo(f"error: {name}: {exc.strerror or type(exc).__name__}", err=True)
            raise click.exceptions.Exit(1) from exc
        hint = f"(set {DEBUG_ENV}=1 for the traceback)"
        click.echo(f"internal error: {type(exc).__name__}: {one_line(str(exc))} {hint}", err=True)
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


class LazyMabosGroup(MabosGroup):
    """The root ``mabos`` group: a command's module is imported when that command runs (or is asked for).

    ``mabos --help`` lists every command from :data:`cli.commands.COMMAND_TABLE` without importing one, so a bare
    start costs click and the table only (tests/unit/test_startup_imports.py).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: LazyCommands = LazyCommands(COMMAND_TABLE)
        self._listing = False
        #: Set by :func:`main` for the ``mabos`` process: see :meth:`get_command`.
        self.freeze_loaded = False

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's own listing, fed each command's table help instead of the imported command."""
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, imported now (while listing help: its stand-in)."""
        if self._listing:
            return self.commands.summary(cmd_name)
        command = super().get_command(ctx, cmd_name)
        if self.freeze_loaded:
            # What the command's import made (modules, classes, functions, pydantic's schemas) lives as long as the
            # process: moved to the garbage collector's permanent generation (gc.freeze, documented), the collections
            # the command's own allocations trigger no longer walk it each time; :func:`main` paused the collector
            # while it was imported (it makes almost no cyclic garbage) and it runs again from here. A cold fact
            # query spends about 6% fewer instructions for both (docs/decisions/2026-11-29-lazy-startup.md). Only
            # in the ``mabos`` process (main): a test or program invoking ``cli`` again and again keeps collecting.
            gc.freeze()
            gc.enable()
        return command


def _root_workspace_option(func: Any) -> Any:
    """``mabos --workspace DIR <command>``: the same option, help and context key as
    :data:`cli.common.workspace_option` (which imports the workspace; a bare start must not). The test
    ``test_root_workspace_option_matches_the_commands_one`` keeps the two alike."""

    def remember(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value not in (None, False):
            ctx.meta[WORKSPACE_KEY] = value
        return value

    return click.option(
        "--workspace",
        expose_value=False,
        callback=remember,
        type=click.Path(path_type=Path),
        default=None,
        help="Workspace directory [env MABOS_WORKSPACE; default ./mabos-workspace].",
    )(func)


#: The context key the commands' sessions read the workspace from (``cli.common.WORKSPACE_KEY``).
WORKSPACE_KEY = "mabos.workspace"


def _example(text: str, *commands: str) -> str:
    """A help text ending in an unwrapped ``Example`` block (as :func:`cli.common.example`)."""
    lines = "\n".join(f"  {command}" for command in commands)
    return f"{text}\n\nExample:\n\n\b\n{lines}\n"


@click.group(
    cls=LazyMabosGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=_example(
        "Knowledge-graph memory for BDI agents: facts, beliefs, goals and plans in a local workspace.\n\n"
        "Every command takes --json (machine-readable output) and --workspace (also accepted here, "
        "before the command). Exit codes: 0 ok, 1 user error, 2 usage error, 3 backend unavailable.",
        "mabos init --workspace ./w",
        "mabos --workspace ./w agent add sales-agent --name Sales",
        "mabos demo",
    ),
)
@_root_workspace_option
@click.version_option(package_name="mabos", prog_name="mabos")
def cli() -> None:
    """Root of the ``mabos`` command tree."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``mabos``); exits with the command's exit code."""
    # pydantic's plugins off (unless the caller chose) and its plugin loader's import of importlib.metadata saved,
    # before the first model is built: the ``mabos`` process only (docs/decisions/2026-11-29-pydantic-plugins.md)
    pydantic_plugins.configure()
    cli.freeze_loaded = gc.isenabled()  # a host that turned the collector off keeps it off
    if cli.freeze_loaded:
        gc.disable()  # until the command is loaded (LazyMabosGroup.get_command)
    try:
        cli.main(args=argv, prog_name="mabos")
    finally:
        if cli.freeze_loaded:
            gc.enable()


if __name__ == "__main__":  # python -m cli.main
    main()
