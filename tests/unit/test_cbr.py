"""Case-based reasoning: CBR-BDI retrieval scores, context similarity, duplicate keys and pruning."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import BackendUnavailableError, InputError
from kg.ids import new_id
from kg.models import Case, CaseOutcome, CaseSituation, CaseSolution
from kg.recall.embedder import SentenceTransformerEmbedder
from reasoning.cbr import CaseQuery, CBRWeights, jaccard, prune, retrieve, situation_key
from tests.budget import examples

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def case(
    beliefs: Sequence[str] = (),
    desires: Sequence[str] = (),
    context: str = "",
    *,
    success: bool = True,
    created_at: datetime = T0,
    uid: str | None = None,
) -> Case:
    return Case(
        uid=uid or new_id("case"),
        agent_id="a",
        created_at=created_at,
        situation=CaseSituation(beliefs=list(beliefs), desires=list(desires), context=context),
        solution=CaseSolution(actions=["reorder stock"]),
        outcome=CaseOutcome(success=success),
    )


class StubEmbedder:
    """Fixed unit vectors by text; counts calls. A test double for the Embedder port, never a fallback."""

    model = "stub"
    dimension = 2

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[tuple[list[str], bool]] = []

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        self.calls.append((list(texts), batch))
        return [self.vectors[text] for text in texts]


class DownEmbedder:
    model = "down"
    dimension = 2

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> list[list[float]]:
        raise BackendUnavailableError("embedder: model not installed")


# ------------------------------------------------------------------------------------------
# Hand-checked scores
# ------------------------------------------------------------------------------------------


def test_jaccard() -> None:
    assert jaccard(frozenset("ab"), frozenset("abc")) == pytest.approx(2 / 3)
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset("a"), frozenset()) == 0.0


def test_score_is_0_6_belief_overlap_plus_0_4_desire_overlap() -> None:
    stored = case(["stock is low", "supplier is late", "demand is rising"], ["avoid stock-outs", "keep costs down"])
    query = CaseQuery(beliefs=["Stock is LOW", "supplier  is late"], desires=["avoid stock-outs"])
    [match] = retrieve([stored], query).matches
    assert match.belief_similarity == pytest.approx(2 / 3)  # {low, late} vs {low, late, rising}
    assert match.desire_similarity == pytest.approx(1 / 2)
    assert match.score == pytest.approx(0.6 * 2 / 3 + 0.4 * 1 / 2)  # = 0.6
    assert match.context_similarity is None
    assert match.case_uid == stored.uid
    assert match.solution.actions == ["reorder stock"]
    assert match.outcome.success is True


def test_weights_are_normalised() -> None:
    stored = case(["a", "b", "c"], ["x", "y"])
    query = CaseQuery(beliefs=["a", "b"], desires=["x"])
    [match] = retrieve([stored], query, weights={"beliefs": 3, "desires": 1}).matches
    assert match.score == pytest.approx(0.75 * 2 / 3 + 0.25 * 1 / 2)  # = 0.625
    [same] = retrieve([stored], query, weights=CBRWeights(beliefs=0.75, desires=0.25)).matches
    assert same.score == pytest.approx(match.score)


@pytest.mark.parametrize(
    ("weights", "field"),
    [
        ({"beliefs": -1}, "beliefs"),
        ({"beliefs": 0, "desires": 0}, "beliefs"),
        ({"context": 1.5}, "context"),
        ({"desires": float("nan")}, "desires"),
        ({"belief": 1}, "belief"),
    ],
)
def test_bad_weights_are_refused(weights: dict[str, float], field: str) -> None:
    with pytest.raises(InputError) as info:
        retrieve([], CaseQuery(), weights=weights)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"k": 0}, "k"), ({"k": 2.5}, "k"), ({"min_score": 1.5}, "min_score"), ({"min_score": float("nan")}, "min_score")],
)
def test_bad_k_and_min_score_are_refused(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InputError) as info:
        retrieve([], CaseQuery(), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_query_mapping_is_validated() -> None:
    with pytest.raises(InputError) as info:
        retrieve([], {"beliefs": ["a"], "wishes": ["b"]})
    assert info.value.field == "wishes"


def test_ranking_best_first_then_newer_then_uid() -> None:
    best = case(["a"], ["x"])
    older = case(["a"], [], created_at=T0)
    newer = case(["a"], [], created_at=T0 + timedelta(days=1))
    twin_1 = case(["b", "c"], [], uid="C-00000000000000000000000001")  # Sb = 1/3: below the others
    twin_2 = case(["b", "c"], [], uid="C-00000000000000000000000002")
    result = retrieve([twin_2, older, best, twin_1, newer], CaseQuery(beliefs=["a", "b"], desires=["x"]), k=10)
    assert [m.case_uid for m in result.matches] == [best.uid, newer.uid, older.uid, twin_1.uid, twin_2.uid]


def test_k_and_min_score_limit_the_matches() -> None:
    cases = [case(["a"], ["x"]), case(["a"], ["y"]), case(["z"], ["y"])]
    query = CaseQuery(beliefs=["a"], desires=["x"])
    assert [m.score for m in retrieve(cases, query, k=2).matches] == pytest.approx([1.0, 0.6])
    assert [m.score for m in retrieve(cases, query, min_score=0.5).matches] == pytest.approx([1.0, 0.6])
    assert [m.score for m in retrieve(cases, query).matches] == pytest.approx([1.0, 0.6, 0.0])


# ------------------------------------------------------------------------------------------
# Context similarity
# ------------------------------------------------------------------------------------------


def test_context_similarity_with_one_batch_call() -> None:
    embedder = StubEmbedder({"flood": [1.0, 0.0], "storm": [0.6, 0.8], "launch": [0.0, 1.0], "opposite": [-1.0, 0.0]})
    near = case(["a"], ["x"], "storm")
    far = case(["a"], ["x"], "launch")
    also_near = case(["a"], [], "storm")
    opposite = case(["a"], ["x"], "opposite")
    blank = case(["a"], ["x"])
    query = CaseQuery(beliefs=["a"], desires=["x"], context="flood")
    result = retrieve([near, far, also_near, opposite, blank], query, embedder=embedder, k=10)
    assert result.context_used is True
    assert result.notes == []
    assert embedder.calls == [(["flood", "storm", "launch", "opposite"], True)]  # query first, contexts once
    by_uid = {m.case_uid: m for m in result.matches}
    assert by_uid[near.uid].context_similarity == pytest.approx(0.6)
    assert by_uid[near.uid].score == pytest.approx(0.8 * 1.0 + 0.2 * 0.6)  # = 0.92
    assert by_uid[far.uid].score == pytest.approx(0.8)
    assert by_uid[also_near.uid].score == pytest.approx(0.8 * 0.6 + 0.2 * 0.6)  # = 0.6
    assert by_uid[opposite.uid].context_similarity == 0.0  # negative cosine counts as unrelated
    assert by_uid[blank.uid].context_similarity == 0.0  # a case without context has nothing to match
    assert result.matches[0].case_uid == near.uid


def test_context_weight_is_configurable() -> None:
    embedder = StubEmbedder({"q": [1.0, 0.0], "c": [0.6, 0.8]})
    stored = case(["a"], ["y"], "c")
    query = CaseQuery(beliefs=["a"], desires=["x"], context="q")
    [match] = retrieve([stored], query, embedder=embedder, weights={"context": 0.5}).matches
    assert match.score == pytest.approx(0.5 * 0.6 + 0.5 * 0.6)  # x = 0.6 (beliefs only), Sc = 0.6


def test_unavailable_embedder_falls_back_and_says_so() -> None:
    stored = case(["a"], ["y"], "c")
    result = retrieve([stored], CaseQuery(beliefs=["a"], desires=["x"], context="q"), embedder=DownEmbedder())
    assert result.context_used is False
    assert result.notes == ["context not used: embedder unavailable (embedder: model not installed)"]
    assert result.matches[0].score == pytest.approx(0.6)
    assert result.matches[0].context_similarity is None


@pytest.mark.parametrize(
    ("context", "weights", "embedder", "notes"),
    [
        ("", None, StubEmbedder({}), []),
        ("q", None, None, ["context not used: no embedder given"]),
        ("q", {"context": 0}, StubEmbedder({}), ["context not used: weights.context is 0"]),
    ],
)
def test_context_left_out(context: str, weights: dict[str, float] | None, embedder: StubEmbedder | None,
                          notes: list[str]) -> None:  # fmt: skip
    result = retrieve([case(["a"], [], "c")], CaseQuery(beliefs=["a"], context=context), weights=weights,
                      embedder=embedder)  # fmt: skip
    assert (result.context_used, result.notes) == (False, notes)
    assert result.matches[0].score == pytest.approx(0.6 + 0.4)  # no desires on either side: Sd = 1
    if embedder is not None:
        assert embedder.calls == []


# ------------------------------------------------------------------------------------------
# Dedup and pruning
# ------------------------------------------------------------------------------------------


def test_situation_key_ignores_order_case_whitespace_and_repeats() -> None:
    one = CaseSituation(beliefs=["Stock is low", "supplier late"], desires=["avoid stock-outs"], context="Q3  rush")
    two = CaseSituation(beliefs=["supplier LATE ", "stock is  low", "stock is low"], desires=["Avoid stock-outs"],
                        context=" q3 rush")  # fmt: skip
    assert situation_key(one) == situation_key(two)
    assert len(situation_key(one)) == 64
    assert situation_key(CaseQuery(beliefs=one.beliefs, desires=one.desires, context=one.context)) == situation_key(one)


@pytest.mark.parametrize(
    "other",
    [
        CaseSituation(beliefs=["stock is low"], desires=["avoid stock-outs"], context="other"),
        CaseSituation(beliefs=["stock is low", "x"], desires=["avoid stock-outs"]),
        CaseSituation(beliefs=["avoid stock-outs"], desires=["stock is low"]),  # beliefs and desires are distinct
    ],
)
def test_situation_key_differs_for_different_situations(other: CaseSituation) -> None:
    base = CaseSituation(beliefs=["stock is low"], desires=["avoid stock-outs"])
    assert situation_key(base) != situation_key(other)


def test_prune_drops_failed_then_oldest() -> None:
    now = T0 + timedelta(days=30)
    old_ok = case(["a"], created_at=T0)
    new_ok = case(["a"], created_at=T0 + timedelta(days=10))
    old_failed = case(["a"], success=False, created_at=T0)
    new_failed = case(["a"], success=False, created_at=T0 + timedelta(days=20))
    cases = [new_ok, old_failed, old_ok, new_failed]
    assert prune(cases, 4, now=now) == []
    assert prune(cases, 3, now=now) == [old_failed.uid]
    assert prune(cases, 1, now=now) == [old_failed.uid, new_failed.uid, old_ok.uid]
    assert prune(cases, 0, now=now) == [old_failed.uid, new_failed.uid, old_ok.uid, new_ok.uid]


def test_prune_counts_future_cases_as_created_now_and_breaks_ties_by_uid() -> None:
    now = T0
    late = case(["a"], created_at=T0 + timedelta(days=5), uid="C-00000000000000000000000001")
    current = case(["a"], created_at=T0, uid="C-00000000000000000000000002")
    assert prune([current, late], 1, now=now) == [late.uid]


def test_prune_default_capacity_and_bad_capacity() -> None:
    assert prune([case(["a"])], now=T0) == []
    with pytest.raises(InputError) as info:
        prune([], -1, now=T0)
    assert info.value.field == "capacity"


# ------------------------------------------------------------------------------------------
# Invariants
# ------------------------------------------------------------------------------------------

words = st.sampled_from(["stock low", "Stock Low", "supplier late", "demand up", "cash tight", "x", "y", "z"])
items = st.lists(words, max_size=6)


@settings(max_examples=examples(200), deadline=None)
@given(items, items, items, items)
def test_scores_lie_in_0_1(qb: list[str], qd: list[str], cb: list[str], cd: list[str]) -> None:
    [match] = retrieve([case(cb, cd)], CaseQuery(beliefs=qb, desires=qd)).matches
    for value in (match.score, match.belief_similarity, match.desire_similarity):
        assert 0.0 <= value <= 1.0


weights_strategy = st.builds(CBRWeights, beliefs=st.floats(0.01, 10), desires=st.floats(0, 10), context=st.floats(0, 1))


@settings(max_examples=examples(200), deadline=None)
@given(items, items, st.sampled_from(["", "q", "c"]), weights_strategy)
def test_a_case_matches_its_own_situation_with_1(beliefs: list[str], desires: list[str], context: str,
                                                  weights: CBRWeights) -> None:  # fmt: skip
    stored = case(beliefs, desires, context)
    query = CaseQuery(beliefs=beliefs, desires=desires, context=context)
    embedder = StubEmbedder({"q": [1.0, 0.0], "c": [0.0, 1.0]})
    [match] = retrieve([stored], query, embedder=embedder, weights=weights).matches
    assert match.score == 1.0


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(items, items), min_size=1, max_size=8), items, items)
def test_result_does_not_depend_on_list_order(situations: list[tuple[list[str], list[str]]], qb: list[str],
                                              qd: list[str]) -> None:  # fmt: skip
    cases = [case(b, d) for b, d in situations]
    shuffled = [case(list(reversed(c.situation.beliefs)), list(reversed(c.situation.desires)), uid=c.uid)
                for c in reversed(cases)]  # fmt: skip
    first = retrieve(cases, CaseQuery(beliefs=qb, desires=qd), k=8)
    second = retrieve(shuffled, CaseQuery(beliefs=list(reversed(qb)), desires=list(reversed(qd))), k=8)
    assert first == second


# ------------------------------------------------------------------------------------------
# The real embedder
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2, loaded once for this module (offline, from the packaged model)."""
    loaded = SentenceTransformerEmbedder()
    loaded.load()
    return loaded


def test_context_similarity_breaks_a_tie(embedder: SentenceTransformerEmbedder) -> None:
    beliefs, desires = ["shipments are delayed", "stock is low"], ["keep customers supplied"]
    flood = case(beliefs, desires, "The warehouse flooded after a storm and trucks could not reach it", created_at=T0)
    launch = case(beliefs, desires, "A marketing campaign for the spring product launch overran its budget",
                  created_at=T0 + timedelta(days=1))  # fmt: skip
    query = CaseQuery(beliefs=beliefs, desires=desires, context="Heavy rain closed the distribution centre")
    without = retrieve([flood, launch], query)
    assert [m.score for m in without.matches] == [1.0, 1.0]
    assert without.matches[0].case_uid == launch.uid  # a tie: the newer case comes first
    with_context = retrieve([flood, launch], query, embedder=embedder)
    assert with_context.context_used is True
    top, second = with_context.matches
    assert top.case_uid == flood.uid
    assert top.context_similarity is not None and second.context_similarity is not None
    assert top.context_similarity > second.context_similarity + 0.1
    assert top.score == pytest.approx(0.8 + 0.2 * top.context_similarity)
