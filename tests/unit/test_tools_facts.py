"""fact_assert, fact_retract, fact_query and fact_explain through ``cli.tools.call`` on a real workspace (SQLite)."""

from __future__ import annotations

from typing import Any

import pytest

from cli import tools
from cli.tools.fact_writes import FactAssertResult, FactRetractResult
from cli.tools.facts import FactList
from kg.errors import InputError, NotFoundError, ScopeError
from kg.facts import Explanation
from kg.workspace import Workspace
from tests.unit.conftest import call, refused

SPO = {"subject": "acme", "predicate": "p", "object": "x"}


@pytest.fixture
def ws(tool_ws: Workspace) -> Workspace:
    """Agents ``a`` and ``b``, no embedder (tests/unit/conftest.py ``tool_ws``)."""
    return tool_ws


def test_the_group_registers_its_five_tools() -> None:
    names = {t.name for t in tools.REGISTRY.values() if t.group == "facts"}
    assert names == {"fact_assert", "fact_retract", "fact_query", "fact_explain", "fact_import"}
    for name in names:
        described = tools.get(name).input_schema()["properties"]
        assert all(field.get("description") for field in described.values()), name


def test_assert_is_an_upsert_and_the_fact_is_stored(ws: Workspace) -> None:
    first = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="hasRevenue", object="$50000",
                 confidence=0.8, source="cfo-report")  # fmt: skip
    again = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="hasRevenue", object="$50000",
                 confidence=0.9, source="cfo-report")  # fmt: skip
    same = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="hasRevenue", object="$50000",
                confidence=0.9, source="cfo-report")  # fmt: skip
    assert isinstance(first, FactAssertResult)
    assert [first.status, again.status, same.status] == ["created", "updated", "unchanged"]
    assert first.uid == again.uid == same.uid == first.fact.uid
    stored = ws.facts.get("a", first.uid)
    assert (stored.object, stored.confidence, stored.source, stored.scope) == ("$50000", 0.9, "cfo-report", "agent:a")
    assert first.model_dump(mode="json").keys() == {"uid", "status", "fact"}  # the CLI's --json shape


def test_assert_defaults_and_lineage(ws: Workspace) -> None:
    base = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="hasIndustry", object="saas").fact
    assert (base.confidence, base.source, base.object_kind) == (1.0, "agent", "entity")  # a name: guessed entity
    literal = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="hasName", object="saas",
                   object_kind="literal").fact  # fmt: skip
    assert literal.object_kind == "literal"
    derived = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="isTarget", object="true",
                   derived_from=[base.uid], valid_from="2024-01-01", scope="global").fact  # fmt: skip
    assert derived.derived_from == [base.uid] and derived.scope == "global"
    assert derived.valid_from is not None and derived.valid_from.year == 2024


def test_query_filters_and_limits(ws: Workspace) -> None:
    for predicate, obj in (("hasRevenue", "$1"), ("hasIndustry", "saas"), ("locatedIn", "US")):
        ws.facts.assert_fact("a", "acme", predicate, obj)
    ws.facts.assert_fact("b", "acme", "hasSecret", "b-only")  # b's private scope: a never sees it
    found = call(ws, "fact_query", agent_id="a", subject="acme", predicate="has*")
    assert isinstance(found, FactList)
    assert sorted(f.object for f in found.facts) == ["$1", "saas"]
    assert len(call(ws, "fact_query", agent_id="a", limit=1).facts) == 1
    assert [f.object for f in call(ws, "fact_query", agent_id="b", predicate="hasSecret").facts] == ["b-only"]


def test_retract_keeps_history(ws: Workspace) -> None:
    one = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="p", object="1").uid
    two = call(ws, "fact_assert", agent_id="a", subject="acme", predicate="q", object="2").uid
    by_id = call(ws, "fact_retract", agent_id="a", fact_ids=[one])
    assert isinstance(by_id, FactRetractResult)
    assert by_id.model_dump() == {"retracted": [one], "count": 1}
    assert call(ws, "fact_retract", agent_id="a", predicate="q").retracted == [two]
    assert call(ws, "fact_query", agent_id="a").facts == []
    history = call(ws, "fact_query", agent_id="a", include_retracted=True).facts
    assert {f.uid for f in history} == {one, two} and all(f.retracted_by == "a" for f in history)


def test_explain_walks_the_supports(ws: Workspace) -> None:
    revenue, _ = ws.facts.assert_fact("a", "acme", "hasRevenue", "$50000")
    industry, _ = ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
    derived, _ = ws.facts.assert_fact("a", "acme", "isTarget", "true", derived_from=[revenue.uid, industry.uid])
    tree = call(ws, "fact_explain", agent_id="a", fact_id=derived.uid)
    assert isinstance(tree, Explanation)
    assert [s.uid for s in tree.supports] == [revenue.uid, industry.uid]
    assert tree.supports[0].fact is not None and tree.supports[0].fact.object == "$50000"
    assert call(ws, "fact_explain", agent_id="a", fact_id=derived.uid, depth=0).supports == []
    with pytest.raises(NotFoundError):
        call(ws, "fact_explain", agent_id="b", fact_id=derived.uid)  # a's private fact


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("fact_assert", {**SPO, "confidence": 1.5}, "confidence"),
        ("fact_assert", {"subject": "", "predicate": "p", "object": "x"}, "subject"),
        ("fact_assert", {"predicate": "p", "object": "x"}, "subject"),
        ("fact_assert", {**SPO, "derived_from": ["nope"]}, "derived_from.0"),
        ("fact_assert", {**SPO, "valid_from": "2024-02-01", "valid_until": "2024-01-01"}, "valid_until"),
        ("fact_assert", {**SPO, "colour": "red"}, "colour"),
        ("fact_assert", {**SPO, "scope": "nonsense"}, "scope"),
        ("fact_retract", {}, "retract"),
        ("fact_retract", {"subject": " "}, "subject"),
        ("fact_query", {"limit": 0}, "limit"),
        ("fact_query", {"min_confidence": "high"}, "min_confidence"),
        ("fact_explain", {"fact_id": "F-01HZZZZZZZZZZZZZZZZZZZZZZZ", "depth": 11}, "depth"),
    ],
)
def test_a_malformed_call_names_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    assert refused(ws, name, agent_id="a", **arguments).field == field
    assert ws.facts.query("a", include_retracted=True) == []


def test_a_bound_agent_cannot_act_as_another(ws: Workspace) -> None:
    with pytest.raises(ScopeError, match="agent_id"):
        tools.call("fact_assert", workspace=ws.path, agent="a", agent_id="b", subject="s", predicate="p", object="o")
    with pytest.raises(ScopeError):
        tools.call("fact_query", workspace=ws.path, agent="a", agent_id="b")
    bound = tools.call("fact_assert", workspace=ws.path, agent="a", subject="s", predicate="p", object="o")
    assert isinstance(bound, FactAssertResult) and bound.fact.agent_id == "a"
    with pytest.raises(InputError, match="agent_id"):
        call(ws, "fact_query")  # no bound agent and none given
