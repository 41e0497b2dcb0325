"""rule_delete and rule_export (cli/tools/rules_admin.py) and the ``mabos rule delete|export`` commands that run them
(issue 18: the commands called RuleService directly, past the registry's validation). Real workspace and SQLite;
no embedder needed."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
import yaml

from cli import tools
from cli.tools.rules_admin import RuleDeleted, RuleExport
from kg.errors import MabosError, NotFoundError
from kg.ids import new_id
from kg.workspace import DB_FILE, STATE_DIR, Workspace
from tests.unit.tool_calls import call, mabos, refused_unchanged, spy_on

TAXABLE = {
    "name": "taxable",
    "conditions": ["?x hasRevenue gt $1,000,000", "?x locatedIn US"],
    "conclusion": "?x isTaxable true",
    "confidence_factor": 0.8,
    "domain": "tax",
}
CHECK = {"name": "audit", "type": "constraint", "conditions": ["?x isTaxable true"], "violation_message": "?x audit",
         "severity": "error"}  # fmt: skip
#: The fields an import sets anew; everything else of a rule survives an export and import unchanged.
OWN = {"uid", "agent_id", "scope", "created_at"}

pytestmark = pytest.mark.usefixtures("no_embedder")


def comparable(rules: list[Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.model_dump(mode="json").items() if k not in OWN} for r in rules]


def test_a_deleted_rule_is_gone_from_the_store_and_from_reasoning(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "acme", "hasRevenue", "$2,000,000")
    ws.facts.assert_fact("a", "acme", "locatedIn", "US")
    taxable, audit = call(ws, "rule_create", **TAXABLE), call(ws, "rule_create", **CHECK)
    assert [d.predicate for d in call(ws, "infer_forward").derived] == ["isTaxable"]
    gone = call(ws, "rule_delete", rule_id=taxable.uid)
    assert isinstance(gone, RuleDeleted) and (gone.uid, gone.deleted) == (taxable.uid, True)
    assert gone.rule == taxable, "the rule as it was"
    assert ws.ports.rules.get_many([taxable.uid]) == {}
    assert [r.uid for r in call(ws, "rule_list").rules] == [audit.uid]
    assert call(ws, "infer_forward").derived == [] and call(ws, "constraint_check").violations == []
    with pytest.raises(NotFoundError, match=r"^rule: no rule"):
        call(ws, "rule_delete", rule_id=taxable.uid)
    conn = sqlite3.connect(f"file:{ws.path / STATE_DIR / DB_FILE}?mode=ro", uri=True)
    try:
        events = conn.execute("SELECT agent_id FROM outbox WHERE record_uid = ? AND op = 'delete'",
                              (taxable.uid,)).fetchall()  # fmt: skip
    finally:
        conn.close()
    assert events == [("a",)], "the deletion is recorded under the acting agent"
    restored = call(ws, "rule_import", document=json.dumps([gone.rule.model_dump(mode="json")]), format="json")
    assert comparable(restored.rules) == comparable([taxable]) and restored.rules[0].uid != taxable.uid


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("rule_delete", {}, "rule_id"),
        ("rule_delete", {"rule_id": "R-x"}, "rule_id"),
        ("rule_delete", {"rule_id": 42}, "rule_id"),
        ("rule_delete", {"rule_id": [new_id("rule")]}, "rule_id"),
        ("rule_delete", {"rule_id": new_id("rule") + "\n"}, "rule_id"),
        ("rule_delete", {"rule_id": new_id("rule"), "force": True}, "force"),
        ("rule_delete", {"rule_id": new_id("rule"), "agent_id": 7}, "agent_id"),
        ("rule_export", {"format": "xml"}, "format"),
        ("rule_export", {"format": None}, "format"),
        ("rule_export", {"scope": "agent:b"}, "scope"),
    ],
)
def test_bad_input_is_one_line_naming_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    call(ws, "rule_create", **TAXABLE)
    assert refused_unchanged(ws, name, arguments).field == field


def test_an_export_round_trips_through_import_in_both_formats(ws: Workspace) -> None:
    made = [call(ws, "rule_create", **TAXABLE), call(ws, "rule_create", **CHECK),
            call(ws, "rule_create", name="off", conditions=["?x p o"], conclusion="?x q o", enabled=False)]  # fmt: skip
    for fmt, load in (("json", json.loads), ("yaml", yaml.safe_load)):
        exported = call(ws, "rule_export", format=fmt)
        assert isinstance(exported, RuleExport) and (exported.format, exported.count) == (fmt, 3)
        assert [r["uid"] for r in load(exported.document)["rules"]] == [r.uid for r in made]
        imported = call(ws, "rule_import", agent_id="b", document=exported.document, format=fmt).rules
        assert comparable(imported) == comparable(made)
        assert {(r.agent_id, r.scope) for r in imported} == {("b", "agent:b")}
    assert call(ws, "rule_export", agent_id="b").count == 6
    assert call(ws, "rule_list").rules == made, "exporting and importing into b left a's rules alone"


def test_the_commands_run_the_tools_and_read_back_with_create_file(
    ws: Workspace, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_on(monkeypatch, "rule_delete", "rule_export")
    taxable = call(ws, "rule_create", **TAXABLE)
    printed = mabos(ws, "rule", "export", "--agent", "a", "--format", "yaml")
    assert printed.exit_code == 0 and yaml.safe_load(printed.stdout)["rules"][0]["uid"] == taxable.uid
    wrapped = json.loads(mabos(ws, "rule", "export", "--agent", "a", "--json").stdout)
    assert (wrapped["format"], wrapped["count"]) == ("json", 1)
    assert json.loads(wrapped["document"])["rules"][0]["name"] == "taxable"
    path = tmp_path / "rules.yaml"
    path.write_text(printed.stdout, encoding="utf-8")
    created = json.loads(mabos(ws, "rule", "create", "--agent", "b", "--file", str(path), "--json").stdout)
    assert [(r["name"], r["agent_id"]) for r in created] == [("taxable", "b")]
    deleted = json.loads(mabos(ws, "rule", "delete", "--agent", "a", taxable.uid, "--json").stdout)
    assert (deleted["uid"], deleted["deleted"], deleted["rule"]["name"]) == (taxable.uid, True, "taxable")
    bad = mabos(ws, "rule", "delete", "--agent", "a", "R-nope")
    assert bad.exit_code == 1 and bad.stderr.startswith("error: rule_id: ") and bad.stderr.count("\n") == 1
    other = mabos(ws, "rule", "delete", "--agent", "a", created[0]["uid"])
    assert other.exit_code == 1 and other.stderr.startswith("error: rule: no rule")
    assert seen == ["rule_export", "rule_export", "rule_delete", "rule_delete"]  # R-nope stopped at validation
    assert [r.name for r in call(ws, "rule_list", agent_id="b").rules] == ["taxable"]


def test_a_bound_context_cannot_delete_or_export_for_another_agent(ws: Workspace) -> None:
    rule = call(ws, "rule_create", agent_id="b", **TAXABLE)
    for name, arguments in (("rule_delete", {"rule_id": rule.uid}), ("rule_export", {})):
        with pytest.raises(MabosError, match="agent_id"):
            tools.call(name, workspace=ws.path, agent="a", agent_id="b", **arguments)
    with pytest.raises(NotFoundError):
        tools.call("rule_delete", workspace=ws.path, agent="a", rule_id=rule.uid)
    assert tools.call("rule_export", workspace=ws.path, agent="a").count == 0  # type: ignore[attr-defined]
    assert [r.uid for r in call(ws, "rule_list", agent_id="b").rules] == [rule.uid]
