"""The reasoning router: the seed's catalogue, classification and scoring, the three modes, fusion, the
optional LLM (the local stub chat server stands in for a model), and storing results within scope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import pytest

from cli import tools
from kg.conversation.llm import OpenAIChatModel
from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.router import (
    ALIASES,
    METHODS,
    SEED,
    WEIGHTS,
    MethodContext,
    MethodOutcome,
    canonical,
    classify_problem,
    engine_kind,
    engines,
    fuse,
    get_method,
    reason,
    score_methods_for_problem,
)
from reasoning.router.store import allowed_scopes, store_result
from reasoning.service import RuleService
from tests.stubs.chat_server import ChatStub

SEED_TABLE = {
    "formal": "deductive inductive abductive analogical modal deontic temporal",
    "probabilistic": "bayesian decision-theory expected-utility info-theory monte-carlo",
    "causal": "causal counterfactual interventional root-cause systems-thinking",
    "experience": "heuristic case-based pattern-recognition satisficing naturalistic",
    "social": "game-theory negotiation social-choice argumentation stakeholder",
    "meta": "meta-cognitive strategy-selection learning-to-reason reflection calibration",
}
EU = {"options": [
    {"name": "A", "outcomes": [{"probability": 1.0, "utility": 5}]},
    {"name": "B", "outcomes": [{"probability": 0.5, "utility": 20}, {"probability": 0.5, "utility": 0}]},
]}  # fmt: skip


def test_the_catalogue_is_the_seeds_plus_a_marked_extension() -> None:
    by_category: dict[str, list[str]] = {}
    for method in SEED:
        by_category.setdefault(method.category.value, []).append(method.id)
    assert {k: " ".join(v) for k, v in by_category.items()} == SEED_TABLE
    extension = [m for m in METHODS if m not in SEED]
    assert len(SEED) == 32 and len(extension) == 16 and {m.category.value for m in extension} == {"extension"}
    assert len({m.id for m in METHODS}) == 48
    # every seed method has an engine; extension methods are prompts
    assert all(engine_kind(m) in ("builtin", "graph") for m in SEED), [m.id for m in SEED if engine_kind(m) == "prompt"]
    assert {engine_kind(m) for m in extension} == {"prompt"}
    assert set(engines()) == {m.id for m in SEED}


@pytest.mark.parametrize(("given", "expected"), [
    ("game_theory", "game-theory"), ("Game-Theory", "game-theory"), ("bayesian_update", "bayesian"),
    ("expected_utility", "expected-utility"), ("case_based", "case-based"), ("root_cause_analysis", "root-cause"),
    ("recognition_primed", "naturalistic"), ("causal_inference", "causal"), ("cbr", "case-based"),
    ("minimax_regret", "minimax-regret"), ("telepathy", None),
])  # fmt: skip
def test_ids_accept_underscores_and_the_old_ids(given: str, expected: str | None) -> None:
    assert canonical(given) == expected


def test_unknown_method_suggests_close_ids() -> None:
    with pytest.raises(InputError) as err:
        get_method("bayesain")
    assert err.value.field == "method" and "did you mean 'bayesian'" in err.value.rule
    assert set(ALIASES.values()) <= {m.id for m in METHODS}


def test_scoring_is_the_seeds_formula() -> None:
    classification = {"uncertainty": "high", "complexity": "complex", "domain": "empirical",
                      "time_pressure": "moderate", "data_availability": "sparse", "stakes": "high"}  # fmt: skip
    scores = score_methods_for_problem(classification)
    assert len(scores) == 32
    for s in scores:
        ideal = get_method(s.method).profile
        expected = sum(w for name, w in WEIGHTS.items() if getattr(ideal, name).value == classification[name])
        assert s.score == pytest.approx(expected)
    assert WEIGHTS == {"uncertainty": 0.2, "complexity": 0.2, "domain": 0.3, "data_availability": 0.15, "stakes": 0.15}
    assert scores[0].method == "monte-carlo" and scores[0].score == pytest.approx(1.0)  # matches on all five
    ranks = [s.score for s in scores]
    assert ranks == sorted(ranks, reverse=True)
    order = [m.id for m in SEED]
    for a, b in pairwise(scores):  # ties keep catalogue order
        if a.score == b.score:
            assert order.index(a.method) < order.index(b.method)
    with pytest.raises(InputError) as err:
        score_methods_for_problem({"domain": "astrology"})
    assert err.value.field == "problem_classification.domain"


def test_auto_mode_explains_its_tie_break() -> None:
    # domain social alone: the five social methods tie at 0.3; the first in the seed's table wins.
    result = reason(MethodContext("a"), problem_classification={"domain": "social"})
    assert result.mode == "auto" and result.methods == ["game-theory"]
    assert result.tie_break is not None and result.tie_break.startswith("5 methods tie at score 0.3")
    assert result.results[0].kind == "llm_prompt"  # no inputs: the prompt comes back


def test_classification_from_text() -> None:
    found = classify_problem("What is the probability that the complex system fails? We have rich historical logs.")
    assert found.uncertainty is not None and found.uncertainty.value == "high"
    assert found.complexity is not None and found.complexity.value == "complex"
    assert found.data_availability is not None and found.data_availability.value == "rich"
    result = reason(MethodContext("a"), "Negotiate with the union and the stakeholders")
    assert result.classification is not None and result.classification.domain is not None
    assert result.classification.domain.value == "social"
    assert any(n.startswith("classification read from the problem text") for n in result.notes)


def test_explicit_mode_with_the_methods_own_object_and_keyed_inputs() -> None:
    own = reason(MethodContext("a"), method="expected_utility", inputs=EU)
    keyed = reason(MethodContext("a"), method="expected-utility", inputs={"eu": EU})
    assert own.mode == keyed.mode == "explicit" and own.results == keyed.results
    result = own.results[0]
    assert set(result.model_dump()) == {"method", "kind", "conclusion", "confidence", "value", "trace", "used",
                                        "notes", "partial"}  # fmt: skip
    assert result.conclusion == "choose B (expected utility 10)"
    with pytest.raises(InputError) as err:
        reason(MethodContext("a"), methods=["bayesian", "causal"], multi_method=True, inputs={"nodes": {}})
    assert err.value.field == "inputs.nodes"
    with pytest.raises(InputError) as err:
        reason(MethodContext("a"), method="expected-utility", inputs={"options": [{"name": "A", "outcomes": [
            {"probability": 0.4, "utility": 1}]}]})  # fmt: skip
    assert err.value.field.startswith("inputs.expected-utility.options")


def _outcome(method: str, conclusion: str, confidence: float, kind: str = "computed") -> MethodOutcome:
    return MethodOutcome(method=method, kind=kind, conclusion=conclusion, confidence=confidence)  # type: ignore[arg-type]


def test_fusion_weighs_each_methods_confidence() -> None:
    report = fuse([_outcome("deductive", "Launch.", 0.9), _outcome("bayesian", "launch", 0.6),
                   _outcome("causal", "wait", 0.95), _outcome("modal", "?", 0.0, kind="llm_prompt")])  # fmt: skip
    assert [p.conclusion for p in report.positions] == ["Launch.", "wait"]
    assert report.positions[0].weight == pytest.approx(1.5) and report.positions[0].methods == ["deductive", "bayesian"]
    assert [a.methods for a in report.agreements] == [["deductive", "bayesian"]]
    assert {d.methods for d in report.disagreements} == {("deductive", "causal"), ("bayesian", "causal")}
    assert report.pending == ["modal"] and report.unified_conclusion == "Launch."
    # (1.5 / 2.45) share of the support x 0.75 mean confidence of its methods
    assert report.overall_confidence == pytest.approx(1.5 / 2.45 * 0.75)
    unanimous = fuse([_outcome("a", "x", 1.0), _outcome("b", "x", 1.0)])
    assert unanimous.overall_confidence == 1.0 and unanimous.disagreements == []


def test_multi_method_runs_each_and_fuses() -> None:
    bet = {"acts": ["A", "B"], "states": ["s1", "s2"], "payoffs": [[5, 5], [20, 0]], "probabilities": [0.5, 0.5]}
    result = reason(MethodContext("a"), multi_method=True, methods=["expected-utility", "decision-theory", "bayesian"],
                    inputs={"expected-utility": EU, "decision-theory": bet})  # fmt: skip
    assert result.mode == "multi" and [r.kind for r in result.results] == ["computed", "computed", "llm_prompt"]
    assert result.fusion is not None and result.fusion.pending == ["bayesian"]
    assert len(result.fusion.disagreements) == 1  # "choose B (expected utility 10)" vs "choose B (by ...)"
    default = reason(MethodContext("a"), multi_method=True, problem_classification={"domain": "formal"})
    assert default.methods == ["deductive", "modal", "deontic"]  # the best three; ties by catalogue order


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStub]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # a proxy configured on the machine must not intercept
    with ChatStub() as server:
        yield server


def test_a_method_lacking_inputs_runs_on_the_chat_model(stub: ChatStub) -> None:
    # The stub stands in for an LLM (tests may not run one): it answers what the test tells it to.
    stub.reply = json.dumps({"conclusion": "Rain is likely", "confidence": 0.7, "rationale": "wet grass"})
    ctx = MethodContext("a", chat=OpenAIChatModel(stub.url, "stub-model"))
    result = reason(ctx, "Did it rain?", method="bayesian").results[0]
    assert (result.kind, result.conclusion, result.confidence) == ("llm", "Rain is likely", 0.7)
    assert result.value == {"model": "stub-model", "rationale": "wet grass"}
    prompt = stub.requests[0].body["messages"][0]["content"]
    assert "Bayesian inference" in prompt and "Did it rain?" in prompt
    stub.reply = "I am not JSON"
    fallback = reason(ctx, "Did it rain?", method="bayesian").results[0]
    assert fallback.kind == "llm_prompt" and "not the asked JSON" in fallback.notes[0]


def test_narration_explains_a_computed_result(stub: ChatStub) -> None:
    stub.reply = "Option B has the higher expected utility."
    ctx = MethodContext("a", chat=OpenAIChatModel(stub.url, "stub-model"))
    result = reason(ctx, method="expected-utility", inputs=EU, narrate_results=True)
    assert result.narration == {"expected-utility": "Option B has the higher expected utility."}
    assert result.results[0].kind == "computed"  # the computation is unchanged
    assert "choose B" in stub.requests[0].body["messages"][0]["content"]
    silent = reason(MethodContext("a"), method="expected-utility", inputs=EU, narrate_results=True)
    assert silent.narration == {} and "no chat model is configured" in silent.notes[0]


def test_a_down_model_changes_nothing(stub: ChatStub) -> None:
    stub.status = 500
    ctx = MethodContext("a", chat=OpenAIChatModel(stub.url, "stub-model"))
    result = reason(ctx, method="bayesian", narrate_results=True).results[0]
    assert result.kind == "llm_prompt" and "the chat model failed" in result.notes[0]


def test_storing_a_result_takes_the_narrowest_scope_of_its_sources(tool_ws: Workspace) -> None:
    ws = tool_ws
    ws.scopes.grant("a", "project:x", granted_by="admin")
    shared, _ = ws.facts.assert_fact("a", "acme", "willChurn", "true", confidence=0.3, scope="project:x")
    public, _ = ws.facts.assert_fact("a", "globex", "willChurn", "true", confidence=0.5, scope="global")
    evidence = [{"p_given_h": 0.8, "p_given_not_h": 0.2}]
    ctx = MethodContext("a", ws)
    from_shared = reason(ctx, method="bayesian", inputs={"fact": shared.uid, "evidence": evidence}).results[0]
    assert allowed_scopes(ws, "a", from_shared.used) == ["agent:a", "project:x"]
    with pytest.raises(InputError, match="wider than the sources"):
        store_result(ws, "a", "churn?", from_shared, store_as="memory", scope="global")
    stored = store_result(ws, "a", "churn?", from_shared, store_as="memory", scope="project:x")
    assert (
        stored["scope"] == "project:x" and ws.ports.memory.get_many([stored["uid"]])[stored["uid"]].scope == "project:x"
    )
    from_public = reason(ctx, method="bayesian", inputs={"fact": public.uid, "evidence": evidence}).results[0]
    assert "global" in allowed_scopes(ws, "a", from_public.used)
    as_case = store_result(ws, "a", "churn?", from_public, store_as="case", success=True)
    assert as_case["kind"] == "case" and as_case["scope"] == "agent:a"
    with pytest.raises(InputError, match="success"):
        store_result(ws, "a", "churn?", from_public, store_as="case")


def test_the_reason_tool_uses_the_workspaces_chat_model(tool_ws: Workspace, stub: ChatStub) -> None:
    # [conversation] llm_url / llm_model configure the model; the stub stands in for it.
    config = tool_ws.path / "mabos.toml"
    config.write_text(config.read_text(encoding="utf-8") + f'llm_url = "{stub.url}"\nllm_model = "stub-model"\n',
                      encoding="utf-8")  # fmt: skip
    stub.reply = [json.dumps({"conclusion": "argue for option A", "confidence": 0.6, "rationale": "r"}),
                  "The expected utility of B is twice that of A."]  # fmt: skip
    result = tools.call("reason", workspace=tool_ws.path, agent_id="a", multi_method=True, narrate=True,
                        methods=["argumentation", "expected-utility"], inputs={"expected-utility": EU})  # fmt: skip
    assert [r.kind for r in result.results] == ["llm", "computed"]
    assert result.results[0].value == {"model": "stub-model", "rationale": "r"}
    assert result.narration == {"expected-utility": "The expected utility of B is twice that of A."}
    assert result.fusion is not None and result.fusion.unified_conclusion == "choose B (expected utility 10)"


GRAPH_PROBES: dict[str, dict[str, Any]] = {
    "deductive": {}, "inductive": {"min_support": 0.1}, "abductive": {"observation": "kestrel isTarget yes"},
    "analogical": {"source": "kestrel", "target": "kestrel2"}, "deontic": {}, "temporal": {},
    "bayesian": {"fact": "kestrel hasIndustry saas", "evidence": []}, "info-theory": {"target": "hasIndustry"},
    "causal": {"treatment": "kestrelA", "outcome": "kestrelB"}, "counterfactual": {"goal": "kestrel isTarget yes",
    "without": []}, "root-cause": {}, "systems-thinking": {},
}  # fmt: skip


def test_graph_engines_never_read_another_agents_records(tool_ws: Workspace) -> None:
    ws = tool_ws
    marks = []
    for s, p, o in [("kestrel", "hasIndustry", "saas"), ("kestrel2", "hasIndustry", "saas"),
                    ("kestrelA", "causes", "kestrelB"), ("kestrelA", "status", "failing"),
                    ("kestrelA", "increases", "kestrelB"), ("kestrelB", "decreases", "kestrelA"),
                    ("kestrel", "region", "eu")]:  # fmt: skip
        fact, _ = ws.facts.assert_fact("a", s, p, o, valid_from=datetime(2020, 1, 1, tzinfo=UTC))
        marks.append(fact.uid)
    rules = RuleService(ws.ports, ws.scopes, ws.clock)
    marks.append(rules.create("a", name="kestrel-rule", conditions=[
        {"subject": "?x", "predicate": "hasIndustry", "object": "saas"}],
        conclusion={"subject": "?x", "predicate": "isTarget", "object": "yes"}).uid)  # fmt: skip
    marks.append(
        rules.create(
            "a",
            name="kestrel-policy",
            type="policy",
            action="must not call kestrel",
            conditions=[{"subject": "kestrel", "predicate": "hasIndustry", "object": "saas"}],
        ).uid
    )
    for method, inputs in GRAPH_PROBES.items():
        mine = reason(MethodContext("a", ws), method=method, inputs={method: inputs}).results[0]
        assert mine.kind == "computed" and mine.used, method  # the probe does read a's records
        given = json.dumps(inputs)
        try:
            theirs = reason(MethodContext("b", ws), method=method, inputs={method: inputs}).results[0]
            shown = theirs.model_dump(mode="json")
            if theirs.kind == "llm_prompt":  # the template comes from the method's docs, never from the graph
                value = shown["value"]
                alone = reason(MethodContext("b"), method=method, inputs={method: inputs}).results[0].value
                assert value.pop("template")["inputs"] == alone["template"]["inputs"], method
                value.pop("fill_prompt")  # the template above and the engine's own message (checked below)
            text = json.dumps(shown)
            assert theirs.used == [], method
        except InputError as refused:  # e.g. "no fact ... visible to 'b'": it may repeat the input, nothing more
            text = str(refused)
        assert not any(uid in text for uid in marks), method
        for secret in ("kestrel-rule", "kestrel-policy", "call kestrel", "saas", "failing", "2020-01-01"):
            assert secret in given or secret not in text, (method, secret)
