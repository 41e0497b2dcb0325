"""check_rule: what the rule model cannot check, refused with one line naming the field and the rule."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kg.errors import InputError
from kg.ids import is_id
from kg.models import Rule, RuleConclusion, RuleCondition, RuleType
from reasoning.rules import Triple, build_rule, check_constraints, check_rule, forward_chain, is_var, prove

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def cond(s: str, p: str, o: str, op: str = "eq") -> dict[str, str]:
    return {"subject": s, "predicate": p, "object": o, "operator": op}


def concl(s: str, p: str, o: str) -> dict[str, str]:
    return {"subject": s, "predicate": p, "object": o}


def refused(data: dict[str, Any], field: str, *, by_model: bool = False) -> InputError:
    with pytest.raises(InputError) as err:
        build_rule({"name": "my-rule", **data}, now=NOW)
    assert err.value.field == field, str(err.value)
    assert by_model or "my-rule" in str(err.value)  # names the rule (the model's own checks do not)
    assert "\n" not in str(err.value)  # one line
    return err.value


def test_build_rule_fills_uid_owner_and_time() -> None:
    rule = build_rule({"name": "r", "conditions": [cond("?x", "p", "?y")], "conclusion": concl("?x", "q", "?y")})
    assert is_id(rule.uid, "rule")
    assert rule.agent_id == "system"
    assert rule.created_at.tzinfo is not None


@pytest.mark.parametrize(
    ("term", "expected"), [("?x", True), ("?_a1", True), ("?", False), ("?1x", False), ("x", False)]
)
def test_is_var(term: str, expected: bool) -> None:
    assert is_var(term) is expected


def test_comparison_with_an_unbound_variable_is_refused() -> None:
    err = refused(
        {
            "conditions": [cond("?t", "assignee", "?a"), cond("?t", "owner", "?o"), cond("?t", "reviewer", "?r", "ne")],
            "conclusion": concl("?t", "ok", "yes"),
        },
        "conditions[2].object",
    )
    assert "?r" in err.rule and "eq" in err.rule


def test_comparison_with_a_variable_bound_only_by_another_comparison_is_refused() -> None:
    refused(
        {
            "type": "constraint",
            "conditions": [cond("?a", "x", "?v", "gt"), cond("?b", "y", "?v", "lt")],
        },
        "conditions[0].object",
    )


def test_comparison_with_a_variable_bound_later_by_eq_is_accepted() -> None:
    rule = build_rule(
        {
            "name": "r",
            "conditions": [cond("?p", "spent", "?b", "gt"), cond("?p", "budget", "?b")],
            "conclusion": concl("?p", "over", "yes"),
        }
    )
    check_rule(rule)


def test_numeric_comparison_with_a_non_number_is_refused() -> None:
    err = refused(
        {"conditions": [cond("?x", "salary", "lots", "gt")], "conclusion": concl("?x", "rich", "yes")},
        "conditions[0].object",
    )
    assert "'lots'" in err.rule


def test_contains_and_ne_accept_any_constant() -> None:
    build_rule({"name": "r", "conditions": [cond("?x", "t", "?", "contains")], "conclusion": concl("?x", "q", "y")})
    build_rule({"name": "r", "conditions": [cond("?x", "t", "abc", "ne")], "conclusion": concl("?x", "q", "y")})


@pytest.mark.parametrize(
    ("where", "field"), [("subject", "conditions[0].subject"), ("predicate", "conditions[0].predicate")]
)
def test_question_mark_terms_that_are_not_variables_are_refused(where: str, field: str) -> None:
    c = cond("?x", "p", "?y")
    c[where] = "?1bad"
    refused({"conditions": [c], "conclusion": concl("?y", "q", "z")}, field)


def test_disconnected_all_variable_condition_is_refused() -> None:
    err = refused(
        {"conditions": [cond("?x", "type", "Student"), cond("?s", "?p", "?o")], "conclusion": concl("?x", "q", "y")},
        "conditions[1]",
    )
    assert "every fact" in err.rule


def test_single_all_variable_condition_and_connected_ones_are_accepted() -> None:
    build_rule({"name": "sym", "conditions": [cond("?s", "?p", "?o")], "conclusion": concl("?o", "?p", "?s")})
    build_rule(
        {
            "name": "rdfs7",
            "conditions": [cond("?x", "?p", "?y"), cond("?p", "subPropertyOf", "?q")],
            "conclusion": concl("?x", "?q", "?y"),
        }
    )


def test_unbound_conclusion_variable_is_refused_like_the_model_does() -> None:
    err = refused(
        {"conditions": [cond("?x", "p", "?y")], "conclusion": concl("?x", "q", "?z")}, "conclusion", by_model=True
    )
    assert "?z" in err.rule and "not bound" in err.rule


def test_conclusion_variable_bound_only_as_a_comparison_object_cannot_exist() -> None:
    # the model accepts it (?v appears in a condition); check_rule refuses the comparison first
    refused(
        {"conditions": [cond("?x", "p", "?v", "gt")], "conclusion": concl("?x", "q", "?v")},
        "conditions[0].object",
    )


def unchecked(**fields: Any) -> Rule:
    """A rule of agent ``a`` built without validation (``model_construct``), as a careless caller could."""
    return Rule.model_construct(agent_id="a", scope="agent:a", created_at=NOW, **fields)


def test_rules_built_without_validation_are_still_checked() -> None:
    rule = unchecked(
        uid="R-01J00000000000000000000000",
        name="raw",
        type=RuleType.INFERENCE,
        conditions=[RuleCondition(subject="?x", predicate="p", object="?y")],
        conclusion=RuleConclusion(subject="?x", predicate="q", object="?w"),
        confidence_factor=0.9,
        enabled=True,
    )
    with pytest.raises(InputError) as err:
        forward_chain([Triple("a", "p", "b")], [rule])
    assert err.value.field == "conclusion"


def test_engine_functions_check_every_rule_even_disabled_ones() -> None:
    bad = unchecked(
        uid="R-01J00000000000000000000001",
        name="bad",
        type=RuleType.CONSTRAINT,
        conditions=[RuleCondition(subject="?x", predicate="p", object="?v", operator="gt")],
        conclusion=None,
        enabled=False,
    )
    with pytest.raises(InputError):
        check_constraints([], [bad])


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: forward_chain([], [], max_iterations=0), "max_iterations"),
        (lambda: prove(("a", "b", "c"), [], [], max_depth=-1), "max_depth"),
        (lambda: prove(("a", "b", "c"), [], [], max_proofs=0), "max_proofs"),
    ],
)
def test_limits_are_checked(call: Any, field: str) -> None:
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field
