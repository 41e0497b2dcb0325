"""Engine behaviour beyond the golden files: explanations, provenance, edge semantics, the public API."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

import reasoning.rules
from kg.errors import NotFoundError
from kg.models import Operator, Rule
from reasoning.rules import (
    Pattern,
    Triple,
    abduce,
    build_rule,
    check_constraints,
    evaluate_policies,
    explain,
    forward_chain,
    prove,
    substitute,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def rule(name: str, conds: list[tuple[str, ...]], conclusion: tuple[str, str, str] | None, **more: Any) -> Rule:
    conditions = [
        {"subject": c[0], "predicate": c[1], "object": c[2], "operator": c[3] if len(c) > 3 else "eq"} for c in conds
    ]
    data: dict[str, Any] = {"name": name, "conditions": conditions, **more}
    if conclusion is not None:
        data["conclusion"] = dict(zip(("subject", "predicate", "object"), conclusion, strict=True))
    return build_rule(data, now=NOW)


ANCESTOR = [
    rule("parent", [("?x", "parent", "?y")], ("?x", "ancestor", "?y"), confidence_factor=0.9),
    rule("step", [("?x", "ancestor", "?y"), ("?y", "ancestor", "?z")], ("?x", "ancestor", "?z"), confidence_factor=0.8),
]
FAMILY = [Triple("ann", "parent", "bob", 1.0, "F-1"), Triple("bob", "parent", "cid", 0.5, "F-2")]


def test_explain_gives_the_tree_down_to_asserted_facts() -> None:
    result = forward_chain(FAMILY, ANCESTOR)
    tree = explain(("ann", "ancestor", "cid"), FAMILY, result)
    assert tree["asserted"] is False
    assert tree["rule"] == {"id": ANCESTOR[1].uid, "name": "step", "confidence_factor": 0.8}
    assert tree["confidence"] == pytest.approx(0.36)
    assert tree["bindings"] == {"?x": "ann", "?y": "bob", "?z": "cid"}
    left, right = tree["supports"]
    assert left["rule"]["name"] == "parent" and left["confidence"] == pytest.approx(0.9)
    assert left["supports"] == [{"triple": ["ann", "parent", "bob"], "confidence": 1.0, "asserted": True, "uid": "F-1"}]
    assert right["supports"][0]["uid"] == "F-2"
    json.dumps(tree)  # plain data


def test_explain_an_asserted_fact_and_an_unknown_one() -> None:
    result = forward_chain(FAMILY, ANCESTOR)
    assert explain(("ann", "parent", "bob"), FAMILY, result)["asserted"] is True
    with pytest.raises(NotFoundError):
        explain(("ann", "parent", "zed"), FAMILY, result)


def test_derivations_carry_support_bindings_and_rule() -> None:
    result = forward_chain(FAMILY, ANCESTOR)
    derived = result.lookup(("ann", "ancestor", "cid"))
    assert derived is not None
    assert derived.support == (("ann", "ancestor", "bob"), ("bob", "ancestor", "cid"))
    assert derived.rule_id == ANCESTOR[1].uid
    assert result.lookup(("x", "y", "z")) is None
    assert set(result.rules) == {r.uid for r in ANCESTOR}
    assert [t.key for t in result.triples()] == [d.triple.key for d in result.derived]


def test_repeated_variable_within_a_condition_and_constant_conclusions() -> None:
    rules = [rule("self-loop", [("?x", "links", "?x")], ("?x", "kind", "loop"))]
    facts = [Triple("a", "links", "a"), Triple("a", "links", "b")]
    assert [d.triple.key for d in forward_chain(facts, rules).derived] == [("a", "kind", "loop")]


def test_ground_condition_rules_fire_once() -> None:
    rules = [rule("alarm", [("system", "mode", "maintenance"), ("?j", "type", "job")], ("?j", "paused", "true"))]
    facts = [Triple("system", "mode", "maintenance"), Triple("j1", "type", "job"), Triple("j2", "type", "job")]
    result = forward_chain(facts, rules)
    assert sorted(d.triple.key for d in result.derived) == [("j1", "paused", "true"), ("j2", "paused", "true")]


def test_duplicate_input_facts_keep_the_highest_confidence() -> None:
    rules = [rule("copy", [("?x", "p", "?y")], ("?x", "q", "?y"), confidence_factor=1.0)]
    facts = [
        Triple("a", "p", "b", 0.2, "F-low"),
        Triple("a", "p", "b", 0.7, "F-high"),
        Triple("a", "p", "b", 0.7, "F-tie"),
    ]
    assert forward_chain(facts, rules).derived[0].triple.confidence == 0.7
    proof = prove(("a", "p", "b"), facts, rules).proofs[0]
    assert proof.uid == "F-high" and proof.confidence == 0.7


def test_values_that_look_like_variables_are_not_variables_once_bound() -> None:
    # a fact's object "?anything" bound into a subgoal must not match every subject
    rules = [rule("q", [("?d", "asks", "?t"), ("?t", "lang", "en")], ("?d", "english", "yes"))]
    facts = [Triple("d1", "asks", "?anything"), Triple("hello", "lang", "en")]
    assert not prove(("d1", "english", "yes"), facts, rules).proved
    assert forward_chain(facts, rules).derived == []


def test_proof_to_dict_is_plain_data() -> None:
    result = prove(("ann", "ancestor", "cid"), FAMILY, ANCESTOR)
    data = result.proofs[0].to_dict()
    assert data["rule"]["name"] == "step"
    assert data["children"][0]["children"][0] == {"triple": ["ann", "parent", "bob"], "confidence": 1.0, "fact": "F-1"}
    json.dumps(data)


def test_gaps_are_patterns() -> None:
    result = prove(("ann", "ancestor", "zed"), FAMILY, ANCESTOR, max_depth=2)
    assert not result.proved
    assert all(isinstance(g, Pattern) for g in result.gaps)
    assert str(Pattern("a", "age", "18", Operator.GTE)) == "(a, age, gte 18)"


def test_abduction_ties_keep_rule_order() -> None:
    rules = [
        rule("first", [("?x", "a", "1")], ("?x", "obs", "yes"), confidence_factor=0.5),
        rule("second", [("?x", "b", "1")], ("?x", "obs", "yes"), confidence_factor=0.5),
    ]
    assert [h.name for h in abduce(("k", "obs", "yes"), [], rules)] == ["first", "second"]
    assert abduce(("k", "other", "yes"), [], rules) == []


def test_constraint_without_message_and_policy_without_context() -> None:
    constraint = rule("no-x", [("?s", "is", "x")], None, type="constraint")
    violations = check_constraints([Triple("a", "is", "x")], [constraint])
    assert violations[0].message == "constraint 'no-x' violated"
    assert violations[0].bindings == {"?s": "a"}
    policy = rule("always", [("?s", "is", "x")], None, type="policy", action="notify ?s")
    assert evaluate_policies([Triple("a", "is", "x")], [policy])[0].action == "notify a"


def test_substitute_leaves_unknown_variables() -> None:
    assert substitute("?a owes ?b ?ab", {"?a": "x", "?b": "y"}) == "x owes y ?ab"


def test_long_chain_is_closed_in_few_rounds_per_hop() -> None:
    rules = [rule("reach", [("?x", "next", "?y")], ("?x", "reach", "?y"), confidence_factor=1.0)]
    rules.append(
        rule("reach-more", [("?x", "next", "?y"), ("?y", "reach", "?z")], ("?x", "reach", "?z"), confidence_factor=1.0)
    )
    facts = [Triple(f"n{i}", "next", f"n{i + 1}") for i in range(60)]
    result = forward_chain(facts, rules, max_iterations=100)
    assert result.fixpoint and len(result.derived) == 60 * 61 // 2
    assert result.iterations == 61


def test_public_api_is_sorted_and_complete() -> None:
    names = reasoning.rules.__all__
    assert list(names) == sorted(names)
    for name in names:
        assert hasattr(reasoning.rules, name), name
    for required in ("Triple", "check_rule", "parse_number", "compare", "forward_chain", "prove", "abduce"):
        assert required in names
    for required in ("check_constraints", "evaluate_policies", "explain", "load_rules", "dump_rules"):
        assert required in names
