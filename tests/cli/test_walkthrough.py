"""The command sequence of the issue, exactly as written there, and the fact commands' output shapes."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Mabos

FACT_ID = re.compile(r"F-[0-9A-Z]{26}")
FACT_KEYS = {
    "uid", "agent_id", "scope", "created_at", "subject", "predicate", "object", "object_kind", "confidence",
    "source", "valid_from", "valid_until", "updated_at", "updated_by", "retracted_at", "retracted_by",
    "derived_from", "rule_id",
}  # fmt: skip


def test_issue_sequence(mabos: Mabos) -> None:
    w = str(mabos.workspace)
    init = mabos.raw("init", "--workspace", w)
    assert init.exit_code == 0
    assert f"Created workspace 'ws' at {mabos.workspace.resolve()}" in init.stdout

    added = mabos.raw("--workspace", w, "agent", "add", "sales-agent", "--name", "Sales", "--role", "seller")
    assert added.exit_code == 0
    assert "Created agent sales-agent (Sales)" in added.stdout

    asserted = mabos.raw("--workspace", w, "fact", "assert", "--agent", "sales-agent", "acme", "hasRevenue",
                         "$50000", "--confidence", "0.9", "--source", "cfo-report")  # fmt: skip
    assert asserted.exit_code == 0
    match = FACT_ID.search(asserted.stdout)
    assert match and f"{match.group()} created" in asserted.stdout
    uid = match.group()

    queried = mabos.raw("--workspace", w, "fact", "query", "--agent", "sales-agent", "--subject", "acme", "--json")
    assert queried.exit_code == 0
    facts = json.loads(queried.stdout)
    assert isinstance(facts, list) and len(facts) == 1
    assert set(facts[0]) == FACT_KEYS
    assert facts[0] | {"created_at": None, "updated_at": None} == {
        "uid": uid, "agent_id": "sales-agent", "scope": "agent:sales-agent", "subject": "acme",
        "predicate": "hasRevenue", "object": "$50000", "object_kind": "literal", "confidence": 0.9,
        "source": "cfo-report", "valid_from": None, "valid_until": None, "updated_by": "sales-agent",
        "retracted_at": None, "retracted_by": None, "derived_from": [], "rule_id": None,
        "created_at": None, "updated_at": None,
    }  # fmt: skip

    retracted = mabos.raw("--workspace", w, "fact", "retract", "--agent", "sales-agent", "--subject", "acme")
    assert retracted.exit_code == 0
    assert "Retracted 1 fact" in retracted.stdout and uid in retracted.stdout

    explained = mabos.raw("--workspace", w, "fact", "explain", "--agent", "sales-agent", uid)
    assert explained.exit_code == 0
    assert uid in explained.stdout and 'acme hasRevenue "$50000"' in explained.stdout
    assert "retracted" in explained.stdout

    goal = mabos.raw("--workspace", w, "goal", "add", "--agent", "sales-agent", "Grow revenue",
                     "--level", "strategic", "--priority", "8")  # fmt: skip
    assert goal.exit_code == 0
    assert re.search(r'Created goal G-[0-9A-Z]{26} "Grow revenue"', goal.stdout)

    status = mabos.raw("--workspace", w, "status", "--json")
    assert status.exit_code == 0
    store = json.loads(status.stdout)["store"]
    assert store["agents"] == 1
    assert store["facts"] == {"live": 0, "retracted": 1, "derived": 0}
    assert store["bdi"]["goal"] == 1
    assert store["outbox"]["pending"] >= 4


def test_explain_json_of_a_derived_fact(mabos: Mabos) -> None:
    mabos.ok("init")
    mabos.ok("agent", "add", "sales-agent")
    revenue = mabos.json("fact", "assert", "--agent", "sales-agent", "acme", "hasRevenue", "$50000")["uid"]
    industry = mabos.json("fact", "assert", "--agent", "sales-agent", "acme", "hasIndustry", "saas")["uid"]
    rule = "R-01HZZZZZZZZZZZZZZZZZZZZZZZ"
    derived = mabos.json("fact", "assert", "--agent", "sales-agent", "acme", "isTarget", "true",
                         "--derived-from", revenue, "--derived-from", industry, "--rule-id", rule)  # fmt: skip
    assert derived["fact"]["derived_from"] == [revenue, industry]

    explanation = mabos.json("fact", "explain", "--agent", "sales-agent", derived["uid"])
    assert explanation["uid"] == derived["uid"] and explanation["rule_id"] == rule
    assert [s["uid"] for s in explanation["supports"]] == [revenue, industry]
    assert explanation["supports"][0]["fact"]["object"] == "$50000"

    tree = mabos.ok("fact", "explain", "--agent", "sales-agent", derived["uid"]).stdout
    lines = tree.splitlines()
    assert derived["uid"] in lines[0] and f"rule {rule}" in lines[0]
    assert any(revenue in line and line.startswith(("├", "└")) for line in lines[1:])

    shallow = mabos.json("fact", "explain", "--agent", "sales-agent", derived["uid"], "--depth", "0")
    assert shallow["supports"] == [] and shallow["truncated"] is True


def test_assert_reports_created_updated_unchanged(mabos: Mabos) -> None:
    mabos.ok("init")
    mabos.ok("agent", "add", "sales-agent")
    base = ("fact", "assert", "--agent", "sales-agent", "acme", "hasRevenue", "$50000")
    first = mabos.json(*base, "--confidence", "0.8")
    again = mabos.json(*base, "--confidence", "0.9")
    same = mabos.json(*base, "--confidence", "0.9")
    assert [first["status"], again["status"], same["status"]] == ["created", "updated", "unchanged"]
    assert first["uid"] == again["uid"] == same["uid"]
    assert same["fact"]["confidence"] == 0.9
    assert "unchanged" in mabos.ok(*base, "--confidence", "0.9").stdout


def test_retract_by_id_and_predicate(mabos: Mabos) -> None:
    mabos.ok("init")
    mabos.ok("agent", "add", "a")
    one = mabos.json("fact", "assert", "--agent", "a", "acme", "p", "1")["uid"]
    two = mabos.json("fact", "assert", "--agent", "a", "acme", "q", "2")["uid"]
    assert mabos.json("fact", "retract", "--agent", "a", one) == {"retracted": [one], "count": 1}
    assert mabos.json("fact", "retract", "--agent", "a", "--predicate", "q") == {"retracted": [two], "count": 1}
    nothing = mabos.ok("fact", "retract", "--agent", "a", "--subject", "acme")
    assert "Retracted 0 facts" in nothing.stdout
