"""The meta reasoning engines: calibration, learning-to-reason and reflection on hand-computed inputs,
strategy-selection against the seed's scoring formula, and every graph-reading path on a real SQLite
workspace (beliefs with resolved outcomes, stored reasoning runs, cases, intentions, facts and rules)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kg
from kg.errors import InputError
from reasoning.cases import CaseService
from reasoning.router.catalogue import SEED
from reasoning.router.methods import engines
from reasoning.router.methods.base import MethodContext, MethodOutcome, MissingInputs, computed
from reasoning.router.methods.calibration import Prediction, score
from reasoning.router.methods.meta import ENGINES
from reasoning.router.store import store_result
from reasoning.service import RuleService
from tests.budget import examples

CTX = MethodContext(agent_id="a")


def run(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> MethodOutcome:
    return ENGINES[method](ctx, inputs)


@pytest.fixture
def ws(tool_ws: kg.Workspace) -> kg.Workspace:
    """Agents ``a`` and ``b``, no embedder (the shared ``tool_ws``)."""
    return tool_ws


# ---------------------------------------------------------------------------------------------- calibration


def test_brier_score_and_bins_by_hand() -> None:
    # Brier (1950): ((0.9-1)^2 + (0.8-0)^2 + (0.3-0)^2 + (0.6-1)^2) / 4 = (0.01 + 0.64 + 0.09 + 0.16) / 4 = 0.225.
    predictions = [{"p": 0.9, "outcome": True}, {"p": 0.8, "outcome": False}, {"p": 0.3, "outcome": False},
                   {"p": 0.6, "outcome": True}]  # fmt: skip
    result = run("calibration", {"predictions": predictions})
    value = result.value
    assert value["brier"] == pytest.approx(0.225)
    assert value["ece"] == pytest.approx((0.1 + 0.8 + 0.3 + 0.4) / 4)
    assert [b["count"] for b in value["bins"]] == [0, 0, 0, 1, 0, 0, 1, 0, 1, 1]
    assert value["bins"][8] == {"low": 0.8, "high": 0.9, "count": 1, "mean_p": 0.8, "observed": 0.0}
    assert value["bins"][0]["mean_p"] is None
    # Murphy (1973): one forecast per bin, so reliability - resolution + uncertainty is the Brier score exactly.
    assert value["reliability"] - value["resolution"] + value["uncertainty"] == pytest.approx(0.225)
    assert value["bias"] == pytest.approx(0.65 - 0.5)
    assert "miscalibrated: too high on average, overconfident" in result.conclusion
    assert result.confidence == pytest.approx(1 - 1 / 2)  # 1 - 1/sqrt(4)


def test_calibration_verdict_reads_reliability_and_resolution_not_only_bias() -> None:
    # issue 31: saying .9 and .1, right 60% of the time. Mean bias 0 (mean p .5 = base rate .5), but Murphy's
    # reliability = (.9 - .6)^2 = .09 and resolution = (.6 - .5)^2 = .01 of uncertainty .25 (by hand).
    predictions = ([{"p": 0.9, "outcome": True}] * 30 + [{"p": 0.9, "outcome": False}] * 20
                   + [{"p": 0.1, "outcome": False}] * 30 + [{"p": 0.1, "outcome": True}] * 20)  # fmt: skip
    result = run("calibration", {"predictions": predictions})
    assert result.value["bias"] == pytest.approx(0.0, abs=1e-12)
    assert result.value["reliability"] == pytest.approx(0.09) and result.value["resolution"] == pytest.approx(0.01)
    assert "about right" not in result.conclusion
    assert "miscalibrated: overconfident" in result.conclusion and "little resolution" in result.conclusion
    assert result.confidence == pytest.approx(0.9) and result.confidence < 1.0
    good = ([{"p": 0.8, "outcome": True}] * 8 + [{"p": 0.8, "outcome": False}] * 2
            + [{"p": 0.2, "outcome": False}] * 8 + [{"p": 0.2, "outcome": True}] * 2)  # fmt: skip
    sharp = run("calibration", {"predictions": good})
    assert "well calibrated; good resolution" in sharp.conclusion


def test_calibration_inputs_are_checked() -> None:
    with pytest.raises(InputError, match=r"^inputs\.calibration\.predictions\[1\]\.p"):
        run("calibration", {"predictions": [{"p": 0.5, "outcome": True}, {"p": 1.5, "outcome": True}]})
    with pytest.raises(MissingInputs):
        run("calibration", {})


_bin_centres = st.sampled_from([0.0, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 1.0])


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(_bin_centres, st.booleans()), min_size=1, max_size=40))
def test_murphy_decomposition_equals_brier_when_forecasts_are_constant_per_bin(rows: list[tuple[float, bool]]) -> None:
    value = score([Prediction(p=p, outcome=o) for p, o in rows], 10)
    assert 0.0 <= value["brier"] <= 1.0
    assert value["reliability"] - value["resolution"] + value["uncertainty"] == pytest.approx(value["brier"], abs=1e-9)
    assert sum(b["count"] for b in value["bins"]) == len(rows)


def test_calibration_from_resolved_beliefs_and_stored_runs(ws: kg.Workspace) -> None:
    rain = ws.bdi.add("belief", "a", "it will rain tomorrow", certainty=0.8)
    sale = ws.bdi.add("belief", "a", "the deal closes this week", certainty=0.3)
    open_ = ws.bdi.add("belief", "a", "prices will rise", certainty=0.6)  # no outcome yet: left out
    f1 = ws.facts.assert_fact("a", rain.uid, "outcome", "true")[0]
    f2 = ws.facts.assert_fact("a", sale.uid, "outcome", "true")[0]
    other = ws.bdi.add("belief", "b", "b's private belief", certainty=0.9)
    f3 = ws.facts.assert_fact("b", other.uid, "outcome", "false")[0]
    ctx = MethodContext(agent_id="a", workspace=ws)
    run_outcome = computed("bayesian", "rain likely", 0.7, {"probability": 0.7})
    stored = store_result(ws, "a", "will it rain?", run_outcome, store_as="case", success=False)
    result = run("calibration", {}, ctx)
    # (0.8 - 1)^2 + (0.3 - 1)^2 + (0.7 - 0)^2 = 0.04 + 0.49 + 0.49 = 1.02, over 3 predictions
    assert result.value["n"] == 3 and result.value["brier"] == pytest.approx(1.02 / 3)
    assert set(result.used) == {rain.uid, f1.uid, sale.uid, f2.uid, stored["uid"]}
    assert open_.uid not in result.used
    theirs = run("calibration", {}, MethodContext(agent_id="b", workspace=ws))  # b sees only its own belief
    assert theirs.value["n"] == 1 and set(theirs.used) == {other.uid, f3.uid}
    ws.facts.retract("b", uids=[f3.uid])
    with pytest.raises(MissingInputs):
        run("calibration", {}, MethodContext(agent_id="b", workspace=ws))


# ---------------------------------------------------------------------------------------------- learning


def test_beta_posteriors_by_hand() -> None:
    # Beta(1,1) + 2 successes -> Beta(3,1): mean 3/4, CDF x^3, so the 95% interval is [0.025^(1/3), 0.975^(1/3)].
    # Beta(1,1) + 1 failure -> Beta(1,2): CDF 1-(1-x)^2, interval [1 - sqrt(0.975), 1 - sqrt(0.025)].
    outcomes = [{"method": "bayesian", "success": True}, {"method": "bayesian", "success": True},
                {"method": "causal", "success": False}]  # fmt: skip
    result = run("learning-to-reason", {"outcomes": outcomes, "methods": ["game_theory"]})
    rows = {r["method"]: r for r in result.value["methods"]}
    assert rows["bayesian"]["mean"] == 0.75
    assert rows["bayesian"]["interval"] == pytest.approx([0.025 ** (1 / 3), 0.975 ** (1 / 3)], abs=1e-6)
    assert rows["causal"]["interval"] == pytest.approx([1 - math.sqrt(0.975), 1 - math.sqrt(0.025)], abs=1e-6)
    assert rows["game-theory"]["mean"] == 0.5 and rows["game-theory"]["successes"] == 0  # prior only, id normalised
    assert [r["method"] for r in result.value["methods"]] == ["bayesian", "game-theory", "causal"]
    assert sum(r["p_best"] for r in rows.values()) == pytest.approx(1.0, abs=1e-3)
    assert result.value["best"] == "bayesian" and result.confidence == rows["bayesian"]["p_best"]
    again = run("learning-to-reason", {"outcomes": outcomes, "methods": ["game_theory"]})
    assert again.value == result.value  # seeded draws: the same every run


def test_learning_from_stored_runs(ws: kg.Workspace) -> None:
    for n, success in enumerate((True, True, False)):
        store_result(ws, "a", f"problem {n}", computed("causal", f"x {n}", 0.6), store_as="case", success=success)
    store_result(ws, "a", "p", computed("bayesian", "y", 0.9), store_as="case", success=True)
    item = ws.memory.store_item("a", "ran game-theory", type="decision",
                                tags=["reasoning", "game-theory", "outcome:failure"])  # fmt: skip
    ws.memory.store_item("a", "no outcome yet", type="decision", tags=["reasoning", "bayesian"])  # ignored
    ctx = MethodContext(agent_id="a", workspace=ws)
    result = run("learning-to-reason", {}, ctx)
    rows = {r["method"]: (r["successes"], r["failures"]) for r in result.value["methods"]}
    assert rows == {"causal": (2, 1), "bayesian": (1, 0), "game-theory": (0, 1)}
    assert item.item.uid in result.used and len(result.used) == 5
    with pytest.raises(MissingInputs):
        run("learning-to-reason", {}, MethodContext(agent_id="b", workspace=ws))


# ---------------------------------------------------------------------------------------------- reflection


def test_reflection_compares_expected_and_actual() -> None:
    items = [{"name": "revenue", "expected": 100, "actual": 80}, {"name": "cost", "expected": 50, "actual": 45,
             "better": "lower"}, {"name": "on time", "expected": True, "actual": False}]  # fmt: skip
    result = run("reflection", {"items": items})
    rows = {r["name"]: r for r in result.value["items"]}
    assert rows["revenue"]["met"] is False and rows["revenue"]["gap"] == -20 and rows["revenue"]["relative_gap"] == -0.2
    assert rows["cost"]["met"] is True  # lower is better: 45 <= 50
    assert rows["on time"]["met"] is False and rows["on time"]["gap"] is None
    assert result.value["met"] == 1
    assert result.conclusion == "1 of 3 expectation(s) met (33%); largest shortfall: revenue"


def test_reflection_over_cases_and_intentions(ws: kg.Workspace) -> None:
    cases = CaseService(ws.ports, ws.scopes, ws.clock, None)
    case = cases.store_case("a", situation={"beliefs": ["launch"]}, solution={"actions": ["launch in spain"]},
                            outcome={"success": False, "metrics": {"expected_revenue": 100, "revenue": 70},
                                     "lessons": ["test the price first"]}).case  # fmt: skip
    now = ws.clock.now()
    done = ws.bdi.add("intention", "a", "hire a designer", status="completed")
    dropped = ws.bdi.add("intention", "a", "open a shop", status="dropped")
    late = ws.bdi.add("intention", "a", "ship v2", deadline=now - timedelta(days=2))
    ws.bdi.add("intention", "a", "ship v3", deadline=now + timedelta(days=30))  # still open: left out
    result = run("reflection", {}, MethodContext(agent_id="a", workspace=ws))
    rows = {r["name"]: r for r in result.value["items"]}
    assert rows["launch in spain: revenue"]["gap"] == -30 and rows["launch in spain: success"]["met"] is False
    assert rows["hire a designer: done"]["met"] is True and rows["open a shop: done"]["met"] is False
    assert rows["ship v2: overdue"]["met"] is False
    assert len(rows) == 5 and result.value["met"] == 1
    assert result.value["lessons"] == ["test the price first"]
    assert set(result.used) == {case.uid, done.uid, dropped.uid, late.uid}
    assert result.value["largest_shortfall"]["name"] == "launch in spain: revenue"


# ---------------------------------------------------------------------------------------------- meta-cognitive


@pytest.fixture
def targets(ws: kg.Workspace) -> MethodContext:
    ws.facts.assert_fact("a", "acme", "hasIndustry", "saas")
    ws.facts.assert_fact("a", "globex", "hasIndustry", "saas", confidence=0.5)
    RuleService(ws.ports, ws.scopes, ws.clock).create(
        "a", name="saas-target", conditions=[{"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "true"}, confidence_factor=0.9)  # fmt: skip
    return MethodContext(agent_id="a", workspace=ws)


def test_meta_cognitive_sorts_goals_into_known_uncertain_and_unknown(targets: MethodContext) -> None:
    ws = targets.workspace
    assert ws is not None
    goals = ["acme isTarget true", "globex isTarget true", "initech isTarget true"]
    result = run("meta-cognitive", {"goals": goals}, targets)
    assert result.value["known"] == ["acme isTarget true"]  # proof confidence 1.0 x 0.9
    assert result.value["uncertain"] == ["globex isTarget true"]  # 0.5 x 0.9 = 0.45, on a fact of confidence 0.5
    assert result.value["unknown"] == ["initech isTarget true"]
    assert result.value["gaps"] == ["(initech, hasIndustry, saas)"]
    rows = {r["goal"]: r for r in result.value["items"]}
    assert rows["globex isTarget true"]["confidence"] == pytest.approx(0.45)
    assert rows["globex isTarget true"]["weak_support"] == ["(globex, hasIndustry, saas) confidence 0.5"]
    rule_uids = {r.uid for r in RuleService(ws.ports, ws.scopes, ws.clock).list("a")}
    # the facts and the rule the proofs rest on
    assert set(result.used) == {f.uid for f in ws.facts.query("a", predicate="hasIndustry")} | rule_uids
    assert result.confidence == pytest.approx(1 / 3)
    with pytest.raises(InputError, match=r"^inputs\.meta-cognitive\.goals\[1\]: must be 'SUBJECT PREDICATE OBJECT'"):
        run("meta-cognitive", {"goals": ["acme isTarget true", "acme isTarget"]}, targets)


def test_meta_cognitive_from_the_problem_text(targets: MethodContext) -> None:
    ctx = MethodContext(agent_id="a", workspace=targets.workspace, problem="Is globex a target?")
    result = run("meta-cognitive", {}, ctx)
    assert "globex isTarget true" in result.value["uncertain"]
    with pytest.raises(MissingInputs):
        run("meta-cognitive", {}, MethodContext(agent_id="a"))


# ---------------------------------------------------------------------------------------------- strategy


def test_strategy_selection_ranks_by_the_seeds_formula() -> None:
    asked = {"uncertainty": "high", "complexity": "complex", "domain": "social", "data_availability": "sparse",
             "stakes": "high", "time_pressure": "urgent"}  # fmt: skip
    weights = {"uncertainty": 0.2, "complexity": 0.2, "domain": 0.3, "data_availability": 0.15, "stakes": 0.15}
    by_hand = [(m.id, round(sum(w for d, w in weights.items() if getattr(m.profile, d).value == asked[d]), 4))
               for m in SEED]  # fmt: skip
    by_hand.sort(key=lambda pair: -pair[1])  # stable: ties keep the seed's catalogue order
    result = run("strategy-selection", {"problem_classification": asked, "top": 32})
    assert [(r["method"], r["score"]) for r in result.value["ranking"]] == by_hand
    best = result.value["ranking"][0]
    assert result.value["best"] == by_hand[0][0] and result.confidence == by_hand[0][1]
    assert any("(+0.3)" in reason for reason in best["reasons"]) == ("domain" in best["matched"])
    assert best["computes"] is (best["method"] in engines())


def test_strategy_selection_errors_and_the_text_fallback() -> None:
    with pytest.raises(InputError, match=r"^inputs\.strategy-selection\.problem_classification\.domain"):
        run("strategy-selection", {"problem_classification": {"domain": "astrology"}})
    with pytest.raises(MissingInputs):
        run("strategy-selection", {})
    with pytest.raises(InputError, match=r"^inputs\.strategy-selection\.methods\[1\]: unknown reasoning method"):
        run("strategy-selection", {"problem_classification": {"domain": "social"}, "methods": ["bayesian", "astro"]})
    picked = run("strategy-selection", {"problem_classification": {"domain": "social"}, "top": 1,
                                        "methods": ["bayesian_update"]})  # fmt: skip
    assert [r["method"] for r in picked.value["ranking"]] == ["game-theory", "bayesian"]
    result = run("strategy-selection", {}, MethodContext(agent_id="a", problem="how do we negotiate with the union?"))
    assert result.value["classification"]["domain"] == "social"
    assert result.notes[0].startswith("classification read from the problem text")


def test_meta_engines_are_registered() -> None:
    assert {"meta-cognitive", "strategy-selection", "learning-to-reason", "reflection", "calibration"} <= set(engines())
