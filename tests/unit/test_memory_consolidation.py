"""Consolidation R1: candidates, tag grouping (inverted index == all pairs), merge, dry-run, MEMORY.md."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg
from kg.errors import InputError
from kg.ids import new_id
from kg.memory.consolidation import (
    ConsolidationOptions,
    Consolidator,
    consolidate,
    group_by_tags,
    group_naive,
    jaccard,
    merged_content,
)
from kg.models import MAX_CONTENT, MemoryItem, MemoryStoreKind
from kg.scopes import derived_scope_allowed
from tests.budget import examples


def mem(tags: list[str], importance: float = 0.7, minute: int = 0, content: str = "x") -> MemoryItem:
    when = datetime(2024, 5, 1, tzinfo=UTC) + timedelta(minutes=minute)
    return MemoryItem(uid=new_id("memory"), agent_id="a", content=content, importance=importance, tags=tags,
                      created_at=when)  # fmt: skip


def test_jaccard():
    assert jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_threshold_is_strictly_greater_than_0_3():
    seed = mem(["a", "b", "c"], importance=0.9)
    exactly = mem(["c", "d", "e", "f", "g", "h", "i"])  # 1 shared of 9 -> 0.11, no
    above = mem(["a", "b", "x"])  # 2 of 4 -> 0.5, yes
    at = mem(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"])  # 3 of 10 -> 0.3, not above: no
    groups = group_by_tags([seed, exactly, above, at])
    assert [m.uid for m in groups[0]] == [seed.uid, above.uid]


def test_untagged_items_stay_alone():
    items = [mem([]), mem([]), mem(["a"])]
    assert [len(g) for g in group_by_tags(items)] == [1, 1, 1]


tag_lists = st.lists(st.sampled_from([f"t{i}" for i in range(12)]), max_size=4, unique=True)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(tag_lists, st.integers(0, 10)), max_size=40))
def test_inverted_index_grouping_equals_all_pairs(specs):
    items = [mem(tags, importance=imp / 10, minute=n) for n, (tags, imp) in enumerate(specs)]
    assert [[m.uid for m in g] for g in group_by_tags(items)] == [[m.uid for m in g] for g in group_naive(items)]


def test_merged_content_and_limit():
    members = [mem([], content="a"), mem([], content="b")]
    assert merged_content(members) == "[Consolidated from 2 memories] a | b"
    long = merged_content([mem([], content="y" * 40_000), mem([], content="z" * 40_000)])
    assert len(long) == MAX_CONTENT and long.endswith("…")


@pytest.fixture
def seeded(ws):
    m = ws.memory
    m.store_item("a", "JWT uses RS256", type="decision", importance=0.8, tags=["auth", "jwt"])
    m.store_item("a", "Tokens expire after 1h", type="fact", importance=0.7, tags=["auth", "jwt", "expiry"])
    m.store_item("a", "Use Postgres 16", type="decision", tags=["db"])  # 0.75: promoted alone
    m.store_item("a", "Important scratch note", store="working", importance=0.9, tags=["misc"])
    m.store_item("a", "Idle chatter", type="event", tags=["auth", "jwt"])  # 0.4, no accesses: not a candidate
    ws.clock.advance(timedelta(minutes=61))  # a new conversation: "Idle chatter" does not read "low" as its next turn
    m.store_item("a", "Low but used", type="event", tags=["ops"])
    for _ in range(2):
        m.recall("a", "low", mode="bm25")  # lexical: touches the one item that says "low" (nothing stored after it)
    m.store_item("a", "Already long-term", store="long_term", tags=["auth", "jwt"])
    return ws


def test_candidates(seeded):
    found = Consolidator(seeded.memory).candidates("a", ConsolidationOptions())
    assert sorted(i.content for i in found) == sorted(
        ["JWT uses RS256", "Tokens expire after 1h", "Use Postgres 16", "Important scratch note", "Low but used"]
    )


def test_consolidation_merges_groups_and_promotes_singletons(seeded):
    result = Consolidator(seeded.memory).run("a")
    assert result.candidates == 5 and len(result.groups) == 1
    group = result.groups[0]
    merged = seeded.memory.get("a", group.consolidated_uid)
    assert merged.content == "[Consolidated from 2 memories] JWT uses RS256 | Tokens expire after 1h"
    assert (merged.type.value, merged.importance, merged.source) == ("decision", 0.8, "consolidation")
    assert merged.tags == ["auth", "jwt", "expiry"] and merged.store is MemoryStoreKind.LONG_TERM
    assert merged.derived_from == group.members
    for uid in group.members:  # archived, never deleted
        assert seeded.memory.get("a", uid).archived_at is not None
    promoted = [seeded.memory.get("a", uid) for uid in result.promoted]
    assert {p.content for p in promoted} == {"Use Postgres 16", "Important scratch note", "Low but used"}
    assert all(p.store is MemoryStoreKind.LONG_TERM and p.expires_at is None for p in promoted)
    assert seeded.memory.status("a")["stores"]["long_term"]["active"] == 5


def test_memory_file_lists_long_term_memory(seeded):
    result = Consolidator(seeded.memory).run("a")
    text = (seeded.path / "agents" / "a" / "MEMORY.md").read_text()
    assert result.memory_file and text.startswith("# Long-term memory of a")
    assert "## decision" in text and "[Consolidated from 2 memories]" in text and "Already long-term" in text
    assert "Idle chatter" not in text


def test_dry_run_changes_nothing(seeded, snapshot):
    before = snapshot(seeded)
    result = Consolidator(seeded.memory).run("a", dry_run=True)
    assert result.groups[0].consolidated_uid is None and len(result.archived) == 2 and len(result.promoted) == 3
    assert snapshot(seeded) == before


def test_no_summarize_promotes_one_to_one(seeded):
    result = Consolidator(seeded.memory).run("a", summarize=False)
    assert result.groups == [] and len(result.promoted) == 5
    assert all(seeded.memory.get("a", uid).archived_at is None for uid in result.promoted)


def test_thresholds_are_options(seeded):
    # 0.85: the 0.9 working note, and the short-term item accessed twice
    assert Consolidator(seeded.memory).run("a", dry_run=True, min_importance=0.85).candidates == 2
    assert Consolidator(seeded.memory).run("a", dry_run=True, min_access_count=5).candidates == 4


def test_running_twice_adds_nothing_new(seeded):
    Consolidator(seeded.memory).run("a")
    again = Consolidator(seeded.memory).run("a")
    assert again.candidates == 0 and again.groups == [] and again.promoted == []


def test_the_tool_also_rewrites_the_materialized_files(seeded):
    result = consolidate(seeded, "a")
    assert sorted(result.materialized) == [
        "agents/a/mabos-beliefs.md",
        "agents/a/mabos-facts.md",
        "agents/a/memory/mabos-memory-items.md",
    ]
    items = (seeded.path / "agents" / "a" / "memory" / "mabos-memory-items.md").read_text()
    assert "[Consolidated from 2 memories]" in items
    assert consolidate(seeded, "a", dry_run=True).materialized == []


# ------------------------------------------------------------------------------------------ scopes (issue 18)

SECRETS = {"project:x": "Project x launch secret is kestrel", "agent:a": "a's password hint is the dog's name",
           "global": "The office opens at nine"}  # fmt: skip


def test_consolidation_never_publishes_a_private_or_project_item(ws):
    """Three items of one tag in project:x, agent:a and global: three scopes, so nothing merges across them;
    agent c (no grant) recalls neither the project's secret nor a's hint (it failed before: one global item
    quoted all three)."""
    ws.agents.add("c")
    ws.scopes.grant("a", "project:x", granted_by="test")
    for scope, text in SECRETS.items():
        ws.memory.store_item("a", text, importance=0.9, tags=["office", "launch"], scope=scope)
    result = consolidate(ws, "a")
    assert result.candidates == 3 and result.groups == [] and len(result.promoted) == 3
    for query in ("kestrel launch secret", "password hint dog", "office"):
        found = {h.item.content for h in ws.memory.recall("c", query, mode="bm25").hits}
        assert found <= {SECRETS["global"]}, query
    assert not any("Consolidated" in i.content for i in ws.memory.list_items("a"))


def test_items_of_one_scope_still_merge_in_that_scope(ws):
    ws.scopes.grant("a", "project:x", granted_by="test")
    for n in range(2):
        ws.memory.store_item("a", f"project x note {n}", importance=0.8, tags=["plan"], scope="project:x")
        ws.memory.store_item("a", f"private note {n}", importance=0.8, tags=["plan"])
    result = Consolidator(ws.memory).run("a")
    merged = {ws.memory.get("a", g.consolidated_uid).scope: g for g in result.groups if g.consolidated_uid}
    assert sorted(merged) == ["agent:a", "project:x"]
    assert "private" not in merged["project:x"].content and "project" not in merged["agent:a"].content


SCOPE_MIX = ("global", "agent:a", "project:x", "project:y", "user:u")


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(SCOPE_MIX), tag_lists, st.integers(6, 10)), min_size=1, max_size=14))
def test_property_a_consolidated_item_is_never_wider_than_its_sources(tmp_path_factory, monkeypatch, specs):
    monkeypatch.setenv("MABOS_EMBEDDER", "none")  # consolidation reads no vector; store_item need not embed
    ws = kg.init_workspace(tmp_path_factory.mktemp("mix") / "ws")
    try:
        ws.agents.add("a")
        for scope in ("project:x", "project:y", "user:u"):
            ws.scopes.grant("a", scope, granted_by="test")
        for n, (scope, tags, importance) in enumerate(specs):
            ws.memory.store_item("a", f"item {n} in {scope}", importance=importance / 10, tags=tags, scope=scope)
        result = Consolidator(ws.memory).run("a")
        for group in result.groups:
            merged = ws.memory.get("a", group.consolidated_uid)
            sources = [ws.memory.get("a", uid).scope for uid in merged.derived_from]
            assert derived_scope_allowed(merged.scope, sources) and {merged.scope} == set(sources)
            assert all(f"in {merged.scope}" in part for part in merged.content.split(" | "))
    finally:
        ws.close()


def test_a_group_of_mixed_scopes_is_refused_not_published():
    mixed = [mem(["t"]), mem(["t"]).model_copy(update={"scope": "project:x"})]
    with pytest.raises(InputError, match="scope: a consolidated group mixes non-global scopes"):
        Consolidator._merge("a", mixed, datetime(2024, 5, 1, tzinfo=UTC))
