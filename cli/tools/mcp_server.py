"""The MCP server: every registry tool over the Model Context Protocol (``mabos serve --mcp``).

Built on the official SDK's low-level :class:`mcp.server.lowlevel.Server`, because each tool already has its
own JSON schemas: ``tools/list`` answers with every registered tool (name, description, ``inputSchema`` = the
input model's schema, ``outputSchema`` = the output model's), and ``tools/call`` runs the tool through
:func:`cli.tools.registry.run` on one :class:`~cli.tools.registry.ToolContext` for the server's workspace.

- Agent identity: fixed for the whole server (``--agent``, the context's ``agent``), or passed per call as
  ``agent_id``; the registry's scope checks apply either way.
- Results: the output model as ``structuredContent`` plus its JSON text as one text block.
- Errors never end the server: bad arguments (naming the field), :class:`~kg.errors.MabosError`\\ s and
  anything unexpected come back as tool results with ``isError`` and one line of text.
- Handlers are synchronous and may block (SQLite, model loads): each call runs in a worker thread, one at a
  time (the workspace holds one connection), so the event loop keeps answering pings and other requests.

Transports: stdio (:func:`serve_stdio`) and streamable HTTP at ``http://HOST:PORT/mcp`` (:func:`serve_http`,
bound to 127.0.0.1 unless told otherwise; on a loopback host the SDK's DNS-rebinding protection is on).
"""

from __future__ import annotations

import json
import logging
from importlib import metadata
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, ValidationError

from cli.tools.export import input_schema, output_schema, tools
from cli.tools.registry import REGISTRY, ToolContext, run
from kg.errors import MabosError
from kg.models import describe_validation_error

logger = logging.getLogger(__name__)

SERVER_NAME = "mabos"
DEFAULT_HOST = "127.0.0.1"
MCP_PATH = "/mcp"

_INSTRUCTIONS = (
    "mabos is the knowledge-graph memory and reasoning backend of BDI agents: store and recall memories, assert "
    "and query facts, run rules and inference, and evolve the ontology. Pass agent_id on every call unless this "
    "server is bound to one agent."
)


def _version() -> str:
    try:
        return metadata.version("mabos")
    except metadata.PackageNotFoundError:  # a source tree without an install
        return "0"


def tool_list() -> list[types.Tool]:
    """Every registered tool as an MCP tool definition."""
    return [
        types.Tool(
            name=found.name,
            description=found.description,
            input_schema=input_schema(found),
            output_schema=_object_or_none(output_schema(found)),
        )
        for found in tools()
    ]


def _object_or_none(schema: dict[str, Any]) -> dict[str, Any] | None:
    """An output schema MCP accepts (an object at the root), else None (the text content still carries it)."""
    return schema if schema.get("type") == "object" else None


def error_result(message: str) -> types.CallToolResult:
    """A tool error: ``isError`` and the one-line message (the model can read it and correct the call)."""
    return types.CallToolResult(content=[types.TextContent(text=" ".join(message.split()))], is_error=True)


def success_result(output: BaseModel) -> types.CallToolResult:
    """A tool's output as structured content plus its JSON text."""
    data = output.model_dump(mode="json")
    content: list[types.ContentBlock] = [types.TextContent(text=json.dumps(data, ensure_ascii=False))]
    if isinstance(data, dict):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content)


def call_tool(ctx: ToolContext, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run tool ``name`` in ``ctx`` and turn the outcome, or any error, into an MCP tool result (never raises)."""
    try:
        return success_result(run(ctx, name, arguments or {}))
    except MabosError as exc:
        return error_result(f"error: {exc}")
    except ValidationError as exc:  # a model built inside a handler refused its data
        return error_result(f"error: {describe_validation_error(exc)}")
    except Exception as exc:
        logger.exception("tool %s failed", name)
        return error_result(f"internal error: {type(exc).__name__}: {exc}")


class ToolServer:
    """The registry behind an MCP :class:`~mcp.server.lowlevel.Server`, on one tool context.

    Args:
        ctx: where tools run (its workspace and, when bound, its agent); the caller closes it. The server
            marks it as not the operator's: every call acts as an agent.
    """

    def __init__(self, ctx: ToolContext) -> None:
        ctx.operator = False  # MCP callers always act as an agent: no operator view of every scope
        self.ctx = ctx
        self._tools = tool_list()
        self._limiter: anyio.CapacityLimiter | None = None
        agent = f" Bound to agent {ctx.agent!r}: agent_id defaults to it." if ctx.agent else ""
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=_version(),
            instructions=_INSTRUCTIONS + agent,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        found = REGISTRY.get(name)
        return input_schema(found) if found is not None else None

    async def _list_tools(self, _ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def _call_tool(self, _ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(1)  # one call at a time: the workspace is one connection
        return await anyio.to_thread.run_sync(call_tool, self.ctx, params.name, params.arguments, limiter=self._limiter)

    async def run_stdio(self) -> None:
        """Serve over this process's stdin and stdout until the client closes stdin."""
        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream, self.server.create_initialization_options())

    async def run_http(self, host: str = DEFAULT_HOST, port: int = 8765) -> None:
        """Serve streamable HTTP at ``http://host:port/mcp`` until interrupted."""
        app = self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve()


def serve_stdio(ctx: ToolContext) -> None:
    """Run the MCP server over stdio on ``ctx`` (blocks until the client disconnects)."""
    anyio.run(ToolServer(ctx).run_stdio)


def serve_http(ctx: ToolContext, host: str = DEFAULT_HOST, port: int = 8765) -> None:
    """Run the MCP server over streamable HTTP on ``ctx`` (blocks until interrupted)."""
    anyio.run(ToolServer(ctx).run_http, host, port)


__all__ = [
    "DEFAULT_HOST",
    "MCP_PATH",
    "SERVER_NAME",
    "ToolServer",
    "call_tool",
    "error_result",
    "serve_http",
    "serve_stdio",
    "success_result",
    "tool_list",
]
