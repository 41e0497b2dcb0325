"""Where the workspace comes from: --workspace before or after the command (the leaf wins), env, default."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos


def test_workspace_before_and_after_the_subcommand(ready: Mabos) -> None:
    w = str(ready.workspace)
    before = ready.raw("--workspace", w, "agent", "list", "--json")
    after = ready.raw("agent", "list", "--workspace", w, "--json")
    assert before.exit_code == after.exit_code == 0
    assert before.stdout == after.stdout
    assert "sales-agent" in before.stdout


def test_leaf_workspace_wins_over_root(ready: Mabos, tmp_path: Path) -> None:
    elsewhere = str(tmp_path / "elsewhere")
    w = str(ready.workspace)
    assert ready.raw("--workspace", elsewhere, "agent", "list", "--workspace", w).exit_code == 0
    wrong = ready.raw("--workspace", w, "agent", "list", "--workspace", elsewhere)
    assert wrong.exit_code == 1
    assert wrong.stderr.startswith("error: workspace: no workspace at")
    assert elsewhere in wrong.stderr


def test_env_variable_and_option_precedence(ready: Mabos, tmp_path: Path) -> None:
    env = {"MABOS_WORKSPACE": str(ready.workspace)}
    from_env = ready.raw("agent", "show", "sales-agent", "--json", env=env)
    assert from_env.exit_code == 0, from_env.stderr
    overridden = ready.raw("agent", "show", "sales-agent", "--workspace", str(tmp_path / "none"), env=env)
    assert overridden.exit_code == 1


def test_default_is_mabos_workspace_in_the_current_directory(mabos: Mabos, tmp_path: Path) -> None:
    created = mabos.raw("init", "--json")
    assert created.exit_code == 0
    assert created.stdout and (tmp_path / "mabos-workspace" / "mabos.toml").is_file()
    assert mabos.raw("status", "--json").exit_code == 0


def test_init_is_idempotent_and_says_where(mabos: Mabos) -> None:
    first = mabos.json("init")
    assert first == {"workspace": str(mabos.workspace.resolve()), "name": "ws", "created": True}
    mabos.ok("agent", "add", "a")
    second = mabos.ok("init")
    assert f"Workspace 'ws' already exists at {mabos.workspace.resolve()}" in second.stdout
    assert mabos.json("init")["created"] is False
    assert [a["agent_id"] for a in mabos.json("agent", "list")] == ["a"]
