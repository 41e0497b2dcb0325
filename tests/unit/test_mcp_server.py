"""The MCP server in-process: the official client talks to :class:`cli.tools.mcp_server.ToolServer` on a real
workspace. Tool errors come back as ``isError`` results and the server keeps serving; a bound agent cannot be
impersonated; calls run one at a time in a worker thread while the event loop stays responsive.

Two throwaway tools (a failing one and a blocking one) are registered for the duration of a test and removed.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from cli.tools import REGISTRY, ToolContext, ToolInput, run, tool
from cli.tools.mcp_server import ToolServer
from kg.errors import InputError, ScopeError
from kg.workspace import Workspace, init_workspace

AGENT = "sales-agent"


class _Echo(BaseModel):
    agent_id: str
    text: str


class _EchoInput(ToolInput):
    text: str = Field("", description="Anything.")


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace with two agents."""
    workspace = init_workspace(tmp_path / "ws")
    workspace.agents.add(AGENT)
    workspace.agents.add("finance-agent")
    yield workspace
    workspace.close()


@pytest.fixture
def scratch_tools() -> Iterator[dict[str, Any]]:
    """Register ``test_boom`` (raises RuntimeError) and ``test_block`` (waits for an event); removed after."""
    state: dict[str, Any] = {"release": threading.Event(), "started": threading.Event(), "active": 0, "peak": 0}
    lock = threading.Lock()

    @tool("test_boom", group="test", input=_EchoInput, output=_Echo, description="Always fails. For tests.")
    def boom(ctx: ToolContext, args: _EchoInput) -> _Echo:
        raise RuntimeError("boom\nsecond line")

    @tool("test_block", group="test", input=_EchoInput, output=_Echo, description="Blocks until released.")
    def block(ctx: ToolContext, args: _EchoInput) -> _Echo:
        with lock:
            state["active"] += 1
            state["peak"] = max(state["peak"], state["active"])
        state["started"].set()
        state["release"].wait(30)
        with lock:
            state["active"] -= 1
        return _Echo(agent_id=ctx.agent_for(args), text=args.text)

    try:
        yield state
    finally:
        REGISTRY.pop("test_boom", None)
        REGISTRY.pop("test_block", None)


def _run(server: ToolServer, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server.server, mode="legacy") as client:
                await body(client)

    anyio.run(main)


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def test_lists_every_registered_tool_with_its_schemas(ws: Workspace) -> None:
    async def body(client: Client) -> None:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == list(REGISTRY)
        recall = next(t for t in listed if t.name == "memory_recall")
        assert recall.description == REGISTRY["memory_recall"].description
        assert recall.input_schema["properties"]["limit"]["default"] == 20
        assert recall.output_schema is not None and "hits" in recall.output_schema["properties"]

    _run(ToolServer(ToolContext(workspace_obj=ws)), body)


def test_results_are_structured_and_errors_are_tool_errors(ws: Workspace, scratch_tools: dict[str, Any]) -> None:
    async def body(client: Client) -> None:
        stored = await client.call_tool("memory_store_item", {"agent_id": AGENT, "content": "Acme wants SSO"})
        assert not stored.is_error and isinstance(stored.structured_content, dict)
        assert '"Acme wants SSO"' in _text(stored)  # the JSON text rendering
        uid = stored.structured_content["item"]["uid"]
        bad = await client.call_tool("memory_recall", {"agent_id": AGENT, "query": "SSO", "limit": "lots"})
        assert bad.is_error and _text(bad).startswith("error: limit: Input should be a valid integer")
        extra = await client.call_tool("memory_recall", {"agent_id": AGENT, "query": "SSO", "colour": "red"})
        assert extra.is_error and _text(extra).startswith("error: colour:")
        unknown = await client.call_tool("memory_recal", {"agent_id": AGENT})
        assert unknown.is_error and _text(unknown).startswith("error: tool: no tool 'memory_recal'")
        nobody = await client.call_tool("memory_recall", {"query": "SSO"})
        assert nobody.is_error and _text(nobody) == "error: agent_id: required (the acting agent's id)"
        boom = await client.call_tool("test_boom", {"agent_id": AGENT})
        assert boom.is_error and _text(boom) == "internal error: RuntimeError: boom second line"
        recalled = await client.call_tool("memory_recall", {"agent_id": AGENT, "query": "SSO"})  # still serving
        assert isinstance(recalled.structured_content, dict)
        assert uid in [hit["item"]["uid"] for hit in recalled.structured_content["hits"]]

    _run(ToolServer(ToolContext(workspace_obj=ws)), body)


def test_a_bound_server_acts_only_as_its_agent(ws: Workspace) -> None:
    async def body(client: Client) -> None:
        mine = await client.call_tool("memory_store_item", {"content": "Globex is shrinking"})
        assert isinstance(mine.structured_content, dict)
        assert mine.structured_content["item"]["agent_id"] == AGENT
        other = await client.call_tool("memory_recall", {"agent_id": "finance-agent", "query": "Globex"})
        assert other.is_error
        assert _text(other) == "error: agent_id: this server acts as 'sales-agent'; it cannot act as 'finance-agent'"

    _run(ToolServer(ToolContext(workspace_obj=ws, agent=AGENT)), body)


def test_calls_run_one_at_a_time_off_the_event_loop(ws: Workspace, scratch_tools: dict[str, Any]) -> None:
    results: list[CallToolResult] = []

    async def body(client: Client) -> None:
        async def call(text: str) -> None:
            results.append(await client.call_tool("test_block", {"agent_id": AGENT, "text": text}))

        async with anyio.create_task_group() as group:
            group.start_soon(call, "one")
            group.start_soon(call, "two")
            await anyio.to_thread.run_sync(scratch_tools["started"].wait, 30)
            listed = await client.session.list_tools()  # answered while a tool call blocks its worker thread
            assert "test_block" in [t.name for t in listed.tools]
            scratch_tools["release"].set()

    _run(ToolServer(ToolContext(workspace_obj=ws)), body)
    assert sorted(_text(r) for r in results) == sorted(
        f'{{"agent_id": "{AGENT}", "text": "{t}"}}' for t in ("one", "two")
    )
    assert scratch_tools["peak"] == 1


def test_an_mcp_caller_always_acts_as_an_agent(ws: Workspace) -> None:
    # Operator views (every scope) are for the CLI and Python: over MCP, graph_query without agent_id is refused,
    # and raw TypeQL and every agent's BDI cycle are refused even with one.
    ctx = ToolContext(workspace_obj=ws)
    ToolServer(ctx)
    assert ctx.operator is False
    with pytest.raises(InputError, match="agent_id: required"):
        run(ctx, "graph_query", {"name": "blocked-steps"})
    with pytest.raises(ScopeError, match="only the workspace's operator"):
        run(ctx, "typedb_query", {"agent_id": AGENT, "query": "match $x isa goal;"})
    with pytest.raises(ScopeError, match="only the workspace's operator"):
        run(ctx, "bdi_cycle", {"all_agents": True})
    assert run(ctx, "graph_query", {"agent_id": AGENT, "name": "blocked-steps"}).model_dump()["source"] == "local"
