"""Memory port contract: capacity rules, updates, filters, search, access statistics, outbox."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kg.clock import FixedClock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import MemoryItem, MemoryQuery, MemoryStoreKind, MemoryType
from kg.ports import GraphStore, StoreLimits

LIMITS = StoreLimits(working_capacity=3, short_term_capacity=4, short_term_ttl_seconds=3600)


@pytest.fixture
def store(memory_store: GraphStore) -> GraphStore:
    """The shared ``memory_store``: agents ``a`` and ``b`` on a backend that keeps memory."""
    return memory_store


def item(clock: FixedClock, content: str = "note", **over: object) -> MemoryItem:
    now = clock.now()
    data: dict[str, object] = {"uid": new_id("memory"), "agent_id": "a", "content": content, "created_at": now,
                               "updated_at": now, **over}  # fmt: skip
    if data.get("store", "short_term") == "short_term" and "expires_at" not in data:
        data["expires_at"] = now + timedelta(seconds=LIMITS.short_term_ttl_seconds)
    return MemoryItem.model_validate(data)


def add(store: GraphStore, clock: FixedClock, *items: MemoryItem):
    return store.memory.add(list(items), limits=LIMITS, now=clock.now())


def q(**over: object) -> MemoryQuery:
    return MemoryQuery.model_validate({"scopes": ["global", "agent:a", "agent:b"], **over})


def by_store(store: GraphStore, agent_id: str = "a") -> dict[str, int]:
    return {name: c["active"] for name, c in store.memory.counts(agent_id).items()}


def test_items_read_back_unchanged(store, clock):
    original = item(clock, "JWT uses RS256", type="decision", importance=0.8, tags=["auth", "jwt"], confidence=0.9)
    add(store, clock, original)
    assert store.memory.get_many([original.uid])[original.uid] == original


def test_working_overflow_demotes_the_oldest_to_short_term_with_a_fresh_ttl(store, clock):
    uids = []
    for n in range(5):
        clock.advance(timedelta(minutes=1))
        first = item(clock, f"w{n}", store="working", expires_at=None)
        uids.append(first.uid)
        result = add(store, clock, first)
    assert by_store(store) == {"working": 3, "short_term": 2, "long_term": 0}
    assert result.demoted == (uids[1],)  # the last add pushed out the then-oldest
    moved = store.memory.get_many(uids[:2])
    assert all(m.store is MemoryStoreKind.SHORT_TERM for m in moved.values())
    assert moved[uids[1]].expires_at == clock.now() + timedelta(hours=1)


def test_short_term_overflow_archives_the_least_important(store, clock):
    items = [item(clock, f"s{n}", importance=imp) for n, imp in enumerate([0.5, 0.2, 0.9, 0.4, 0.7])]
    result = add(store, clock, *items)
    assert result.archived == (items[1].uid,)
    assert store.memory.get_many([items[1].uid])[items[1].uid].archived_at == clock.now()
    assert by_store(store)["short_term"] == 4


def test_expired_short_term_items_are_archived_never_deleted(store, clock):
    old = item(clock, "old")
    add(store, clock, old)
    clock.advance(timedelta(hours=1))
    assert store.memory.archive_expired("a", now=clock.now()) == [old.uid]
    kept = store.memory.get_many([old.uid])[old.uid]
    assert kept.archived_at == clock.now() and kept.content == "old"
    assert store.memory.list(q(include_archived=True))[0].uid == old.uid
    assert store.memory.list(q()) == []


def test_capacity_is_per_agent(store, clock):
    add(store, clock, *[item(clock, f"a{n}", store="working", expires_at=None) for n in range(3)])
    add(store, clock, *[item(clock, f"b{n}", agent_id="b", store="working", expires_at=None) for n in range(3)])
    assert by_store(store, "a")["working"] == 3 and by_store(store, "b")["working"] == 3


def test_unknown_owner_writes_nothing(store, clock):
    before = store.outbox.counts()
    with pytest.raises(NotFoundError, match="agent_id"):
        add(store, clock, item(clock), item(clock, agent_id="ghost"))
    assert store.memory.list(q(include_archived=True)) == []
    assert store.outbox.counts() == before


def test_update_changes_fields_and_refuses_unknown_ones(store, clock):
    first = item(clock)
    add(store, clock, first)
    clock.advance(timedelta(minutes=5))
    store.memory.update([(first.uid, {"store": MemoryStoreKind.LONG_TERM, "expires_at": None, "tags": ["x"]})],
                        now=clock.now())  # fmt: skip
    got = store.memory.get_many([first.uid])[first.uid]
    assert (got.store, got.expires_at, got.tags, got.updated_at) == (
        MemoryStoreKind.LONG_TERM,
        None,
        ["x"],
        clock.now(),
    )
    with pytest.raises(InputError, match="content"):
        store.memory.update([(first.uid, {"content": "rewritten"})], now=clock.now())
    with pytest.raises(NotFoundError):
        store.memory.update([("M-00000000000000000000000000", {"tags": []})], now=clock.now())


def test_add_with_updates_is_one_transaction(store, clock):
    member = item(clock, "member")
    add(store, clock, member)
    merged = item(clock, "merged", store="long_term", expires_at=None, derived_from=[member.uid])
    with pytest.raises(NotFoundError):
        store.memory.add(
            [merged],
            limits=LIMITS,
            now=clock.now(),
            updates=[(member.uid, {"archived_at": clock.now()}), ("M-00000000000000000000000000", {})],
        )
    assert merged.uid not in store.memory.get_many([merged.uid])  # rolled back with the failing update
    store.memory.add([merged], limits=LIMITS, now=clock.now(), updates=[(member.uid, {"archived_at": clock.now()})])
    assert store.memory.get_many([merged.uid])[merged.uid].derived_from == [member.uid]
    assert store.memory.get_many([member.uid])[member.uid].archived_at == clock.now()


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, ["alpha", "beta", "gamma", "delta"]),
        ({"types": ["decision"]}, ["alpha", "gamma"]),
        ({"stores": ["long_term"]}, ["delta"]),
        ({"tags": ["auth"]}, ["alpha", "beta"]),
        ({"tags": ["auth", "jwt"]}, ["alpha"]),
        ({"min_importance": 0.7}, ["alpha", "delta"]),
        ({"agent_id": "b"}, ["gamma"]),
        ({"scopes": ["agent:b"]}, ["gamma"]),
        ({"order": "importance"}, ["delta", "alpha", "gamma", "beta"]),
        ({"limit": 2}, ["alpha", "beta"]),
    ],
)
def test_list_filters(store, clock, filters, expected):
    add(store, clock, item(clock, "alpha", type="decision", importance=0.8, tags=["auth", "jwt"]))
    clock.advance(timedelta(seconds=1))
    add(store, clock, item(clock, "beta", importance=0.3, tags=["auth"]))
    clock.advance(timedelta(seconds=1))
    add(store, clock, item(clock, "gamma", agent_id="b", type="decision", importance=0.5))
    clock.advance(timedelta(seconds=1))
    add(store, clock, item(clock, "delta", store="long_term", expires_at=None, importance=0.95))
    assert [i.content for i in store.memory.list(q(**filters))] == expected


def test_created_after_and_archived_flags(store, clock):
    early = item(clock, "early")
    add(store, clock, early)
    clock.advance(timedelta(days=2))
    add(store, clock, item(clock, "late", store="long_term", expires_at=None))
    assert [i.content for i in store.memory.list(q(created_after=clock.now() - timedelta(days=1)))] == ["late"]
    store.memory.update([(early.uid, {"archived_at": clock.now()})], now=clock.now())
    assert [i.content for i in store.memory.list(q(only_archived=True))] == ["early"]
    assert [i.content for i in store.memory.list(q(include_archived=True))] == ["early", "late"]


def test_search_matches_any_term_best_first_within_filters(store, clock):
    add(store, clock, item(clock, "JWT tokens are signed with RS256", tags=["auth"]),
        item(clock, "the database is Postgres"), item(clock, "JWT JWT JWT everywhere", type="event"),
        item(clock, "unrelated", tags=["jwt"]))  # fmt: skip
    found = store.memory.search("jwt postgres", q())
    assert {i.content for i, _ in found} == {"JWT tokens are signed with RS256", "the database is Postgres",
                                             "JWT JWT JWT everywhere", "unrelated"}  # fmt: skip
    ranks = [rank for _, rank in found]
    assert ranks == sorted(ranks)  # BM25: lower is better
    assert [i.content for i, _ in store.memory.search("jwt", q(types=["event"]))] == ["JWT JWT JWT everywhere"]
    assert store.memory.search("!!! ???", q()) == []
    assert store.memory.search('"; DROP TABLE memory_items; --', q()) == []


def test_touch_counts_accesses_without_outbox_events(store, clock):
    first = item(clock)
    add(store, clock, first)
    before = store.outbox.counts()
    clock.advance(timedelta(minutes=1))
    store.memory.touch([first.uid, first.uid], now=clock.now())
    store.memory.touch([first.uid], now=clock.now())
    got = store.memory.get_many([first.uid])[first.uid]
    assert (got.access_count, got.accessed_at) == (2, clock.now())
    assert store.outbox.counts() == before


def test_every_change_writes_one_outbox_event_with_the_item(store, clock):
    start = store.outbox.counts()["pending"]
    items = [item(clock, f"w{n}", store="working", expires_at=None) for n in range(4)]  # the 4th demotes one
    add(store, clock, *items)
    events = [e for e in store.outbox.pending(limit=100) if e.aggregate == "memory"]
    assert len(events) == store.outbox.counts()["pending"] - start == 4
    assert {e.record_uid for e in events} == {i.uid for i in items}
    demoted = next(e for e in events if e.payload["store"] == "short_term")
    assert MemoryItem.model_validate({**demoted.payload, "access_count": 0}).content in {"w0", "w1", "w2", "w3"}
    assert all(e.payload["type"] == MemoryType.OBSERVATION.value for e in events)


def test_items_read_from_the_store_equal_validated_ones_in_every_field(store, clock):
    full = item(clock, "all fields set", type="lesson", importance=0.61, confidence=0.4, tags=["a", "b"],
                source="cli", tier="core", derived_from=[new_id("memory")], access_count=0)  # fmt: skip
    add(store, clock, full)
    clock.advance(timedelta(minutes=1))
    store.memory.touch([full.uid], now=clock.now())
    read = store.memory.get_many([full.uid])[full.uid]
    validated = MemoryItem.model_validate(read.model_dump())
    assert read == validated and read.model_dump_json() == validated.model_dump_json()
    assert read.model_fields_set == validated.model_fields_set
    assert (read.access_count, read.accessed_at, read.derived_from) == (1, clock.now(), full.derived_from)
    with pytest.raises(ValueError, match="importance"):  # still a pydantic model: assignments validate
        read.importance = 2
