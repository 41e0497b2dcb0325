"""Models: ranges, enums, timestamps, agent ids and scopes, text rules, rules' variables, error messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from kg.errors import InputError
from kg.ids import new_id
from kg.models import (
    MAX_NAME,
    MAX_OBJECT,
    MAX_TERM,
    Agent,
    Belief,
    CaseOutcome,
    CommitmentStrategy,
    FactInput,
    FactQuery,
    Goal,
    MemoryItem,
    ObjectKind,
    Rule,
    format_ts,
    infer_object_kind,
    parse,
    pattern_parts,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def fact(**over: Any) -> FactInput:
    return parse(FactInput, {"agent_id": "a", "subject": "acme", "predicate": "is", "object": "firm", **over})


def agent(agent_id: Any, **over: Any) -> Agent:
    return parse(
        Agent, {"uid": new_id("agent"), "agent_id": agent_id, "name": "A", "created_at": NOW, "updated_at": NOW, **over}
    )


def belief(**over: Any) -> Belief:
    base = {"uid": new_id("belief"), "agent_id": "a", "content": "c", "created_at": NOW, "updated_at": NOW}
    return parse(Belief, {**base, **over})


def goal(**over: Any) -> Goal:
    base = {"uid": new_id("goal"), "agent_id": "a", "content": "g", "created_at": NOW, "updated_at": NOW}
    return parse(Goal, {**base, **over})


def memory(**over: Any) -> MemoryItem:
    return parse(
        MemoryItem, {"uid": new_id("memory"), "agent_id": "a", "content": "met the bank", "created_at": NOW, **over}
    )


def rule(conditions: list[dict[str, str]], conclusion: dict[str, str] | None, **over: Any) -> Rule:
    return parse(
        Rule,
        {
            "uid": new_id("rule"),
            "agent_id": "a",
            "created_at": NOW,
            "name": "r",
            "conditions": conditions,
            "conclusion": conclusion,
            **over,
        },
    )


def refused(build: Any, field: str) -> InputError:
    with pytest.raises(InputError) as err:
        build()
    assert err.value.field == field, str(err.value)
    assert str(err.value).startswith(f"{field}: ")
    return err.value


# ------------------------------------------------------------------------------------------ ranges


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0, 0, 1])
def test_unit_interval_accepts_its_bounds(value):
    assert fact(confidence=value).confidence == value
    assert memory(importance=value, confidence=value).importance == value
    assert belief(certainty=value).certainty == value


@pytest.mark.parametrize("value", [-0.01, 1.01, 2, -1, float("nan"), float("inf"), float("-inf"), "nan", "inf"])
def test_unit_interval_refuses_out_of_range_and_non_finite(value):
    refused(lambda: fact(confidence=value), "confidence")
    refused(lambda: memory(importance=value), "importance")
    refused(lambda: memory(confidence=value), "confidence")
    refused(
        lambda: belief(certainty=value),
        "certainty",
    )


def test_range_message_names_the_rule_and_the_value():
    err = refused(lambda: fact(confidence=1.5), "confidence")
    assert "less than or equal to 1" in err.rule and "1.5" in err.rule


def test_metrics_must_be_finite():
    refused(lambda: parse(CaseOutcome, {"success": True, "metrics": {"roi": float("nan")}}), "metrics")


@pytest.mark.parametrize("priority", [0, 11, -1])
def test_priority_is_one_to_ten(priority):
    refused(
        lambda: goal(priority=priority),
        "priority",
    )


# ------------------------------------------------------------------------------------------ enums


def test_enums_parse_from_their_values():
    assert agent("a", commitment_strategy="single-minded").commitment_strategy is CommitmentStrategy.SINGLE_MINDED
    assert fact(object_kind="entity").object_kind is ObjectKind.ENTITY


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: agent("a", commitment_strategy="stubborn"), "commitment_strategy"),
        (lambda: fact(object_kind="thing"), "object_kind"),
        (lambda: memory(type="dream"), "type"),
        (lambda: memory(store="attic"), "store"),
        (lambda: memory(tier="gold"), "tier"),
    ],
)
def test_unknown_enum_values_are_refused(build, field):
    err = refused(build, field)
    assert "Input should be" in err.rule


def test_node_status_must_belong_to_its_kind():
    err = refused(
        lambda: goal(status="revised"),
        "status",
    )
    assert "pending" in err.rule  # lists the allowed ones


def test_object_kind_is_inferred():
    assert fact(object="acme_corp").object_kind is ObjectKind.ENTITY
    assert fact(object="$50,000").object_kind is ObjectKind.LITERAL
    assert infer_object_kind("true") is ObjectKind.LITERAL
    assert infer_object_kind("hello world") is ObjectKind.LITERAL
    assert fact(object="$50,000", object_kind="entity").object_kind is ObjectKind.ENTITY  # explicit wins


# ------------------------------------------------------------------------------------------ timestamps


def test_naive_timestamps_are_read_as_utc():
    assert fact(valid_from="2024-05-01T12:00:00").valid_from == NOW
    assert fact(valid_from=datetime(2024, 5, 1, 12, 0)).valid_from == NOW
    assert fact(valid_from="2024-05-01T12:00:00").valid_from.tzinfo is UTC


@pytest.mark.parametrize(
    "text", ["2024-05-01T14:00:00+02:00", "2024-05-01T07:00:00-05:00", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00z"]
)
def test_offsets_are_converted_to_utc(text):
    value = fact(valid_from=text).valid_from
    assert value == NOW
    assert value.utcoffset() == timedelta(0)


def test_aware_datetimes_are_converted():
    value = fact(valid_from=datetime(2024, 5, 1, 21, 0, tzinfo=timezone(timedelta(hours=9)))).valid_from
    assert value == NOW and value.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2024-02-30",
        "2024-02-30T00:00:00Z",
        "2023-02-29",
        "2024-13-01",
        "2024-05-01T25:00:00",
        "yesterday",
        "",
        "0001-01-01T00:00:00+01:00",
        "9999-12-31T23:59:59-01:00",
    ],
)
def test_impossible_timestamps_are_refused(text):
    err = refused(lambda: fact(valid_from=text), "valid_from")
    assert "ISO-8601" in err.rule or "between 0001-01-01 and 9999-12-31" in err.rule


def test_leap_day_is_fine():
    assert fact(valid_from="2024-02-29").valid_from == datetime(2024, 2, 29, tzinfo=UTC)


def test_json_timestamps_are_fixed_width_utc():
    data = json.loads(fact(valid_from="2024-05-01T14:00:00.5+02:00").model_dump_json())
    assert data["valid_from"] == "2024-05-01T12:00:00.500000Z"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (datetime(2024, 5, 1, 12, 0, tzinfo=UTC), "2024-05-01T12:00:00.000000Z"),
        (datetime(999, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "0999-01-02T03:04:05.000006Z"),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00.000000Z"),
        (datetime(2024, 5, 1, 12, 0), "2024-05-01T12:00:00.000000Z"),  # naive means UTC
    ],
)
def test_format_ts_is_fixed_width_and_parses_back(value, text):
    assert format_ts(value) == text
    assert fact(valid_from=text).valid_from == value.replace(tzinfo=UTC)


def test_text_order_of_formatted_timestamps_is_time_order():
    moments = [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(999, 12, 31, tzinfo=UTC),
        datetime(1000, 1, 1, tzinfo=UTC),
        datetime(2024, 5, 1, tzinfo=UTC),
        datetime(9999, 12, 31, tzinfo=UTC),
    ]
    assert sorted(moments, key=format_ts) == moments


def test_validity_window_must_not_be_empty():
    err = refused(lambda: fact(valid_from="2024-05-02", valid_until="2024-05-01"), "valid_until")
    assert "later than valid_from" in err.rule
    refused(lambda: fact(valid_from="2024-05-01", valid_until="2024-05-01"), "valid_until")


# ------------------------------------------------------------------------------------------ agent ids, scopes


@pytest.mark.parametrize("agent_id", ["a", "sales-agent", "agent_7", "0", "a" * 64, "x-_-y"])
def test_good_agent_ids(agent_id):
    assert agent(agent_id).agent_id == agent_id
    assert agent(agent_id).scope == f"agent:{agent_id}"


@pytest.mark.parametrize(
    "agent_id",
    [
        "../x",
        "a/b",
        "a\\b",
        "A",
        "Sales",
        "",
        " ",
        "a" * 65,
        "a\x00b",
        "-a",
        "_a",
        "a b",
        "a.b",
        "a:b",
        "abc\n",
        "\nabc",
        "abc\r",
        "\u0430gent",  # Cyrillic a
        "\uff41gent",  # fullwidth a
        "agent\u200b",  # zero-width space
        "agent\u0301",  # combining accent
        "ag\u0435nt",  # Cyrillic e
        "\u0661",  # Arabic-Indic digit one
        "aǅ",
    ],
)
def test_bad_agent_ids_are_refused(agent_id):
    err = refused(lambda: agent(agent_id), "agent_id")
    assert "[a-z0-9][a-z0-9_-]{0,63}" in err.rule


@pytest.mark.parametrize("agent_id", [None, 7, ["a"]])
def test_agent_id_must_be_a_string(agent_id):
    refused(lambda: agent(agent_id), "agent_id")


@pytest.mark.parametrize("scope", ["global", "agent:a", "project:x", "user:Bob.Smith", "custom:team-1"])
def test_good_scopes(scope):
    assert fact(scope=scope).scope == scope


@pytest.mark.parametrize(
    "scope", ["Global", "agent:A", "agent:../x", "project:", "team:x", "project:a/b", "global\n", "user:bob\n", " "]
)
def test_bad_scopes_are_refused(scope):
    refused(lambda: fact(scope=scope), "scope")


def test_scope_defaults_to_the_agents_own():
    assert fact().scope == "agent:a"
    assert memory().scope == "agent:a"


# ------------------------------------------------------------------------------------------ text


@pytest.mark.parametrize(
    ("field", "value"), [("subject", ""), ("predicate", "   "), ("object", "\n\t"), ("subject", "a\x00b")]
)
def test_terms_must_have_content(field, value):
    refused(lambda: fact(**{field: value}), field)


def test_content_must_have_content():
    refused(lambda: memory(content="  \n "), "content")
    refused(lambda: agent("a", name=""), "name")


def test_lone_surrogates_are_refused():
    refused(lambda: fact(subject="x\ud800"), "subject")


@pytest.mark.parametrize(("field", "limit"), [("subject", MAX_TERM), ("predicate", MAX_TERM), ("object", MAX_OBJECT)])
def test_length_limits(field, limit):
    assert len(getattr(fact(**{field: "x" * limit}), field)) == limit
    err = refused(lambda: fact(**{field: "x" * (limit + 1)}), field)
    assert str(limit) in err.rule
    assert len(str(err)) < 300  # the value is shown shortened, not echoed whole


def test_name_and_tag_limits():
    refused(lambda: agent("a", name="n" * (MAX_NAME + 1)), "name")
    refused(lambda: memory(tags=["has space"]), "tags.0")
    refused(lambda: memory(tags=["a,b"]), "tags.0")
    refused(lambda: memory(tags=["t"] * 65), "tags")


def test_unknown_fields_are_refused_by_name():
    err = refused(lambda: fact(confidance=0.5), "confidance")
    assert "Extra inputs are not permitted" in err.rule


def test_missing_field_is_named():
    refused(lambda: parse(FactInput, {"agent_id": "a", "subject": "s", "predicate": "p"}), "object")


def test_record_ids_are_checked():
    refused(lambda: fact(rule_id="R-123"), "rule_id")
    refused(lambda: fact(derived_from=[new_id("fact"), "not-an-id"]), "derived_from.1")
    refused(lambda: fact(rule_id=new_id("rule") + "\n"), "rule_id")


def test_query_needs_a_scope_and_a_sane_limit():
    refused(lambda: parse(FactQuery, {"scopes": []}), "scopes")
    refused(lambda: parse(FactQuery, {"scopes": ["global"], "limit": 0}), "limit")
    refused(lambda: parse(FactQuery, {"scopes": ["global"], "min_confidence": float("nan")}), "min_confidence")


# ------------------------------------------------------------------------------------------ rules

COND = {"subject": "?x", "predicate": "hasRevenue", "object": "?r", "operator": "gt"}


def test_rule_with_bound_conclusion_is_accepted():
    r = rule([COND], {"subject": "?x", "predicate": "isBig", "object": "true"})
    assert r.confidence_factor == 0.9 and r.enabled


@pytest.mark.parametrize(
    ("conclusion", "var"),
    [
        ({"subject": "?y", "predicate": "isBig", "object": "true"}, "?y"),
        ({"subject": "?x", "predicate": "isBig", "object": "?z"}, "?z"),
        ({"subject": "?x", "predicate": "?p", "object": "true"}, "?p"),
    ],
)
def test_rule_conclusion_variables_must_be_bound(conclusion, var):
    err = refused(lambda: rule([COND], conclusion), "conclusion")
    assert var in err.rule and "not bound" in err.rule


def test_predicate_variables_bind_too():
    cond = {"subject": "?x", "predicate": "?p", "object": "?y"}
    assert rule([cond], {"subject": "?y", "predicate": "?p", "object": "?x"}).conclusion is not None


def test_inference_rule_needs_a_conclusion_but_a_constraint_does_not():
    refused(lambda: rule([COND], None), "conclusion")
    assert rule([COND], None, type="constraint", severity="critical").conclusion is None


def test_rule_needs_conditions():
    refused(lambda: rule([], {"subject": "a", "predicate": "b", "object": "c"}), "conditions")


def test_rule_operator_is_an_enum():
    refused(lambda: rule([{**COND, "operator": "approx"}], None, type="constraint"), "conditions.0.operator")


@pytest.mark.parametrize(
    ("pattern", "parts"),
    [
        ("acme", ("acme",)),
        ("", ("",)),
        ("*", ("", "")),
        ("ac*", ("ac", "")),
        ("a*b*c", ("a", "b", "c")),
        ("a\\*b", ("a*b",)),
        ("a\\\\*", ("a\\", "")),
        ("a\\x", ("a\\x",)),
        ("trailing\\", ("trailing\\",)),
    ],
)
def test_pattern_parts_split_at_unescaped_stars(pattern: str, parts: tuple[str, ...]) -> None:
    assert pattern_parts(pattern) == parts
