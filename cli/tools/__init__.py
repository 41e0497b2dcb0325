"""The agent tool surface: one registry behind the CLI, the Python API and the MCP server (design.md §7).

Python API::

    from cli import tools

    tools.call("memory_store_item", workspace="my-ws", agent_id="sales-agent", content="Acme needs SSO")
    hits = tools.call("memory_recall", workspace="my-ws", agent_id="sales-agent", query="SSO")

Every module of this package except the infrastructure ones declares tools with
:func:`cli.tools.registry.tool`; importing the package registers them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cli.tools.registry import REGISTRY, Tool, ToolContext, ToolInput, context, get, run, tool

#: Modules of this package that declare no tools.
_INFRASTRUCTURE = frozenset({"registry", "export", "mcp_server", "mcp_calls", "mcp_workers", "mcp_auth", "overrides"})

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in _INFRASTRUCTURE:
        importlib.import_module(f"{__name__}.{_module}")


def call(name: str, /, *, workspace: Path | str | None = None, agent: str | None = None, **arguments: Any) -> BaseModel:
    """Run tool ``name`` with ``arguments`` on the workspace at ``workspace`` and return its output model.

    ``agent`` binds the call to one agent (as ``mabos serve --agent`` does); otherwise pass ``agent_id``.
    Bad arguments raise :class:`kg.errors.InputError` naming the field.
    """
    with context(workspace, agent=agent) as ctx:
        return run(ctx, name, arguments)


__all__ = ["REGISTRY", "Tool", "ToolContext", "ToolInput", "call", "context", "get", "run", "tool"]
