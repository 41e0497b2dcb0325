"""Memory service: default importance, TTL, daily log, recall filters, recursive search, isolation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kg.errors import InputError, NotFoundError, ScopeError
from kg.memory.files import DAILY_ENTRY_RE
from kg.memory.service import DEFAULT_IMPORTANCE, RecallHit, new_terms, parse_max_age
from kg.models import MemoryStoreKind, MemoryType


@pytest.mark.parametrize(("type_", "importance"), [(t.value, v) for t, v in DEFAULT_IMPORTANCE.items()])
def test_default_importance_follows_the_type(ws, type_, importance):
    assert ws.memory.store_item("a", "x", type=type_).item.importance == importance


def test_seed_table_and_fallback(ws):
    assert DEFAULT_IMPORTANCE[MemoryType.IDENTITY] == 0.9 and DEFAULT_IMPORTANCE[MemoryType.EVENT] == 0.4
    assert ws.memory.store_item("a", "x", type="observation").item.importance == 0.5
    assert ws.memory.store_item("a", "x", type="event", importance=0.95).item.importance == 0.95


def test_short_term_items_get_a_two_hour_ttl_others_none(ws):
    now = ws.clock.now()
    assert ws.memory.store_item("a", "s").item.expires_at == now + timedelta(hours=2)
    assert ws.memory.store_item("a", "w", store="working").item.expires_at is None
    assert ws.memory.store_item("a", "l", store="long_term").item.expires_at is None


def test_every_store_appends_to_the_daily_log(ws):
    first = ws.memory.store_item("a", "JWT uses RS256", type="decision", tags=["auth", "jwt"]).item
    ws.clock.advance(timedelta(minutes=3))
    second = ws.memory.store_item("a", "second\nline", store="long_term").item
    log = (ws.path / "agents" / "a" / "memory" / "2024-05-01.md").read_text()
    assert log.startswith("# Daily log 2024-05-01\n") and log.count("# Daily log") == 1
    entries = DAILY_ENTRY_RE.findall(log)
    assert [(e[0], e[1], e[2], e[4]) for e in entries] == [
        ("12:00", "decision", first.uid, "short_term"),
        ("12:03", "observation", second.uid, "long_term"),
    ]
    assert "tags: auth, jwt\n\nJWT uses RS256\n" in log and "second\nline" in log


def test_the_next_day_starts_a_new_log(ws):
    ws.memory.store_item("a", "today")
    ws.clock.advance(timedelta(days=1))
    ws.memory.store_item("a", "tomorrow")
    files = sorted(p.name for p in (ws.path / "agents" / "a" / "memory").glob("*.md"))
    assert files == ["2024-05-01.md", "2024-05-02.md"]


def contents(hits: list[RecallHit]) -> list[str]:
    return [h.item.content for h in hits]


def lexical(ws, agent, *args, **kwargs) -> list[RecallHit]:
    """Recall in BM25 mode: these tests pin down filters, depth and access rules on exact keyword matches
    (hybrid recall, which also returns semantic neighbours, is tested in test_recall_engine.py)."""
    return ws.memory.recall(agent, *args, mode=kwargs.pop("mode", "bm25"), **kwargs).hits


@pytest.fixture
def memories(ws):
    ws.memory.store_item("a", "JWT tokens are signed with RS256", type="decision", tags=["auth", "jwt"])
    ws.clock.advance(timedelta(minutes=1))
    ws.memory.store_item("a", "Authentication uses OAuth2 flows", type="fact", importance=0.9, tags=["auth"])
    ws.clock.advance(timedelta(minutes=1))
    ws.memory.store_item("a", "The database is Postgres 16", type="decision", store="long_term", tags=["db"])
    ws.clock.advance(timedelta(minutes=1))
    ws.memory.store_item("a", "OAuth2 refresh tokens rotate weekly", type="fact", importance=0.3, tags=["oauth2"])
    return ws


def test_recall_ranks_relevance_blended_with_importance(memories):
    hits = lexical(memories, "a", "tokens")
    assert contents(hits)[0] in {"JWT tokens are signed with RS256", "OAuth2 refresh tokens rotate weekly"}
    assert all(h.depth is None for h in hits)  # depth 0: no annotation
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:  # BM25 only: fused = bm25_norm, blended with importance, times the decay boost
        assert h.mode == "bm25" and h.vector == 0.0
        assert h.score == pytest.approx((0.7 * h.bm25 + 0.3 * h.importance) * h.decay, abs=1e-5)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"types": ["decision"]}, {"JWT tokens are signed with RS256"}),
        ({"stores": ["long_term"]}, set()),
        ({"tags": ["auth", "jwt"]}, {"JWT tokens are signed with RS256"}),
        ({"min_importance": 0.5}, {"JWT tokens are signed with RS256"}),
    ],
)
def test_recall_filters(memories, filters, expected):
    assert set(contents(lexical(memories, "a", "tokens", **filters))) == expected


def test_recall_without_query_gives_the_most_important_first(memories):
    # the two decisions tie at their default 0.75: the newer one comes first
    assert contents(lexical(memories, "a", limit=3)) == [
        "Authentication uses OAuth2 flows",
        "The database is Postgres 16",
        "JWT tokens are signed with RS256",
    ]


def test_max_age(memories):
    memories.clock.advance(timedelta(minutes=30))  # now = +33 min; the OAuth2 items were stored at +1 and +3
    assert contents(lexical(memories, "a", "oauth2", max_age="32m")) == [
        "Authentication uses OAuth2 flows",
        "OAuth2 refresh tokens rotate weekly",
    ]
    assert contents(lexical(memories, "a", "oauth2", max_age="31m")) == ["OAuth2 refresh tokens rotate weekly"]


@pytest.mark.parametrize(("text", "seconds"), [("90m", 5400), ("36h", 129600), ("7d", 604800), ("2w", 1209600)])
def test_parse_max_age(text, seconds):
    assert parse_max_age(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("bad", ["", "7", "7y", "-1d", "0d", "d"])
def test_bad_max_age(bad):
    with pytest.raises(InputError, match="max_age"):
        parse_max_age(bad)


def test_recall_updates_access_statistics(memories):
    hit = lexical(memories, "a", "postgres")[0]
    memories.clock.advance(timedelta(minutes=5))
    lexical(memories, "a", "postgres")
    item = memories.memory.get("a", hit.item.uid)
    assert (item.access_count, item.accessed_at) == (2, memories.clock.now())


def test_recursive_search_follows_new_terms_and_annotates_depth(memories):
    hits = lexical(memories, "a", "JWT", depth=2)
    by_content = {h.item.content: h.depth for h in hits}
    assert by_content["JWT tokens are signed with RS256"] == 0
    # "tokens" (and the tag "auth") come from the depth-0 hit and find the rest one level down
    assert by_content["OAuth2 refresh tokens rotate weekly"] == 1
    assert by_content["Authentication uses OAuth2 flows"] == 1
    assert len(hits) == len({h.item.uid for h in hits})  # de-duplicated


def test_empty_depth_zero_results_end_the_recursion(memories):
    assert lexical(memories, "a", "kubernetes", depth=3) == []


def test_new_terms_prefers_frequent_long_words_and_tags(memories):
    hits = lexical(memories, "a", "tokens")
    assert "tokens" not in new_terms(hits, {"tokens"})
    assert all(len(t) > 3 or t in {"jwt", "db"} for t in new_terms(hits, set()))


@pytest.mark.parametrize(("field", "kwargs"), [("depth", {"depth": 4}), ("depth", {"depth": -1}),
                                               ("limit", {"limit": 0}), ("limit", {"limit": 101})])  # fmt: skip
def test_recall_bounds(memories, field, kwargs):
    with pytest.raises(InputError, match=field):
        lexical(memories, "a", "x", **kwargs)


def test_expired_items_read_as_archived_and_stay_recallable(memories):
    memories.clock.advance(timedelta(hours=3))
    assert "JWT tokens are signed with RS256" not in contents(lexical(memories, "a", "tokens"))
    archived = lexical(memories, "a", "tokens", include_archived=True)
    assert "JWT tokens are signed with RS256" in contents(archived)
    assert memories.memory.status("a")["stores"]["short_term"] == {"active": 0, "archived": 3}


def test_agents_do_not_see_each_others_private_memories(memories):
    assert lexical(memories, "b", "tokens") == []
    assert lexical(memories, "b", depth=3) == []
    uid = lexical(memories, "a", "postgres")[0].item.uid
    with pytest.raises(NotFoundError):
        memories.memory.get("b", uid)
    with pytest.raises(ScopeError):
        lexical(memories, "b", "tokens", scope="agent:a")
    shared = memories.memory.store_item("a", "tokens policy for everyone", scope="global").item
    assert shared.uid in {h.item.uid for h in lexical(memories, "b", "tokens")}


def test_update_validates(memories):
    uid = lexical(memories, "a", "postgres")[0].item.uid
    assert memories.memory.update("a", uid, tier="core").tier.value == "core"
    with pytest.raises(InputError, match="importance"):
        memories.memory.update("a", uid, importance=2)
    with pytest.raises(NotFoundError):
        memories.memory.update("b", uid, tier="core")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"content": "   "}, "content"),
        ({"content": "x", "importance": 1.5}, "importance"),
        ({"content": "x", "type": "dream"}, "type"),
        ({"content": "x", "store": "forever"}, "store"),
        ({"content": "x", "tags": ["has space"]}, "tags.0"),
        ({"content": "x", "scope": "agent:b"}, None),
        ({"content": "x" * 70_000}, "content"),
        ({"content": "x", "confidence": float("nan")}, "confidence"),
    ],
)
def test_bad_input_changes_nothing(ws, snapshot, kwargs, field):
    before = snapshot(ws)
    with pytest.raises((InputError, ScopeError)) as err:
        ws.memory.store_item("a", **kwargs)
    if field is not None:
        assert err.value.field == field  # type: ignore[union-attr]
    assert snapshot(ws) == before


def test_unknown_agent(ws, snapshot):
    before = snapshot(ws)
    with pytest.raises(NotFoundError):
        ws.memory.store_item("ghost", "x")
    with pytest.raises(InputError, match="agent"):
        ws.memory.store_item("../x", "x")
    assert snapshot(ws) == before


def test_status_counts(memories):
    status = memories.memory.status("a")
    assert status["stores"] == {
        "working": {"active": 0, "archived": 0},
        "short_term": {"active": 3, "archived": 0},
        "long_term": {"active": 1, "archived": 0},
    }
    assert status["capacity"] == {"working": 7, "short_term": 200, "long_term": None}
    assert MemoryStoreKind.SHORT_TERM.value in status["stores"]


def test_deeper_levels_still_find_new_items_when_their_best_matches_were_already_found(ws):
    # depth 0 finds the two "alpha" items; their shared new term "beta" ranks them first again at depth 1,
    # so with limit 2 a level that cut before de-duplicating would find nothing new
    ws.memory.store_item("a", "alpha beta beta beta", importance=0.9)
    ws.memory.store_item("a", "alpha beta beta beta beta", importance=0.9)
    ws.memory.store_item("a", "beta only here", importance=0.1)
    hits = lexical(ws, "a", "alpha", limit=2, depth=1)
    assert [(h.item.content, h.depth) for h in hits][-1] == ("beta only here", 1)


def test_tier_rules_are_applied_to_the_store(ws):
    hot = ws.memory.store_item("a", "used all the time", store="long_term", importance=0.9).item
    cold = ws.memory.store_item("a", "never looked at", store="long_term", importance=0.2).item
    for _ in range(10):
        lexical(ws, "a", "used")
    assert ws.memory.apply_tier_rules("a", dry_run=True)[0].uid == hot.uid
    assert ws.memory.get("a", hot.uid).tier.value == "working"  # dry run changed nothing
    changes = ws.memory.apply_tier_rules("a")
    assert [(c.uid, c.new_tier.value) for c in changes] == [(hot.uid, "core")]
    ws.clock.advance(timedelta(days=61))
    later = {c.uid: c.new_tier.value for c in ws.memory.apply_tier_rules("a")}
    assert later == {hot.uid: "working", cold.uid: "peripheral"}
    assert ws.memory.get("a", cold.uid).tier.value == "peripheral"
