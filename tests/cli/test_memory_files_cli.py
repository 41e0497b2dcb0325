"""``mabos memory checkpoint`` and ``mabos memory hierarchy build|search`` on a real workspace.

The commands are mounted on a small ``memory`` group under the real root group class (so errors are
reported as the ``mabos`` command reports them), independent of where ``cli.main`` attaches them.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from cli.commands.memory_files import checkpoint, hierarchy
from cli.main import MabosGroup
from kg.memory import files
from kg.memory.checkpoints import checkpoints_dir

SALES = "sales-agent"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _root() -> click.Group:
    memory = click.Group("memory", help="Agent memory.")
    memory.add_command(checkpoint)
    memory.add_command(hierarchy)
    root = MabosGroup("mabos")
    root.add_command(memory)
    return root


ROOT = _root()


class Memory:
    """Runs ``mabos memory ... --workspace <ws>`` in-process."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.runner = CliRunner()

    def __call__(self, *args: str) -> Result:
        return self.runner.invoke(ROOT, ["memory", *args, "--workspace", str(self.workspace)])

    def json(self, *args: str) -> Any:
        result = self(*args, "--json")
        assert result.exit_code == 0, f"{result.stdout}\n{result.stderr}"
        assert result.stderr == ""
        return json.loads(result.stdout)


@pytest.fixture
def memory(ready: Any) -> Memory:
    """The ``ready`` workspace (agents sales-agent and finance-agent)."""
    return Memory(ready.workspace)


def write_log(ws: Path, day: date, content: str, *, importance: float = 0.5) -> None:
    when = datetime(day.year, day.month, day.day, 10, 0, tzinfo=UTC)
    entry = files.daily_log_entry(when=when, uid=f"M-{day.toordinal():026d}", type_="decision",
                                  importance=importance, store="working", tags=["acme"], content=content)  # fmt: skip
    files.atomic_write(files.daily_log_path(ws, SALES, day), files.daily_log_header(day) + entry)


# ------------------------------------------------------------------------------------- checkpoint


def test_checkpoint_writes_and_shows_the_latest(memory: Memory) -> None:
    written = memory.json("checkpoint", "--agent", SALES, "--context", "Closing the Acme deal",
                          "--decision", "Annual plan", "--decision", "No discount", "--finding", "Renews in June",
                          "--next-step", "Send the quote", "--question", "Who signs?")  # fmt: skip
    path = Path(written["path"])
    assert path.parent == checkpoints_dir(memory.workspace, SALES) and path.exists()
    cp = written["checkpoint"]
    assert cp["decisions"] == ["Annual plan", "No discount"] and cp["open_questions"] == ["Who signs?"]
    assert cp["agent_id"] == SALES and cp["uid"].startswith("K-")
    assert memory.json("checkpoint", "--agent", SALES, "--show-latest") == written
    shown = memory("checkpoint", "--agent", SALES, "--show-latest")
    assert shown.exit_code == 0 and "## Active Decisions" in shown.stdout and "- No discount" in shown.stdout


def test_checkpoint_human_output_names_the_file(memory: Memory) -> None:
    result = memory("checkpoint", "--agent", SALES, "--context", "ctx")
    assert result.exit_code == 0 and "agents/sales-agent/memory/checkpoints/" in result.stdout


def test_show_latest_without_checkpoints(memory: Memory) -> None:
    assert memory.json("checkpoint", "--agent", SALES, "--show-latest") == {"path": None, "checkpoint": None}
    result = memory("checkpoint", "--agent", SALES, "--show-latest")
    assert result.exit_code == 0 and "No checkpoint yet" in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--agent", SALES), 2, "--context is required"),
        (("--agent", SALES, "--show-latest", "--context", "x"), 2, "--show-latest takes no"),
        (("--agent", SALES, "--context", "   "), 1, "error: context: must not be empty"),
        (("--agent", SALES, "--context", "x", "--decision", ""), 1, "error: decisions[0]: must not be empty"),
        (("--agent", "nobody", "--context", "x"), 1, "error: agent: no agent 'nobody'"),
        (("--agent", "../x", "--context", "x"), 1, "error: agent: must match"),
    ],
)
def test_checkpoint_refuses_bad_input_and_writes_nothing(memory: Memory, args: tuple[str, ...], code: int,
                                                         message: str) -> None:  # fmt: skip
    result = memory("checkpoint", *args)
    assert result.exit_code == code and message in result.stderr and "Traceback" not in result.output
    assert not checkpoints_dir(memory.workspace, SALES).exists()


# ------------------------------------------------------------------------------------- hierarchy


def test_hierarchy_build_then_rebuild(memory: Memory) -> None:
    write_log(memory.workspace, date(2024, 12, 30), "Acme pricing agreed")
    write_log(memory.workspace, date(2025, 1, 14), "Acme contract signed")
    first = memory.json("hierarchy", "build", "--agent", SALES)
    created = sorted(Path(p).relative_to(memory.workspace / "agents" / SALES / "memory").as_posix()
                     for p in first["created"])  # fmt: skip
    assert created == ["monthly/2024-12.md", "monthly/2025-01.md", "quarterly/2024-Q4.md", "quarterly/2025-Q1.md",
                       "weekly/2025-W01.md", "weekly/2025-W03.md"]  # fmt: skip
    assert first["skipped"] == ["2025-W02"] and first["daily_logs"] == 2
    again = memory.json("hierarchy", "build", "--agent", SALES)
    assert again["created"] == again["updated"] == [] and len(again["unchanged"]) == 6
    human = memory("hierarchy", "build", "--agent", SALES)
    assert human.exit_code == 0 and "0 created, 0 updated, 6 unchanged from 2 daily logs" in human.stdout


def test_hierarchy_build_scope_and_since(memory: Memory) -> None:
    write_log(memory.workspace, date(2025, 1, 6), "Acme call")
    write_log(memory.workspace, date(2025, 3, 3), "Acme renewal")
    result = memory.json("hierarchy", "build", "--agent", SALES, "--scope", "week", "--since", "2025-02-01")
    assert [Path(p).name for p in result["created"]] == ["2025-W10.md"] and result["scope"] == "week"
    assert result["since"] == "2025-02-01"


def test_hierarchy_build_without_logs(memory: Memory) -> None:
    result = memory.json("hierarchy", "build", "--agent", SALES)
    assert (result["created"], result["daily_logs"]) == ([], 0)


@pytest.mark.parametrize(
    ("args", "code"),
    [(("--scope", "year"), 2), (("--since", "2025-02-30"), 2), (("--since", "yesterday"), 2)],
)
def test_hierarchy_build_usage_errors(memory: Memory, args: tuple[str, ...], code: int) -> None:
    assert memory("hierarchy", "build", "--agent", SALES, *args).exit_code == code


def test_hierarchy_build_needs_a_known_agent(memory: Memory) -> None:
    result = memory("hierarchy", "build", "--agent", "nobody")
    assert result.exit_code == 1 and result.stderr.startswith("error: agent: no agent 'nobody'")


@pytest.mark.parametrize("level", ["daily", "weekly", "monthly", "quarterly"])
def test_hierarchy_search_at_each_level(memory: Memory, level: str) -> None:
    write_log(memory.workspace, date(2025, 1, 14), "Acme contract signed")
    write_log(memory.workspace, date(2025, 4, 2), "Globex pricing call")
    memory.json("hierarchy", "build", "--agent", SALES)
    hits = memory.json("hierarchy", "search", "--agent", SALES, "globex pricing", "--level", level)
    assert hits and hits[0]["level"] == level and hits[0]["score"] == 1.0
    assert hits[0]["period"] in ("2025-04-02", "2025-W14", "2025-04", "2025-Q2")
    assert set(hits[0]) >= {"path", "line_start", "line_end", "matched", "snippet"}
    human = memory("hierarchy", "search", "--agent", SALES, "globex", "--level", level)
    assert human.exit_code == 0 and "Globex" in human.stdout


def test_hierarchy_search_errors(memory: Memory) -> None:
    assert memory.json("hierarchy", "search", "--agent", SALES, "anything") == []
    bad = memory("hierarchy", "search", "--agent", SALES, "...", "--level", "daily")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: query:")
    assert memory("hierarchy", "search", "--agent", SALES, "x", "--level", "yearly").exit_code == 2
    assert memory("hierarchy", "search", "--agent", SALES, "x", "--limit", "0").stderr.startswith("error: limit:")


# ------------------------------------------------------------------------------------- help and docs


def _leaves() -> list[tuple[str, click.Command]]:
    return [("memory checkpoint", checkpoint), *((f"memory hierarchy {n}", c) for n, c in hierarchy.commands.items())]


@pytest.mark.parametrize(("name", "command"), _leaves())
def test_each_command_has_options_an_example_and_docs(name: str, command: click.Command) -> None:
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert {"--json", "--workspace", "--agent"} <= options
    assert "Example" in (command.help or "") and f"mabos {name}" in (command.help or "")
    assert f"### `mabos {name}`" in DOCS.read_text(encoding="utf-8")
