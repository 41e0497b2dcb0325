"""``mabos rule create --file`` takes conditions and a conclusion written as text, as ``--if``/``--then`` do."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")
TEXT = """rules:
  - name: taxable
    conditions: ["?x hasRevenue gt $1,000,000", "?x locatedIn US"]
    conclusion: "?x isTaxable true"
    confidence_factor: 0.8
"""


def _pattern_fields(rule: dict[str, Any]) -> tuple[Any, ...]:
    return rule["name"], rule["conditions"], rule["conclusion"], rule["confidence_factor"]


def test_text_patterns_in_a_file_make_the_same_rule_as_the_options(ready: Mabos, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(TEXT, encoding="utf-8")
    [from_file] = ready.json("rule", "create", *A, "--file", str(path))
    [from_options] = ready.json("rule", "create", "--agent", "finance-agent", "--name", "taxable",
                                "--if", "?x hasRevenue gt $1,000,000", "--if", "?x locatedIn US",
                                "--then", "?x isTaxable true", "--confidence-factor", "0.8")  # fmt: skip
    assert _pattern_fields(from_file) == _pattern_fields(from_options)
    assert from_file["conditions"][0] == {"subject": "?x", "predicate": "hasRevenue", "object": "$1,000,000",
                                          "operator": "gt"}  # fmt: skip


def test_a_bad_text_pattern_names_its_place_and_stores_nothing(ready: Mabos, tmp_path: Path, digest: Any) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(TEXT.replace('"?x locatedIn US"', '"?x locatedIn"'), encoding="utf-8")
    before = digest()
    result = ready("rule", "create", *A, "--file", str(path))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: rules[0].conditions.1: must be 'SUBJECT PREDICATE OBJECT'")
    assert result.stderr.count("\n") == 1 and digest() == before
