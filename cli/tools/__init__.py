"""The agent tool surface: one registry behind the CLI, the Python API and the MCP server (design.md §7).

Python API::

    from cli import tools

    tools.call("memory_store_item", workspace="my-ws", agent_id="sales-agent", content="Acme needs SSO")
    hits = tools.call("memory_recall", workspace="my-ws", agent_id="sales-agent", query="SSO")

Every module of this package except the infrastructure ones declares tools with
:func:`cli.tools.registry.tool`. They are imported on first use: a tool when it is called, every tool when the
tools are listed (:data:`REGISTRY` is a lazy mapping over :data:`cli.tools.tool_table.TOOL_TABLE`), and a module
when it is named as an attribute of this package (``tools.memory``).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cli.tools.registry import REGISTRY, Tool, ToolContext, ToolInput, context, get, run, tool


@functools.cache
def _modules() -> frozenset[str]:
    """The package's modules (listed when a module is first asked for as an attribute: a command never does)."""
    import pkgutil  # noqa: PLC0415

    return frozenset(m.name for m in pkgutil.iter_modules(__path__))


def __getattr__(name: str) -> Any:
    if name in _modules():  # ``from cli import tools; tools.memory`` as when every module was imported eagerly
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def call(name: str, /, *, workspace: Path | str | None = None, agent: str | None = None, **arguments: Any) -> BaseModel:
    """Run tool ``name`` with ``arguments`` on the workspace at ``workspace`` and return its output model.

    ``agent`` binds the call to one agent (as ``mabos serve --agent`` does); otherwise pass ``agent_id``.
    Bad arguments raise :class:`kg.errors.InputError` naming the field.
    """
    with context(workspace, agent=agent) as ctx:
        return run(ctx, name, arguments)


__all__ = ["REGISTRY", "Tool", "ToolContext", "ToolInput", "call", "context", "get", "run", "tool"]
