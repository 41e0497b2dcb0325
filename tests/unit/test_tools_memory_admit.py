"""memory_admit (cli/tools/memory_admit.py) and the ``mabos memory admit`` command that runs it (issue 18: the command
listed memories and wrote through MemoryWriter itself, past the registry's validation). Real workspace and SQLite;
no embedder (token Jaccard novelty) and no LLM (similarity-rule dedup)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import tools
from cli.main import cli
from cli.tools.memory_admit import AdmitResult
from kg.errors import ScopeError
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.unit.tool_calls import call, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")
BUDGET = "Maya's offsite budget is 18,500 euros including travel"
CANDIDATES = [
    {"content": BUDGET, "type": "fact", "importance": 0.8, "evidence": ["The budget is 18,500 euros."], "key": "m1"},
    {"content": BUDGET, "type": "fact", "importance": 0.8, "evidence": ["The budget is 18,500 euros."], "key": "m2"},
    {"content": "The moon is made of cheese", "type": "fact", "evidence": ["We talked about the venue."], "key": "m3"},
]


def test_a_dry_run_scores_and_a_write_dedups(ws: Workspace) -> None:
    before = snapshot_workspace(ws)
    dry = call(ws, "memory_admit", candidates=CANDIDATES, dry_run=True)
    assert isinstance(dry, AdmitResult) and dry.dry_run and dry.report is None
    assert [r.decision for r in dry.admission or []] == ["admit", "admit", "reject"]
    assert snapshot_workspace(ws) == before, "a dry run writes nothing"
    done = call(ws, "memory_admit", candidates=CANDIDATES)
    assert not done.dry_run and done.report is not None
    assert {o.key: o.action for o in done.report.outcomes} == {"m1": "create", "m2": "duplicate", "m3": "reject"}
    items = ws.memory.list_items("a", include_archived=False)
    assert [i.content for i in items] == [BUDGET] and items[0].scope == "agent:a"
    every = call(ws, "memory_admit", candidates=CANDIDATES[2:], preset="off")
    assert [o.action for o in every.report.outcomes] == ["create"], "off admits everything"
    assert ws.memory.list_items("b", include_archived=False) == []


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "candidates"),
        ({"candidates": []}, "candidates"),
        ({"candidates": "remember this"}, "candidates"),
        ({"candidates": [{"type": "fact"}]}, "candidates"),
        ({"candidates": [{"content": ""}]}, "candidates"),
        ({"candidates": [{"content": "x", "importance": 2}]}, "candidates"),
        ({"candidates": [{"content": "x", "type": "gossip"}]}, "candidates"),
        ({"candidates": [{"content": "x", "scope": "no where"}]}, "candidates"),
        ({"candidates": [{"content": "x", "colour": "red"}]}, "candidates"),
        ({"candidates": [{"content": "x"}], "preset": "lenient"}, "preset"),
        ({"candidates": [{"content": "x"}], "dry_run": "maybe"}, "dry_run"),
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, arguments: dict[str, Any], field: str
) -> None:
    assert refused_unchanged(ws, "memory_admit", arguments).field.split(".")[0] == field


def test_a_candidate_in_a_scope_the_agent_may_not_write_refuses_the_call(ws: Workspace) -> None:
    before = snapshot_workspace(ws)
    planted = [CANDIDATES[0], {**CANDIDATES[2], "scope": "agent:b"}]
    with pytest.raises(ScopeError, match=r"^scope: "):
        call(ws, "memory_admit", candidates=planted, preset="off")
    with pytest.raises(ScopeError, match="agent_id"):
        tools.call("memory_admit", workspace=ws.path, agent="a", agent_id="b", candidates=CANDIDATES)
    assert snapshot_workspace(ws) == before, "nothing queued or written"


def test_the_command_runs_the_tool_with_unchanged_output(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_on(monkeypatch, "memory_admit")
    feed = tmp_path / "c.jsonl"
    feed.write_text("\n".join(json.dumps(c) for c in CANDIDATES) + "\n", encoding="utf-8")
    base = ["--workspace", str(ws.path), "memory", "admit", "--agent", "a", "--file", str(feed)]
    dry = json.loads(CliRunner().invoke(cli, [*base, "--dry-run", "--json"]).stdout)
    assert set(dry) == {"dry_run", "admission"} and [r["key"] for r in dry["admission"]] == ["m1", "m2", "m3"]
    written = CliRunner().invoke(cli, [*base, "--json"])
    report = json.loads(written.stdout)
    assert written.exit_code == 0 and set(report) >= {"admission", "outcomes", "queued"}, "--json is the report"
    human = CliRunner().invoke(cli, [*base, "--preset", "off"])
    assert human.exit_code == 0 and "Outcomes" in human.stdout
    feed.write_text('{"content": "ok"}\n{"content": "x", "importance": 5}\n', encoding="utf-8")
    bad = CliRunner().invoke(cli, base)
    assert bad.exit_code == 1 and bad.stderr.startswith("error: line 2: importance") and bad.stderr.count("\n") == 1
    assert seen == ["memory_admit"] * 3, "the file's line 2 was refused before the tool"
