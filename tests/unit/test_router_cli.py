"""``mabos reason run --inputs FILE`` (keyed or the method's own object) and ``mabos reason methods --json``,
in-process through click on a real workspace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.demo.reasoning import SPRINKLER
from cli.main import cli
from kg.workspace import Workspace


def mabos(ws: Workspace, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--workspace", str(ws.path), *args])
    return result.exit_code, result.stdout, result.stderr


def test_reason_run_takes_the_methods_own_object_or_keyed_inputs(tool_ws: Workspace, tmp_path: Path) -> None:
    query = {"network": SPRINKLER, "evidence": {"WetGrass": True}, "query": "Rain"}
    own, keyed = tmp_path / "own.json", tmp_path / "keyed.yaml"
    own.write_text(json.dumps(query), encoding="utf-8")
    keyed.write_text(json.dumps({"bayesian": query}), encoding="utf-8")  # JSON is YAML
    for path in (own, keyed):
        code, out, err = mabos(tool_ws, "reason", "run", "--agent", "a", "--method", "bayesian", "--inputs",
                               str(path), "--json")  # fmt: skip
        assert code == 0, err
        result = json.loads(out)["results"][0]
        assert result["kind"] == "computed" and result["value"]["probability"] == pytest.approx(0.7079, abs=5e-5)


def test_reason_run_refuses_bad_inputs_in_one_line(tool_ws: Workspace, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"network": {"nodes": {"R": {"parents": [], "cpt": {}}}}, "query": "R"}), "utf-8")
    code, _, err = mabos(tool_ws, "reason", "run", "--agent", "a", "--method", "bayesian", "--inputs", str(bad))
    assert code == 1 and err.startswith("error: inputs.bayesian.network.nodes.R.cpt: ") and err.count("\n") == 1
    code, _, err = mabos(tool_ws, "reason", "run", "--agent", "a")
    assert code == 1 and "give --method ID" in err


def test_reason_run_auto_and_multi(tool_ws: Workspace) -> None:
    code, out, err = mabos(tool_ws, "reason", "--agent", "a", "--domain", "social", "--json", "Who wins the vote?")
    assert code == 0, err
    auto = json.loads(out)
    # the seed's score ties the 5 social methods at 0.3; the text ("who wins") breaks the tie
    assert auto["mode"] == "auto" and auto["methods"] == ["social-choice"] and auto["tie_break"].startswith("5 methods")
    assert auto["router"] == "classification" and "by the problem text" in auto["tie_break"]
    code, out, err = mabos(tool_ws, "reason", "--agent", "a", "--methods", "bayesian,causal", "--json")
    assert code == 0, err
    assert json.loads(out)["fusion"]["pending"] == ["bayesian", "causal"]


def test_reason_methods_lists_every_method_with_its_engine(tool_ws: Workspace) -> None:
    code, out, err = mabos(tool_ws, "reason", "methods", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 48 and set(rows[0]) == {"id", "category", "engine", "name", "description", "profile"}
    assert Counter(r["category"] for r in rows)["extension"] == 16
    seed = [r for r in rows if r["category"] != "extension"]
    assert {r["engine"] for r in seed} <= {"builtin", "graph"}  # 32 of 32 compute
    assert {r["engine"] for r in rows if r["category"] == "extension"} == {"prompt"}
    code, out, _ = mabos(tool_ws, "reason", "methods", "--category", "causal", "--json")
    assert [r["id"] for r in json.loads(out)] == ["causal", "counterfactual", "interventional", "root-cause",
                                                  "systems-thinking"]  # fmt: skip


def test_the_earlier_shortcut_options_still_work(tool_ws: Workspace, tmp_path: Path) -> None:
    from cli import tools  # noqa: PLC0415

    tools.call("cbr_store", workspace=tool_ws.path, agent_id="a", situation={"beliefs": ["price sensitive"],
               "desires": ["grow"]}, solution={"actions": ["discount"]}, outcome={"success": True})  # fmt: skip
    code, out, err = mabos(tool_ws, "reason", "--agent", "a", "--method", "case_based", "--beliefs", "price sensitive",
                           "--desires", "grow", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["results"][0]["conclusion"].endswith("discount")
    code, out, err = mabos(tool_ws, "reason", "--agent", "a", "--method", "bayesian_update", "--json")
    assert code == 0 and json.loads(out)["methods"] == ["bayesian"]
