"""``mabos serve --mcp --dry-run`` shows the worker memory limit, and a server keeps the pool settings it is given.

Workers run under ``RLIMIT_AS`` (docs/security.md, "Bounds"): the dry run, which prints what would be served, said
nothing of it. A server bound to one agent built its default settings a second time from scratch (to give the agent
every worker), dropping whatever the first held; it now changes only ``per_agent``. Real workspaces; the servers
start no worker (none is needed to read their settings).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import kg
from cli.main import cli
from cli.pool_settings import DEFAULT_MEMORY, PoolSettings
from cli.tools import ToolContext
from cli.tools.mcp_server import ToolServer
from kg.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = kg.init_workspace(tmp_path / "ws")
    workspace.agents.add("sales-agent")
    yield workspace
    workspace.close()


def _dry_run(ws: Workspace, *args: str, memory: str | None = None) -> tuple[int, str, str]:
    env = {"MABOS_WORKER_MEMORY": memory}
    result = CliRunner().invoke(cli, ["serve", "--mcp", "--dry-run", "--workspace", str(ws.path), *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def test_the_dry_run_shows_the_worker_memory_limit(ws: Workspace) -> None:
    for memory, expected in ((None, DEFAULT_MEMORY), ("512MiB", 512 << 20), ("off", None)):
        code, stdout, _ = _dry_run(ws, "--json", memory=memory)
        assert code == 0 and json.loads(stdout)["worker_memory_bytes"] == expected
    code, stdout, _ = _dry_run(ws, "--http", "8765", "--agent", "sales-agent", memory="512MiB")
    assert code == 0 and "536,870,912 bytes = 512 MiB" in stdout and "RLIMIT_AS" in stdout
    code, stdout, _ = _dry_run(ws, memory="off")
    assert code == 0 and "no limit (MABOS_WORKER_MEMORY=off)" in stdout


def test_a_bad_worker_memory_is_one_line_naming_the_variable(ws: Workspace) -> None:
    code, stdout, stderr = _dry_run(ws, memory="lots")
    assert (code, stdout) == (1, "") and stderr.startswith("error: MABOS_WORKER_MEMORY: ") and stderr.count("\n") == 1


@pytest.mark.parametrize("agent", [None, "sales-agent"])
def test_a_server_keeps_the_settings_it_is_given(ws: Workspace, agent: str | None) -> None:
    given = PoolSettings(workers=3, per_agent=1, deadline=5.0, memory=256 << 20)
    server = ToolServer(ToolContext(workspace_obj=ws, agent=agent), given)
    try:
        assert server.pool.settings == given
    finally:
        server.close()


def test_a_bound_server_changes_only_per_agent_of_the_defaults(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every field of the default settings but ``per_agent`` (all workers: the agent is the only caller) is kept."""
    monkeypatch.setenv("MABOS_WORKER_MEMORY", "300MiB")
    bound = ToolServer(ToolContext(workspace_obj=ws, agent="sales-agent"))
    unbound = ToolServer(ToolContext(workspace_obj=ws))
    try:
        defaults = PoolSettings()
        assert defaults.memory == 300 << 20
        assert bound.pool.settings == dataclasses.replace(defaults, per_agent=defaults.workers)
        assert unbound.pool.settings == defaults
    finally:
        bound.close()
        unbound.close()
