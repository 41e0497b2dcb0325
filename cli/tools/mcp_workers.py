"""The MCP server's worker processes: every tool call runs in a child process (:class:`WorkerPool`, the
:class:`~cli.workers.Workers` of :class:`ToolCalls`) with its own workspace handle, under a deadline, and is killed
at it (docs/decisions/2026-11-26-mcp-concurrency.md; the pool itself, its fairness and memory limit:
:mod:`cli.workers`).

A deadline or the memory limit ends a call with a tool error the model can read (``error: deadline: ...``,
``error: memory: ...``), as every other failed call; a worker that could not start or ended otherwise raises
:class:`~cli.workers.WorkerError`, which the server reports as ``internal error: ...``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from cli.pool_settings import PoolSettings
from cli.workers import DeadlineError, WorkerKind, WorkerMemoryError, Workers

logger = logging.getLogger(__name__)

_OUT_OF_MEMORY = "internal error: MemoryError"  # how call_tool reports a MemoryError


class ToolCalls:
    """An MCP worker's :class:`~cli.workers.Handler`: a message ``(name, arguments, agent)`` is one tool call,
    answered as the MCP result's data (a tool error is a result, never an exception; a ``MemoryError`` ends the
    worker)."""

    def __init__(self, path: Path) -> None:
        from cli.tools.registry import ToolContext  # noqa: PLC0415 - preloaded by the forkserver; imported in the child

        self.ctx = ToolContext(path=path, operator=False)
        try:
            self.ctx.workspace()  # warm: open now; a workspace that cannot open is retried by the call
        except Exception as exc:
            logger.warning("worker %s: the workspace did not open yet: %s", os.getpid(), exc)

    def __call__(self, message: tuple[str, dict[str, Any], str | None]) -> dict[str, Any]:
        """Run one tool call as the message's agent."""
        from cli.tools.mcp_calls import call_tool  # noqa: PLC0415

        name, arguments, agent = message
        self.ctx.agent = agent
        reply: dict[str, Any] = call_tool(self.ctx, name, arguments).model_dump(mode="json", by_alias=True,
                                                                                 exclude_none=True)  # fmt: skip
        text = reply["content"][0].get("text", "") if reply.get("isError") and reply.get("content") else ""
        if text.startswith(_OUT_OF_MEMORY):
            raise MemoryError
        return reply

    def close(self) -> None:
        """Close the workspace."""
        self.ctx.close()


MCP_WORKERS = WorkerKind("mabos-mcp-worker", ToolCalls, advice="narrow the call")


class WorkerPool(Workers):
    """The MCP server's workers: :class:`Workers` of :class:`ToolCalls` whose deadline and memory stops are tool
    errors (results the model can read), as every other failed call."""

    def __init__(self, path: Path, settings: PoolSettings | None = None) -> None:
        super().__init__(path, MCP_WORKERS, settings)

    async def call(self, name: str, arguments: dict[str, Any], *, agent: str | None, key: str | None) -> dict[str, Any]:
        """Run tool ``name`` in a worker acting as ``agent`` (the bound agent, if any); ``key`` is whose turn it
        is (the acting agent). Returns the MCP result as data; a deadline or the memory limit is an error result.

        Raises:
            WorkerError: no worker could start, one ended during the call, or the server is shutting down.
        """
        try:
            reply: dict[str, Any] = await self.run((name, arguments, agent), key=key, what=name)
        except (DeadlineError, WorkerMemoryError) as exc:
            return _error(f"error: {exc}")
        return reply


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


__all__ = [
    "MCP_WORKERS",
    "ToolCalls",
    "WorkerPool",
]
