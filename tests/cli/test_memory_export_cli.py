"""``mabos memory materialize|export|import`` through click, on a real workspace under tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

import kg
from cli.commands.memory_export import COMMANDS
from cli.common import workspace_option
from cli.main import MabosGroup

SALES = "sales-agent"


def _mabos() -> click.Group:
    """A root group like ``mabos`` with only these commands under ``memory``."""
    root = workspace_option(MabosGroup("mabos"))
    memory = click.Group("memory")
    for command in COMMANDS:
        memory.add_command(command)
    root.add_command(memory)
    return root


@pytest.fixture
def run(ready) -> Callable[..., Result]:
    """``run("export", "--kind", "beliefs")`` -> ``mabos --workspace <ws> memory export --agent sales-agent ...``."""
    group = _mabos()

    def invoke(command: str, *args: str, agent: str = SALES) -> Result:
        argv = ["--workspace", str(ready.workspace), "memory", command, "--agent", agent, *args]
        return CliRunner().invoke(group, argv)

    return invoke


def _json(result: Result) -> Any:
    assert result.exit_code == 0, f"{result.output}"
    assert result.stderr == ""
    return json.loads(result.stdout)


def test_help_has_an_example_for_every_command() -> None:
    for command in COMMANDS:
        assert f"mabos memory {command.name}" in (command.help or "")
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        assert {"--json", "--workspace", "--agent"} <= options


def test_materialize(run, populated, ready) -> None:
    data = _json(run("materialize", "--json"))
    assert data["agent_id"] == SALES
    assert [(f["path"], f["status"], f["records"]) for f in data["files"]] == [
        (f"agents/{SALES}/memory/mabos-memory-items.md", "written", 0),
        (f"agents/{SALES}/mabos-facts.md", "written", 3),
        (f"agents/{SALES}/mabos-beliefs.md", "written", 1),
    ]
    again = run("materialize")
    assert again.exit_code == 0 and "unchanged" in again.stdout and "written" not in again.stdout


def test_export_edit_import(run, populated, ready: Any, digest) -> None:
    exported = _json(run("export", "--json"))
    assert [f["records"] for f in exported["files"]] == [1, 1, 1, 1, 2, 0]
    before = digest()
    unchanged = _json(run("import", "--json"))
    assert (unchanged["created"], unchanged["updated"], unchanged["unchanged"]) == ([], [], 6)
    assert digest() == before

    beliefs = Path(ready.workspace) / "agents" / SALES / "Beliefs.md"
    text = beliefs.read_text(encoding="utf-8").replace("certainty: 0.8", "certainty: 0.9")
    beliefs.write_text(text + "\n## A brand new belief\ncertainty: 0.3\nmood: good\n", encoding="utf-8")
    result = run("import", "--kind", "beliefs")
    assert result.exit_code == 0, result.output
    assert "1 created, 1 updated, 0 steps linked, 0 unchanged" in result.stdout
    assert "warning: agents/sales-agent/Beliefs.md:" in result.stdout and "unknown marker 'mood'" in result.stdout
    with kg.open_workspace(ready.workspace) as ws:
        assert ws.bdi.get(SALES, populated["belief"]).certainty == 0.9
        assert {b.content for b in ws.bdi.list(SALES, "belief")} == {"Acme is growing", "A brand new belief"}


def test_a_bad_value_exits_1_with_one_line_and_changes_nothing(run, populated, ready, digest) -> None:
    run("export", "--kind", "goals")
    goals = Path(ready.workspace) / "agents" / SALES / "Goals.md"
    goals.write_text(goals.read_text(encoding="utf-8").replace("priority: 8", "priority: 11"), encoding="utf-8")
    before = digest()
    result = run("import", "--kind", "goals", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: agents/{SALES}/Goals.md:4: priority:")
    assert "Traceback" not in result.output and result.stderr.count("\n") == 1
    assert digest() == before


def test_unknown_agent_missing_file_and_bad_kind(run, ready) -> None:
    nobody = run("export", agent="nobody")
    assert nobody.exit_code == 1 and "nobody" in nobody.stderr
    escape = run("export", agent="../x")
    assert escape.exit_code == 1 and escape.stderr.startswith("error: agent:")
    missing = run("import", "--kind", "plans")
    assert missing.exit_code == 1 and "Plans.md: no such file" in missing.stderr
    usage = run("export", "--kind", "feelings")
    assert usage.exit_code == 2
    nothing = _json(run("import", "--json"))
    assert len(nothing["missing"]) == 6 and nothing["files"] == []
