"""The MCP server as an agent sees it: ``mabos serve --mcp`` started as a subprocess, driven by the official
``mcp`` client over stdio (issue 9's check), and once over streamable HTTP (``--http PORT``).

Nothing is mocked: a real workspace on disk, the real CLI entry point (``python -m cli.main``) and the real
SDK on both ends. ``MABOS_EMBEDDER=none`` keeps it fast (recall runs BM25-only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from cli.main import cli
from cli.tools import REGISTRY
from cli.tools.registry import SEED_TOOL_NAMES
from kg.workspace import init_workspace
from tests.serving import free_port, wait_listening

REPO = Path(__file__).resolve().parents[2]
AGENT = "sales-agent"
ISSUE_TOOLS = SEED_TOOL_NAMES  # every tool issue 9 names
#: The tools this test calls.
CALLED = (
    "memory_store_item",
    "memory_recall",
    "fact_assert",
    "rule_create",
    "infer_forward",
    "ontology_propose_concept",
)
SESSION_TIMEOUT = 240  # seconds for the whole session (server start-up imports torch); a hang fails, never blocks


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A fresh workspace with one agent."""
    assert [name for name in CALLED if name not in REGISTRY] == []
    assert "serve" in cli.commands
    ws = init_workspace(tmp_path / "ws")
    ws.agents.add(AGENT, name="Sales")
    ws.close()
    yield tmp_path / "ws"


def _env() -> dict[str, str]:
    return {
        "MABOS_EMBEDDER": "none",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def _server(ws: Path) -> StdioServerParameters:
    args = ["-m", "cli.main", "serve", "--mcp", "--workspace", str(ws)]
    return StdioServerParameters(command=sys.executable, args=args, env=_env(), cwd=str(REPO))


def _data(result: CallToolResult) -> dict[str, Any]:
    text = " ".join(block.text for block in result.content if isinstance(block, TextContent))
    assert not result.is_error, text
    assert isinstance(result.structured_content, dict), text
    return result.structured_content


def _error(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


async def _session(ws: Path) -> None:
    async with Client(_server(ws), read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        names = {tool.name for tool in listed.tools}
        assert not [name for name in ISSUE_TOOLS if name not in names]
        recall = next(tool for tool in listed.tools if tool.name == "memory_recall")
        assert recall.input_schema["type"] == "object" and "query" in recall.input_schema["properties"]

        a = {"agent_id": AGENT}
        stored = _data(await client.call_tool("memory_store_item", {**a, "content": "Acme needs SSO for 500 seats"}))
        uid = stored["item"]["uid"]
        hits = _data(await client.call_tool("memory_recall", {**a, "query": "SSO seats", "limit": 5}))["hits"]
        assert uid in [hit["item"]["uid"] for hit in hits]

        fact = _data(await client.call_tool("fact_assert", {**a, "subject": "acme", "predicate": "hasRevenue",
                                                            "object": "50000"}))  # fmt: skip
        assert fact["fact"]["subject"] == "acme"
        rule = {**a, "name": "big", "conditions": ["?x hasRevenue gt 10000"], "conclusion": "?x isBig true"}
        _data(await client.call_tool("rule_create", rule))
        inferred = _data(await client.call_tool("infer_forward", {**a, "persist": True}))
        derived = [(f["subject"], f["predicate"], f["object"]) for f in inferred["derived"]]
        assert ("acme", "isBig", "true") in derived

        proposal = _data(
            await client.call_tool(
                "ontology_propose_concept",
                {**a, "domain": "sbvr-business", "node_type": "class", "node_id": "biz:DropshipVendor",
                 "label": "Dropship Vendor", "parent_class": "biz:Supplier"},
            )
        )  # fmt: skip
        assert proposal["status"] == "pending" and proposal["uid"]

        bad = _error(await client.call_tool("memory_recall", {**a, "query": "SSO", "limit": "lots"}))
        assert bad.startswith("error: limit:") and "\n" not in bad
        # the server kept serving after the error
        again = _data(await client.call_tool("memory_recall", {**a, "query": "SSO"}))
        assert again["hits"]


def test_an_agent_uses_mabos_over_mcp_stdio(workspace: Path) -> None:
    async def main() -> None:
        with anyio.fail_after(SESSION_TIMEOUT):
            await _session(workspace)

    anyio.run(main)


async def _http_session(url: str) -> None:
    async with Client(url, read_timeout_seconds=120) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert not [name for name in ISSUE_TOOLS if name not in names]
        stored = _data(await client.call_tool("memory_store_item", {"content": "Served over HTTP"}))
        assert stored["item"]["agent_id"] == AGENT  # the server is bound to AGENT
        other = _error(await client.call_tool("memory_recall", {"agent_id": "x", "query": "HTTP"}))
        assert other.startswith("error: agent_id: this server acts as 'sales-agent'")


def test_the_server_speaks_streamable_http_bound_to_one_agent(workspace: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "cli.main", "serve", "--mcp", "--http", str(port), "--agent", AGENT]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MABOS_")} | _env()  # no developer's TypeDB
    log = workspace.parent / "server.err"  # a file, not a pipe: a chatty server can never block on it
    with log.open("wb") as err:
        server = subprocess.Popen([*command, "--workspace", str(workspace)], env=env, cwd=REPO, stderr=err)
        try:

            async def main() -> None:
                with anyio.fail_after(SESSION_TIMEOUT):
                    await wait_listening(port, server)
                    await _http_session(f"http://127.0.0.1:{port}/mcp")

            anyio.run(main)
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert log.read_text().startswith(f"mabos: serving {len(REGISTRY)} tools on http://127.0.0.1:{port}/mcp")
