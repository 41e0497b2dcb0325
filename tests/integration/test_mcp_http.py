"""The MCP server over HTTP with API tokens (issue 18), probed as an outsider and as a neighbouring agent would.

``mabos serve --mcp --http PORT --require-token`` runs as a subprocess on 127.0.0.1 (a random free port): the same
gate as off loopback, where tokens are always required, without listening beyond this machine. Raw HTTP (httpx2, the
MCP SDK's HTTP client) checks the status codes; the official MCP client with a bearer header checks what a token's
holder can do. Nothing is mocked: real workspace, real CLI entry point, real SDK on both ends.

- no token, a malformed or forged one, a revoked one, an expired one: 401 before the MCP app sees the request;
- alice's token acts as alice only: calls naming bob are refused, and nothing bob keeps private comes back through
  any read tool (an isolation probe whose marker bob's own token does find);
- a token revoked while the server runs is refused at the next request;
- off loopback the server refuses to start while the workspace has no active token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from cli import tools
from cli.main import cli
from kg.clock import FixedClock, SystemClock
from kg.tokens import TokenService
from kg.workspace import init_workspace, open_workspace
from tests.serving import free_port, wait_listening

REPO = Path(__file__).resolve().parents[2]
ALICE, BOB = "alice", "bob"
MARK = "kestrel"  # what the probes ask about: a word in every record bob keeps private
PRIVATE = "zeta-4471-vault"  # in every private record of bob's and in no request: seeing it back is a leak
TIMEOUT = 240  # seconds for a whole test (server start-up imports the stack); a hang fails, never blocks
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}
_MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass
class Served:
    workspace: Path
    url: str
    secrets: dict[str, str]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MABOS_")}  # no developer's TypeDB
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env | {"MABOS_EMBEDDER": "none", "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}


def _seed(path: Path) -> dict[str, str]:
    """Two agents; bob's private memory, fact and rule carry PRIVATE; tokens of every kind."""
    before = os.environ.get("MABOS_EMBEDDER")
    os.environ["MABOS_EMBEDDER"] = "none"  # for this seeding only: later tests in this process need the real model
    try:
        ws = init_workspace(path)
    finally:
        if before is None:
            os.environ.pop("MABOS_EMBEDDER", None)
        else:
            os.environ["MABOS_EMBEDDER"] = before
    try:
        ws.agents.add(ALICE)
        ws.agents.add(BOB)
        ws.tokens.create(ALICE)  # an earlier token of alice's: several live tokens per agent are fine
        secrets = {
            ALICE: ws.tokens.create(ALICE, label="probe").secret,
            BOB: ws.tokens.create(BOB).secret,
        }
        revoked = ws.tokens.create(ALICE)
        ws.tokens.revoke(revoked.token.token_id)
        secrets["revoked"] = revoked.secret
        past = TokenService(ws._store.tokens, FixedClock(SystemClock().now() - timedelta(days=2)))
        secrets["expired"] = past.create(ALICE, lifetime=timedelta(days=1)).secret  # expired a day ago
    finally:
        ws.close()
    call = {"workspace": path, "agent_id": BOB}
    tools.call("memory_store_item", **call, content=f"the {MARK} code is {PRIVATE}", tags=[MARK])
    tools.call("fact_assert", **call, subject=MARK, predicate="guards", object=PRIVATE)
    tools.call("rule_create", **call, name=f"rule-{PRIVATE}", conditions=["?x guards ?y"], conclusion="?x isSafe true")
    return secrets


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("mcp-http")
    workspace = root / "ws"
    secrets = _seed(workspace)
    port = free_port()
    command = [sys.executable, "-m", "cli.main", "serve", "--mcp", "--http", str(port), "--require-token",
               "--workspace", str(workspace)]  # fmt: skip
    with (root / "server.err").open("wb") as err:
        server = subprocess.Popen(command, env=_env(), cwd=REPO, stderr=err)
        try:
            anyio.run(partial(wait_listening, port, server, timeout=TIMEOUT))
            yield Served(workspace, f"http://127.0.0.1:{port}/mcp", secrets)
        finally:
            server.terminate()
            server.wait(timeout=30)


def _status(url: str, headers: dict[str, str]) -> tuple[int, str]:
    async def main() -> tuple[int, str]:
        async with httpx2.AsyncClient(timeout=60) as http:
            response = await http.post(url, json=_INITIALIZE, headers=_MCP_HEADERS | headers)
            return response.status_code, response.text

    return anyio.run(main)


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def _calls(url: str, secret: str, calls: list[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
    """Run tool calls in one MCP session that presents ``secret``."""
    results: list[CallToolResult] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with (
                httpx2.AsyncClient(headers=_bearer(secret), timeout=120) as http,
                Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
            ):
                for name, arguments in calls:
                    results.append(await client.call_tool(name, arguments))

    anyio.run(main)
    return results


def test_no_bad_revoked_or_expired_token_gets_in(served: Served) -> None:
    assert _status(served.url, {})[0] == 401
    forged = served.secrets[ALICE][:-4] + ("AAAA" if not served.secrets[ALICE].endswith("AAAA") else "BBBB")
    for headers in [
        _bearer("not-a-token"),
        _bearer(forged),
        {"Authorization": served.secrets[ALICE]},  # no scheme
        {"Authorization": f"Basic {served.secrets[ALICE]}"},
        _bearer(served.secrets["revoked"]),
        _bearer(served.secrets["expired"]),
    ]:
        status, body = _status(served.url, headers)
        assert status == 401, (headers, body)
        assert json.loads(body)["error"] == "invalid_token"
    assert _status(served.url, _bearer(served.secrets[ALICE]))[0] == 200  # the gate is not simply shut


def test_a_token_acts_as_its_agent_only(served: Served) -> None:
    mine, as_bob, bobs_status = _calls(
        served.url,
        served.secrets[ALICE],
        [
            ("memory_store_item", {"content": "alice's own note"}),
            ("memory_recall", {"agent_id": BOB, "query": MARK}),
            ("memory_status", {"agent_id": BOB}),
        ],
    )
    assert isinstance(mine.structured_content, dict) and mine.structured_content["item"]["agent_id"] == ALICE
    for refused in (as_bob, bobs_status):
        assert refused.is_error
        assert _text(refused) == f"error: agent_id: this server acts as '{ALICE}'; it cannot act as '{BOB}'"


PROBES: list[tuple[str, dict[str, Any]]] = [
    ("memory_recall", {"query": MARK}),
    ("memory_recall", {"query": f"{MARK} code", "mode": "bm25"}),
    ("memory_hierarchy_search", {"query": MARK}),
    ("memory_status", {}),
    ("fact_query", {"subject": MARK}),
    ("fact_query", {"predicate": "guards"}),
    ("rule_list", {}),
    ("knowledge_explain", {"question": f"what guards {MARK}?"}),
    ("infer_forward", {}),
    ("cbr_retrieve", {"context": {"topic": MARK}}),
    ("graph_query", {"name": "belief-holders", "subject": MARK}),
    ("context_assemble", {"session_key": MARK, "prompt": MARK}),
    ("lcm_grep", {"pattern": MARK}),
]


def test_an_isolation_probe_over_http_finds_nothing_of_bobs(served: Served) -> None:
    results = _calls(served.url, served.secrets[ALICE], PROBES)
    leaked = [
        (name, _text(result)) for (name, _), result in zip(PROBES, results, strict=True) if PRIVATE in _text(result)
    ]
    assert leaked == []
    answered = [name for (name, _), result in zip(PROBES, results, strict=True) if not result.is_error]
    assert {"memory_recall", "memory_status", "fact_query", "rule_list"} <= set(answered)
    # the probe can see the mark where it is allowed to: bob's own token finds it
    own = _calls(
        served.url, served.secrets[BOB], [("memory_recall", {"query": MARK}), ("fact_query", {"subject": MARK})]
    )
    assert all(PRIVATE in _text(result) for result in own), [_text(r) for r in own]


def test_a_token_revoked_while_serving_is_refused_next_time(served: Served) -> None:
    with open_workspace(served.workspace) as ws:
        created = ws.tokens.create(BOB, label="short-lived")
    assert _status(served.url, _bearer(created.secret))[0] == 200
    with open_workspace(served.workspace) as ws:
        ws.tokens.revoke(created.token.token_id)
    assert _status(served.url, _bearer(created.secret))[0] == 401


def test_off_loopback_the_server_needs_a_token_to_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    ws = init_workspace(tmp_path / "ws")
    ws.agents.add(ALICE)
    ws.close()
    runner = CliRunner()
    base = ["serve", "--mcp", "--http", "8765", "--host", "0.0.0.0", "--dry-run", "--json"]  # noqa: S104
    base += ["--workspace", str(tmp_path / "ws")]
    refused = runner.invoke(cli, base)
    assert refused.exit_code == 1
    assert refused.stderr.strip().splitlines() == [
        "error: --host: 0.0.0.0 is not loopback, so every request needs a token, and the workspace has no active "
        "token; create one with 'mabos token create --agent AGENT'"
    ]
    assert runner.invoke(cli, ["token", "create", "--agent", ALICE, "--workspace", str(tmp_path / "ws")]).exit_code == 0
    planned = runner.invoke(cli, base)
    assert planned.exit_code == 0, planned.output
    assert json.loads(planned.stdout)["tokens"] == "required"
    loopback = runner.invoke(cli, ["serve", "--mcp", "--http", "8765", "--dry-run", "--json", "--workspace",
                                   str(tmp_path / "ws")])  # fmt: skip
    assert json.loads(loopback.stdout)["tokens"] == "optional"


def test_a_session_opened_with_one_agents_token_cannot_be_used_with_anothers(served: Served) -> None:
    async def main() -> tuple[int, int]:
        async with httpx2.AsyncClient(timeout=60) as http:
            opened = await http.post(
                served.url, json=_INITIALIZE, headers=_MCP_HEADERS | _bearer(served.secrets[ALICE])
            )
            session = opened.headers["mcp-session-id"]
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
            headers = _MCP_HEADERS | {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
            bobs = await http.post(served.url, json=listing, headers=headers | _bearer(served.secrets[BOB]))
            nobody = await http.post(served.url, json=listing, headers=headers)
            return bobs.status_code, nobody.status_code

    # the SDK answers as if the session did not exist; without a token the gate answers first
    assert anyio.run(main) == (404, 401)
