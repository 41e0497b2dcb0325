"""``mabos tools list|export|docs`` and ``mabos serve --mcp`` (its checks and ``--dry-run``; serving itself is
tested over stdio in tests/integration/test_mcp_stdio.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import kg
from cli.main import cli
from cli.tools import REGISTRY

#: The ``mabos`` root group.
ROOT = cli


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with one agent."""
    with kg.init_workspace(tmp_path / "ws") as workspace:
        workspace.agents.add("sales-agent")
    return tmp_path / "ws"


def _run(*args: str) -> Result:
    return CliRunner().invoke(ROOT, list(args))


def _json(*args: str) -> object:
    result = _run(*args, "--json")
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    return json.loads(result.stdout)


def test_tools_list() -> None:
    rows = _json("tools", "list")
    assert isinstance(rows, list) and [row["name"] for row in rows] == list(REGISTRY)
    recall = next(row for row in rows if row["name"] == "memory_recall")
    assert recall["group"] == "memory" and recall["summary"].endswith(".")
    memory = _json("tools", "list", "--group", "memory")
    assert isinstance(memory, list) and {row["group"] for row in memory} == {"memory"}
    human = _run("tools", "list")
    assert human.exit_code == 0 and "memory_recall" in human.stdout


@pytest.mark.parametrize("fmt", ["mcp", "openai", "openclaw"])
def test_tools_export(fmt: str) -> None:
    plain = _run("tools", "export", "--format", fmt)
    assert plain.exit_code == 0, plain.output
    data = json.loads(plain.stdout)
    assert data == _json("tools", "export", "--format", fmt) and len(data) == len(REGISTRY)
    one = _json("tools", "export", "--format", fmt, "--tool", "fact_assert")
    assert isinstance(one, list) and len(one) == 1 and "fact_assert" in json.dumps(one)


def test_tools_export_refuses_an_unknown_tool() -> None:
    result = _run("tools", "export", "--tool", "nope")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "error: tool: no tool 'nope'\n"


def test_tools_docs_writes_and_checks(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "tools.md"
    wrote = _json("tools", "docs", "--out", str(page))
    assert wrote == {"path": str(page), "tools": len(REGISTRY), "changed": True}
    assert "### `memory_recall`" in page.read_text(encoding="utf-8")
    assert _json("tools", "docs", "--out", str(page), "--check") == {**wrote, "changed": False}
    page.write_text("stale\n", encoding="utf-8")
    stale = _run("tools", "docs", "--out", str(page), "--check")
    assert stale.exit_code == 1 and stale.stderr.startswith("error: --out: ") and "stale" in stale.stderr
    assert page.read_text(encoding="utf-8") == "stale\n"  # --check writes nothing


def test_serve_dry_run(ws: Path) -> None:
    plan = _json("serve", "--mcp", "--dry-run", "--workspace", str(ws))
    assert {k: plan[k] for k in ("transport", "url", "agent", "workspace", "tools")} == {
        "transport": "stdio", "url": None, "agent": None, "workspace": str(ws), "tools": len(REGISTRY)
    }  # fmt: skip
    assert (plan["workers"], plan["per_agent"], plan["deadline_s"]) == (2, 1, 60.0)
    http = _json("serve", "--mcp", "--http", "8765", "--agent", "sales-agent", "--dry-run", "--workspace", str(ws))
    assert isinstance(http, dict)
    assert (http["transport"], http["url"], http["agent"]) == ("http", "http://127.0.0.1:8765/mcp", "sales-agent")


def test_serve_refuses_bad_options(ws: Path) -> None:
    no_mcp = _run("serve", "--workspace", str(ws))
    assert (no_mcp.exit_code, no_mcp.stderr) == (1, "error: --mcp: required (MCP is the only protocol served)\n")
    stranger = _run("serve", "--mcp", "--agent", "nobody", "--dry-run", "--workspace", str(ws))
    assert stranger.exit_code == 1 and stranger.stderr.startswith("error: ") and "nobody" in stranger.stderr
    port = _run("serve", "--mcp", "--http", "0", "--workspace", str(ws))
    assert port.exit_code == 2
