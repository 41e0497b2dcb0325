"""The MCP server in-process: the official client talks to :class:`cli.tools.mcp_server.ToolServer` on a real
workspace, its calls run by real worker processes. Tool errors come back as ``isError`` results and the server keeps
serving; a bound agent cannot be impersonated; one agent's slow call neither holds up another agent nor outlives its
deadline; the HTTP token gate answers 401/403 before the MCP app sees a request; on any loopback address a request
naming another host or coming from another origin is refused (421/403: DNS rebinding).

A throwaway failing tool is registered in this process for one test (it runs through :func:`call_tool`, the function
each worker runs). The slow call is real: a write that waits for SQLite's write lock, held by the test.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field
from starlette.types import Receive, Scope, Send

from cli.loopback import allowed_hosts, allowed_origins, host_allowed, origin_allowed
from cli.pool_settings import PoolSettings
from cli.tools import REGISTRY, ToolContext, ToolInput, run, tool
from cli.tools.mcp_auth import TokenGate, is_loopback
from cli.tools.mcp_server import ToolServer, call_tool
from kg.errors import InputError, ScopeError
from kg.workspace import DB_FILE, STATE_DIR, Workspace, init_workspace
from tests.serving import serving_in_thread

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
def boom() -> Iterator[None]:
    """Register ``test_boom`` (raises RuntimeError with a two-line message) in this process; removed after."""

    @tool("test_boom", group="test", input=_EchoInput, output=_Echo, description="Always fails. For tests.")
    def fail(ctx: ToolContext, args: _EchoInput) -> _Echo:
        raise RuntimeError("boom\nsecond line")

    try:
        yield
    finally:
        REGISTRY.pop("test_boom", None)


@pytest.fixture
def servers() -> Iterator[Callable[..., ToolServer]]:
    """Make tool servers; their worker processes are stopped after the test."""
    made: list[ToolServer] = []

    def make(ctx: ToolContext, settings: PoolSettings | None = None) -> ToolServer:
        made.append(ToolServer(ctx, settings))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _run(server: ToolServer, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server.server, mode="legacy") as client:
                await body(client)

    anyio.run(main)


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def test_lists_every_registered_tool_with_its_schemas(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    async def body(client: Client) -> None:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == list(REGISTRY)
        recall = next(t for t in listed if t.name == "memory_recall")
        assert recall.description == REGISTRY["memory_recall"].description
        assert recall.input_schema["properties"]["limit"]["default"] == 20
        assert recall.output_schema is not None and "hits" in recall.output_schema["properties"]

    _run(servers(ToolContext(workspace_obj=ws)), body)


def test_results_are_structured_and_errors_are_tool_errors(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
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
        recalled = await client.call_tool("memory_recall", {"agent_id": AGENT, "query": "SSO"})  # still serving
        assert isinstance(recalled.structured_content, dict)
        assert uid in [hit["item"]["uid"] for hit in recalled.structured_content["hits"]]

    _run(servers(ToolContext(workspace_obj=ws)), body)


def test_an_unexpected_failure_is_one_line_of_tool_error(ws: Workspace, boom: None) -> None:
    # What every worker runs for a call: anything unexpected becomes an isError result, never a crash.
    result = call_tool(ToolContext(workspace_obj=ws, operator=False), "test_boom", {"agent_id": AGENT})
    assert result.is_error and _text(result) == "internal error: RuntimeError: boom second line"


def test_a_bound_server_acts_only_as_its_agent(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    async def body(client: Client) -> None:
        mine = await client.call_tool("memory_store_item", {"content": "Globex is shrinking"})
        assert isinstance(mine.structured_content, dict)
        assert mine.structured_content["item"]["agent_id"] == AGENT
        other = await client.call_tool("memory_recall", {"agent_id": "finance-agent", "query": "Globex"})
        assert other.is_error
        assert _text(other) == "error: agent_id: this server acts as 'sales-agent'; it cannot act as 'finance-agent'"

    _run(servers(ToolContext(workspace_obj=ws, agent=AGENT)), body)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_slow_call_holds_up_no_other_agent_and_stops_at_its_deadline(
    ws: Workspace, servers: Callable[..., ToolServer]
) -> None:
    """Agent a sends two writes that cannot finish (the test holds SQLite's write lock), then agent b asks for its
    memory status. b is answered first, while a's calls wait (a's second call waits for a's first, not for the pool);
    a's first call is stopped at its deadline and its worker process ended; once the lock is released, a's second
    call goes through on a new worker. The order of completion is asserted, never a duration."""
    server = servers(ToolContext(workspace_obj=ws), PoolSettings(workers=2, per_agent=1, deadline=2))  # b: ~0.25 s
    done: list[str] = []
    results: dict[str, CallToolResult] = {}
    lock = sqlite3.connect(ws.path / STATE_DIR / DB_FILE, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # another writer holds the store: a's writes wait in SQLite's busy handler
    held = True
    first_worker: list[int] = []

    async def body(client: Client) -> None:
        nonlocal held

        async def call(label: str, name: str, arguments: dict[str, Any]) -> None:
            results[label] = await client.call_tool(name, arguments)
            done.append(label)
            if label == "a1" and held:
                lock.execute("ROLLBACK")  # let a's second call through

        await server.pool.start()
        async with anyio.create_task_group() as group:
            group.start_soon(call, "a1", "memory_store_item", {"agent_id": AGENT, "content": "first slow write"})
            while server.pool.busy < 1:
                await anyio.sleep(0.02)
            first_worker.extend(server.pool._busy)
            group.start_soon(call, "a2", "memory_store_item", {"agent_id": AGENT, "content": "second write"})
            group.start_soon(call, "b", "memory_status", {"agent_id": "finance-agent"})
            listed = await client.session.list_tools()  # the event loop answers while the calls run
            assert "memory_status" in [t.name for t in listed.tools]

    try:
        _run(server, body)
    finally:
        if lock.in_transaction:
            lock.execute("ROLLBACK")
        lock.close()
    assert done == ["b", "a1", "a2"]
    assert not results["b"].is_error and isinstance(results["b"].structured_content, dict)
    assert results["a1"].is_error
    assert _text(results["a1"]).startswith("error: deadline: memory_store_item ran longer than 2 s and was stopped")
    assert "\n" not in _text(results["a1"])
    assert not results["a2"].is_error, _text(results["a2"])
    assert first_worker and not _alive(first_worker[0])  # the stopped call burns no more CPU
    with sqlite3.connect(ws.path / STATE_DIR / DB_FILE) as db:
        contents = [row[0] for row in db.execute("SELECT content FROM memory_items WHERE agent_id = ?", (AGENT,))]
    assert "second write" in contents and "first slow write" not in contents  # the stopped write was rolled back


def test_a_call_its_client_abandons_is_stopped(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    # The client cancels a call that cannot finish (a write waiting for the test's lock): the server ends its worker
    # at once instead of letting it run on to the deadline.
    server = servers(ToolContext(workspace_obj=ws), PoolSettings(workers=1, deadline=600))
    lock = sqlite3.connect(ws.path / STATE_DIR / DB_FILE, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    pids: list[int] = []

    async def body(client: Client) -> None:
        await server.pool.start()
        pids.extend(server.pool.pids())
        with anyio.CancelScope() as scope:

            async def abandon() -> None:
                while server.pool.busy < 1:
                    await anyio.sleep(0.02)
                scope.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(abandon)
                await client.call_tool("memory_store_item", {"agent_id": AGENT, "content": "abandoned write"})
        while server.pool.busy:
            await anyio.sleep(0.02)

    try:
        _run(server, body)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert len(pids) == 1 and not _alive(pids[0])  # the server ended the worker when the client gave up


def test_a_worker_that_died_while_idle_is_replaced(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    # Killed from outside (the OOM killer, an operator): the next call gets a new worker, not an error.
    server = servers(ToolContext(workspace_obj=ws), PoolSettings(workers=1))

    async def body(client: Client) -> None:
        await server.pool.start()
        [pid] = server.pool.pids()
        os.kill(pid, signal.SIGKILL)
        while server.pool._idle[0].process.is_alive():
            await anyio.sleep(0.01)
        result = await client.call_tool("memory_status", {"agent_id": AGENT})
        assert not result.is_error, _text(result)
        assert pid not in server.pool.pids() and len(server.pool.pids()) == 1

    _run(server, body)


def test_an_mcp_caller_always_acts_as_an_agent(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    # Operator views (every scope) are for the CLI and Python: over MCP, graph_query without agent_id is refused,
    # and raw TypeQL and every agent's BDI cycle are refused even with one.
    ctx = ToolContext(workspace_obj=ws)
    servers(ctx)
    assert ctx.operator is False
    with pytest.raises(InputError, match="agent_id: required"):
        run(ctx, "graph_query", {"name": "blocked-steps"})
    with pytest.raises(ScopeError, match="only the workspace's operator"):
        run(ctx, "typedb_query", {"agent_id": AGENT, "query": "match $x isa goal;"})
    with pytest.raises(ScopeError, match="only the workspace's operator"):
        run(ctx, "bdi_cycle", {"all_agents": True})
    assert run(ctx, "graph_query", {"agent_id": AGENT, "name": "blocked-steps"}).model_dump()["source"] == "local"


# ------------------------------------------------------------------------------------------ the HTTP token gate


async def _echo_agent(scope: Scope, receive: Receive, send: Send) -> None:
    """Stands in for the MCP app behind the gate: answers 200 with the agent the gate attached (or "-")."""
    user = scope.get("user")
    body = (user.access_token.client_id if user is not None else "-").encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": body})


def _gate_answers(gate: TokenGate, headers: dict[str, str]) -> tuple[int, str]:
    async def main() -> tuple[int, str]:
        transport = httpx2.ASGITransport(app=gate)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/mcp", headers=headers)
            return response.status_code, response.text

    return anyio.run(main)


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_the_token_gate(ws: Workspace) -> None:
    alice = ws.tokens.create(AGENT).secret
    revoked = ws.tokens.create(AGENT)
    ws.tokens.revoke(revoked.token.token_id)
    finance = ws.tokens.create("finance-agent").secret
    required = TokenGate(_echo_agent, ws.tokens.verify, required=True, bound_agent=None)
    optional = TokenGate(_echo_agent, ws.tokens.verify, required=False, bound_agent=None)
    bound = TokenGate(_echo_agent, ws.tokens.verify, required=True, bound_agent=AGENT)
    assert _gate_answers(required, {})[0] == 401
    assert _gate_answers(required, bearer(alice)) == (200, AGENT)
    assert _gate_answers(required, bearer(revoked.secret))[0] == 401
    assert _gate_answers(required, {"Authorization": f"Basic {alice}"})[0] == 401
    assert _gate_answers(required, bearer(""))[0] == 401
    assert _gate_answers(optional, {}) == (200, "-")  # loopback without a token: as before tokens
    assert _gate_answers(optional, bearer(finance)) == (200, "finance-agent")
    assert _gate_answers(optional, bearer(alice[:-1] + "x"))[0] == 401  # a wrong token is never "no token"
    status, text = _gate_answers(bound, bearer(finance))
    assert status == 403 and "this server serves 'sales-agent' only" in text
    assert _gate_answers(bound, bearer(alice)) == (200, AGENT)


def test_loopback_hosts() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", "LOCALHOST"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.4", "example.org", ""]))  # noqa: S104


_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}}  # fmt: skip


def _initialize(url: str, headers: dict[str, str]) -> int:
    async def main() -> int:
        async with httpx2.AsyncClient(timeout=60) as http:
            kinds = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            answer = await http.post(url, json=_INITIALIZE, headers=kinds | headers)
            return answer.status_code

    return anyio.run(main)


def test_dns_rebinding_is_refused_on_every_loopback_address(ws: Workspace, servers: Callable[..., ToolServer]) -> None:
    """Before: ``serve --mcp --http PORT --host 127.0.0.2`` (tokens optional on loopback) answered ``Host:
    evil.example:PORT`` and ``Origin: http://evil.example:PORT``: the SDK turns its check on for 127.0.0.1, localhost
    and ::1 only. Now the allow-list follows the bound address on all of 127.0.0.0/8 (Linux routes it to lo); no
    tool call is made, so no worker starts."""
    server = servers(ToolContext(workspace_obj=ws))
    with serving_in_thread(server.http_app("127.0.0.2"), "127.0.0.2") as port:
        url = f"http://127.0.0.2:{port}/mcp"
        assert _initialize(url, {"Host": f"evil.example:{port}"}) == 421
        assert _initialize(url, {"Origin": f"http://evil.example:{port}"}) == 403
        assert _initialize(url, {"Origin": "null"}) == 403
        assert _initialize(url, {}) == 200  # Host: 127.0.0.2:PORT, the bound address
        assert _initialize(url, {"Origin": f"http://127.0.0.2:{port}"}) == 200
        assert _initialize(url, {"Host": f"localhost:{port}"}) == 200


def test_the_host_and_origin_allow_list_follows_the_bound_address() -> None:
    for bound in ("127.0.0.1", "127.0.0.2", "127.9.8.7", "::1", "localhost"):
        shown = f"[{bound}]" if ":" in bound else bound
        assert host_allowed(f"{shown}:8765", bound) and host_allowed("localhost:8765", bound)
        assert origin_allowed(f"http://{shown}:8765", bound) and origin_allowed(None, bound)
        for evil in ("evil.example:8765", "evil.example", "127.0.0.1.evil.example:80", "", None):
            assert not host_allowed(evil, bound)
        for evil in ("http://evil.example:8765", "null", "file://", "http://127.0.0.1.evil.example"):
            assert not origin_allowed(evil, bound)
        assert f"{shown}:*" in allowed_hosts(bound) and f"http://{shown}:*" in allowed_origins(bound)


def test_pool_settings_refuse_bad_values_naming_the_field() -> None:
    for kwargs, field in [({"workers": 0}, "workers"), ({"workers": 2, "per_agent": 3}, "per_agent"),
                          ({"deadline": 0}, "deadline"), ({"deadline": -1.0}, "deadline"),
                          ({"deadline": 0.05}, "deadline"), ({"deadline": 86_401}, "deadline")]:  # fmt: skip
        # the bounds --deadline offers (0.1 to 86400 s, cli/server_options.py): what a command accepts, the pool does
        with pytest.raises(InputError, match=f"^{field}: "):
            PoolSettings(**kwargs)  # type: ignore[arg-type]
