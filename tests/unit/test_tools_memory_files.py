"""memory_materialize, memory_export and memory_import (cli/tools/memory_files.py) and the ``mabos memory
materialize|export|import`` commands that run them (issue 18: the commands called kg.memory.materialize and
kg.memory.cognitive directly, past the registry's validation). Real workspace, SQLite and files; no embedder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from cli import tools
from cli.main import cli
from kg.errors import InputError, MabosError
from kg.memory.cognitive_format import ExportResult, ImportResult
from kg.memory.materialize import MaterializeResult
from kg.workspace import Workspace
from tests.conftest import snapshot_workspace
from tests.unit.tool_calls import call, refused_unchanged, spy_on

pytestmark = pytest.mark.usefixtures("no_embedder")


def test_materialize_export_edit_and_import(ws: Workspace) -> None:
    belief = ws.bdi.add("belief", "a", "Acme is growing", certainty=0.6)
    ws.bdi.add("belief", "b", "zqxb private belief")
    ws.memory.store_item("a", "Acme needs SSO")
    made = call(ws, "memory_materialize")
    assert isinstance(made, MaterializeResult) and {f.status for f in made.files} == {"written"}
    assert call(ws, "memory_materialize").files[0].status == "unchanged"
    exported = call(ws, "memory_export", kind="beliefs")
    assert isinstance(exported, ExportResult) and [f.records for f in exported.files] == [1]
    path = ws.path / "agents" / "a" / "Beliefs.md"
    text = path.read_text(encoding="utf-8")
    assert belief.uid in text and "zqxb" not in text
    path.write_text(text.replace("certainty: 0.6", "certainty: 0.9"), encoding="utf-8")
    imported = call(ws, "memory_import", kind="beliefs")
    assert isinstance(imported, ImportResult) and imported.updated == [belief.uid]
    assert ws.bdi.get("a", belief.uid).certainty == 0.9


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("memory_export", {"kind": "dreams"}, "kind"),
        ("memory_export", {"kind": ["beliefs"]}, "kind"),
        ("memory_import", {"kind": 3}, "kind"),
        ("memory_import", {"kind": "beliefs", "path": "/etc"}, "path"),
        ("memory_materialize", {"kind": "all"}, "kind"),
        ("memory_materialize", {"agent_id": "../b"}, "agent"),  # the folder check names the agent
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    assert refused_unchanged(ws, name, arguments).field == field


def test_an_import_naming_another_agents_record_changes_nothing(ws: Workspace) -> None:
    theirs = ws.bdi.add("belief", "b", "zqxb private belief")
    call(ws, "memory_export", kind="beliefs")
    path = ws.path / "agents" / "a" / "Beliefs.md"
    path.write_text(f"# Beliefs\n\n## Overwritten by a\ncertainty: 0.1\nid: {theirs.uid}\n", encoding="utf-8")
    before = snapshot_workspace(ws)
    with pytest.raises(InputError, match=r"id: no belief"):
        call(ws, "memory_import", kind="beliefs")
    assert snapshot_workspace(ws) == before and ws.bdi.get("b", theirs.uid).content == "zqxb private belief"
    with pytest.raises(MabosError, match="agent_id"):
        tools.call("memory_import", workspace=ws.path, agent="a", agent_id="b")


def test_the_commands_run_the_tools_with_unchanged_output(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_on(monkeypatch, "memory_materialize", "memory_export", "memory_import")
    ws.bdi.add("goal", "a", "Grow revenue", priority=8)
    base = ["--workspace", str(ws.path), "memory"]
    made = json.loads(CliRunner().invoke(cli, [*base, "materialize", "--agent", "a", "--json"]).stdout)
    assert set(made) == {"agent_id", "files"} and len(made["files"]) == 3
    shown = CliRunner().invoke(cli, [*base, "export", "--agent", "a", "--kind", "goals"])
    assert shown.exit_code == 0 and "Goals.md" in shown.stdout
    back = json.loads(CliRunner().invoke(cli, [*base, "import", "--agent", "a", "--kind", "goals", "--json"]).stdout)
    assert back["unchanged"] == 1 and back["created"] == []
    bad = CliRunner().invoke(cli, [*base, "import", "--agent", "a", "--kind", "beliefs"])
    assert bad.exit_code == 1 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1
    assert seen == ["memory_materialize", "memory_export", "memory_import", "memory_import"]
