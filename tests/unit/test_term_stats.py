"""Query word planning for BM25 (kg/store/sqlite/term_stats.py) on a real SQLite store."""

from __future__ import annotations

import pytest

from kg.models import MemoryItem, MemoryQuery, MemoryStoreKind
from kg.ports import StoreLimits
from kg.store.sqlite import memory, term_stats

N = 200


@pytest.fixture
def store(ws):
    """200 long-term facts: every one says "alpha"; "beta" is in 3, "gamma" in 4, "delta" in 50 (the newest)."""
    now = ws.clock.now()
    items = []
    for n in range(N):
        words = ["alpha", f"filler{n}"] + (["beta"] if n < 3 else []) + (["gamma"] if 10 <= n < 14 else [])
        words += ["delta"] if n >= N - 50 else []
        items.append(MemoryItem(uid=f"M-{n:026d}", agent_id="a", scope="agent:a", content=" ".join(words),
                                type="fact", store=MemoryStoreKind.LONG_TERM, created_at=now,
                                updated_at=now))  # fmt: skip
    ws.ports.memory.add(items, limits=StoreLimits(), now=now)
    return ws.ports.memory


def test_a_word_in_more_than_half_of_the_items_is_left_out(store):
    assert store.term_stats.plan(["alpha", "beta"]) == (["beta"], 3)
    assert store.term_stats.plan(["alpha"]) == (["alpha"], N)  # nothing else left: searched as it is
    assert store.term_stats.plan(["beta", "gamma", "delta"]) == (["beta", "gamma", "delta"], 57)  # small store


def test_stemming_follows_the_index(store):
    assert store.term_stats.plan(["betas", "alphas"]) == (["betas"], 3)  # porter: betas -> beta


def test_ranking_among_the_other_matches_is_unchanged(store):
    query = MemoryQuery(scopes=["agent:a"], limit=10)
    found = store.search("alpha beta", query)
    assert {item.content.split()[1] for item, _ in found} == {"filler0", "filler1", "filler2"}


def test_a_large_store_keeps_the_rarest_words_within_the_row_budget(store, monkeypatch):
    monkeypatch.setattr(term_stats, "SMALL_STORE", 0)
    monkeypatch.setattr(term_stats, "ROW_BUDGET", 5)
    assert store.term_stats.plan(["delta", "gamma", "beta"]) == (["beta"], 3)  # 3 + 4 > 5: gamma dropped too
    monkeypatch.setattr(term_stats, "ROW_BUDGET", 7)
    assert store.term_stats.plan(["delta", "gamma", "beta"]) == (["gamma", "beta"], 7)


def test_too_many_matches_are_scored_in_the_newest_window(store, monkeypatch):
    monkeypatch.setattr(memory, "ROW_WINDOW", 10)
    found = store.search("delta", MemoryQuery(scopes=["agent:a"], limit=100))
    assert len(found) == 10
    assert {item.uid for item, _ in found} == {f"M-{n:026d}" for n in range(N - 10, N)}
