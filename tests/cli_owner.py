"""For the tests that check what the CLI, as the owner of its process, asks of a library call: a CLI runner on a
fresh workspace with one agent, and a spy recording one keyword of every call (the call itself still runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli


def cli_with_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str) -> CliRunner:
    """A CLI runner on a new workspace at ``tmp_path/ws`` (no embedder) where ``agent`` exists."""
    monkeypatch.setenv("MABOS_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    assert runner.invoke(cli, ["agent", "add", agent]).exit_code == 0
    return runner


def spy_keyword(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, keyword: str) -> list[Any]:
    """Replace ``owner.name`` (a module's function or a class's method) by a spy that records the value of
    ``keyword`` in every call (False when not given) and calls the real one; the list of values."""
    asked: list[Any] = []
    real = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get(keyword, False))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return asked
