"""The reasoning-method router: catalogue, scoring, classifier, Bayes, expected utility, modes, fusion."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from kg.errors import InputError
from kg.ids import new_id
from kg.models import Fact, ObjectKind
from reasoning.router import (
    METHODS,
    BayesInput,
    Category,
    ComputedResult,
    Domain,
    Evidence,
    Level,
    Problem,
    ProblemProfile,
    PromptResult,
    bayesian_update,
    classification_signals,
    classify_problem,
    decide,
    fuse,
    get_method,
    hypothesis_from_fact,
    list_methods,
    method_ids,
    posterior,
    reason,
    run,
    score_methods_for_problem,
)
from reasoning.router.scoring import domain_match, level_match

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

# ------------------------------------------------------------------------------------------
# Catalogue
# ------------------------------------------------------------------------------------------


def test_catalogue_has_35_methods_in_6_categories() -> None:
    assert len(METHODS) == 35
    counts = Counter(m.category for m in METHODS)
    assert set(counts) == set(Category) and len(counts) == 6
    assert all(n >= 5 for n in counts.values())
    assert sum(len(list_methods(c)) for c in Category) == 35


def test_method_ids_are_unique_snake_case() -> None:
    ids = method_ids()
    assert len(set(ids)) == 35
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", i) for i in ids)
    assert len({m.name for m in METHODS}) == 35


def test_every_method_has_a_full_profile_and_instructions() -> None:
    for method in METHODS:
        profile = method.profile
        for level in (profile.uncertainty, profile.complexity, profile.data_availability, profile.stakes):
            assert isinstance(level, Level)
        assert profile.domains and all(isinstance(d, Domain) for d in profile.domains)
        assert method.name and method.description.endswith(".") and "\n" not in method.description
        assert len(method.steps) >= 2


def test_engines_in_the_catalogue() -> None:
    engines = {m.id: m.engine for m in METHODS if m.engine}
    assert engines == {
        "deductive": "injected",
        "abductive": "injected",
        "case_based": "injected",
        "bayesian_update": "builtin",
        "expected_utility": "builtin",
    }
    assert {"multi_criteria", "game_theoretic", "inductive", "analogical"} <= set(method_ids())


def test_unknown_method_id_suggests_and_says_where_to_look() -> None:
    with pytest.raises(InputError) as info:
        get_method("bayesian_updates")
    assert info.value.field == "method"
    assert "'bayesian_update'" in info.value.rule and "method_ids()" in info.value.rule
    with pytest.raises(InputError) as bad_category:
        list_methods("cosmic")
    assert bad_category.value.field == "category"


# ------------------------------------------------------------------------------------------
# Scoring
# ------------------------------------------------------------------------------------------


def test_level_and_domain_match() -> None:
    assert level_match(Level.HIGH, Level.HIGH) == 1.0
    assert level_match(Level.MEDIUM, Level.LOW) == 0.5
    assert level_match(Level.LOW, Level.HIGH) == 0.0
    finance_general = frozenset({Domain.FINANCE, Domain.GENERAL})
    assert domain_match(Domain.FINANCE, finance_general) == 1.0
    assert domain_match(Domain.LEGAL, finance_general) == 0.5  # the method is general
    assert domain_match(Domain.LEGAL, frozenset({Domain.FINANCE})) == 0.0
    assert domain_match(Domain.GENERAL, frozenset({Domain.FINANCE})) == 0.5  # the problem names no domain


def test_scores_are_hand_checked() -> None:
    profile = ProblemProfile(uncertainty="high", complexity="medium", domain="finance", data_availability="medium",
                             stakes="high")  # fmt: skip
    scores = {s.method_id: s for s in score_methods_for_problem(profile)}
    assert scores["expected_utility"].score == 1.0  # (H, M, finance, M, H): a perfect fit
    # monte_carlo (H, H, finance, M, H): .2·1 + .2·.5 + .3·1 + .15·1 + .15·1
    assert scores["monte_carlo"].score == 0.9
    # scenario_planning (H, H, strategy/finance, L, H): .2 + .1 + .3 + .075 + .15
    assert scores["scenario_planning"].score == 0.825
    # heuristic (M, L, general, L, L): .1 + .1 + .15 + .075 + 0
    assert scores["heuristic"].score == 0.425
    # deontic (L, M, legal/operations, M, H): 0 + .2 + 0 + .15 + .15
    assert scores["deontic"].score == 0.5
    assert scores["deontic"].breakdown.model_dump() == {
        "uncertainty": 0.0, "complexity": 1.0, "domain": 0.0, "data_availability": 1.0, "stakes": 1.0,
    }  # fmt: skip
    assert scores["expected_utility"].computes and not scores["heuristic"].computes


def test_scores_are_sorted_and_deterministic() -> None:
    profile = {"uncertainty": "high", "domain": "technical"}
    scores = score_methods_for_problem(profile)
    assert len(scores) == 35
    keys = [(-s.score, s.method_id) for s in scores]
    assert keys == sorted(keys)
    assert scores == score_methods_for_problem(ProblemProfile(uncertainty=Level.HIGH, domain=Domain.TECHNICAL))
    assert [s.method_id for s in scores[:2]] == ["abductive", "bayesian_update"]  # both 1.0: ties by id
    assert all(0.0 <= s.score <= 1.0 for s in scores)


@pytest.mark.parametrize(
    ("profile", "field"),
    [
        ({"uncertainty": "extreme"}, "uncertainty"),
        ({"domain": "astrology"}, "domain"),
        ({"urgency": "high"}, "urgency"),
    ],
)
def test_bad_profiles_are_refused(profile: dict[str, str], field: str) -> None:
    with pytest.raises(InputError) as info:
        score_methods_for_problem(profile)
    assert info.value.field == field


# ------------------------------------------------------------------------------------------
# Classifier
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is the probability that the server outage was caused by the deploy?",
         {"uncertainty": "high", "domain": "technical"}),
        ("Should we invest $2M in A or B? Returns are uncertain and the choice is irreversible.",
         {"uncertainty": "high", "domain": "finance", "stakes": "high"}),
        ("We have no data on this novel market.", {"data_availability": "low", "domain": "strategy"}),
        ("Historical data and metrics show a simple trend.", {"data_availability": "high", "complexity": "low"}),
        ("Is the contract clause compliant with GDPR?", {"domain": "legal"}),
        ("It is certain, but the risk is unclear.", {"uncertainty": "high"}),  # 2 high against 1 low
        ("It is certain and the risk is known.", {"uncertainty": "low"}),
        ("A routine question about complex things.", {"complexity": "medium"}),  # one each: a draw
        ("Hello there.", {}),
    ],
)  # fmt: skip
def test_classify_problem(text: str, expected: dict[str, str]) -> None:
    defaults = {"uncertainty": "medium", "complexity": "medium", "domain": "general", "data_availability": "medium",
                "stakes": "medium"}  # fmt: skip
    assert classify_problem(text).model_dump(mode="json") == defaults | expected


def test_phrases_consume_their_words() -> None:
    signals = classification_signals("There is no data, not certain at all")
    assert signals == {"uncertainty:high": ["not certain"], "data_availability:low": ["no data"]}


def test_explicit_values_override_the_text() -> None:
    profile = classify_problem("What is the probability of a server outage?", uncertainty="low", domain=Domain.LEGAL)
    assert (profile.uncertainty, profile.domain) == (Level.LOW, Domain.LEGAL)
    with pytest.raises(InputError) as info:
        classify_problem("x", stakes="huge")
    assert info.value.field == "stakes"
    assert "low, medium, high" in info.value.rule


# ------------------------------------------------------------------------------------------
# Bayes
# ------------------------------------------------------------------------------------------


def test_posterior_is_hand_checked() -> None:
    # 0.8·0.3 / (0.8·0.3 + 0.2·0.7) = 0.24 / 0.38 = 12/19
    assert posterior(0.3, 0.8, 0.2) == pytest.approx(12 / 19)
    assert posterior(0.5, 0.5, 0.5) == pytest.approx(0.5)  # uninformative evidence
    assert posterior(0.4, 0.9, 0.0) == 1.0  # impossible unless h


def test_sequential_update_multiplies_odds() -> None:
    # prior odds 3/7, two likelihood ratios of 4: 48/7 -> 48/55
    [result] = bayesian_update({"hypotheses": [{"label": "supplier is late", "prior": 0.3, "evidence": [
        {"description": "no shipping notice", "p_given_h": 0.8, "p_given_not_h": 0.2},
        {"description": "tracking stalled", "p_given_h": 0.8, "p_given_not_h": 0.2},
    ]}]})  # fmt: skip
    assert result.posterior == pytest.approx(48 / 55)
    assert [s.after for s in result.steps] == pytest.approx([12 / 19, 48 / 55])
    assert [s.likelihood_ratio for s in result.steps] == pytest.approx([4.0, 4.0])


def test_fact_confidence_is_the_prior() -> None:
    fact = Fact(uid=new_id("fact"), agent_id="a", created_at=T0, updated_at=T0, updated_by="a", subject="acme",
                predicate="pays_late", object="true", object_kind=ObjectKind.LITERAL, confidence=0.6,
                source="")  # fmt: skip
    hypothesis = hypothesis_from_fact(fact, [Evidence(p_given_h=0.9, p_given_not_h=0.3)])
    assert (hypothesis.prior, hypothesis.fact_uid, hypothesis.label) == (0.6, fact.uid, "acme pays_late true")
    [result] = bayesian_update(BayesInput(hypotheses=[hypothesis]))
    assert result.posterior == pytest.approx(0.54 / (0.54 + 0.12))  # 0.9·0.6 / (0.9·0.6 + 0.3·0.4)


def test_impossible_and_bad_evidence_are_refused() -> None:
    with pytest.raises(InputError) as impossible:
        bayesian_update(
            {"hypotheses": [{"label": "h", "prior": 1.0, "evidence": [{"p_given_h": 0, "p_given_not_h": 1}]}]}
        )
    assert impossible.value.field == "hypotheses.0.evidence.0"
    with pytest.raises(InputError) as bad:
        bayesian_update(
            {"hypotheses": [{"label": "h", "prior": 0.5, "evidence": [{"p_given_h": 1.2, "p_given_not_h": 0}]}]}
        )
    assert bad.value.field == "hypotheses.0.evidence.0.p_given_h"
    with pytest.raises(InputError):
        posterior(float("nan"), 0.5, 0.5)


# ------------------------------------------------------------------------------------------
# Expected utility
# ------------------------------------------------------------------------------------------

OPTIONS: dict[str, Any] = {
    "options": [
        {"name": "A", "outcomes": [{"probability": 0.5, "utility": 100}, {"probability": 0.5, "utility": 0}]},
        {"name": "B", "outcomes": [{"probability": 1.0, "utility": 40}]},
        {"name": "C", "outcomes": [{"probability": 0.2, "utility": 300}, {"probability": 0.8, "utility": -20}]},
    ]
}


def test_expected_utility_is_hand_checked() -> None:
    result = decide(OPTIONS)
    assert [(o.name, o.expected_utility) for o in result.options] == [("A", 50.0), ("B", 40.0), ("C", 44.0)]
    assert result.ranking == ["A", "C", "B"]
    assert (result.best, result.tied_best) == ("A", ["A"])


def test_ties_keep_input_order_and_are_listed() -> None:
    even = [{"probability": 0.5, "utility": 10}, {"probability": 0.5, "utility": 0}]
    tied = {"options": [{"name": "X", "outcomes": [{"probability": 1, "utility": 5}]}, {"name": "Y", "outcomes": even}]}
    result = decide(tied)
    assert (result.best, result.tied_best) == ("X", ["X", "Y"])


@pytest.mark.parametrize("total_off", [1e-10, -1e-10])
def test_probabilities_within_tolerance_are_accepted(total_off: float) -> None:
    option = {
        "name": "A",
        "outcomes": [{"probability": 0.5, "utility": 1}, {"probability": 0.5 + total_off, "utility": 1}],
    }
    assert decide({"options": [option]}).best == "A"


@pytest.mark.parametrize(
    ("options", "field", "rule"),
    [
        ([{"name": "A", "outcomes": [{"probability": 0.5, "utility": 1}, {"probability": 0.4, "utility": 1}]}],
         "options.0.outcomes", "sum to 1"),
        ([{"name": "A", "outcomes": [{"probability": 0.6, "utility": 1}, {"probability": 0.4 + 1e-8, "utility": 1}]}],
         "options.0.outcomes", "sum to 1"),
        ([{"name": "A", "outcomes": [{"probability": 1.5, "utility": 1}]}], "options.0.outcomes.0.probability", ""),
        ([{"name": "A", "outcomes": [{"probability": 1, "utility": float("inf")}]}],
         "options.0.outcomes.0.utility", ""),
        ([{"name": "A", "outcomes": []}], "options.0.outcomes", ""),
        ([], "options", ""),
        ([{"name": "A", "outcomes": [{"probability": 1, "utility": 1}]},
          {"name": "a", "outcomes": [{"probability": 1, "utility": 2}]}], "options", "unique"),
    ],
)  # fmt: skip
def test_bad_decisions_are_refused(options: list[dict[str, Any]], field: str, rule: str) -> None:
    with pytest.raises(InputError) as info:
        decide({"options": options})
    assert info.value.field == field
    assert rule in info.value.rule


# ------------------------------------------------------------------------------------------
# Running methods
# ------------------------------------------------------------------------------------------


def stub_engine(method: str, answer: str) -> Any:
    seen: list[Problem] = []

    def engine(problem: Problem) -> ComputedResult:
        seen.append(problem)
        return ComputedResult(method=method, answer=answer, summary="from a stub engine")

    engine.seen = seen  # type: ignore[attr-defined]
    return engine


def test_builtin_engines_compute_from_inputs() -> None:
    problem = Problem(text="Which supplier?", inputs={"expected_utility": OPTIONS})
    result = run("expected_utility", problem)
    assert isinstance(result, ComputedResult)
    assert (result.kind, result.answer, result.output["best"]) == ("computed", "A", "A")
    bayes = run("bayesian_update", Problem(inputs={"bayesian_update": {"hypotheses": [
        {"label": "late", "prior": 0.3, "evidence": [{"p_given_h": 0.8, "p_given_not_h": 0.2}]},
        {"label": "on time", "prior": 0.7, "evidence": [{"p_given_h": 0.2, "p_given_not_h": 0.8}]}]}}))  # fmt: skip
    assert isinstance(bayes, ComputedResult)
    assert bayes.answer == "late" and bayes.confidence == pytest.approx(12 / 19)


def test_bad_builtin_inputs_name_the_method() -> None:
    bad = {"options": [{"name": "A", "outcomes": [{"probability": 0.9, "utility": 1}]}]}
    with pytest.raises(InputError) as info:
        run("expected_utility", Problem(inputs={"expected_utility": bad}))
    assert info.value.field == "inputs.expected_utility.options.0.outcomes"


def test_other_methods_return_a_prompt_for_the_callers_llm() -> None:
    problem = Problem(text="Should we enter the Brazilian market?", inputs={"scenario_planning": {"horizon": "5y"}})
    result = run("scenario_planning", problem)
    assert isinstance(result, PromptResult)
    dumped = result.model_dump(mode="json")
    assert {"kind": "llm_prompt", "method": "scenario_planning", "inputs": {"horizon": "5y"}}.items() <= dumped.items()
    assert "did not compute" in result.prompt
    assert "Brazilian market" in result.prompt and '"horizon": "5y"' in result.prompt
    assert "1. Pick the two or three driving uncertainties" in result.prompt
    assert set(result.response_format) == {"answer", "confidence", "rationale"}
    assert "answer" not in dumped  # nothing pretends to be a conclusion


def test_engine_methods_without_an_engine_or_inputs_fall_back_to_a_prompt() -> None:
    missing_inputs = run("expected_utility", Problem(text="?"))
    assert isinstance(missing_inputs, PromptResult)
    assert missing_inputs.notes == ["not computed: give inputs.expected_utility.options to compute it; "
                                    "returned a prompt instead"]  # fmt: skip
    no_engine = run("deductive", Problem(text="?"))
    assert isinstance(no_engine, PromptResult)
    assert "no engine for deductive" in no_engine.notes[0]


def test_injected_engines_receive_the_problem() -> None:
    engine = stub_engine("deductive", "acme is a customer")
    problem = Problem(text="Is acme a customer?", inputs={"deductive": {"goal": "acme is_a customer"}})
    result = run("deductive", problem, engines={"deductive": engine})
    assert isinstance(result, ComputedResult) and result.answer == "acme is a customer"
    assert engine.seen == [problem]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: run("nonsense", Problem()), "method"),
        (lambda: run("heuristic", Problem(), engines={"deductve": stub_engine("deductive", "x")}), "engines"),
        (lambda: run("heuristic", Problem(inputs={"expected_utilty": {}})), "inputs"),
        (lambda: reason(Problem(), ["heuristic", "nonsense"]), "method"),
        (lambda: reason(Problem(), []), "method"),
        (lambda: reason(Problem(), top=0), "top"),
    ],
)
def test_bad_router_calls_are_refused(call: Any, field: str) -> None:
    with pytest.raises(InputError) as info:
        call()
    assert info.value.field == field


# ------------------------------------------------------------------------------------------
# Modes and fusion
# ------------------------------------------------------------------------------------------


def test_auto_mode_classifies_then_runs_the_top_method() -> None:
    problem = Problem(text="Should we invest $2M in A or B? Returns are uncertain and the choice is irreversible.",
                      inputs={"expected_utility": OPTIONS})  # fmt: skip
    result = reason(problem)
    assert result.mode == "auto"
    assert result.profile == ProblemProfile(uncertainty="high", domain="finance", stakes="high")
    assert result.methods == ["expected_utility"]  # 1.0, tied with risk_assessment: ids break the tie
    assert [s.method_id for s in result.scores[:2]] == ["expected_utility", "risk_assessment"]
    assert len(result.scores) == 5
    assert isinstance(result.results[0], ComputedResult) and result.results[0].answer == "A"
    assert result.fusion is None
    assert "uncertainty:high" in result.notes[0]


def test_auto_mode_uses_a_given_profile_and_top_n() -> None:
    profile = ProblemProfile(uncertainty="low", complexity="high", domain="operations", data_availability="high")
    result = reason(Problem(text="ignored for the profile", profile=profile), "auto", top=3)
    assert result.methods == [s.method_id for s in score_methods_for_problem(profile)[:3]]
    assert result.methods[0] == "constraint_satisfaction"
    assert result.notes == []
    assert result.fusion is not None and len(result.fusion.pending) == 3


def test_explicit_mode() -> None:
    result = reason(Problem(text="x"), "heuristic")
    assert (result.mode, result.methods, result.scores, result.fusion) == ("explicit", ["heuristic"], [], None)


def test_multi_mode_reports_agreements_and_disagreements() -> None:
    engines = {"deductive": stub_engine("deductive", " a. "), "abductive": stub_engine("abductive", "B")}
    problem = Problem(text="Which supplier?", inputs={"expected_utility": OPTIONS})
    methods = ["expected_utility", "deductive", "abductive", "ethical", "deductive"]
    result = reason(problem, methods, engines=engines)
    assert result.mode == "multi"
    assert result.methods == ["expected_utility", "deductive", "abductive", "ethical"]  # repeats dropped
    fusion = result.fusion
    assert fusion is not None
    assert [(p.answer, p.methods) for p in fusion.agreements] == [("A", ["expected_utility", "deductive"])]
    assert [(p.answer, p.methods) for p in fusion.positions] == [("A", ["expected_utility", "deductive"]),
                                                                 ("B", ["abductive"])]  # fmt: skip
    assert [(d.methods, d.answers) for d in fusion.disagreements] == [
        (("expected_utility", "abductive"), ("A", "B")),
        (("deductive", "abductive"), (" a. ", "B")),
    ]
    assert fusion.pending == ["ethical"]
    assert fusion.consensus == "A"
    assert fusion.summary == "3 method(s) answered, 1 pending; 2 distinct answer(s); majority: A"


def test_fusion_takes_the_llm_answers_of_prompted_methods() -> None:
    results = [run("heuristic", Problem(text="x")), run("ethical", Problem(text="x"))]
    report = fuse(results, {"heuristic": "Option B", "ethical": "option b"})
    assert report.consensus == "Option B"
    assert (report.pending, report.disagreements) == ([], [])
    split = fuse(results, {"heuristic": "B", "ethical": "C"})
    assert split.consensus is None and len(split.disagreements) == 1


def test_results_serialise_to_json() -> None:
    result = reason(Problem(text="x", inputs={"expected_utility": OPTIONS}), ["expected_utility", "heuristic"])
    data = json.loads(result.model_dump_json())
    assert [r["kind"] for r in data["results"]] == ["computed", "llm_prompt"]
    assert data["fusion"]["pending"] == ["heuristic"]
