"""cbr_store, cbr_retrieve and reason (the method router) through ``cli.tools.call`` on a real workspace (SQLite)."""

from __future__ import annotations

from typing import Any

import pytest

from cli import tools
from kg.errors import NotFoundError, ScopeError
from kg.workspace import Workspace
from reasoning.cases import StoredCase
from reasoning.cbr import RetrievalResult
from reasoning.router import RouterResult
from reasoning.service import RuleService
from tests.records import TAXABLE
from tests.unit.conftest import call, refused


@pytest.fixture
def ws(tool_ws: Workspace) -> Workspace:
    """Agents ``a`` and ``b``, no embedder (tests/unit/conftest.py ``tool_ws``)."""
    return tool_ws


def case(beliefs: list[str], desires: list[str], *, success: bool = True, action: str = "act") -> dict[str, Any]:
    return {"situation": {"beliefs": beliefs, "desires": desires}, "solution": {"actions": [action]},
            "outcome": {"success": success, "lessons": ["keep it short"]}}  # fmt: skip


def test_the_group_registers_its_three_tools() -> None:
    names = {t.name for t in tools.REGISTRY.values() if t.group == "cases"}
    assert names == {"cbr_store", "cbr_retrieve", "reason"}
    for name in names:
        described = tools.get(name).input_schema()["properties"]
        assert all(field.get("description") for field in described.values()), name


def test_store_keeps_one_case_per_situation(ws: Workspace) -> None:
    first = call(ws, "cbr_store", agent_id="a", **case(["price sensitive", "small team"], ["grow"]))
    again = call(ws, "cbr_store", agent_id="a", **case(["small team", "price sensitive"], ["grow"], success=False))
    assert isinstance(first, StoredCase)
    assert first.created and not again.created and again.case.uid == first.case.uid
    stored = ws.ports.cases.list(scopes=["agent:a"])
    assert [c.uid for c in stored] == [first.case.uid]
    assert stored[0].outcome.success and stored[0].outcome.lessons == ["keep it short"]
    shared = call(ws, "cbr_store", agent_id="a", scope="global", **case(["x"], ["y"]))
    assert shared.case.scope == "global"


def test_retrieve_ranks_readable_cases(ws: Workspace) -> None:
    best = call(ws, "cbr_store", agent_id="a", **case(["price sensitive", "small team"], ["grow"])).case
    call(ws, "cbr_store", agent_id="a", **case(["price sensitive"], ["retain"], action="other"))
    call(ws, "cbr_store", agent_id="b", **case(["price sensitive", "small team"], ["grow"]))  # b's private case
    found = call(ws, "cbr_retrieve", agent_id="a", beliefs=["price sensitive", "small team"], desires=["grow"])
    assert isinstance(found, RetrievalResult)
    assert found.matches[0].case_uid == best.uid and len(found.matches) == 2
    assert found.matches[0].score == pytest.approx(1.0)
    assert found.matches[1].score == pytest.approx(0.6 * 0.5)
    assert found.matches[0].solution.actions == ["act"]
    top = call(ws, "cbr_retrieve", agent_id="a", beliefs=["price sensitive"], desires=["grow"], k=1, min_score=0.5)
    assert [m.case_uid for m in top.matches] == [best.uid]
    beliefs_only = call(ws, "cbr_retrieve", agent_id="a", beliefs=["price sensitive"], desires=["retain"],
                        weights={"beliefs": 1.0, "desires": 0.0})  # fmt: skip
    assert sorted(m.score for m in beliefs_only.matches) == pytest.approx([0.5, 1.0])


def test_reason_explicit_multi_and_auto(ws: Workspace) -> None:
    ws.facts.assert_fact("a", "acme", "hasRevenue", "$2,000,000")
    ws.facts.assert_fact("a", "acme", "locatedIn", "US")
    RuleService(ws.ports, ws.scopes, ws.clock).create("a", **TAXABLE)
    call(ws, "cbr_store", agent_id="a", **case(["price sensitive"], ["grow"]))

    explicit = call(
        ws, "reason", agent_id="a", method="deductive", inputs={"deductive": {"goal": "acme isTaxable true"}}
    )
    assert isinstance(explicit, RouterResult) and explicit.mode == "explicit"
    assert explicit.results[0].kind == "computed"
    assert explicit.results[0].conclusion == "acme isTaxable true: proved" and len(explicit.results[0].used) == 3

    inputs = {"deductive": {"goal": "acme isTaxable true"},
              "case_based": {"beliefs": ["price sensitive"], "desires": ["grow"]},
              "counterfactual": {"goal": "acme isTaxable true", "without": ["acme locatedIn US"]}}  # fmt: skip
    multi = call(ws, "reason", agent_id="a", multi_method=True, methods=["deductive", "cbr", "counterfactual"],
                 inputs=inputs)  # fmt: skip
    assert multi.mode == "multi" and multi.methods == ["deductive", "case-based", "counterfactual"]
    assert [r.kind for r in multi.results] == ["computed", "computed", "computed"]
    assert multi.results[2].value["lost"] == ["acme isTaxable true"]
    assert multi.fusion is not None and len(multi.fusion.positions) == 3

    auto = call(ws, "reason", agent_id="a", problem="Should we enter the German market?", top=2,
                problem_classification={"domain": "empirical", "data_availability": "rich"})  # fmt: skip
    assert auto.mode == "auto" and len(auto.results) == 2 and auto.classification.domain.value == "empirical"
    assert auto.methods == [s.method for s in auto.scores[:2]]
    prompt = call(ws, "reason", agent_id="a", problem="Why did sales drop?", method="counterfactual").results[0]
    assert prompt.kind == "llm_prompt" and "Why did sales drop?" in prompt.value["prompt"]


def test_reason_stores_a_result_on_request(ws: Workspace) -> None:
    options = [
        {"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]},
        {"name": "B", "outcomes": [{"probability": 0.5, "utility": 20}, {"probability": 0.5, "utility": 0}]},
    ]
    result = call(ws, "reason", agent_id="a", method="decision", inputs={"expected_utility": {"options": options}},
                  store="memory")  # fmt: skip
    assert result.methods == ["expected-utility"] and result.results[0].conclusion.startswith("choose B")
    [stored] = result.stored
    assert stored["kind"] == "memory" and stored["scope"] == "agent:a"
    item = ws.ports.memory.get_many([stored["uid"]])[stored["uid"]]
    assert item.content.startswith("Reasoning (expected-utility, computed): choose B")


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("cbr_store", {"situation": {"beliefs": ["x"]}, "solution": {"actions": ["a"]}}, "outcome"),
        ("cbr_store", {**case(["x"], ["y"]), "outcome": {"success": "maybe"}}, "outcome.success"),
        ("cbr_store", {**case(["x"], ["y"]), "created_at": "2024-01-01"}, "created_at"),
        ("cbr_store", {**case(["x"], ["y"]), "scope": "nonsense"}, "scope"),
        ("cbr_retrieve", {"k": 0}, "k"),
        ("cbr_retrieve", {"k": 101}, "k"),
        ("cbr_retrieve", {"beliefs": "not a list"}, "beliefs"),
        ("reason", {"method": "telepathy"}, "method"),
        ("reason", {"method": "deductive", "methods": ["abductive"]}, "method"),
        ("reason", {"methods": []}, "methods"),
        ("reason", {"top": 33}, "top"),
        ("reason", {"problem_classification": {"domain": "astrology"}}, "problem_classification.domain"),
        (
            "reason",
            {"method": "abductive", "inputs": {"abductive": {"observation": "a b"}}},
            "inputs.abductive.observation",
        ),
        (
            "reason",
            {"method": "bayesian", "inputs": {"query": "R", "network": {"nodes": {"R": {"cpt": {}}}}}},
            "inputs.bayesian.network.nodes.R.cpt",
        ),
        (
            "reason",
            {"method": "expected-utility", "inputs": {"options": []}, "store": "case"},
            "inputs.expected-utility.options",
        ),
    ],
)
def test_a_malformed_call_names_the_field_and_changes_nothing(
    ws: Workspace, name: str, arguments: dict[str, Any], field: str
) -> None:
    assert refused(ws, name, agent_id="a", **arguments).field == field
    assert ws.ports.cases.list(scopes=["agent:a", "global"]) == []


def test_a_bound_agent_cannot_act_as_another(ws: Workspace) -> None:
    for name, arguments in (("cbr_store", case(["x"], ["y"])), ("cbr_retrieve", {}), ("reason", {})):
        with pytest.raises(ScopeError, match="agent_id"):
            tools.call(name, workspace=ws.path, agent="a", agent_id="b", **arguments)
    stored = tools.call("cbr_store", workspace=ws.path, agent="a", **case(["x"], ["y"]))
    assert isinstance(stored, StoredCase) and stored.case.agent_id == "a"
    assert ws.ports.cases.list(scopes=["agent:b"]) == []
    with pytest.raises(NotFoundError, match="agent"):
        call(ws, "reason", agent_id="nobody")  # an unknown agent
