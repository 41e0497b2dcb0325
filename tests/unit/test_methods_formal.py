"""Formal methods against textbook answers: deductive, inductive, abductive, analogical, modal, deontic,
temporal; over given facts and rules and over a real workspace (scopes respected)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.router import MethodContext, reason
from reasoning.router.methods.modal import holds
from reasoning.router.methods.norms_time import allen, modality_of
from reasoning.service import RuleService

CTX = MethodContext("a")


def one(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> Any:
    return reason(ctx, method=method, inputs={method: inputs}).results[0]


def rule(name: str, conditions: list[str], conclusion: str, cf: float = 1.0) -> dict[str, Any]:
    def pattern(text: str) -> dict[str, str]:
        s, p, o = text.split()
        return {"subject": s, "predicate": p, "object": o}

    return {"name": name, "conditions": [pattern(c) for c in conditions], "conclusion": pattern(conclusion),
            "confidence_factor": cf}  # fmt: skip


# Socrates (Aristotle's syllogism, Barbara): all men are mortal, Socrates is a man.
SYLLOGISM = {"facts": ["socrates is man"], "rules": [rule("mortal", ["?x is man"], "?x is mortal")]}


def test_deduction_proves_the_syllogism_and_reports_gaps() -> None:
    proved = one("deductive", {**SYLLOGISM, "goal": "socrates is mortal"})
    assert proved.conclusion == "socrates is mortal: proved" and proved.value["proved"] is True
    assert proved.confidence == 1.0
    gap = one("deductive", {**SYLLOGISM, "goal": "plato is mortal"})
    assert gap.value == {"status": "unknown", "proved": False, "answers": [], "gaps": ["(plato, is, man)"],
                         "proof": None}  # fmt: skip
    # not provable is unknown, not false: no confidence in it (it was 1.0)
    assert gap.confidence == 0.0 and gap.conclusion.startswith("plato is mortal: unknown")
    closure = one("deductive", SYLLOGISM)
    assert closure.value["derived"] == ["socrates is mortal"]


def test_abduction_ranks_the_explanations() -> None:
    # Wet grass: rain or the sprinkler explain it; the sprinkler is known to be on, so it explains more.
    rules = [rule("rain", ["?x exposedTo rain"], "?x is wet"),
             rule("sprinkler", ["?x exposedTo sprinkler", "sprinkler is on"], "?x is wet")]  # fmt: skip
    result = one("abductive", {"facts": ["sprinkler is on"], "rules": rules, "observation": "grass is wet"})
    names = [h["name"] for h in result.value["hypotheses"]]
    assert sorted(names) == ["rain", "sprinkler"]
    assert result.value["hypotheses"][0]["name"] == "sprinkler"  # half of its premise already holds
    assert result.value["hypotheses"][0]["missing"] == ["(grass, exposedTo, sprinkler)"]


# Han, Kamber & Pei, Data Mining: Concepts and Techniques (3rd ed.), table 6.1 (AllElectronics).
ALL_ELECTRONICS = {"T100": "I1 I2 I5", "T200": "I2 I4", "T300": "I2 I3", "T400": "I1 I2 I4", "T500": "I1 I3",
                   "T600": "I2 I3", "T700": "I1 I3", "T800": "I1 I2 I3 I5", "T900": "I1 I2 I3"}  # fmt: skip
BASKETS = [f"{t} contains {i}" for t, items in ALL_ELECTRONICS.items() for i in items.split()]


def test_induction_finds_the_association_rules_of_han_kamber_pei() -> None:
    # Example 6.4: from {I1, I2, I5}: I1 & I5 => I2 (100%), I2 & I5 => I1 (100%), I1 & I2 => I5 (50%);
    # support of {I1, I2, I5} is 2/9.
    result = one("inductive", {"facts": BASKETS, "min_support": 2 / 9 - 1e-9, "min_confidence": 0.5,
                               "max_rules": 100})  # fmt: skip
    found = {(tuple(r["if"]), r["then"]): r for r in result.value["rules"]}
    rule_15_2 = found[(("contains=I1", "contains=I5"), "contains=I2")]
    assert rule_15_2["confidence"] == 1.0 and rule_15_2["support"] == pytest.approx(2 / 9)
    assert found[(("contains=I2", "contains=I5"), "contains=I1")]["confidence"] == 1.0
    assert found[(("contains=I1", "contains=I2"), "contains=I5")]["confidence"] == pytest.approx(0.5)
    assert rule_15_2["rule"]["enabled"] is False
    assert rule_15_2["rule"]["conditions"][0] == {"subject": "?x", "predicate": "contains", "object": "I1"}


@pytest.fixture
def ws(tool_ws: Workspace) -> Workspace:
    """Agents ``a`` and ``b``, no embedder (the shared ``tool_ws``)."""
    return tool_ws


def test_induction_over_the_agents_facts_proposes_disabled_rules(ws: Workspace) -> None:
    for company in ("acme", "globex", "initech"):
        ws.facts.assert_fact("a", company, "hasIndustry", "saas")
        ws.facts.assert_fact("a", company, "billing", "monthly")
    ws.facts.assert_fact("a", "umbrella", "hasIndustry", "pharma")
    result = one("inductive", {"min_support": 0.5, "min_confidence": 1.0, "propose": True}, MethodContext("a", ws))
    assert {(tuple(r["if"]), r["then"]) for r in result.value["rules"]} == {
        (("billing=monthly",), "hasIndustry=saas"), (("hasIndustry=saas",), "billing=monthly")}  # fmt: skip
    assert len(result.used) == 6
    stored = RuleService(ws.ports, ws.scopes, ws.clock).list("a")
    assert len(stored) == 2 and all(not r.enabled and r.scope == "agent:a" for r in stored)
    assert one("inductive", {"min_support": 0.5}, MethodContext("b", ws)).kind == "llm_prompt"  # b sees no facts


def test_deduction_reads_only_the_agents_scopes(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "socrates", "is", "man")
    created = RuleService(ws.ports, ws.scopes, ws.clock).create("a", **rule("mortal", ["?x is man"], "?x is mortal"))
    mine = one("deductive", {"goal": "socrates is mortal"}, MethodContext("a", ws))
    assert mine.value["proved"] and created.uid in mine.used and len(mine.used) == 2
    theirs = one("deductive", {"goal": "socrates is mortal"}, MethodContext("b", ws))
    assert theirs.kind == "llm_prompt" and theirs.used == []  # b sees no facts and no rules: nothing to compute


def test_structure_mapping_carries_the_solar_system_to_the_atom() -> None:
    # Falkenhainer, Forbus & Gentner, "The Structure-Mapping Engine" (1989): sun -> nucleus, planet -> electron,
    # candidate inference: the electron revolves around the nucleus.
    source = ["sun attracts planet", "sun moreMassiveThan planet", "planet revolvesAround sun"]
    target = ["nucleus attracts electron", "nucleus moreMassiveThan electron"]
    result = one("analogical", {"source": source, "target": target})
    assert result.value["mapping"] == {"sun": "nucleus", "planet": "electron"}
    assert result.value["candidate_inferences"] == ["electron revolvesAround nucleus"]
    assert result.confidence == pytest.approx(2 / 3)


def test_analogy_between_two_entities_of_the_graph(ws: Workspace) -> None:
    for s, p, o in [("acme", "sells", "crm"), ("crm", "soldTo", "smb"), ("acme", "targets", "smb"),
                    ("globex", "sells", "erp"), ("erp", "soldTo", "enterprise")]:  # fmt: skip
        ws.facts.assert_fact("a", s, p, o)
    result = one("analogical", {"source": "acme", "target": "globex"}, MethodContext("a", ws))
    assert result.value["mapping"] == {"acme": "globex", "crm": "erp", "smb": "enterprise"}
    assert result.value["candidate_inferences"] == ["globex targets enterprise"]
    assert len(result.used) == 5


# A Kripke model (by hand): w1 sees w1, w2; w2 sees w2, w3; p holds at w1, w2; q at w2, w3.
KRIPKE = {"worlds": {"w1": ["p"], "w2": ["p", "q"], "w3": ["q"]},
          "access": [["w1", "w1"], ["w1", "w2"], ["w2", "w2"], ["w2", "w3"]], "actual": "w1"}  # fmt: skip


def test_modal_truth_in_a_kripke_model() -> None:
    result = one("modal", {**KRIPKE, "query": ["box(p)", "box(q)", "dia(q)", "box(dia(q))", "dia(box(p))",
                                               "box(box(p))"]})  # fmt: skip
    # box(p) at w1: p at w1, w2 -> true; box(q): q fails at w1 -> false; dia(q): q at w2 -> true;
    # box(dia(q)): w1 sees w2 (q), w2 sees w2 (q) -> true; dia(box(p)): box(p) at w1 true -> true;
    # box(box(p)): box(p) at w2 needs p at w3 -> false.
    assert result.value["results"] == {"box(p)": True, "box(q)": False, "dia(q)": True, "box(dia(q))": True,
                                       "dia(box(p))": True, "box(box(p))": False}  # fmt: skip
    assert result.value["status"] == {"p": "necessary", "q": "possible"}
    with pytest.raises(InputError, match="only names"):
        one("modal", {**KRIPKE, "query": ["__import__('os')"]})


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["u", "v", "w"]), st.lists(st.sampled_from(["p", "q"]), max_size=2),
                       min_size=1),
       st.lists(st.tuples(st.sampled_from(["u", "v", "w"]), st.sampled_from(["u", "v", "w"])), max_size=9))  # fmt: skip
def test_box_is_not_diamond_not(worlds: dict[str, list[str]], pairs: list[tuple[str, str]]) -> None:
    names = {w: set(ps) for w, ps in worlds.items()}
    access = {w: {b for a, b in pairs if a == w and b in names} for w in names}
    for world in names:
        for formula in ("p", "p and q", "not q"):
            assert holds(f"box({formula})", world, (names, access)) == holds(
                f"not dia(not ({formula}))", world, (names, access))  # fmt: skip


def test_deontic_conflict_resolved_by_priority_gdpr_retention() -> None:
    # GDPR art. 17(1) gives a right to erasure; art. 17(3)(b) excepts data kept to comply with a legal obligation
    # (e.g. retention of invoices): the retention prohibition has priority.
    norms: list[dict[str, Any]] = [{"id": "gdpr-17-1", "modality": "obligation", "action": "erase invoices",
              "when": ["customer requests erasure"]},
             {"id": "retention", "modality": "prohibition", "action": "erase invoices",
              "when": ["invoice withinRetention yes"], "priority": 1},
             {"id": "gdpr-17-profile", "modality": "obligation", "action": "erase profile",
              "when": ["customer requests erasure"]}]  # fmt: skip
    facts = ["customer requests erasure", "invoice withinRetention yes"]
    result = one("deontic", {"norms": norms, "facts": facts, "actions": ["send newsletter"]})
    assert result.value["status"] == {"erase invoices": "forbidden", "erase profile": "obliged",
                                      "send newsletter": "permitted (not forbidden)"}  # fmt: skip
    assert result.value["conflicts"] == [{"action": "erase invoices", "between": ["gdpr-17-1", "retention"],
                                          "resolved_by": "priority", "winner": "retention"}]  # fmt: skip
    # same priority: the more specific norm (lex specialis) wins; equal: unresolved, confidence drops
    norms[1]["priority"] = 0
    norms[1]["when"] = [*norms[1]["when"], "customer requests erasure"]
    special = one("deontic", {"norms": norms, "facts": facts})
    assert special.value["conflicts"][0]["resolved_by"] == "specificity (lex specialis)"
    norms[1]["when"] = ["invoice withinRetention yes"]
    unresolved = one("deontic", {"norms": norms, "facts": facts})
    assert unresolved.value["status"]["erase invoices"] == "unresolved" and unresolved.confidence == 0.5


def test_deontic_reads_policy_rules(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "deal", "discount", "25")
    policy = RuleService(ws.ports, ws.scopes, ws.clock).create(
        "a", name="big-discount", type="policy", action="must not sign without finance",
        conditions=[{"subject": "deal", "predicate": "discount", "object": "20", "operator": "gt"}])  # fmt: skip
    result = one("deontic", {}, MethodContext("a", ws))
    assert result.value["status"] == {"sign without finance": "forbidden"} and policy.uid in result.used
    assert modality_of("May offer a trial") == ("permission", "offer a trial")


ALLEN = {"before": ((1, 2), (3, 4)), "meets": ((1, 3), (3, 4)), "overlaps": ((1, 3), (2, 4)),
         "starts": ((1, 2), (1, 4)), "during": ((2, 3), (1, 4)), "finishes": ((2, 4), (1, 4)),
         "equals": ((1, 4), (1, 4))}  # fmt: skip
INVERSE = {"before": "after", "meets": "met-by", "overlaps": "overlapped-by", "starts": "started-by",
           "during": "contains", "finishes": "finished-by", "equals": "equals"}  # fmt: skip


def test_allens_thirteen_relations() -> None:
    # Allen, "Maintaining knowledge about temporal intervals" (CACM 1983), figure 2.
    for name, (a, b) in ALLEN.items():
        assert allen(a, b) == name and allen(b, a) == INVERSE[name]
    result = one("temporal", {"intervals": {"design": ["2026-01-01", "2026-02-01"],
                                            "build": ["2026-02-01", "2026-04-01"]},
                              "pair": ["design", "build"], "as_of": "2026-02-15"})  # fmt: skip
    assert result.conclusion == "design meets build; as of 2026-02-15: build hold(s)"


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 6), st.integers(1, 6), st.integers(0, 6), st.integers(1, 6))
def test_allen_relations_are_converses(a1: int, la: int, b1: int, lb: int) -> None:
    a, b = (a1, a1 + la), (b1, b1 + lb)
    forward, backward = allen(a, b), allen(b, a)
    assert INVERSE.get(forward, forward) == backward or INVERSE.get(backward, backward) == forward


def test_temporal_reads_fact_validity(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "alice", "worksAt", "acme", valid_from=datetime(2020, 1, 1, tzinfo=UTC),
                         valid_until=datetime(2023, 1, 1, tzinfo=UTC))  # fmt: skip
    ws.facts.assert_fact("a", "alice", "worksAt", "globex", valid_from=datetime(2023, 1, 1, tzinfo=UTC))
    result = one("temporal", {"subject": "alice", "as_of": "2022-06-01T00:00:00+00:00"}, MethodContext("a", ws))
    assert result.value["relations"] == [{"a": "alice worksAt acme", "b": "alice worksAt globex",
                                          "relation": "meets"}]  # fmt: skip
    assert result.value["holding_at"] == ["alice worksAt acme"] and len(result.used) == 2
