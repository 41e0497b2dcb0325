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
- Calls run in worker processes (:mod:`cli.tools.mcp_workers`): each has a deadline (a call past it is stopped and
  answered with a one-line error), calls of different agents run side by side, and an agent has at most
  ``per_agent`` calls running at once, so one agent's slow call never freezes the others. The event loop only
  routes messages.

Transports: stdio (:func:`serve_stdio`) and streamable HTTP at ``http://HOST:PORT/mcp`` (:func:`serve_http`,
bound to 127.0.0.1 unless told otherwise; on any loopback host, 127.0.0.0/8 or ::1, the SDK's DNS-rebinding protection
is on with the allow-list of :func:`cli.loopback.allowed_hosts`: the bound address and the loopback names). Over HTTP a
caller may present an API token (``Authorization: Bearer <secret>``, :mod:`kg.tokens`): the server then acts as the
token's agent and refuses calls for any other; off loopback a token is required (:class:`TokenGate`). A request body
past :data:`kg.limits.MAX_DOCUMENT_BYTES`, the cap of every document mabos reads, is answered 413 before it is read
(the SDK's own check, whose default of 4 MiB would refuse a tool's document long before its input model does).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from importlib import metadata
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from cli.idle_index import IdleIndexer
from cli.loopback import DEFAULT_HOST, allowed_hosts, allowed_origins, is_loopback
from cli.pool_settings import PoolSettings
from cli.tools.export import input_schema, output_schema, tools
from cli.tools.mcp_auth import TokenGate, Verifier
from cli.tools.mcp_calls import call_tool, error_result, success_result
from cli.tools.mcp_workers import WorkerPool
from cli.tools.registry import REGISTRY, ToolContext
from cli.workers import WorkerError
from kg.limits import MAX_DOCUMENT_BYTES
from kg.models import AGENT_ID_RE
from kg.workspace import default_path

logger = logging.getLogger(__name__)

SERVER_NAME = "mabos"
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


class ToolServer:
    """The registry behind an MCP :class:`~mcp.server.lowlevel.Server`, its calls run by a :class:`WorkerPool`.

    Args:
        ctx: the workspace (``path`` or an open ``workspace_obj``: workers open their own handle on its directory) and,
            when bound, the agent; the caller closes it. The server marks it as not the operator's: every call acts
            as an agent.
        settings: workers, running calls per agent, the deadline and the worker memory limit (default:
            :class:`PoolSettings`' own, with every worker per agent for a server bound to one agent); given settings
            are used as they are.
        index_when_idle: seconds without a call in flight before the vector index backlog is indexed in the
            background (:mod:`cli.idle_index`); 0 (the default here) turns it off.
    """

    def __init__(self, ctx: ToolContext, settings: PoolSettings | None = None, *, index_when_idle: float = 0) -> None:
        ctx.operator = False  # MCP callers always act as an agent: no operator view of every scope
        self.ctx = ctx
        if settings is None:
            settings = PoolSettings()
            if ctx.agent is not None:  # every call is the one agent's: nobody else to keep a worker free for
                settings = dataclasses.replace(settings, per_agent=settings.workers)  # the rest kept, memory too
        path = ctx.workspace_obj.path if ctx.workspace_obj is not None else ctx.path or default_path()
        self.pool = WorkerPool(path, settings)
        self.indexer = IdleIndexer(path, idle=index_when_idle) if index_when_idle else None
        self._tools = tool_list()
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

    def _acting_agent(self, request_ctx: Any) -> str | None:
        """The agent of the caller's token (HTTP), else the server's bound agent, else None (agent_id decides)."""
        request = getattr(request_ctx, "request", None)
        user = getattr(request, "scope", {}).get("user") if request is not None else None
        if isinstance(user, AuthenticatedUser):
            return user.access_token.client_id
        return self.ctx.agent

    async def _call_tool(self, request_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        agent = self._acting_agent(request_ctx)
        named = arguments.get("agent_id")
        key = agent or (named if isinstance(named, str) and AGENT_ID_RE.match(named) else None)
        if self.indexer is not None:
            self.indexer.call_started()  # a call wins over an idle index pass: the pass stops now
        try:
            data = await self.pool.call(params.name, arguments, agent=agent, key=key)
        except WorkerError as exc:
            return error_result(f"internal error: {exc}")
        finally:
            if self.indexer is not None:
                self.indexer.call_ended()
        return types.CallToolResult.model_validate(data)

    async def run_stdio(self) -> None:
        """Serve over this process's stdin and stdout until the client closes stdin."""
        try:
            await self.pool.start()
            async with stdio_server() as (read_stream, write_stream), self._idle_indexing():
                await self.server.run(read_stream, write_stream, self.server.create_initialization_options())
        finally:
            self.close()

    def http_app(self, host: str = DEFAULT_HOST, *, verify: Verifier | None = None, require_token: bool = False,
                 body_cap: int = MAX_DOCUMENT_BYTES) -> Any:  # fmt: skip
        """The ASGI app serving ``/mcp``: the SDK's streamable HTTP app (a request body past ``body_cap`` bytes is
        answered 413 before it is read) behind a :class:`TokenGate`."""
        security = None
        if is_loopback(host):  # the SDK turns the check on for 127.0.0.1, localhost and ::1 only: every loopback host
            security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                                 allowed_hosts=allowed_hosts(host),
                                                 allowed_origins=allowed_origins(host))  # fmt: skip
        app = self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host, transport_security=security,
                                              max_request_body_size=body_cap)  # fmt: skip
        return TokenGate(app, verify, required=require_token, bound_agent=self.ctx.agent)

    async def run_http(
        self, host: str = DEFAULT_HOST, port: int = 8765, *, verify: Verifier | None = None, require_token: bool = False
    ) -> None:
        """Serve streamable HTTP at ``http://host:port/mcp`` until interrupted."""
        app = self.http_app(host, verify=verify, require_token=require_token)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        try:
            await self.pool.start()
            async with self._idle_indexing():
                await uvicorn.Server(config).serve()
        finally:
            self.close()

    @contextlib.asynccontextmanager
    async def _idle_indexing(self) -> AsyncIterator[None]:
        """Run the idle indexer (if on) beside the body; stop it when the body ends."""
        if self.indexer is None:
            yield
            return
        async with self.indexer.running():
            yield

    def close(self) -> None:
        """Stop the idle indexer and the worker processes."""
        if self.indexer is not None:
            self.indexer.close()
        self.pool.close()


def serve_stdio(ctx: ToolContext, settings: PoolSettings | None = None, *, index_when_idle: float = 0) -> None:
    """Run the MCP server over stdio on ``ctx`` (blocks until the client disconnects)."""
    anyio.run(ToolServer(ctx, settings, index_when_idle=index_when_idle).run_stdio)


def serve_http(
    ctx: ToolContext,
    host: str = DEFAULT_HOST,
    port: int = 8765,
    *,
    settings: PoolSettings | None = None,
    verify: Verifier | None = None,
    require_token: bool = False,
    index_when_idle: float = 0,
) -> None:
    """Run the MCP server over streamable HTTP on ``ctx`` (blocks until interrupted)."""
    server = ToolServer(ctx, settings, index_when_idle=index_when_idle)
    anyio.run(lambda: server.run_http(host, port, verify=verify, require_token=require_token))


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
