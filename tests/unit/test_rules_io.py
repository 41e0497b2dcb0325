"""Rule files: JSON or YAML, a list or {"rules": [...]}; clear errors; dump then load round-trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kg.errors import InputError
from kg.models import Rule, parse
from reasoning.rules import build_rule, dump_rules, load_rules

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
ENTRY = {
    "name": "ancestor",
    "conditions": [{"subject": "?x", "predicate": "parent", "object": "?y"}],
    "conclusion": {"subject": "?x", "predicate": "ancestor", "object": "?y"},
}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("rules.json", json.dumps([ENTRY])),
        ("rules.json", json.dumps({"rules": [ENTRY]})),
        (
            "rules.yaml",
            "- name: ancestor\n  conditions: [{subject: '?x', predicate: parent, object: '?y'}]\n"
            "  conclusion: {subject: '?x', predicate: ancestor, object: '?y'}\n",
        ),
        (
            "rules.YML",
            "rules:\n  - name: ancestor\n    conditions: [{subject: '?x', predicate: parent, object: '?y'}]\n"
            "    conclusion: {subject: '?x', predicate: ancestor, object: '?y'}\n",
        ),
    ],
)
def test_load_rules_reads_lists_and_mappings(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert load_rules(path) == [ENTRY]


@pytest.mark.parametrize(
    ("name", "text", "field", "words"),
    [
        ("r.txt", "[]", "path", ".json, .yaml or .yml"),
        ("r.json", "[{", "path", "not valid JSON"),
        ("r.yaml", "a: [", "path", "not valid YAML"),
        ("r.json", '{"other": []}', "rules", "'rules' list"),
        ("r.json", '"text"', "rules", "got str"),
        ("r.yaml", "", "rules", "got NoneType"),
        ("r.json", "[1]", "rules[0]", "mapping"),
        ("r.json", '[{"name": "a"}, ["x"]]', "rules[1]", "mapping"),
    ],
)
def test_bad_rule_files_are_refused_with_the_field(
    tmp_path: Path, name: str, text: str, field: str, words: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_rules(path)
    assert err.value.field == field
    assert words in err.value.rule


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_rules(tmp_path / "absent.yaml")
    assert err.value.field == "path" and "absent.yaml" in err.value.rule


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_dump_then_load_gives_the_same_rules(tmp_path: Path, fmt: str) -> None:
    rules = [
        build_rule(ENTRY, now=NOW),
        build_rule(
            {
                "name": "budget",
                "type": "constraint",
                "severity": "critical",
                "violation_message": "?p over: ?b",
                "conditions": [
                    {"subject": "?p", "predicate": "budget", "object": "?b"},
                    {"subject": "?p", "predicate": "spent", "object": "?b", "operator": "gt"},
                ],
                "enabled": False,
            },
            now=NOW,
        ),
    ]
    path = tmp_path / f"rules.{fmt}"
    path.write_text(dump_rules(rules, fmt), encoding="utf-8")  # type: ignore[arg-type]
    assert [parse(Rule, entry) for entry in load_rules(path)] == rules


def test_dump_rules_refuses_other_formats() -> None:
    with pytest.raises(InputError) as err:
        dump_rules([], "toml")  # type: ignore[arg-type]
    assert err.value.field == "fmt"
