"""What every command shares: the ``--workspace`` and ``--json`` options, the session, output.

A command body asks the :class:`Session` for the workspace, makes one service call and hands the
result to :meth:`Session.emit`, which prints JSON (``--json``) or the human rendering.

``--workspace`` is accepted on the root group and on every leaf command; both store the path in
``ctx.meta`` (shared by the whole context chain) and the leaf's callback runs last, so it wins.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

import click
from click.decorators import FC
from pydantic import BaseModel

from cli.tools.overrides import CommandContext
from cli.tools.registry import run
from kg.limits import MAX_DOCUMENT_BYTES, read_text_bounded
from kg.models import to_utc

if TYPE_CHECKING:  # imported where used: a command pays for the workspace, write-through and rich only if it uses them
    from rich.console import Console, RenderableType

    from kg.workspace import Workspace
    from sync.replay import PushReport
    from sync.write_through import WriteThrough

P = ParamSpec("P")
R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)

WORKSPACE_KEY = "mabos.workspace"
JSON_KEY = "mabos.json"
ONTOLOGY_DIR_KEY = "mabos.ontology_dir"
TYPEDB_KEY = "mabos.typedb"
PIPE_WIDTH = 160  # rich's width when stdout is not a terminal (so ids are never cut)


class IsoDatetime(click.ParamType[datetime]):
    """An ISO-8601 date or timestamp; a naive value means UTC. Returns an aware UTC datetime."""

    name = "iso-datetime"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        """Parse ``2024-05-01``, ``2024-05-01T12:00:00Z`` or ``2024-05-01T12:00:00+02:00``."""
        if isinstance(value, datetime):
            return to_utc(value)
        try:
            return to_utc(datetime.fromisoformat(str(value).strip()))
        except ValueError:
            self.fail(f"{value!r} is not an ISO-8601 date or timestamp (e.g. 2024-05-01T12:00:00Z)", param, ctx)


ISO_DATETIME = IsoDatetime()


def _session_option(*names: str, key: str, **attrs: Any) -> Callable[[FC], FC]:
    """An option the command body never sees: its value waits in ``ctx.meta[key]`` for the :class:`Session`."""

    def remember(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value not in (None, False):
            ctx.meta[key] = value
        return value

    return click.option(*names, expose_value=False, callback=remember, **attrs)


workspace_option = _session_option(
    "--workspace",
    key=WORKSPACE_KEY,
    type=click.Path(path_type=Path),
    default=None,
    help="Workspace directory [env MABOS_WORKSPACE; default ./mabos-workspace].",
)
json_option = _session_option(
    "--json", "as_json", key=JSON_KEY, is_flag=True, help="Print machine-readable JSON on stdout (and nothing else)."
)
# Operator options: the session hands them to every tool the command runs (cli/tools/overrides.py), never as tool input.
ontology_dir_option = _session_option(
    "--ontology-dir",
    key=ONTOLOGY_DIR_KEY,
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="The ontology folder (default: the workspace's ontologies/).",
)
typedb_option = _session_option(
    "--typedb",
    key=TYPEDB_KEY,
    default=None,
    metavar="HOST:PORT",
    help="TypeDB server [env MABOS_TYPEDB_ADDRESS; else [typedb] address in mabos.toml].",
)
agent_option = click.option("--agent", "-a", required=True, metavar="AGENT", help="The acting agent's id.")
scope_option = click.option("--scope", default=None, help="Scope such as global, agent:<id> or project:<name>.")


def jsonable(value: Any) -> Any:
    """Models and containers of models as plain JSON data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


class Session:
    """One command run: where the workspace is, whether to print JSON, and the output."""

    def __init__(self, ctx: click.Context) -> None:
        self.ctx = ctx
        self._workspace: Workspace | None = None

    @property
    def as_json(self) -> bool:
        """Whether ``--json`` was given."""
        return bool(self.ctx.meta.get(JSON_KEY))

    @property
    def explicit_path(self) -> Path | None:
        """The ``--workspace`` given on the command line, if any."""
        value = self.ctx.meta.get(WORKSPACE_KEY)
        return Path(value) if value is not None else None

    @property
    def ontology_dir(self) -> Path | None:
        """The ``--ontology-dir`` given, if any (None: the workspace's ``ontologies/``)."""
        value = self.ctx.meta.get(ONTOLOGY_DIR_KEY)
        return Path(value) if value is not None else None

    @property
    def typedb(self) -> str | None:
        """The ``--typedb`` address given, if any (None: ``MABOS_TYPEDB_ADDRESS`` or ``mabos.toml``)."""
        value = self.ctx.meta.get(TYPEDB_KEY)
        return str(value) if value is not None else None

    @property
    def path(self) -> Path:
        """``--workspace``, else ``$MABOS_WORKSPACE``, else ``./mabos-workspace``."""
        from kg.workspace import default_path  # noqa: PLC0415

        return self.explicit_path or default_path()

    def workspace(self) -> Workspace:
        """The open workspace (closed when the command ends).

        With TypeDB configured, write-through starts with it: each change is pushed right after its commit,
        and when the command ends a last push is tried; an unreachable server costs one warning line on
        stderr, never the command (the change waits in the outbox).
        """
        if self._workspace is None:
            from kg.workspace import open_workspace  # noqa: PLC0415

            self._workspace = self.ctx.with_resource(open_workspace(self.path))
            if self._workspace.config.typedb.address_given():  # none given: attach would start nothing
                from sync.write_through import attach  # noqa: PLC0415 - 4 M instructions a command without TypeDB saves

                writer = attach(self._workspace)
                if writer is not None:
                    self.ctx.call_on_close(lambda: _finish_write_through(writer))
        return self._workspace

    def tools(
        self,
        progress: Callable[[PushReport], None] | None = None,
        *,
        counts: Callable[[int, int], None] | None = None,
        tune_process: bool = False,
    ) -> CommandContext:
        """A tool context on this command's workspace with its operator options (``--ontology-dir``, ``--typedb``,
        ``progress``, called after each pushed batch, ``counts`` with (done, total) by long tools, and
        ``tune_process``: see :class:`CommandContext`). CLI commands run registry tools through it."""
        return CommandContext(workspace_obj=self.workspace(), ontology_dir=self.ontology_dir, typedb=self.typedb,
                              progress=progress, counts=counts, tune_process=tune_process)  # fmt: skip

    def run(
        self,
        tool: str,
        args: Mapping[str, Any] | BaseModel,
        result: type[M],
        *,
        progress: Callable[[PushReport], None] | None = None,
    ) -> M:
        """Run registry tool ``tool`` in :meth:`tools`; ``result`` is the tool's output model, which the command
        renders."""
        return cast(M, run(self.tools(progress), tool, args))

    def adopt(self, workspace: Workspace) -> Workspace:
        """Take over a workspace opened elsewhere (``init``) so it is closed with the command."""
        self._workspace = self.ctx.with_resource(workspace)
        return self._workspace

    def emit(self, data: Any, *human: RenderableType | None) -> None:
        """Print ``data`` as JSON with ``--json``, else the human renderables, one after another; None stands for
        a line that does not apply this time (``note(...) if result.truncated else None``) and prints nothing."""
        if self.as_json:
            click.echo(json.dumps(jsonable(data), indent=2, ensure_ascii=False))
            return
        console = make_console()
        for item in human:
            if item is not None:
                console.print(item)

    def emit_text(self, data: Any, text: str) -> None:
        """Print ``data`` as JSON with ``--json``, else ``text`` byte for byte (a diff, a document to save): no
        console, so nothing is wrapped or styled."""
        if self.as_json:
            self.emit(data)
        else:
            click.echo(text, nl=False)


def _finish_write_through(writer: WriteThrough) -> None:
    writer.close()
    result = writer.last
    problem = writer.last_error
    if problem is None and result is not None and result.skipped and result.skipped.startswith("circuit"):
        problem = "typedb: " + result.skipped
    if problem:
        pending = writer.ws.ports.outbox.counts()["pending"]
        click.echo(f"warning: {problem}; outbox events waiting for 'mabos sync push': {pending}", err=True)


def read_source(source: str, field: str = "file", cap: int = MAX_DOCUMENT_BYTES) -> str:
    """The text of a ``FILE`` argument: standard input for ``-``, else the UTF-8 file, read in chunks up to ``cap``
    bytes (:func:`kg.limits.read_text_bounded`); InputError naming ``field`` when it cannot be read or is larger."""
    return read_text_bounded(source, field, cap)


def make_console() -> Console:
    """A console on the current stdout: no markup, emoji or highlighting of user text."""
    from rich.console import Console  # noqa: PLC0415 - human output only: --json never imports rich

    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPE_WIDTH
    return Console(file=sys.stdout, markup=False, emoji=False, highlight=False, width=width, soft_wrap=True)


def mabos_options(func: Callable[Concatenate[Session, P], R]) -> Callable[P, R]:
    """Give a command ``--workspace`` and ``--json`` and pass it a :class:`Session` first."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return func(Session(click.get_current_context()), *args, **kwargs)

    return json_option(workspace_option(wrapper))


def ontology_options(func: Callable[Concatenate[Session, P], R]) -> Callable[P, R]:
    """:func:`mabos_options` and ``--ontology-dir`` (the ``mabos ontology`` commands)."""
    return ontology_dir_option(mabos_options(func))


def typedb_options(func: Callable[Concatenate[Session, P], R]) -> Callable[P, R]:
    """:func:`mabos_options` and ``--typedb`` (the commands that talk to the TypeDB server)."""
    return typedb_option(mabos_options(func))


def example(text: str, *commands: str) -> str:
    """A help text ending in an ``Example`` block that click prints unwrapped."""
    lines = "\n".join(f"  {command}" for command in commands)
    return f"{text}\n\nExample:\n\n\b\n{lines}\n"
