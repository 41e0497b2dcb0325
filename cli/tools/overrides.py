"""Operator settings a CLI command passes to its tool outside the tool's input (no tool is declared here).

Some CLI options are for the workspace's operator, never for an agent: the ontology folder
(``--ontology-dir``), the TypeDB address (``--typedb``), progress callbacks for long pushes and imports, and
whether a tool may tune the process it runs in (the CLI owns its process; a server's tools share theirs). They
are not tool inputs, so an agent calling over MCP cannot point a tool at another folder or server; a CLI command
passes them in a :class:`CommandContext` instead, and the handlers read them with :func:`ontology_dir`,
:func:`typedb_address`, :func:`push_progress`, :func:`count_progress` and :func:`may_tune_process` (None or False in
any other context: the workspace's defaults).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cli.tools.registry import ToolContext, ToolInput
from kg.errors import InputError

if TYPE_CHECKING:
    from kg.workspace import Workspace
    from sync.replay import PushReport


class CommandContext(ToolContext):
    """A :class:`ToolContext` carrying a CLI command's operator options (a plain class, as :class:`ToolContext`).

    Args:
        ontology_dir: the ontology folder to use instead of ``<workspace>/ontologies``.
        typedb: the TypeDB ``host:port`` to use instead of the configured one.
        progress: called after each pushed batch (the ``mabos sync push`` progress bar).
        counts: called with (done, total) by long tools (the ``mabos fact import`` progress bar).
        tune_process: whether a bulk tool may change process-wide settings while it runs (``mabos fact import``).
    """

    def __init__(self, path: Path | str | None = None, agent: str | None = None, workspace_obj: Workspace | None = None,
                 operator: bool = True, *, ontology_dir: Path | None = None, typedb: str | None = None,
                 progress: Callable[[PushReport], None] | None = None, counts: Callable[[int, int], None] | None = None,
                 tune_process: bool = False) -> None:  # fmt: skip
        super().__init__(path, agent, workspace_obj, operator)
        self.ontology_dir = ontology_dir
        self.typedb = typedb
        self.progress = progress
        self.counts = counts
        self.tune_process = tune_process


def ontology_dir(ctx: ToolContext) -> Path | None:
    """The ontology folder the command chose, or None (the workspace's ``ontologies/``)."""
    return ctx.ontology_dir if isinstance(ctx, CommandContext) else None


def typedb_address(ctx: ToolContext) -> str | None:
    """The TypeDB address the command chose, or None (``MABOS_TYPEDB_ADDRESS`` / ``mabos.toml``)."""
    return ctx.typedb if isinstance(ctx, CommandContext) else None


def push_progress(ctx: ToolContext) -> Callable[[PushReport], None] | None:
    """The command's push progress callback, or None."""
    return ctx.progress if isinstance(ctx, CommandContext) else None


def count_progress(ctx: ToolContext) -> Callable[[int, int], None] | None:
    """The command's (done, total) progress callback, or None."""
    return ctx.counts if isinstance(ctx, CommandContext) else None


def may_tune_process(ctx: ToolContext) -> bool:
    """Whether the command lets a bulk tool change process-wide settings while it runs (False elsewhere)."""
    return ctx.tune_process if isinstance(ctx, CommandContext) else False


def optional_agent(ctx: ToolContext, args: ToolInput) -> str | None:
    """The acting agent when one is given or bound (checked like :meth:`ToolContext.agent_for`), else None.

    For tools that also serve the workspace's operator, who acts as no agent (e.g. every scope of a graph
    query); a bound server always acts as its agent, and an MCP caller must name one.
    """
    if args.agent_id is None and ctx.agent is None:
        if not ctx.operator:  # an MCP caller always acts as an agent: no operator view of every scope
            raise InputError("agent_id", "required: name the acting agent (or bind the server with --agent)")
        return None
    return ctx.agent_for(args)


__all__ = [
    "CommandContext",
    "count_progress",
    "may_tune_process",
    "ontology_dir",
    "optional_agent",
    "push_progress",
    "typedb_address",
]
