"""The router's store-backed engines (deductive, abductive, case-based) on a real workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

import kg
from reasoning.cases import CaseService, router_engines
from reasoning.router import ComputedResult, Problem, PromptResult, reason
from reasoning.service import Reasoner, RuleService


@pytest.fixture
def engines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "w") as ws:
        ws.agents.add("a", name="A")
        ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
        RuleService(ws.store, ws.scopes, ws.clock).create(
            "a", name="saas-target", conditions=[{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
            conclusion={"subject": "?x", "predicate": "isTarget", "object": "true"},
        )  # fmt: skip
        reasoner = Reasoner(ws.store, ws.scopes, ws.clock, ws.facts)
        yield router_engines(reasoner, CaseService(ws.store, ws.scopes, ws.clock, None), "a")


def test_abduction_without_an_observation_is_a_prompt_not_an_error(engines) -> None:  # type: ignore[no-untyped-def]
    # Regression: auto mode picked abductive and failed, because this engine required its input.
    result = engines["abductive"](Problem(text="why did sales drop?"))
    assert isinstance(result, PromptResult)
    assert result.notes == ["not computed: give inputs.abductive.observation to compute it; returned a prompt instead"]
    auto = reason(Problem(text="why did sales drop?"), ["abductive", "deductive"], engines=engines)
    assert [r.method for r in auto.results] == ["abductive", "deductive"]


def test_abduction_with_an_observation_computes(engines) -> None:  # type: ignore[no-untyped-def]
    result = engines["abductive"](Problem(text="x", inputs={"abductive": {"observation": "acme isTarget true"}}))
    assert isinstance(result, ComputedResult) and result.method == "abductive"
    assert result.answer.startswith("best explanation: rule R-")
