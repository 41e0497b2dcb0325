"""The experience reasoning engines: satisficing and pattern mining on golden inputs, and case-based,
heuristic, naturalistic and pattern recognition over a real SQLite workspace (no embedder: contexts
are not compared, beliefs and desires are)."""

from __future__ import annotations

from typing import Any

import pytest

import kg
from kg.errors import InputError
from reasoning.cases import CaseService
from reasoning.router.methods import engines
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs
from reasoning.router.methods.experience import ENGINES
from reasoning.service import RuleService

CTX = MethodContext(agent_id="a")


def run(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> MethodOutcome:
    return ENGINES[method](ctx, inputs)


# ---------------------------------------------------------------------------------------------- satisficing

OPTIONS = [
    {"name": "A", "attributes": {"price": 200, "rating": 4.5}},
    {"name": "B", "attributes": {"price": 120, "rating": 3.9}},
    {"name": "C", "attributes": {"price": 140, "rating": 4.2}},
    {"name": "D", "attributes": {"price": 100, "rating": 4.8}},
]


def test_satisficing_takes_the_first_acceptable_option_not_the_best() -> None:
    # Simon (1955): search stops at the first option meeting every aspiration level. D is better on both
    # attributes but comes after C, so C is chosen and D is never looked at.
    result = run("satisficing", {"options": OPTIONS, "aspirations": {"price": {"max": 150}, "rating": {"min": 4}}})
    assert result.value["choice"] == "C"
    assert result.value["checked"] == [
        {"name": "A", "acceptable": False, "failed": ["price 200 > max 150"]},
        {"name": "B", "acceptable": False, "failed": ["rating 3.9 < min 4"]},
        {"name": "C", "acceptable": True, "failed": []},
    ]
    assert result.conclusion == "choose C (option 3 of 4 considered)"


def test_satisficing_with_no_acceptable_option_chooses_nothing() -> None:
    result = run("satisficing", {"options": OPTIONS, "aspirations": {"price": {"max": 50}}})
    assert result.value["choice"] is None and result.value["considered"] == 4
    missing = run("satisficing", {"options": [{"name": "X", "attributes": {"colour": "red"}}],
                                  "aspirations": {"price": {"min": 1}}})  # fmt: skip
    assert missing.value["checked"][0]["failed"] == ["price missing"]


def test_satisficing_inputs_are_checked_with_the_field_path() -> None:
    with pytest.raises(InputError, match=r"^inputs\.satisficing\.aspirations\.price\.min: must not be greater"):
        run("satisficing", {"options": OPTIONS, "aspirations": {"price": {"min": 5, "max": 1}}})
    with pytest.raises(InputError, match=r"^inputs\.satisficing\.options\[1\]\.name"):
        run("satisficing", {"options": [{"name": "A"}, {"name": ""}], "aspirations": {"p": {"min": 1}}})
    with pytest.raises(MissingInputs):
        run("satisficing", {})


# ---------------------------------------------------------------------------------------------- patterns

# Tan, Steinbach & Kumar, Introduction to Data Mining (2006), Table 6.1 and section 6.1:
# s({Milk, Diapers, Beer}) = 2/5 = 0.4 and c({Milk, Diapers} -> {Beer}) = 2/3 = 0.67.
BASKETS = [
    ["bread", "milk"],
    ["bread", "diapers", "beer", "eggs"],
    ["milk", "diapers", "beer", "cola"],
    ["bread", "milk", "diapers", "beer"],
    ["bread", "milk", "diapers", "cola"],
]


def test_market_basket_support_and_confidence_match_the_textbook() -> None:
    result = run("pattern-recognition", {"transactions": BASKETS, "min_support": 0.4, "min_confidence": 0.6,
                                         "top": 1000})  # fmt: skip
    patterns = {tuple(p["items"]): p["support"] for p in result.value["patterns"]}
    assert patterns[("beer", "diapers", "milk")] == 0.4
    rules = {(tuple(r["if"]), tuple(r["then"])): r for r in result.value["rules"]}
    assert rules[(("diapers", "milk"), ("beer",))]["confidence"] == pytest.approx(2 / 3, abs=1e-6)
    assert rules[(("beer",), ("diapers",))]["confidence"] == 1.0  # every basket with beer has diapers
    assert result.value["rules"][0]["confidence"] == 1.0  # strongest rule first
    assert {i["item"]: i["support"] for i in result.value["frequent_items"]}["bread"] == 0.8


def test_pattern_inputs_are_checked() -> None:
    with pytest.raises(InputError, match=r"^inputs\.pattern-recognition\.min_support"):
        run("pattern-recognition", {"transactions": BASKETS, "min_support": 0})
    with pytest.raises(MissingInputs):
        run("pattern-recognition", {"transactions": [["a"]]})
    with pytest.raises(MissingInputs):  # no inputs and no graph
        run("pattern-recognition", {})


# ---------------------------------------------------------------------------------------------- on a workspace


@pytest.fixture
def ws(tool_ws: kg.Workspace) -> kg.Workspace:
    """Agents ``a`` and ``b``, no embedder (the shared ``tool_ws``)."""
    return tool_ws


def test_patterns_in_the_visible_facts_name_the_facts_used(ws: kg.Workspace) -> None:
    uids = {}
    rows = [("c1", "saas", "enterprise"), ("c2", "saas", "enterprise"), ("c3", "saas", "enterprise"),
            ("c4", "retail", "basic"), ("c5", "saas", "basic")]  # fmt: skip
    for company, industry, plan in rows:
        uids[company, "industry"] = ws.facts.assert_fact("a", company, "hasIndustry", industry)[0].uid
        uids[company, "plan"] = ws.facts.assert_fact("a", company, "hasPlan", plan)[0].uid
    ws.facts.assert_fact("b", "c6", "hasIndustry", "saas")  # b's private facts stay out of a's transactions
    ws.facts.assert_fact("b", "c6", "hasPlan", "enterprise")
    ctx = MethodContext(agent_id="a", workspace=ws)
    result = run("pattern-recognition", {"min_support": 0.4, "min_confidence": 0.7}, ctx)
    assert result.value["transactions"] == 5
    assert result.value["patterns"][0] == {"items": ["hasIndustry=saas", "hasPlan=enterprise"], "count": 3,
                                           "support": 0.6}  # fmt: skip
    top = result.value["rules"][0]
    assert (top["if"], top["then"], top["confidence"]) == (["hasPlan=enterprise"], ["hasIndustry=saas"], 1.0)
    assert set(result.used) == {uids[c, "industry"] for c in ("c1", "c2", "c3", "c5")} | {
        uids[c, "plan"] for c in ("c1", "c2", "c3")}  # fmt: skip


def test_patterns_in_the_visible_memories(ws: kg.Workspace) -> None:
    tag_sets = (["pricing", "churn"], ["pricing", "churn"], ["pricing", "churn", "q3"], ["hiring"])
    stored = [ws.memory.store_item("a", f"lesson {' '.join(t)}", type="lesson", tags=t).item.uid for t in tag_sets]
    ws.memory.store_item("b", "b's own lesson", type="lesson", tags=["pricing", "churn"])  # private to b
    ctx = MethodContext(agent_id="a", workspace=ws)
    result = run("pattern-recognition", {"source": "memories", "min_support": 0.5}, ctx)
    assert result.value["transactions"] == 4
    assert ["tag=churn", "tag=pricing"] in [p["items"] for p in result.value["patterns"]]
    assert set(result.used) == set(stored)  # type=lesson is in a reported pattern: every item of a is used


@pytest.fixture
def warehouse(ws: kg.Workspace) -> MethodContext:
    """Three past cases, rules that say what actions lead to, and a constraint on margins."""
    rules = RuleService(ws.ports, ws.scopes, ws.clock)
    rules.create("a", name="reorder-restocks", conditions=[
        {"subject": "?a", "predicate": "performs", "object": "reorder-stock"},
        {"subject": "supplier", "predicate": "available", "object": "true"}],
        conclusion={"subject": "warehouse", "predicate": "stockStatus", "object": "replenished"})  # fmt: skip
    rules.create("a", name="clearance-cuts-margin", conditions=[
        {"subject": "?a", "predicate": "performs", "object": "discount-clearance"}],
        conclusion={"subject": "store", "predicate": "margin", "object": "reduced"})  # fmt: skip
    rules.create("a", name="margin-floor", type="constraint", violation_message="margin below the floor",
                 conditions=[{"subject": "store", "predicate": "margin", "object": "reduced"},
                             {"subject": "policy", "predicate": "marginFloor", "object": "strict"}])  # fmt: skip
    ws.facts.assert_fact("a", "policy", "marginFloor", "strict")
    ws.facts.assert_fact("a", "supplier", "available", "true")
    cases = CaseService(ws.ports, ws.scopes, ws.clock, None)
    situation = {"beliefs": ["stock is low", "demand is rising"], "desires": ["avoid stock-outs"]}
    cases.store_case("a", situation=situation, solution={"actions": ["discount-clearance"]},
                     outcome={"success": True})  # fmt: skip
    cases.store_case("a", situation={"beliefs": ["stock is low"], "desires": ["avoid stock-outs"]},
                     solution={"actions": ["reorder-stock"]}, outcome={"success": True})  # fmt: skip
    cases.store_case("a", situation={"beliefs": ["demand is rising"], "desires": ["cut costs"]},
                     solution={"actions": ["do-nothing"]},
                     outcome={"success": False, "lessons": ["act early"]})  # fmt: skip
    return MethodContext(agent_id="a", workspace=ws)


QUERY = {"beliefs": ["stock is low", "demand is rising"], "desires": ["avoid stock-outs"],
         "expect": ["warehouse stockStatus replenished"]}  # fmt: skip


def test_case_based_reuses_the_closest_case(warehouse: MethodContext) -> None:
    result = run("case-based", QUERY, warehouse)
    scores = [m["score"] for m in result.value["matches"]]
    assert scores == [1.0, 0.7, 0.3]  # Jaccard: 0.6*Sb + 0.4*Sd; (1, 1), (1/2, 1), (1/2, 0)
    assert result.value["solution"] == ["discount-clearance"] and result.confidence == 1.0
    assert result.conclusion.startswith("reuse case C-")
    assert len(result.used) == 3


def test_heuristic_takes_the_best_case_and_its_simulation_shows_the_violation(warehouse: MethodContext) -> None:
    result = run("heuristic", QUERY, warehouse)
    sim = result.value["simulation"]
    assert result.value["choice"] == "discount-clearance"
    assert sim["follows"] == ["store margin reduced"]
    assert sim["violations"] == ["margin below the floor"]
    assert sim["expected"] == {"warehouse stockStatus replenished": False} and sim["ok"] is False
    assert result.confidence == 0.5  # similarity 1.0, halved because the simulation found a problem


def test_naturalistic_rejects_the_first_option_in_simulation_and_accepts_the_second(warehouse: MethodContext) -> None:
    # Klein's recognition-primed decision: options are evaluated one at a time by mental simulation.
    ws = warehouse.workspace
    assert ws is not None
    supplier = ws.facts.query("a", subject="supplier")[0].uid
    result = run("naturalistic", QUERY, warehouse)
    tried = result.value["tried"]
    assert [(t["action"], t["ok"]) for t in tried] == [("discount-clearance", False), ("reorder-stock", True)]
    assert tried[1]["follows"] == ["warehouse stockStatus replenished"] and tried[1]["violations"] == []
    assert result.value["choice"] == "reorder-stock" and result.confidence == 0.7
    assert supplier in result.used  # the stored fact behind what the chosen action leads to


def test_effects_add_triples_to_the_simulated_action(warehouse: MethodContext) -> None:
    inputs = {**QUERY, "effects": {"discount-clearance": ["supplier available true", "a performs reorder-stock"]}}
    result = run("heuristic", inputs, warehouse)
    assert "warehouse stockStatus replenished" in result.value["simulation"]["follows"]
    with pytest.raises(InputError, match=r"^inputs\.heuristic\.effects\.discount-clearance\[0\]: must be"):
        run("heuristic", {**QUERY, "effects": {"discount-clearance": ["too short"]}}, warehouse)


def test_without_beliefs_the_agents_active_beliefs_and_desires_are_the_situation(warehouse: MethodContext) -> None:
    ws = warehouse.workspace
    assert ws is not None
    b1 = ws.bdi.add("belief", "a", "stock is low")
    d1 = ws.bdi.add("desire", "a", "avoid stock-outs")
    result = run("case-based", {}, warehouse)
    assert result.value["solution"] == ["reorder-stock"]  # beliefs {stock is low}: case B matches exactly
    assert b1.uid in result.used and d1.uid in result.used


def test_another_agents_private_cases_are_not_recalled(warehouse: MethodContext) -> None:
    ws = warehouse.workspace
    assert ws is not None
    with pytest.raises(MissingInputs, match="no past cases"):
        run("case-based", QUERY, MethodContext(agent_id="b", workspace=ws))


def test_experience_engines_are_registered() -> None:
    assert {"heuristic", "case-based", "pattern-recognition", "satisficing", "naturalistic"} <= set(engines())


def test_satisficing_reads_its_options_from_the_visible_facts(ws: kg.Workspace) -> None:
    uids = {}
    for name, price, rating in [("supplierA", "200", "4.5"), ("supplierB", "$120", "3.9"), ("supplierC", "140", "4.2"),
                                ("supplierD", "100", "4.8")]:  # fmt: skip
        uids[name] = [ws.facts.assert_fact("a", name, "price", price)[0].uid,
                      ws.facts.assert_fact("a", name, "rating", rating)[0].uid]  # fmt: skip
    ws.facts.assert_fact("b", "supplierZ", "price", "10")  # private to b: never an option for a
    ws.facts.assert_fact("b", "supplierZ", "rating", "5")
    ctx = MethodContext(agent_id="a", workspace=ws)
    aspirations = {"price": {"max": 150}, "rating": {"min": 4}}
    result = run("satisficing", {"aspirations": aspirations}, ctx)
    assert [c["name"] for c in result.value["checked"]] == ["supplierA", "supplierB", "supplierC"]  # asserted order
    assert result.value["choice"] == "supplierC" and result.value["total"] == 4
    assert result.used == [*uids["supplierA"], *uids["supplierB"], *uids["supplierC"]]
    ordered = run("satisficing", {"aspirations": aspirations, "subjects": ["supplierD", "supplierC"]}, ctx)
    assert ordered.value["choice"] == "supplierD" and ordered.value["total"] == 2
    with pytest.raises(MissingInputs):
        run("satisficing", {"aspirations": {"weight": {"max": 3}}}, ctx)
