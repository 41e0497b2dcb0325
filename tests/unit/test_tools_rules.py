"""The rule and inference tools (cli/tools/rules.py, cli/tools/inference.py) through ``cli.tools.call`` on a real
workspace: real rules and facts in SQLite; forward inference derives and persists, backward proves, abduction
ranks, constraints and policies fire; malformed calls name the field; a bound agent cannot act as another."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from cli import tools
from cli.tools.inference import HypothesisList, ProofOutcome
from cli.tools.rules import PolicyFiringList, RuleList, ViolationList
from kg.errors import InputError, NotFoundError, ScopeError
from kg.models import Rule
from kg.workspace import Workspace
from reasoning.service import INFERENCE_SOURCE, ForwardReport, KnowledgeAnswer
from tests.unit.tool_calls import call

TAXABLE = {  # the structured form of the conditions and the conclusion
    "name": "taxable",
    "conditions": [
        {"subject": "?x", "predicate": "hasRevenue", "object": "$1,000,000", "operator": "gt"},
        {"subject": "?x", "predicate": "locatedIn", "object": "US"},
    ],
    "conclusion": {"subject": "?x", "predicate": "isTaxable", "object": "true"},
    "confidence_factor": 0.8,
}
AUDIT = {  # the string form; chains on TAXABLE
    "name": "audit",
    "conditions": ["?x isTaxable true"],
    "conclusion": "?x needsAudit yes",
}


#: ``ws`` (tests/unit/conftest.py) is agents ``a`` and ``b`` on the fixed clock; these tests need no embedder.
pytestmark = pytest.mark.usefixtures("no_embedder")


@pytest.fixture
def acme(ws: Workspace) -> dict[str, str]:
    """Acme's revenue and location as asserted facts of agent ``a``."""
    revenue, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "$2,000,000", confidence=0.9)
    located, _ = ws.facts.assert_fact("a", "acme", "locatedIn", "US")
    return {"revenue": revenue.uid, "located": located.uid}


def live(ws: Workspace, **criteria: Any) -> list[Any]:
    return ws.facts.query("a", **criteria)


# ------------------------------------------------------------------------------------------------ rules


def test_rules_are_created_listed_and_toggled(ws: Workspace) -> None:
    taxable = call(ws, "rule_create", **TAXABLE)
    audit = call(ws, "rule_create", **AUDIT)
    check = call(ws, "rule_create", name="no-revenue", type="constraint", conditions=["?x hasRevenue <= 0"],
                 violation_message="?x has no revenue", severity="error", domain="tax")  # fmt: skip
    assert isinstance(taxable, Rule) and taxable.agent_id == "a" and taxable.scope == "agent:a"
    assert [c.operator.value for c in taxable.conditions] == ["gt", "eq"] and taxable.confidence_factor == 0.8
    assert audit.conditions[0].object == "true" and audit.conclusion is not None
    assert audit.conclusion.predicate == "needsAudit"
    assert (check.conditions[0].operator.value, check.conditions[0].object) == ("lte", "0")

    listed = call(ws, "rule_list")
    assert isinstance(listed, RuleList)
    assert [r.uid for r in listed.rules] == [taxable.uid, audit.uid, check.uid]
    assert [r.name for r in call(ws, "rule_list", type="constraint").rules] == ["no-revenue"]
    assert [r.name for r in call(ws, "rule_list", domain="tax").rules] == ["no-revenue"]
    assert call(ws, "rule_list", agent_id="b").rules == []  # a's rules are private to a

    flipped = call(ws, "rule_toggle", rule_id=audit.uid)
    assert flipped.enabled is False
    assert [r.name for r in call(ws, "rule_list", enabled=False).rules] == ["audit"]
    assert call(ws, "rule_toggle", rule_id=audit.uid, enabled=False).enabled is False  # set, not flipped
    assert call(ws, "rule_toggle", rule_id=audit.uid, enabled=True).enabled is True
    with pytest.raises(NotFoundError):
        call(ws, "rule_toggle", agent_id="b", rule_id=audit.uid)


def test_a_bad_rule_names_the_field_and_stores_nothing(ws: Workspace) -> None:
    unbound = {**TAXABLE, "conclusion": "?z isTaxable true"}
    with pytest.raises(InputError, match=r"variable \?z is not bound") as error:
        call(ws, "rule_create", **unbound)
    assert error.value.field == "conclusion"
    with pytest.raises(InputError) as short:
        call(ws, "rule_create", name="bad", conditions=["?x p"], conclusion="?x q r")
    assert short.value.field == "conditions[0]"
    with pytest.raises(InputError) as empty:
        call(ws, "rule_create", name="bad", conditions=[], conclusion="?x q r")
    assert empty.value.field == "conditions"
    with pytest.raises(InputError) as cf:
        call(ws, "rule_create", **{**TAXABLE, "confidence_factor": 1.5})
    assert cf.value.field == "confidence_factor"
    with pytest.raises(InputError) as no_conclusion:
        call(ws, "rule_create", name="bad", conditions=["?x p o"])
    assert no_conclusion.value.field == "conclusion"
    assert ws.ports.rules.list(scopes=["agent:a"]) == []


# ------------------------------------------------------------------------------------------------ inference


def test_forward_inference_derives_and_persists_with_truth_maintenance(ws: Workspace, acme: dict[str, str]) -> None:
    taxable = call(ws, "rule_create", **TAXABLE)
    audit = call(ws, "rule_create", **AUDIT)

    dry = call(ws, "infer_forward")
    assert isinstance(dry, ForwardReport) and not dry.persisted and dry.fixpoint
    assert [(d.predicate, round(d.confidence, 9)) for d in dry.derived] == [("isTaxable", 0.72), ("needsAudit", 0.648)]
    assert live(ws, predicate="isTaxable") == []  # nothing written without persist

    report = call(ws, "infer_forward", persist=True)
    assert (report.created, report.updated, report.retracted) == (2, 0, [])
    [stored] = live(ws, subject="acme", predicate="isTaxable")
    assert (stored.source, stored.rule_id, sorted(stored.derived_from)) == (
        INFERENCE_SOURCE, taxable.uid, sorted(acme.values()))  # fmt: skip
    [chained] = live(ws, predicate="needsAudit")
    assert chained.rule_id == audit.uid and chained.derived_from == [stored.uid]
    assert {d.uid for d in report.derived} == {stored.uid, chained.uid}

    again = call(ws, "infer_forward", persist=True)
    assert (again.created, again.unchanged) == (0, 2)  # idempotent

    ws.facts.retract("a", uids=[acme["located"]])
    after = call(ws, "infer_forward", persist=True)
    assert after.derived == [] and sorted(after.retracted) == sorted([stored.uid, chained.uid])
    assert live(ws, predicate="isTaxable") == [] and live(ws, predicate="needsAudit") == []


def test_forward_inference_stops_at_max_iterations(ws: Workspace, acme: dict[str, str]) -> None:
    call(ws, "rule_create", **TAXABLE)
    call(ws, "rule_create", **AUDIT)
    cut = call(ws, "infer_forward", max_iterations=1)
    assert [d.predicate for d in cut.derived] == ["isTaxable"] and not cut.fixpoint


def test_backward_chaining_proves_or_names_the_gaps(ws: Workspace, acme: dict[str, str]) -> None:
    taxable = call(ws, "rule_create", **TAXABLE)
    call(ws, "rule_create", **AUDIT)

    proved = call(ws, "infer_backward", subject="acme", predicate="needsAudit", object="yes")
    assert isinstance(proved, ProofOutcome) and proved.proved and proved.goal == ["acme", "needsAudit", "yes"]
    [tree] = proved.proofs
    assert tree.rule is not None and tree.rule.name == "audit" and round(tree.confidence, 9) == 0.648
    [middle] = tree.children
    assert middle.rule is not None and middle.rule.id == taxable.uid and middle.bindings == {"?x": "acme"}
    assert {leaf.fact for leaf in middle.children} == set(acme.values())

    which = call(ws, "infer_backward", subject="?who", predicate="isTaxable", object="true")
    assert which.proved and which.proofs[0].triple == ["acme", "isTaxable", "true"]

    missing = call(ws, "infer_backward", subject="globex", predicate="isTaxable", object="true")
    assert not missing.proved and missing.proofs == []
    assert {(g.subject, g.predicate) for g in missing.gaps} == {("globex", "hasRevenue"), ("globex", "locatedIn")}

    shallow = call(ws, "infer_backward", subject="acme", predicate="needsAudit", object="yes", max_depth=1)
    assert not shallow.proved


def test_abduction_ranks_the_rules_that_would_explain_an_observation(ws: Workspace, acme: dict[str, str]) -> None:
    call(ws, "rule_create", **TAXABLE)  # both conditions hold for acme: score 2/2 x 0.8
    call(ws, "rule_create", name="nexus", conditions=["?x hasOffice EU", "?x locatedIn US"],
         conclusion="?x isTaxable true", confidence_factor=1.0)  # fmt: skip  # one of two: 1/2 x 1.0
    call(ws, "rule_create", name="other", conditions=["?x p o"], conclusion="?x q r")  # concludes something else

    found = call(ws, "infer_abductive", subject="acme", predicate="isTaxable", object="true")
    assert isinstance(found, HypothesisList)
    assert [(h.name, round(h.score, 9)) for h in found.hypotheses] == [("taxable", 0.8), ("nexus", 0.5)]
    nexus = found.hypotheses[1]
    assert [t.uid for t in nexus.supported] == [acme["located"]]
    assert [(p.subject, p.predicate, p.object) for p in nexus.missing] == [("acme", "hasOffice", "EU")]
    best = call(ws, "infer_abductive", subject="acme", predicate="isTaxable", object="true", limit=1)
    assert [h.name for h in best.hypotheses] == ["taxable"]
    assert call(ws, "infer_abductive", subject="acme", predicate="isUnknown", object="x").hypotheses == []


# ------------------------------------------------------------------------------------------------ checks


def test_constraints_and_policies_fire(ws: Workspace, acme: dict[str, str]) -> None:
    call(ws, "rule_create", **TAXABLE)
    assert call(ws, "constraint_check").violations == []
    call(ws, "rule_create", name="audit", type="constraint", conditions=["?x isTaxable true"],
         violation_message="?x must be audited", severity="error")  # fmt: skip
    call(ws, "rule_create", name="big", type="policy", conditions=["context amount > 10000"],
         action="ask finance", escalate=True)  # fmt: skip

    checked = call(ws, "constraint_check")
    assert isinstance(checked, ViolationList)
    [violation] = checked.violations  # fires on a derived fact: constraints see the forward closure
    assert (violation.severity.value, violation.message, violation.bindings) == (
        "error", "acme must be audited", {"?x": "acme"})  # fmt: skip
    assert [f.subject for f in violation.facts] == ["acme"]
    assert call(ws, "constraint_check", agent_id="b").violations == []  # b sees neither a's facts nor rules

    assert call(ws, "policy_eval").firings == []
    assert call(ws, "policy_eval", context={"amount": "500"}).firings == []
    fired = call(ws, "policy_eval", context={"amount": "$12,000"})
    assert isinstance(fired, PolicyFiringList)
    [firing] = fired.firings
    assert (firing.name, firing.action, firing.escalate) == ("big", "ask finance", True)
    assert live(ws, subject="context") == []  # the context is not stored


def test_knowledge_explain_reports_every_method(ws: Workspace, acme: dict[str, str]) -> None:
    call(ws, "rule_create", **TAXABLE)
    answer = call(ws, "knowledge_explain", question="Is acme taxable?")
    assert isinstance(answer, KnowledgeAnswer) and answer.agent_id == "a"
    assert "acme" in answer.terms and "isTaxable" in answer.terms
    assert answer.methods["forward"] >= 1 and answer.methods["backward"] >= 1
    guess = call(ws, "knowledge_explain", question="Is globex taxable?")
    assert guess.methods["abduction"] >= 1
    assert len(call(ws, "knowledge_explain", question="Is acme taxable?", limit=1).findings) == 1
    with pytest.raises(InputError, match="question"):
        call(ws, "knowledge_explain", question="  ")


# ------------------------------------------------------------------------------------------------ the surface


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("rule_create", {"name": "x", "conditions": ["?x p o"], "conclusion": "?x q r", "colour": "red"}, "colour"),
        ("rule_create", {"conditions": ["?x p o"]}, "name"),
        ("rule_create", {"name": "x", "type": "wish", "conditions": ["?x p o"]}, "type"),
        ("rule_list", {"enabled": "maybe"}, "enabled"),
        ("rule_toggle", {}, "rule_id"),
        ("infer_forward", {"max_iterations": 0}, "max_iterations"),
        ("infer_forward", {"max_iterations": 101}, "max_iterations"),
        ("infer_backward", {"subject": "acme", "predicate": "isTaxable"}, "object"),
        ("infer_backward", {"subject": "a", "predicate": "p", "object": "o", "max_depth": 11}, "max_depth"),
        ("infer_abductive", {"subject": "a", "predicate": "p", "object": "o", "limit": 0}, "limit"),
        ("policy_eval", {"context": ["amount=1"]}, "context"),
        ("knowledge_explain", {}, "question"),
    ],
)
def test_a_malformed_call_names_the_field(ws: Workspace, name: str, arguments: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as error:
        call(ws, name, **arguments)
    assert error.value.field == field


def test_the_acting_agent_is_required_and_a_bound_agent_cannot_act_as_another(ws: Workspace) -> None:
    with pytest.raises(InputError) as error:
        tools.call("rule_list", workspace=ws.path)
    assert error.value.field == "agent_id"
    created = tools.call("rule_create", workspace=ws.path, agent="a", **TAXABLE)  # agent_id from the binding
    assert isinstance(created, Rule) and created.agent_id == "a"
    for name, arguments in [("rule_list", {}), ("infer_forward", {"persist": True}), ("constraint_check", {}),
                            ("rule_create", AUDIT)]:  # fmt: skip
        with pytest.raises(ScopeError, match="agent_id"):
            tools.call(name, workspace=ws.path, agent="a", agent_id="b", **arguments)
    assert [r.name for r in ws.ports.rules.list(scopes=["agent:a", "agent:b"])] == ["taxable"]


def test_every_rules_tool_is_registered_with_described_fields() -> None:
    names = {"rule_create", "rule_list", "rule_toggle", "constraint_check", "policy_eval", "infer_forward",
             "infer_backward", "infer_abductive", "knowledge_explain"}  # fmt: skip
    assert names <= set(tools.REGISTRY)
    for name in names:
        found = tools.get(name)
        assert found.group == "rules" and len(found.description) > 80
        for field, schema in found.input_schema()["properties"].items():
            assert schema.get("description"), f"{name}.{field} has no description"


def test_rule_import_validates_every_rule_before_storing_any(ws: Workspace) -> None:
    export = call(ws, "rule_create", **TAXABLE)
    document = tools.call("rule_list", workspace=ws.path, agent="a").model_dump(mode="json")
    assert document["rules"][0]["uid"] == export.uid
    imported = call(ws, "rule_import", agent_id="b", document=json.dumps(document), format="json").rules
    assert [(r.name, r.agent_id, r.scope) for r in imported] == [("taxable", "b", "agent:b")]
    broken = yaml.safe_dump({"rules": [TAXABLE, {**TAXABLE, "conclusion": "?y q r"}]})
    with pytest.raises(InputError, match=r"^rules\[1\]\.conclusion"):
        call(ws, "rule_import", agent_id="b", document=broken, format="yaml")
    many = json.dumps([TAXABLE] * 1_001)
    bad = [("rules: [", "yaml", "document"), ("{", "json", "document"), (many, "json", "rules"), ("", "xml", "format")]
    for document, fmt, field in bad:
        with pytest.raises(InputError, match=f"^{field}: ") as caught:
            call(ws, "rule_import", agent_id="b", document=document, format=fmt)
        assert "\n" not in str(caught.value)
    assert len(call(ws, "rule_list", agent_id="b").rules) == 1
