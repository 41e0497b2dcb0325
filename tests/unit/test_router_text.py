"""The router that reads the problem (issue 31): structural cues, semantic similarity, the seed's profile scoring,
inputs read from the text, templates when they are missing, and the optional LLM classifier (the local stub chat
server stands in for a model, the one thing tests may not run).

The dev set (tests/data/reasoning/router_dev.jsonl) is what the cues were tuned on; the two held-out sets are only
measured by bench/router.py, never asserted on or tuned on.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.conversation.llm import OpenAIChatModel
from kg.recall.embedder import SentenceTransformerEmbedder
from kg.workspace import Workspace
from reasoning.router import SEED, WEIGHTS, MethodContext, reason, score_methods_for_problem
from reasoning.router.docgen import render
from reasoning.router.semantic import similarities
from reasoning.router.textroute import route
from tests.stubs.chat_server import ChatStub

DATA = Path(__file__).resolve().parents[1] / "data" / "reasoning"


def _load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


DEV = _load("router_dev.jsonl")
HELDOUT = _load("router_heldout.jsonl") + _load("router_heldout2.jsonl")
SEED_IDS = {m.id for m in SEED}


@functools.cache
def _top(problem: str) -> list[str]:
    """The ranking by cues alone (cached: the dev set is ranked once per test process)."""
    return [s.method for s in route(problem, None, None, semantic=False).scores]


def test_the_sets_are_plain_english_labelled_with_seed_methods_and_disjoint() -> None:
    assert len(DEV) >= 60 and len(HELDOUT) >= 40
    for row in DEV + HELDOUT:
        assert row["accept"] and set(row["accept"]) <= SEED_IDS, row
    assert not {r["problem"] for r in DEV} & {r["problem"] for r in HELDOUT}
    assert len({r["problem"] for r in HELDOUT}) == len(HELDOUT)


def test_dev_set_top1_at_least_90_percent_on_cues_alone() -> None:
    hits = [row for row in DEV if _top(row["problem"])[0] in row["accept"]]
    assert len(hits) / len(DEV) >= 0.9, [r["problem"][:60] for r in DEV if r not in hits]


def test_every_seed_method_is_reachable_from_text_and_from_its_classification() -> None:
    firsts = {_top(row["problem"])[0] for row in DEV}
    assert firsts == SEED_IDS, SEED_IDS - firsts
    profiles = [m.profile for m in SEED]
    assert len(set(profiles)) == 32  # no two methods share a profile: no method is only a tie-break loser
    for method in SEED:
        assert score_methods_for_problem(method.profile.model_dump())[0].method == method.id


@pytest.mark.parametrize(("problem", "expected"), [
    ("Our test for a rare disease is 95% sensitive; a patient tested positive. How likely is it that she has the "
     "disease?", "bayesian"),
    ("Two retailers are in a price war: each one's profit depends on whether the other cuts prices too.",
     "game-theory"),
    ("Members ranked the four candidates on their ballots; who wins?", "social-choice"),
    ("Our marketing spend, word of mouth and churn form feedback loops; which are reinforcing?", "systems-thinking"),
])  # fmt: skip
def test_the_issues_examples_route_sensibly(problem: str, expected: str) -> None:
    assert _top(problem)[0] == expected


def test_an_explicit_classification_ranks_by_the_seeds_score_and_the_text_only_breaks_ties() -> None:
    given = {"uncertainty": "high", "domain": "social"}
    problem = "Should we enter Germany?"
    result = reason(MethodContext("a"), problem, problem_classification=given, semantic=False)
    seed = {s.method: s.score for s in score_methods_for_problem(given)}
    assert result.router == "classification" and all(s.score == seed[s.method] for s in result.scores)
    assert [s.score for s in result.scores] == sorted(seed.values(), reverse=True)[:10]
    # argumentation is the only method with both: the text cannot lift decision-theory over it
    assert result.methods == ["argumentation"]
    tied = reason(MethodContext("a"), problem, problem_classification={"uncertainty": "high"}, semantic=False)
    assert tied.methods == ["decision-theory"] and "by the problem text" in (tied.tie_break or "")
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_numbers_in_the_question_are_read_and_computed() -> None:
    spam = ("A spam filter flags 90% of spam and 2% of legitimate mail; 30% of mail is spam. An email was flagged: "
            "what is the chance it is spam?")  # fmt: skip
    result = reason(MethodContext("a"), spam, method="auto", semantic=False)
    [outcome] = result.results
    assert result.methods == ["bayesian"] and outcome.kind == "computed"
    assert outcome.value["probability"] == pytest.approx(0.9 * 0.3 / (0.9 * 0.3 + 0.02 * 0.7))
    assert any(n.startswith("inputs read from the problem text") for n in outcome.notes)
    vote = ("Nine members voted with ranked ballots: 5 prefer Monday over Tuesday over Friday, 4 prefer Friday "
            "over Tuesday over Monday. Which night wins?")  # fmt: skip
    [ballots] = reason(MethodContext("a"), vote, method="auto", semantic=False).results
    assert ballots.method == "social-choice" and ballots.kind == "computed" and "Monday" in ballots.conclusion
    bets = "Option A pays 100 with probability 0.6 and nothing otherwise; option B pays 50 for sure. Which is better?"
    [bet] = reason(MethodContext("a"), bets, method="auto", semantic=False).results
    assert bet.kind == "computed" and bet.conclusion.startswith("choose A (expected utility 60")


def test_missing_numbers_give_a_template_never_a_computed_answer() -> None:
    problem = ("Our test for a rare disease is 95% sensitive; a patient tested positive. How likely is it that she "
               "has the disease?")  # fmt: skip
    result = reason(MethodContext("a"), problem, method="auto", semantic=False)
    [outcome] = result.results
    assert outcome.kind == "llm_prompt" and outcome.confidence == 0.0
    template = result.templates["bayesian"]
    nodes = template["inputs"]["bayesian"]["network"]["nodes"]
    assert nodes["Positive"]["cpt"] == {"T": 0.95, "F": None} and nodes["Condition"]["cpt"] == {"": None}
    assert [m.split(" (")[0] for m in template["missing"]] == ["prevalence", "false-positive rate"]
    assert "prevalence" in outcome.value["fill_prompt"] and outcome.value["why"].startswith("rank 1 of 32 by text")


def test_should_we_enter_germany_returns_a_method_why_and_a_template(tool_ws: Workspace) -> None:
    for i in range(7):
        tool_ws.facts.assert_fact("a", f"thing{i}", "colour", f"c{i}")
    ctx = MethodContext("a", tool_ws)
    result = reason(ctx, "Should we enter Germany?", problem_classification={"uncertainty": "high"})
    [outcome] = result.results
    assert result.methods == ["decision-theory"] and outcome.kind == "llm_prompt"
    assert result.templates["decision-theory"]["missing"] and "decision-theory" in outcome.value["fill_prompt"]
    assert result.why["decision-theory"].startswith("rank 1 of 32 by classification")
    plain = reason(ctx, "If a customer is in the EU then VAT applies; Acme is in the EU. What follows?", top=1)
    assert plain.methods == ["deductive"] and plain.results[0].kind == "llm_prompt"  # 7 facts, 0 rules: no 1.0
    assert plain.results[0].confidence == 0.0 and "deductive" in plain.templates


def test_the_embedder_that_cannot_load_degrades_to_cues(tmp_path: Path) -> None:
    broken = SentenceTransformerEmbedder(model_path=tmp_path / "no-model")
    sims, why = similarities("Who wins the vote?", broken)
    assert sims == {} and why is not None and "cues only" in why
    found = route("Members ranked the candidates on ballots; who wins?", None, broken, semantic=True)
    assert found.scores[0].method == "social-choice" and any("cues only" in n for n in found.notes)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatStub]:
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)
    with ChatStub() as server:
        yield server


def test_the_chat_model_may_classify_instead(stub: ChatStub) -> None:
    stub.reply = json.dumps({"classification": {"uncertainty": "high", "domain": "empirical"},
                             "methods": ["monte_carlo", "not-a-method", "bayesian"]})  # fmt: skip
    ctx = MethodContext("a", chat=OpenAIChatModel(stub.url, "stub-model"))
    result = reason(ctx, "How long will the project take?", method="auto", top=2, semantic=False)
    assert result.router == "llm" and result.methods == ["monte-carlo", "bayesian"]
    assert result.classification is not None and result.classification.domain == "empirical"
    assert "How long will the project take?" in stub.requests[0].body["messages"][0]["content"]
    stub.reply = "no JSON here"
    fallback = reason(ctx, "Members ranked the candidates on ballots; who wins?", method="auto", semantic=False)
    assert fallback.router == "text" and fallback.methods == ["social-choice"]
    assert any("not the asked JSON" in n for n in fallback.notes)


@pytest.mark.slow
def test_dev_set_with_the_local_embedder_always_compared() -> None:
    if os.environ.get("MABOS_SLOW") != "1":
        pytest.skip("loads the local embedder (tens of seconds on a busy machine): pytest -m slow")
    model = SentenceTransformerEmbedder()
    hits = [r for r in DEV if route(r["problem"], None, model, semantic=True).scores[0].method in r["accept"]]
    assert len(hits) / len(DEV) >= 0.9


def test_the_generated_docs_block_is_current_and_a_method_without_docs_still_gets_a_template() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "reasoning-methods.md").read_text(encoding="utf-8")
    assert render(page) == page, "stale: run 'mabos reason docs'"
    [outcome] = reason(MethodContext("a"), "Sales next quarter?", method="forecasting").results
    template = outcome.value["template"]
    assert template["source"].startswith("engine message") and template["missing"] == [
        "forecasting has no engine (extension method)"]  # fmt: skip
