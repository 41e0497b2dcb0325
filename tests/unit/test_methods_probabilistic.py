"""Probabilistic methods against textbook answers: bayesian, decision-theory, expected-utility, info-theory,
monte-carlo. Each golden value cites where it is published (or how it was computed by hand)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.demo.reasoning import SPRINKLER
from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.router import MethodContext, reason, run
from reasoning.router.methods.montecarlo import wilson
from tests.budget import examples

CTX = MethodContext("a")

# Pearl's burglary alarm (Russell & Norvig, AIMA 3rd ed., fig. 14.2 and p. 524).
ALARM: dict[str, Any] = {"nodes": {
    "Burglary": {"parents": [], "cpt": {"": 0.001}},
    "Earthquake": {"parents": [], "cpt": {"": 0.002}},
    "Alarm": {"parents": ["Burglary", "Earthquake"], "cpt": {"T,T": 0.95, "T,F": 0.94, "F,T": 0.29, "F,F": 0.001}},
    "JohnCalls": {"parents": ["Alarm"], "cpt": {"T": 0.90, "F": 0.05}},
    "MaryCalls": {"parents": ["Alarm"], "cpt": {"T": 0.70, "F": 0.01}},
}}  # fmt: skip


def one(method: str, inputs: dict[str, Any], ctx: MethodContext = CTX) -> Any:
    return reason(ctx, method=method, inputs={method: inputs}).results[0]


def test_sprinkler_posteriors_match_bnt() -> None:
    # BNT: P(S=1 | W=1) = 0.4298, P(R=1 | W=1) = 0.7079.
    rain = one("bayesian", {"network": SPRINKLER, "evidence": {"WetGrass": True}, "query": "Rain"})
    sprinkler = one("bayesian", {"network": SPRINKLER, "evidence": {"WetGrass": True}, "query": "Sprinkler"})
    assert rain.kind == "computed" and rain.method == "bayesian"
    assert rain.value["probability"] == pytest.approx(0.7079, abs=5e-5)
    assert sprinkler.value["probability"] == pytest.approx(0.4298, abs=5e-5)
    # explaining away (BNT): P(S=1 | W=1, R=1) = 0.1945
    away = one("bayesian", {"network": SPRINKLER, "evidence": {"WetGrass": True, "Rain": True}, "query": "Sprinkler"})
    assert away.value["probability"] == pytest.approx(0.1945, abs=5e-5)


def test_burglary_given_both_calls_matches_aima() -> None:
    # AIMA p. 524: P(Burglary | JohnCalls, MaryCalls) = <0.284, 0.716>.
    result = one(
        "bayesian", {"network": ALARM, "evidence": {"JohnCalls": True, "MaryCalls": True}, "query": "Burglary"}
    )
    assert result.value["probability"] == pytest.approx(0.284, abs=5e-4)
    assert result.confidence == pytest.approx(1 - result.value["probability"])
    assert result.conclusion.startswith("Burglary is likely false")


def test_bad_network_names_the_field() -> None:
    broken = {"nodes": {"Rain": {"parents": [], "cpt": {"": 0.2}},
                        "Wet": {"parents": ["Rain"], "cpt": {"T": 0.9}}}}  # fmt: skip
    with pytest.raises(InputError) as err:
        one("bayesian", {"network": broken, "query": "Wet"})
    assert err.value.field == "inputs.bayesian.network.nodes.Wet.cpt" and "missing 'F'" in err.value.rule
    cyclic = {"nodes": {"A": {"parents": ["B"], "cpt": {"T": 0.5, "F": 0.5}},
                        "B": {"parents": ["A"], "cpt": {"T": 0.5, "F": 0.5}}}}  # fmt: skip
    with pytest.raises(InputError, match="cycle"):
        one("bayesian", {"network": cyclic, "query": "A"})
    with pytest.raises(InputError) as err:
        one("bayesian", {"network": SPRINKLER, "query": "Rain", "evidence": {"Rain": "maybe"}})
    assert err.value.field.startswith("inputs.bayesian.evidence.Rain")
    with pytest.raises(InputError) as err:
        one("bayesian", {"network": {"nodes": {"A": {"parents": [], "cpt": {"": 1.5}}}}, "query": "A"})
    assert err.value.field == "inputs.bayesian.network.nodes.A.cpt.''"  # the root row's key is ''


def test_sequential_update_is_the_textbook_screening_example() -> None:
    # 1% prevalence, 90% sensitivity, 8% false positives: 0.009 / (0.009 + 0.0792) = 0.10204 (by hand).
    hyp = {"label": "disease", "prior": 0.01, "evidence": [{"p_given_h": 0.9, "p_given_not_h": 0.08}]}
    result = one("bayesian", {"hypotheses": [hyp]})
    assert result.value["posteriors"][0]["posterior"] == pytest.approx(0.009 / 0.0882)


@pytest.fixture
def ws(tool_ws: Workspace) -> Workspace:
    """Agents ``a`` and ``b``, no embedder (the shared ``tool_ws``)."""
    return tool_ws


def test_a_fact_is_updated_from_its_confidence_and_named_in_used(ws: Workspace) -> None:
    fact, _ = ws.facts.assert_fact("a", "acme", "willChurn", "true", confidence=0.3)
    evidence = [{"description": "support tickets doubled", "p_given_h": 0.8, "p_given_not_h": 0.2}]
    result = one("bayesian", {"fact": "acme willChurn true", "evidence": evidence}, MethodContext("a", ws))
    assert result.used == [fact.uid]
    assert result.confidence == pytest.approx(0.24 / (0.24 + 0.14))  # by hand: 0.8*0.3 / (0.8*0.3 + 0.2*0.7)
    # b cannot read a's fact: the same request fails with a field error and reads nothing of a's
    with pytest.raises(InputError, match="no fact"):
        one("bayesian", {"fact": fact.uid, "evidence": evidence}, MethodContext("b", ws))


THOMPSON = {"acts": ["large plant", "small plant", "do nothing"], "states": ["favorable", "unfavorable"],
            "payoffs": [[200000, -180000], [100000, -20000], [0, 0]], "probabilities": [0.5, 0.5],
            "hurwicz_alpha": 0.8}  # fmt: skip


def test_decision_table_matches_render_and_stair() -> None:
    # Thompson Lumber (Render & Stair, Quantitative Analysis for Management, ch. 3): EMV 10,000 / 40,000 / 0;
    # maximax large, maximin do nothing, minimax regret small (180,000 / 100,000 / 200,000),
    # Hurwicz (alpha 0.8) large (124,000 / 76,000 / 0), EVPI 60,000.
    result = one("decision-theory", THOMPSON)
    crit = result.value["criteria"]
    assert crit["expected_value"]["values"] == {"large plant": 10000, "small plant": 40000, "do nothing": 0}
    assert crit["maximax"]["choice"] == "large plant" and crit["maximin"]["choice"] == "do nothing"
    assert crit["minimax_regret"]["values"] == {"large plant": 180000, "small plant": 100000, "do nothing": 200000}
    assert crit["hurwicz"]["values"]["large plant"] == pytest.approx(124000)
    assert crit["hurwicz"]["choice"] == "large plant"
    assert crit["evpi"]["value"] == pytest.approx(60000)
    assert result.conclusion == "choose small plant (by expected utility)"


def test_risk_attitude_changes_the_choice() -> None:
    # A sure 40 against a 50/50 gamble of 100 or 0: neutral takes the gamble (EV 50 > 40); a risk-averse
    # exponential utility with r = 2 gives the gamble a certainty equivalent of 100·ln(2/(1+e^-2))/2 = 28.3 < 40.
    bet = {"acts": ["sure", "gamble"], "states": ["heads", "tails"], "payoffs": [[40, 40], [100, 0]],
           "probabilities": [0.5, 0.5]}  # fmt: skip
    assert one("decision-theory", bet).value["choice"] == "gamble"
    averse = one("decision-theory", {**bet, "risk_attitude": "averse", "risk_coefficient": 2})
    assert averse.value["choice"] == "sure"
    ce = averse.value["criteria"]["expected_utility"]["certainty_equivalents"]["gamble"]
    assert ce == pytest.approx(100 * math.log(2 / (1 + math.exp(-2))) / 2)


def test_decision_tree_rolls_back() -> None:
    # By hand: test (cost 10) -> 0.6 good (then launch 100) / 0.4 bad (then drop 0): 0.6*90 + 0.4*(-10) = 50;
    # launch without testing: 0.6*100 + 0.4*(-60) = 36. Best: test first, EV 50.
    tree = {"decision": "first", "options": {
        "test": {"chance": "result", "branches": [
            {"p": 0.6, "node": {"decision": "after good test", "options": {"launch": {"payoff": 90},
                                                                          "drop": {"payoff": -10}}}},
            {"p": 0.4, "node": {"decision": "after bad test", "options": {"launch": {"payoff": -70},
                                                                         "drop": {"payoff": -10}}}}]},
        "launch": {"chance": "market", "branches": [{"p": 0.6, "node": {"payoff": 100}},
                                                    {"p": 0.4, "node": {"payoff": -60}}]}}}  # fmt: skip
    result = one("decision-theory", {"tree": tree})
    assert result.value["expected_value"] == pytest.approx(50)
    assert result.value["policy"] == ["first: test", "after good test: launch", "after bad test: drop"]
    tree["options"]["launch"]["branches"][0]["p"] = 0.5
    with pytest.raises(InputError) as err:
        one("decision-theory", {"tree": tree})
    assert err.value.field == "inputs.decision-theory.tree.options.launch.branches"


def test_expected_utility_and_its_alias() -> None:
    options = [{"name": "A", "outcomes": [{"probability": 0.5, "utility": 10}, {"probability": 0.5, "utility": 0}]},
               {"name": "B", "outcomes": [{"probability": 1.0, "utility": 4}]}]  # fmt: skip
    result = reason(CTX, method="expected_utility", inputs={"eu": {"options": options}}).results[0]
    assert result.method == "expected-utility" and result.conclusion == "choose A (expected utility 5)"
    # issue 31: confidence is the margin over the runner-up relative to the stake: 0.5 + 0.5 * (5 - 4) / 10
    assert result.confidence == pytest.approx(0.55)
    noise = [{"name": "A", "outcomes": [{"probability": 1.0, "utility": 100}]},
             {"name": "B", "outcomes": [{"probability": 1.0, "utility": 99.99}]}]  # fmt: skip
    close = one("expected-utility", {"options": noise})
    assert close.conclusion.startswith("choose A") and close.confidence < 0.51


def test_entropy_and_mutual_information_match_cover_and_thomas() -> None:
    # Cover & Thomas, Elements of Information Theory, example 2.2.1: H(X) = 7/4, H(Y) = 2, H(X|Y) = 11/8,
    # I(X;Y) = 3/8 bits (rows are y, columns x).
    table = [[1 / 8, 1 / 16, 1 / 32, 1 / 32], [1 / 16, 1 / 8, 1 / 32, 1 / 32], [1 / 16] * 4, [1 / 4, 0, 0, 0]]
    joint = {f"x{x},y{y}": table[y][x] for y in range(4) for x in range(4)}
    result = one("info-theory", {"joint": joint, "distribution": {"heads": 0.5, "tails": 0.5}})
    assert result.value["entropy_x_bits"] == pytest.approx(7 / 4)
    assert result.value["entropy_y_bits"] == pytest.approx(2)
    assert result.value["conditional_x_given_y_bits"] == pytest.approx(11 / 8)
    assert result.value["mutual_information_bits"] == pytest.approx(3 / 8)
    assert result.value["entropy_bits"] == pytest.approx(1.0)


PLAY_TENNIS = [
    row.split()
    for row in (
        "Sunny Hot High Weak No", "Sunny Hot High Strong No", "Overcast Hot High Weak Yes", "Rain Mild High Weak Yes",
        "Rain Cool Normal Weak Yes", "Rain Cool Normal Strong No", "Overcast Cool Normal Strong Yes",
        "Sunny Mild High Weak No", "Sunny Cool Normal Weak Yes", "Rain Mild Normal Weak Yes",
        "Sunny Mild Normal Strong Yes", "Overcast Mild High Strong Yes", "Overcast Hot Normal Weak Yes",
        "Rain Mild High Strong No",
    )
]  # fmt: skip


def test_information_gain_matches_mitchell() -> None:
    # Mitchell, Machine Learning (1997), section 3.4.2: Gain(Outlook) = 0.246, Humidity 0.151, Wind 0.048,
    # Temperature 0.029.
    keys = ["Outlook", "Temperature", "Humidity", "Wind", "PlayTennis"]
    examples = [dict(zip(keys, row, strict=True)) for row in PLAY_TENNIS]
    result = one("info-theory", {"examples": examples, "target": "PlayTennis"})
    gains = result.value["information_gain_bits"]
    assert {k: round(v, 3) for k, v in gains.items()} == {"Outlook": 0.247, "Temperature": 0.029,
                                                          "Humidity": 0.152, "Wind": 0.048}  # fmt: skip
    # (Mitchell truncates: 0.2467 -> 0.246, 0.1518 -> 0.151)
    assert result.value["best_question"] == "Outlook"


def test_the_best_question_halves_a_uniform_distribution() -> None:
    dist = {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25}
    questions = {"half": {"yes": ["a", "b"], "no": ["c", "d"]}, "one": {"yes": ["a"], "no": ["b", "c", "d"]}}
    result = one("info-theory", {"distribution": dist, "questions": questions})
    assert result.value["information_gain_bits"]["half"] == pytest.approx(1.0)
    assert result.value["information_gain_bits"]["one"] == pytest.approx(0.8112781, abs=1e-6)  # H(1/4, 3/4)
    assert result.value["best_question"] == "half"
    with pytest.raises(InputError, match="sum to 1"):
        one("info-theory", {"distribution": {"a": 0.5, "b": 0.4}})


PI = {"variables": {"x": {"dist": "uniform"}, "y": {"dist": "uniform"}}, "formula": "(x**2 + y**2 <= 1) * 4",
      "samples": 200000}  # fmt: skip


def test_monte_carlo_estimates_pi_within_its_interval_and_is_seeded() -> None:
    result = one("monte-carlo", PI)
    low, high = result.value["ci95"]
    assert low < math.pi < high  # the seeded run's 95% interval covers pi
    assert one("monte-carlo", PI).value == result.value  # same seed, same draws
    other = reason(MethodContext("a", seed=7), method="monte-carlo", inputs=PI).results[0]
    assert other.value["mean"] != result.value["mean"]


def test_monte_carlo_threshold_and_formula_safety() -> None:
    # Sum of two independent N(0,1): P(X + Y > 0) = 0.5 exactly.
    normal = {"variables": {"x": {"dist": "normal"}, "y": {"dist": "normal"}}, "formula": "x + y", "threshold": 0,
              "samples": 50000}  # fmt: skip
    result = one("monte-carlo", normal)
    low, high = result.value["p_above_threshold_ci95"]
    assert low < 0.5 < high
    with pytest.raises(InputError, match="not allowed"):
        one("monte-carlo", {**normal, "formula": "__import__('os').system('true')"})
    with pytest.raises(InputError, match="unknown name"):
        one("monte-carlo", {**normal, "formula": "x + z"})


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_interval_contains_the_sample_proportion(hits: int, n: int) -> None:
    hits = min(hits, n)
    low, high = wilson(hits, n)
    assert 0 <= low <= hits / n <= high <= 1


@settings(max_examples=examples(60), deadline=None)
@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(0.01, 0.99))
def test_two_node_network_is_bayes_rule(prior: float, p_true: float, p_false: float) -> None:
    network = {"nodes": {"H": {"parents": [], "cpt": {"": prior}},
                         "E": {"parents": ["H"], "cpt": {"T": p_true, "F": p_false}}}}  # fmt: skip
    result = run(CTX, "bayesian", {"network": network, "evidence": {"E": True}, "query": "H"})
    expected = p_true * prior / (p_true * prior + p_false * (1 - prior))
    assert result.value["probability"] == pytest.approx(expected)


def test_without_inputs_a_method_returns_its_prompt() -> None:
    result = one("bayesian", {})
    assert result.kind == "llm_prompt" and "mabos did not compute" in result.value["prompt"]
    assert result.notes[0].startswith("not computed: give inputs.bayesian.network")


def test_info_theory_reads_the_agents_facts(ws: Workspace) -> None:
    # By hand: segment smb 0.6, enterprise 0.2 (normalised 0.75 / 0.25): H = 0.8113 bits.
    ws.facts.assert_fact("a", "acme", "segment", "smb", confidence=0.6)
    ws.facts.assert_fact("a", "acme", "segment", "enterprise", confidence=0.2)
    result = one("info-theory", {"subject": "acme", "predicate": "segment"}, MethodContext("a", ws))
    assert result.value["entropy_bits"] == pytest.approx(0.8112781, abs=1e-6) and len(result.used) == 2
    for company, plan, churned in [("c1", "monthly", "yes"), ("c2", "monthly", "yes"), ("c3", "annual", "no"),
                                   ("c4", "annual", "no")]:  # fmt: skip
        ws.facts.assert_fact("a", company, "plan", plan)
        ws.facts.assert_fact("a", company, "churned", churned)
        ws.facts.assert_fact("a", company, "region", "eu")
    asked = one("info-theory", {"target": "churned"}, MethodContext("a", ws))
    assert asked.value["best_question"] == "plan" and asked.value["information_gain_bits"]["plan"] == 1.0
    assert asked.value["information_gain_bits"]["region"] == 0.0
    assert one("info-theory", {"target": "churned"}, MethodContext("b", ws)).kind == "llm_prompt"


def test_monte_carlo_refuses_more_draws_than_memory_allows() -> None:
    variables = {f"v{i}": {"dist": "uniform"} for i in range(10)}
    with pytest.raises(InputError) as err:
        one("monte-carlo", {"variables": variables, "formula": "v0", "samples": 1_000_000})
    assert err.value.field == "inputs.monte-carlo.samples"
