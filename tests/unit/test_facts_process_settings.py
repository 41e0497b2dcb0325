"""A bulk assert changes the process's garbage collector and GIL switch interval only when its caller owns the
process and says so (issue 34): a library call leaves its host's settings alone; ``mabos fact import`` opts in."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kg
from cli.main import cli
from kg.facts import FactService
from kg.facts_fast import HANDOFF_INTERVAL
from kg.workspace import Workspace
from tests.cli_owner import cli_with_agent, spy_keyword


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    with kg.init_workspace(tmp_path / "ws") as workspace:
        workspace.agents.add("a")
        yield workspace


def _observed_facts(seen: list[tuple[bool, float]], count: int) -> Iterator[dict[str, Any]]:
    """Fact dicts that note the process settings each time one is taken (inside the bulk assert)."""
    for i in range(count):
        seen.append((gc.isenabled(), sys.getswitchinterval()))
        yield {"subject": f"item{i}", "predicate": "madeOf", "object": "steel"}


@pytest.fixture
def interval() -> Iterator[float]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.01)
    yield sys.getswitchinterval()
    sys.setswitchinterval(before)


def test_a_library_call_leaves_the_process_settings_alone(ws: Workspace, interval: float) -> None:
    seen: list[tuple[bool, float]] = []
    result = ws.facts.assert_many("a", _observed_facts(seen, 30), batch_size=5)  # six batches, screened ahead
    assert result.created == 30
    assert set(seen) == {(True, interval)}
    assert gc.isenabled() and sys.getswitchinterval() == interval


def test_the_owner_of_the_process_may_tune_it_and_gets_it_back(ws: Workspace, interval: float) -> None:
    seen: list[tuple[bool, float]] = []
    ws.facts.assert_many("a", _observed_facts(seen, 30), batch_size=5, tune_process=True)
    assert all(not enabled for enabled, _ in seen)  # the collector paused for the whole call
    assert seen[-1][1] == pytest.approx(HANDOFF_INTERVAL)  # the short interval once a batch is screened ahead
    assert gc.isenabled() and sys.getswitchinterval() == interval


def test_mabos_fact_import_opts_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI owns its process: its import asks for the tuning (a spy records the call, which still runs)."""
    runner = cli_with_agent(tmp_path, monkeypatch, "reader")
    asked = spy_keyword(monkeypatch, FactService, "assert_triples", "tune_process")
    (tmp_path / "d.nt").write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    result = runner.invoke(cli, ["fact", "import", "--agent", "reader", str(tmp_path / "d.nt"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["created"] == 1
    assert asked == [True]
