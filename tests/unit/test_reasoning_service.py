"""Rules and inference over a real workspace (reasoning/service.py, reasoning/cases.py): storage, scopes,
persistence with truth maintenance, and every method through the services."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.errors import InputError, NotFoundError, ScopeError
from reasoning.cases import CaseService
from reasoning.owl import OWL_RL_SOURCE
from reasoning.service import INFERENCE_SOURCE, Reasoner, RuleService
from tests.records import TAXABLE as BASE_TAXABLE

TAXABLE = {**BASE_TAXABLE, "confidence_factor": 0.8}
AUDIT = {  # chains on the first rule
    "name": "audit",
    "conditions": [{"subject": "?x", "predicate": "isTaxable", "object": "true"}],
    "conclusion": {"subject": "?x", "predicate": "needsAudit", "object": "yes"},
}


@pytest.fixture
def rules(ws) -> RuleService:
    return RuleService(ws.ports, ws.scopes, ws.clock)


@pytest.fixture
def reasoner(ws) -> Reasoner:
    return Reasoner(ws.ports, ws.scopes, ws.clock, ws.facts)


@pytest.fixture
def acme(ws, rules):
    revenue, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "$2,000,000", confidence=0.9)
    located, _ = ws.facts.assert_fact("a", "acme", "locatedIn", "US")
    return {"revenue": revenue, "located": located, "taxable": rules.create("a", **TAXABLE),
            "audit": rules.create("a", **AUDIT)}  # fmt: skip


def live(ws, agent: str = "a", **criteria):
    return ws.facts.query(agent, **criteria)


# ------------------------------------------------------------------------------------------------ rules


def test_a_bad_rule_is_refused_with_the_field_and_nothing_is_stored(ws, rules):
    unbound = {**TAXABLE, "conclusion": {"subject": "?z", "predicate": "isTaxable", "object": "true"}}
    with pytest.raises(InputError, match="conclusion"):
        rules.create("a", **unbound)
    compare_unbound = {**TAXABLE, "conditions": [{"subject": "?x", "predicate": "p", "object": "?y", "operator": "gt"}]}
    with pytest.raises(InputError, match=r"conditions\[0\]\.object"):
        rules.create("a", **compare_unbound)
    with pytest.raises(InputError, match="confidence_factor"):
        rules.create("a", **{**TAXABLE, "confidence_factor": 1.5})
    with pytest.raises(InputError, match="operator"):
        rules.create("a", **{**TAXABLE, "conditions": [{"subject": "?x", "predicate": "p", "object": "1",
                                                        "operator": "between"}]})  # fmt: skip
    assert rules.list("a") == [] and ws.ports.stats()["rules"] == 0


def test_rules_are_private_to_their_scope_and_toggle(ws, rules, acme):
    assert [r.name for r in rules.list("a")] == ["taxable", "audit"]
    assert rules.list("b") == []
    with pytest.raises(NotFoundError):
        rules.toggle("b", acme["taxable"].uid)
    off = rules.toggle("a", acme["taxable"].uid)
    assert off.enabled is False and rules.list("a", enabled=True) == [acme["audit"]]
    assert rules.toggle("a", acme["taxable"].uid, enabled=True).enabled is True
    with pytest.raises(ScopeError):
        rules.create("b", **{**TAXABLE, "scope": "agent:a"})


def test_export_then_import_gives_another_agent_the_same_rules(tmp_path: Path, rules, acme):
    for fmt in ("json", "yaml"):
        path = tmp_path / f"rules.{fmt}"
        exported = rules.export("a", fmt)
        assert (exported.format, exported.count) == (fmt, 2)
        path.write_text(exported.document, encoding="utf-8")
        imported = rules.import_file("b", path)
        assert [(r.name, r.conditions, r.conclusion, r.scope) for r in imported] == [
            (r.name, r.conditions, r.conclusion, "agent:b") for r in (acme["taxable"], acme["audit"])
        ]
        assert all(r.agent_id == "b" and r.uid not in (acme["taxable"].uid, acme["audit"].uid) for r in imported)


def test_a_file_with_one_bad_rule_stores_none(tmp_path: Path, rules):
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n- name: ok\n  conditions: [{subject: '?x', predicate: p, object: o}]\n"
                    "  conclusion: {subject: '?x', predicate: q, object: o}\n"
                    "- name: bad\n  conditions: [{subject: '?x', predicate: p, object: o}]\n"
                    "  conclusion: {subject: '?y', predicate: q, object: o}\n", encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError, match=r"rules\[1\]\.conclusion"):
        rules.import_file("a", path)
    assert rules.list("a") == []


# ------------------------------------------------------------------------------------------------ forward


def test_forward_persists_chained_facts_with_provenance_and_confidence(ws, reasoner, acme):
    report = reasoner.forward("a", persist=True)
    assert report.fixpoint and report.created == 2
    taxable = live(ws, subject="acme", predicate="isTaxable")[0]
    audit = live(ws, subject="acme", predicate="needsAudit")[0]
    assert taxable.source == INFERENCE_SOURCE and taxable.rule_id == acme["taxable"].uid
    assert sorted(taxable.derived_from) == sorted([acme["revenue"].uid, acme["located"].uid])
    assert taxable.confidence == pytest.approx(0.9 * 0.8)  # min(0.9, 1.0) x 0.8
    assert audit.derived_from == [taxable.uid] and audit.confidence == pytest.approx(0.72 * 0.9)
    explained = ws.facts.explain("a", audit.uid, depth=3)
    assert explained.supports[0].uid == taxable.uid and len(explained.supports[0].supports) == 2


def test_forward_twice_adds_nothing(ws, reasoner, acme):
    reasoner.forward("a", persist=True)
    before = ws.ports.stats()["facts"]
    again = reasoner.forward("a", persist=True)
    assert (again.created, again.retracted) == (0, []) and again.unchanged == 2
    assert ws.ports.stats()["facts"] == before


def test_retracting_a_support_retracts_what_followed_from_it_on_the_next_run(ws, reasoner, acme):
    reasoner.forward("a", persist=True)
    owl = ws.facts.assert_fact("a", "acme", "type", "Company", source=OWL_RL_SOURCE,
                               derived_from=[acme["located"].uid])[0]  # fmt: skip
    ws.facts.retract("a", uids=[acme["located"].uid])
    report = reasoner.forward("a", persist=True)
    assert report.derived == [] and len(report.retracted) == 2
    assert live(ws, subject="acme", predicate="isTaxable") == []
    assert live(ws, subject="acme", predicate="needsAudit") == []
    assert [f.uid for f in live(ws, subject="acme", predicate="type")] == [owl.uid]  # not forward chaining's


def test_forward_without_persist_writes_nothing_and_max_iterations_is_checked(ws, reasoner, acme):
    before = ws.ports.stats()["facts"]
    report = reasoner.forward("a", max_iterations=1)
    assert not report.fixpoint and [d.predicate for d in report.derived] == ["isTaxable"]
    assert ws.ports.stats()["facts"] == before
    with pytest.raises(InputError, match="max_iterations"):
        reasoner.forward("a", max_iterations=0)


def test_another_agent_sees_neither_the_facts_nor_the_rules(reasoner, acme):
    assert reasoner.forward("b").derived == []
    assert not reasoner.backward("b", "acme", "isTaxable", "true").proved


# ------------------------------------------------------------------------------------------------ other methods


def test_backward_proves_with_a_tree_and_reports_gaps(reasoner, acme):
    proof = reasoner.backward("a", "acme", "needsAudit", "yes")
    assert proof.proved
    tree = proof.proofs[0].to_dict()
    assert tree["rule"]["name"] == "audit" and tree["children"][0]["rule"]["name"] == "taxable"
    missing = reasoner.backward("a", "globex", "isTaxable", "true")
    assert not missing.proved and {g.predicate for g in missing.gaps} == {"hasRevenue", "locatedIn"}


def test_abduction_ranks_by_supported_share(ws, reasoner, acme):
    ws.facts.assert_fact("a", "globex", "locatedIn", "US")
    [hypothesis] = reasoner.abduce("a", "globex", "isTaxable", "true")
    assert hypothesis.rule_id == acme["taxable"].uid
    assert hypothesis.score == pytest.approx(0.5 * 0.8) and len(hypothesis.missing) == 1


def test_constraints_and_policies_see_the_closure_and_the_context(ws, rules, reasoner, acme):
    rules.create(
        "a",
        name="audit-flag",
        type="constraint",
        violation_message="?x must be audited",
        severity="error",
        conditions=[{"subject": "?x", "predicate": "needsAudit", "object": "yes"}],
    )
    rules.create(
        "a",
        name="big-order",
        type="policy",
        action="ask finance about ?x",
        escalate=True,
        conditions=[
            {"subject": "?x", "predicate": "isTaxable", "object": "true"},
            {"subject": "context", "predicate": "amount", "object": "10000", "operator": "gt"},
        ],
    )
    [violation] = reasoner.constraints("a")  # needsAudit is only derivable, not stored
    assert (violation.severity.value, violation.message) == ("error", "acme must be audited")
    assert reasoner.policies("a", {"amount": "500"}) == []
    [fired] = reasoner.policies("a", {"amount": "$12,000"})
    assert (fired.action, fired.escalate) == ("ask finance about acme", True)


def test_explain_gives_the_derivation_of_a_derivable_triple(reasoner, acme):
    tree = reasoner.explain("a", "acme", "needsAudit", "yes")
    assert "audit" in str(tree) and "taxable" in str(tree) and acme["revenue"].uid in str(tree)
    with pytest.raises(NotFoundError):
        reasoner.explain("a", "acme", "needsAudit", "no")


def test_knowledge_explain_says_which_method_found_what(ws, reasoner, acme):
    answer = reasoner.knowledge_explain("a", "Is acme taxable?")
    assert "acme" in answer.terms and "isTaxable" in answer.terms
    assert {f.method for f in answer.findings} >= {"forward", "backward"}
    unknown = reasoner.knowledge_explain("a", "Is globex taxable?")
    assert [f.method for f in unknown.findings] == ["abduction"]
    with pytest.raises(InputError, match="question"):
        reasoner.knowledge_explain("a", "  ")


# ------------------------------------------------------------------------------------------------ cases


def case(beliefs, desires=("grow",), success=True, context=""):
    return {"situation": {"beliefs": list(beliefs), "desires": list(desires), "context": context},
            "solution": {"actions": ["act"]}, "outcome": {"success": success}}  # fmt: skip


def test_cases_are_stored_once_per_situation_and_pruned_past_capacity(ws):
    cases = CaseService(ws.ports, ws.scopes, ws.clock, None, capacity=2)
    first = cases.store_case("a", **case(["x"]))
    assert first.created and not cases.store_case("a", **case(["X "])).created  # same situation, normalised
    cases.store_case("a", **case(["y"], success=False))
    third = cases.store_case("a", **case(["z"]))
    assert len(third.pruned) == 1 and ws.ports.cases.count("agent:a") == 2
    kept = {c.situation.beliefs[0] for c in ws.ports.cases.list(scopes=["agent:a"])}
    assert kept == {"x", "z"}  # the failed case went first


def test_retrieval_ranks_by_belief_and_desire_overlap_within_readable_scopes(ws):
    cases = CaseService(ws.ports, ws.scopes, ws.clock, None)
    best = cases.store_case("a", **case(["price sensitive", "small team"], ["grow"])).case
    cases.store_case("a", **case(["price sensitive"], ["retain"]))
    cases.store_case("b", **case(["price sensitive", "small team"], ["grow"]))  # b's own, private
    found = cases.retrieve("a", beliefs=["price sensitive", "small team"], desires=["grow"])
    assert found.matches[0].case_uid == best.uid and len(found.matches) == 2
    assert found.matches[0].score == pytest.approx(1.0)
    assert found.matches[1].score == pytest.approx(0.6 * 0.5 + 0.4 * 0.0)
    with pytest.raises(InputError, match="k"):
        cases.retrieve("a", k=0)


def test_fact_explain_names_the_rules_with_their_confidence_factors(ws, reasoner, acme):
    reasoner.forward("a", persist=True)
    audit = live(ws, subject="acme", predicate="needsAudit")[0]
    tree = ws.facts.explain("a", audit.uid, depth=3)
    assert (tree.rule_name, tree.confidence_factor) == ("audit", 0.9)
    taxable = tree.supports[0]
    assert (taxable.rule_name, taxable.confidence_factor) == ("taxable", 0.8)
    assert taxable.fact.confidence == pytest.approx(0.72)
    assert {s.fact.predicate for s in taxable.supports} == {"hasRevenue", "locatedIn"}
    with pytest.raises(NotFoundError):
        ws.facts.explain("b", audit.uid)
