"""``mabos sync nightly`` through the CLI on real workspaces (the demo, the populated fixture).

No TypeDB server runs here: "configured but unreachable" is the real driver refused at 127.0.0.1:1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import kg
from sync.nightly import nightly_lock

if TYPE_CHECKING:
    from conftest import Mabos

SALES = "sales-agent"
DEAD_TYPEDB = "127.0.0.1:1"
NO_EMBEDDER: dict[str, str | None] = {"MABOS_EMBEDDER": "none", "MABOS_TYPEDB_ADDRESS": None}


@pytest.fixture
def demo(mabos: Mabos) -> Mabos:
    """The ``mabos demo`` workspace at the runner's workspace path."""
    result = mabos.raw("demo", "--workspace", str(mabos.workspace), "--json", env=NO_EMBEDDER)
    assert result.exit_code == 0, result.output
    return mabos


def _steps(data: dict[str, object]) -> dict[str, dict[str, object]]:
    return {step["name"]: step for step in data["steps"]}  # type: ignore[attr-defined, index]


def test_demo_end_to_end_without_typedb(demo: Mabos) -> None:
    result = demo("sync", "nightly", "--all", "--json", env=NO_EMBEDDER)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    steps = _steps(data)
    assert data["exit_code"] == 0 and data["agents"] == ["finance-agent", "sales-agent"]
    assert steps["push"]["status"] == "skipped" and str(steps["push"]["message"]).startswith("not configured")
    assert steps["vector-index"]["status"] == "skipped"
    assert all(steps[n]["status"] == "ok" for n in ("tiers", "consolidate", "hierarchy", "bdi-cycle", "infer",
                                                    "materialize", "markdown-index"))  # fmt: skip
    for name in data["files"]:
        assert (demo.workspace / name).is_file()
    assert data["files"][0] == f".mabos/reports/nightly-{data['date']}.json"


def test_demo_with_unreachable_typedb_exits_3_and_keeps_the_outbox(demo: Mabos) -> None:
    with kg.open_workspace(demo.workspace) as ws:
        before = ws.ports.outbox.counts()
    result = demo("sync", "nightly", "--all", "--typedb", DEAD_TYPEDB, "--json", env=NO_EMBEDDER)
    assert result.exit_code == 3, result.output
    steps = _steps(json.loads(result.stdout))  # stdout is still the whole report, as JSON
    assert steps["push"]["status"] == "failed" and "unreachable" in str(steps["push"]["message"])
    assert steps["infer"]["status"] == steps["materialize"]["status"] == "ok"
    assert result.stderr.startswith("error: nightly: schema, push failed (schema: typedb: 127.0.0.1:1 is unreachable")
    assert result.stderr.count("\n") == 1
    with kg.open_workspace(demo.workspace) as ws:
        after = ws.ports.outbox.counts()
    assert after["acked"] == before["acked"] and after["pending"] >= before["pending"]


def test_human_output_is_a_table_of_steps(demo: Mabos) -> None:
    result = demo("sync", "nightly", "--agent", SALES, "--skip", "hierarchy", "--skip", "push", env=NO_EMBEDDER)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Nightly run ")
    assert any(line.split()[:2] == ["hierarchy", "skipped"] for line in lines)
    assert any(line.split()[:2] == ["infer", "ok"] for line in lines)
    assert "all steps ok or skipped; report: .mabos/reports/nightly-" in result.stdout


def test_a_failing_step_exits_1_after_running_the_others(demo: Mabos) -> None:
    (demo.workspace / "agents" / "finance-agent" / "mabos-facts.md").mkdir()  # a real fault: cannot be written
    result = demo("sync", "nightly", "--all", "--json", env=NO_EMBEDDER)
    assert result.exit_code == 1, result.output
    steps = _steps(json.loads(result.stdout))
    assert steps["materialize"]["status"] == "failed" and steps["markdown-index"]["status"] == "ok"
    assert result.stderr.startswith("error: nightly: consolidate, materialize failed")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ((), 2, "give --agent AGENT (repeatable) or --all"),
        (("--all", "--agent", SALES), 2, "give --agent AGENT (repeatable) or --all"),
        (("--all", "--skip", "vectors"), 2, "'vectors' is not one of"),
        (("--agent", "nobody"), 1, "error: agent: no agent 'nobody'"),
        (("--all", "--typedb", "no port"), 1, "error: "),
    ],
)
def test_bad_input_changes_nothing(ready: Mabos, args: tuple[str, ...], code: int, message: str) -> None:
    result = ready("sync", "nightly", *args, env=NO_EMBEDDER)
    assert result.exit_code == code, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert not (ready.workspace / ".mabos" / "reports").exists()


def test_an_overlapping_run_is_refused(demo: Mabos) -> None:
    with kg.open_workspace(demo.workspace) as ws, nightly_lock(demo.workspace, ws.clock.now()):
        result = demo("sync", "nightly", "--all", env=NO_EMBEDDER)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: nightly: another run is in progress (pid ")
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not (demo.workspace / ".mabos" / "reports").exists()


def test_populated_fixture_runs(populated: dict[str, str], ready: Mabos) -> None:
    result = ready("sync", "nightly", "--all", "--json", env=NO_EMBEDDER)
    assert result.exit_code == 0 and result.stderr == "", result.output
    data = json.loads(result.stdout)
    assert _steps(data)["infer"]["status"] == "ok"
    assert Path(ready.workspace, data["files"][1]).read_text(encoding="utf-8").startswith("# Nightly run ")
