"""``mabos sync import-workspace`` / ``mabos sync export-workspace`` on real workspaces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import kg
from cli.commands.sync_workspace import export_workspace, import_workspace

if TYPE_CHECKING:
    from conftest import Mabos

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "openclaw_workspace"


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


def run_json(mabos: Mabos, *args: str) -> Any:
    return mabos.json("sync", *args)


def test_export_then_import_into_another_workspace(populated: dict[str, str], ready: Mabos, tmp_path: Path) -> None:
    out = tmp_path / "export"
    exported = run_json(ready, "export-workspace", str(out))
    assert exported["totals"]["fact"]["exported"] == 3
    assert (out / "agents" / "sales-agent" / "facts.json").is_file()
    other = type(ready)(ready.runner, tmp_path / "other")
    other.ok("init")
    imported = run_json(other, "import-workspace", str(out), "--agent", "sales-agent")
    assert imported["totals"]["fact"]["created"] == 3 and imported["totals"]["rule"]["created"] == 3
    facts = other.json("fact", "explain", "--agent", "sales-agent", populated["derived"])
    assert facts["uid"] == populated["derived"]
    again = run_json(other, "import-workspace", str(out), "--agent", "sales-agent")
    assert {k: v["created"] + v["updated"] for k, v in again["totals"].items()} == {k: 0 for k in again["totals"]}


def test_import_dry_run_and_human_output(ready: Mabos, digest: Any) -> None:
    before = digest()
    report = run_json(ready, "import-workspace", str(FIXTURE), "--dry-run")
    assert report["dry_run"] is True and report["totals"]["goal"]["created"] == 3
    assert digest() == before
    result = ready.ok("sync", "import-workspace", str(FIXTURE))
    assert "Imported from" in result.stdout and "warning:" in result.stdout
    assert ready.json("agent", "show", "cfo")["name"] == "Chief Financial Officer"


def test_a_bad_file_is_one_line_and_exit_1(ready: Mabos, tmp_path: Path, digest: Any) -> None:
    bad = tmp_path / "bad" / "agents" / "cfo"
    bad.mkdir(parents=True)
    (bad / "facts.json").write_text(
        json.dumps({"facts": [{"id": "F-1", "subject": "a", "predicate": "p", "object": "o", "confidence": "high"}]})
    )
    before = digest()
    result = ready("sync", "import-workspace", str(tmp_path / "bad"))
    assert result.exit_code == 1
    assert "agents/cfo/facts.json: facts[0].confidence" in result.stderr
    assert "Traceback" not in result.output
    assert digest() == before


def test_export_refuses_foreign_files(populated: dict[str, str], ready: Mabos, tmp_path: Path) -> None:
    target = tmp_path / "export" / "agents" / "sales-agent"
    target.mkdir(parents=True)
    (target / "Beliefs.md").write_text("# mine\n")
    result = ready("sync", "export-workspace", str(tmp_path / "export"), "--agent", "sales-agent")
    assert result.exit_code == 1 and "not written by mabos" in result.stderr
    assert (target / "Beliefs.md").read_text() == "# mine\n"


def test_help_has_examples() -> None:
    for command, name in ((import_workspace, "import-workspace"), (export_workspace, "export-workspace")):
        assert f"mabos sync {name}" in (command.help or "")


def test_refused_records_are_listed(ready: Mabos, tmp_path: Path) -> None:
    """A file under agents/<id>/ that names another agent's scope: refused, listed, nothing written there."""
    ready.ok("agent", "add", "b")
    hostile = tmp_path / "hostile" / "agents" / "a"
    hostile.mkdir(parents=True)
    (hostile / "facts.json").write_text(json.dumps({"facts": [
        {"id": "F-1", "subject": "b", "predicate": "trusts", "object": "attacker", "scope": "agent:b"},
        {"id": "F-2", "subject": "a", "predicate": "likes", "object": "tea"}]}))  # fmt: skip
    report = run_json(ready, "import-workspace", str(tmp_path / "hostile"), "--agent", "a", "--dry-run")
    assert report["totals"]["fact"] == {"exported": 0, "created": 1, "updated": 0, "unchanged": 0, "skipped": 0,
                                        "refused": 1}  # fmt: skip
    [row] = report["agents"][0]["refused"]
    assert row["uid"].startswith("F-") and "may not write 'agent:b'" in row["reason"]
    result = ready.ok("sync", "import-workspace", str(tmp_path / "hostile"), "--agent", "a")
    assert "refused: a: fact" in result.stdout and "may not write 'agent:b'" in result.stdout
    with kg.open_workspace(ready.workspace) as ws:
        assert [f.object for f in ws.facts.query("a")] == ["tea"] and ws.facts.query("b") == []
