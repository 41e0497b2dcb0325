"""Lexical-only recall (embedder off): "nothing relevant" returns nothing under the default min_score.

Real SQLite FTS5 over a small, realistic memory of one support agent (written here, in the style of what an
agent stores); ``MABOS_EMBEDDER=none`` is the real switch that turns the vector branch off. Before the
calibration every query sharing one word with any item (or only with an item's conversation context) got a
top score of about 0.5-0.6, whatever it asked.
"""

from __future__ import annotations

import pytest

import kg
from kg.recall.lexical import content_terms, coverage

MEMORIES = (
    "The refund policy is 30 days for annual plans",
    "Customer Acme Corp asked to move their renewal to March",
    "The staging server room is too hot in the morning",
    "JWT tokens are signed with RS256 and rotated every 90 days",
    "Bob from finance prefers invoices as PDF attachments",
    "The mobile app crashes on Android 14 when the camera opens",
    "Support hours are 9 to 5 Central European Time on weekdays",
    "Maria is the contact for the Berlin office lease",
)


@pytest.fixture
def plain(tmp_path, clock, monkeypatch):
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "plain", clock=clock) as ws:
        ws.agents.add("a")
        stored = {text: ws.memory.store_item("a", text, store="long_term").item for text in MEMORIES}
        yield ws, stored


@pytest.mark.parametrize(
    "query",
    [
        "how do I bake sourdough bread this morning",  # shares "morning" with the server room
        "what did the team decide about the office party playlist",  # "office" with the lease
        "quarterly revenue forecast for the camera business",  # "camera" with the crash
        "weather in Paris",  # nothing at all
    ],
)
def test_nothing_relevant_returns_nothing_under_the_default_min_score(plain, query):
    ws, _ = plain
    result = ws.memory.recall("a", query, explain=True)
    assert result.mode == "bm25"
    assert result.hits == [], [(h.item.content, h.score) for h in result.hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("refund policy", "The refund policy is 30 days for annual plans"),
        ("when is the Acme renewal", "Customer Acme Corp asked to move their renewal to March"),
        ("how are JWT tokens signed", "JWT tokens are signed with RS256 and rotated every 90 days"),
        ("invoice format for finance", "Bob from finance prefers invoices as PDF attachments"),
        ("android camera crash", "The mobile app crashes on Android 14 when the camera opens"),
        ("who handles the Berlin lease", "Maria is the contact for the Berlin office lease"),
    ],
)
def test_relevant_lexical_hits_still_come_back_first(plain, query, expected):
    ws, stored = plain
    result = ws.memory.recall("a", query, explain=True)
    assert result.mode == "bm25" and result.hits, query
    top = result.hits[0]
    assert top.item.uid == stored[expected].uid
    assert top.explain.coverage is not None and top.explain.coverage >= 0.5
    assert top.score > 0.3


def test_coverage_counts_the_querys_content_words_found_in_the_item():
    assert content_terms("How are the JWT tokens signed?") == ["jwt", "token", "sign"]
    assert coverage(["jwt", "token", "sign"], "JWT tokens are signed with RS256") == 1.0
    assert coverage(["bake", "bread", "morning"], "The server room is too hot in the morning") == pytest.approx(1 / 3)
    assert coverage(["invoice", "finance"], "Bob from finance prefers invoices") == 1.0
    assert coverage([], "anything") == 0.0
