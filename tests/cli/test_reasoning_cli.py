"""``mabos rule|infer|constraint|policy|knowledge|cbr|reason`` end to end on a real workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from cli.tools import REGISTRY

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")
TAXABLE = ("--name", "taxable", "--if", "?x hasRevenue gt $1,000,000", "--if", "?x locatedIn US",
           "--then", "?x isTaxable true", "--confidence-factor", "0.8")  # fmt: skip


def facts(ready: Mabos) -> None:
    ready.ok("fact", "assert", *A, "acme", "hasRevenue", "$2,000,000", "--confidence", "0.9")
    ready.ok("fact", "assert", *A, "acme", "locatedIn", "US")


def test_a_rule_from_options_derives_persists_and_explains(ready: Mabos) -> None:
    facts(ready)
    [rule] = ready.json("rule", "create", *A, *TAXABLE)
    assert rule["conditions"][0] == {"subject": "?x", "predicate": "hasRevenue", "object": "$1,000,000",
                                     "operator": "gt"}  # fmt: skip
    report = ready.json("infer", "forward", *A, "--persist")
    [derived] = report["derived"]
    assert (derived["object"], round(derived["confidence"], 9), report["created"]) == ("true", 0.72, 1)
    stored = ready.json("fact", "query", *A, "--subject", "acme", "--predicate", "isTaxable")
    assert stored[0]["source"] == "inference" and stored[0]["rule_id"] == rule["uid"]
    tree = ready.ok("fact", "explain", *A, stored[0]["uid"]).stdout
    assert "rule taxable" in tree and "confidence factor 0.8" in tree and "locatedIn" in tree
    assert ready.json("infer", "forward", *A, "--persist")["created"] == 0  # idempotent

    proof = ready.json("infer", "backward", *A, "acme", "isTaxable", "true")
    assert proof["proved"] and proof["proofs"][0]["rule"]["name"] == "taxable"
    gaps = ready.json("infer", "backward", *A, "globex", "isTaxable", "true")
    assert not gaps["proved"] and {g["predicate"] for g in gaps["gaps"]} == {"hasRevenue", "locatedIn"}
    human = ready.ok("infer", "backward", *A, "acme", "isTaxable", "true").stdout
    assert "acme isTaxable true  (confidence 0.72, by rule taxable)" in human


def test_retracting_a_support_then_forward_retracts_the_derived_fact(ready: Mabos) -> None:
    facts(ready)
    ready.ok("rule", "create", *A, *TAXABLE)
    ready.ok("infer", "forward", *A, "--persist")
    ready.ok("fact", "retract", *A, "--predicate", "locatedIn")
    report = ready.json("infer", "forward", *A, "--persist")
    assert report["derived"] == [] and len(report["retracted"]) == 1
    assert ready.json("fact", "query", *A, "--predicate", "isTaxable") == []


def test_a_bad_rule_is_refused_in_one_line_and_nothing_is_stored(ready: Mabos, digest) -> None:
    before = digest()
    unbound = ready("rule", "create", *A, "--name", "bad", "--if", "?x p o", "--then", "?y q r")
    assert unbound.exit_code == 1
    assert unbound.stderr == "error: conclusion: variable ?y is not bound by any condition\n"
    short = ready("rule", "create", *A, "--name", "bad", "--if", "?x p", "--then", "?x q r")
    assert short.exit_code == 1 and short.stderr.startswith("error: conditions[0]: must be 'SUBJECT PREDICATE OBJECT'")
    assert ready("rule", "create", *A).stderr == "error: name: is required (or give --file)\n"
    assert digest() == before


def test_rules_round_trip_through_a_yaml_file(ready: Mabos, tmp_path: Path) -> None:
    ready.ok("rule", "create", *A, *TAXABLE)
    exported = tmp_path / "rules.yaml"
    exported.write_text(ready.ok("rule", "export", *A, "--format", "yaml").stdout, encoding="utf-8")
    imported = ready.json("rule", "create", "--agent", "finance-agent", "--file", str(exported))
    assert [(r["name"], r["agent_id"], r["scope"]) for r in imported] == [
        ("taxable", "finance-agent", "agent:finance-agent")
    ]
    toggled = ready.json("rule", "toggle", "--agent", "finance-agent", imported[0]["uid"])
    assert toggled["enabled"] is False
    assert ready.json("rule", "list", "--agent", "finance-agent", "--enabled") == []


def test_constraints_policies_and_knowledge_explain(ready: Mabos) -> None:
    facts(ready)
    ready.ok("rule", "create", *A, *TAXABLE)
    ready.ok("rule", "create", *A, "--name", "audit", "--type", "constraint", "--if", "?x isTaxable true",
             "--message", "?x must be audited", "--severity", "error")  # fmt: skip
    ready.ok("rule", "create", *A, "--name", "big", "--type", "policy", "--if", "context amount > 10000",
             "--action", "ask finance", "--escalate")  # fmt: skip
    [violation] = ready.json("constraint", "check", *A)
    assert (violation["severity"], violation["message"]) == ("error", "acme must be audited")
    assert ready.json("policy", "eval", *A, "--context", "amount=500") == []
    [fired] = ready.json("policy", "eval", *A, "--context", "amount=$12,000")
    assert (fired["action"], fired["escalate"]) == ("ask finance", True)
    bad = ready("policy", "eval", *A, "--context", "amount")
    assert bad.exit_code == 1 and bad.stderr == "error: context[0]: must be KEY=VALUE, got 'amount'\n"
    answer = ready.json("knowledge", "explain", *A, "Is acme taxable?")
    assert answer["methods"]["forward"] >= 1 and answer["methods"]["backward"] >= 1


def test_cases_and_the_router(ready: Mabos) -> None:
    facts(ready)
    ready.ok("rule", "create", *A, *TAXABLE)
    first = ready.json("cbr", "store", *A, "--beliefs", "price sensitive,small team", "--desires", "grow",
                       "--action", "discount 10%", "--success")  # fmt: skip
    again = ready.json("cbr", "store", *A, "--beliefs", "small team,price sensitive", "--desires", "grow",
                       "--action", "other", "--failure")  # fmt: skip
    assert first["created"] and not again["created"] and again["case"]["uid"] == first["case"]["uid"]
    found = ready.json("cbr", "retrieve", *A, "--beliefs", "price sensitive", "--desires", "grow")
    assert found["matches"][0]["score"] == 0.6 * 0.5 + 0.4 * 1.0
    routed = ready.json("reason", *A, "--methods", "deductive,cbr,counterfactual", "--goal", "acme isTaxable true",
                        "--beliefs", "price sensitive", "--desires", "grow")  # fmt: skip
    kinds = {r["method"]: r["kind"] for r in routed["results"]}
    assert kinds == {"deductive": "computed", "case-based": "computed", "counterfactual": "llm_prompt"}
    assert routed["results"][0]["conclusion"] == "acme isTaxable true: proved"
    assert routed["fusion"]["pending"] == ["counterfactual"]
    assert ready("reason", *A, "--method", "deductive", "--auto").exit_code == 1
    unknown = ready("reason", *A, "--method", "telepathy")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: method:")
    assert len(ready.json("reason", "methods")) == 48  # the seed's 32 methods and 16 extensions


def test_rule_create_from_a_file_runs_through_the_registry(ready: Mabos, tmp_path: Path, monkeypatch) -> None:
    """Issue 18: --file called RuleService directly, skipping the registry's validation (and any audit there)."""
    seen: list[dict[str, object]] = []
    original = REGISTRY["rule_import"]

    def spy(ctx, args):  # type: ignore[no-untyped-def]
        seen.append(args.model_dump())
        return original.handler(ctx, args)

    monkeypatch.setitem(REGISTRY, "rule_import", original._replace(handler=spy))
    rules = tmp_path / "rules.json"
    rule = {"name": "taxable", "conditions": [{"subject": "?x", "predicate": "p", "object": "o"}],
            "conclusion": {"subject": "?x", "predicate": "q", "object": "r"}}  # fmt: skip
    rules.write_text(json.dumps([rule]), encoding="utf-8")
    [created] = ready.json("rule", "create", *A, "--file", str(rules))
    assert created["name"] == "taxable" and created["agent_id"] == "sales-agent"
    assert [(s["agent_id"], s["format"]) for s in seen] == [("sales-agent", "json")]
    bad = tmp_path / "bad.yaml"
    unbound = {**rule, "conclusion": {"subject": "?y", "predicate": "q", "object": "r"}}
    bad.write_text(yaml.safe_dump({"rules": [rule, unbound]}), encoding="utf-8")
    refused = ready("rule", "create", *A, "--file", str(bad))
    assert refused.exit_code == 1 and refused.stderr.startswith("error: rules[1].conclusion: variable ?y")
    assert [r["name"] for r in ready.json("rule", "list", *A)] == ["taxable"]  # the valid first rule was not stored
    wrong = tmp_path / "rules.txt"
    wrong.write_text("[]", encoding="utf-8")
    assert ready("rule", "create", *A, "--file", str(wrong)).stderr.startswith("error: file: ")


def test_infer_forward_is_bounded_and_paged_on_the_command_line(ready: Mabos) -> None:
    for i in range(30):
        ready.ok("fact", "assert", *A, f"n{i:02d}", "p", f"n{i + 1:02d}")
    ready.ok("rule", "create", *A, "--name", "t", "--if", "?x p ?y", "--if", "?y p ?z", "--then", "?x p ?z")
    cut = ready.json("infer", "forward", *A, "--max-iterations", "100", "--max-derived", "40", "--limit", "25")
    assert (cut["total_derived"], len(cut["derived"]), cut["next_offset"]) == (40, 25, 25)
    assert cut["fixpoint"] is False and cut["stopped_by"] == "max_derived"
    rest = ready.json("infer", "forward", *A, "--max-iterations", "100", "--max-derived", "40", "--offset", "25")
    assert len(rest["derived"]) == 15 and rest["next_offset"] is None
    human = ready.ok("infer", "forward", *A, "--max-iterations", "100", "--max-derived", "40", "--limit", "25").stdout
    assert "stopped by max_derived" in human and "--offset 25" in human and "incomplete" in human


def test_reason_auto_reads_the_question(ready: Mabos, tmp_path: Path) -> None:
    """Issue 31: a plain question gets a method, why, and the inputs to fill, or a result computed from its numbers."""
    facts(ready)  # two unrelated facts: nothing may be "computed" from them
    germany = ready.json("reason", *A, "--auto", "--uncertainty", "high", "Should we enter Germany?")
    [result] = germany["results"]
    assert germany["router"] == "classification" and germany["methods"] == ["decision-theory"]
    assert result["kind"] == "llm_prompt" and result["confidence"] == 0.0
    template = germany["templates"]["decision-theory"]
    assert set(template["missing"]) == {"acts", "states", "payoffs"} and "decision-theory" in template["inputs"]
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(template["inputs"]), encoding="utf-8")  # the template as given runs
    filled = ready.json("reason", *A, "--method", "decision-theory", "--inputs", str(path))
    assert filled["results"][0]["kind"] == "computed"
    human = ready.ok("reason", *A, "--auto", "--uncertainty", "high", "Should we enter Germany?").stdout
    assert "missing: acts; states; payoffs" in human and "prompt for an LLM" in human
    spam = ready.json("reason", *A, "--auto", "A spam filter flags 90% of spam and 2% of legitimate mail; 30% of "
                      "mail is spam. An email was flagged: what is the chance it is spam?")  # fmt: skip
    assert spam["router"] == "text" and spam["results"][0]["kind"] == "computed"
    assert abs(spam["results"][0]["value"]["probability"] - 0.27 / 0.284) < 1e-9


def test_reason_docs_check_fails_on_a_stale_page(ready: Mabos, tmp_path: Path) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "reasoning-methods.md"
    assert ready.ok("reason", "docs", "--check", "--out", str(page)).stdout.startswith("Up to date")
    stale = tmp_path / "page.md"
    stale.write_text(page.read_text(encoding="utf-8").replace("| `bayesian` |", "| `bayes` |"), encoding="utf-8")
    refused = ready("reason", "docs", "--check", "--out", str(stale))
    assert refused.exit_code == 1 and "is stale" in refused.stderr
    assert ready.json("reason", "docs", "--out", str(stale))["changed"] is True
    assert stale.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")


def test_generated_options_keep_the_command_lines_spellings(ready: Mabos, tmp_path: Path, digest) -> None:
    """Issue 34: the options come from the request models; what the command line spells its own way still works."""
    for n in range(25):  # more than the tool's default of 20 hypotheses: the command lists every one
        ready.ok("rule", "create", *A, "--name", f"r{n}", "--if", f"?x p{n} ?y", "--then", "?x q ?y")
    assert len(ready.json("infer", "abduce", *A, "acme", "q", "b")) == 25
    uid = ready.json("rule", "list", *A)[0]["uid"]
    assert ready.json("rule", "toggle", *A, uid, "--off")["enabled"] is False
    assert ready.json("rule", "toggle", *A, uid)["enabled"] is True  # flipped
    ready.ok("rule", "toggle", *A, uid, "--off")
    assert [r["uid"] for r in ready.json("rule", "list", *A, "--disabled")] == [uid]
    assert len(ready.json("rule", "list", *A, "--enabled")) == 24 and len(ready.json("rule", "list", *A)) == 25
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"situation": {"beliefs": ["b"]}, "solution": {}, "outcome": {"success": True}}),
                    encoding="utf-8")  # fmt: skip
    stored = ready.json("cbr", "store", *A, "--file", str(case), "--scope", "global")["case"]
    assert (stored["scope"], stored["situation"]["beliefs"], stored["outcome"]["success"]) == ("global", ["b"], True)
    before = digest()
    both = ready("cbr", "store", *A, "--file", str(case), "--lesson", "x")
    assert both.exit_code == 1 and both.stderr == "error: file: give either --file or --lesson, not both\n"
    both = ready("rule", "create", *A, "--file", str(case), "--type", "policy")
    assert both.exit_code == 1 and both.stderr == "error: file: give either --file or --type, not both\n"
    missing = ready("cbr", "store", *A, "--beliefs", "b")
    assert missing.exit_code == 1 and missing.stderr == "error: outcome.success: is required (or give --file)\n"
    assert digest() == before
