"""Tier management (seed 004): promotion and demotion at their boundaries, with a fixed ``now``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.ids import new_id
from kg.memory.tiers import TierChange, TierPolicy, idle_time, plan_tier_changes
from kg.models import MemoryItem, Tier
from tests.budget import examples

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
DAY = timedelta(days=1)


def item(tier: Tier = Tier.WORKING, *, idle: timedelta | None = None, created_ago: timedelta = 400 * DAY,
         count: int = 0, importance: float = 0.5, archived: bool = False) -> MemoryItem:  # fmt: skip
    """An item last accessed ``idle`` before NOW (never accessed when None)."""
    return MemoryItem(uid=new_id("memory"), agent_id="a", content="x", created_at=NOW - created_ago, tier=tier,
                      accessed_at=NOW - idle if idle is not None else None, access_count=count,
                      importance=importance, archived_at=NOW if archived else None)  # fmt: skip


def moves(*items: MemoryItem, now: datetime = NOW, policy: TierPolicy | None = None) -> list[tuple[Tier, Tier]]:
    return [(c.old_tier, c.new_tier) for c in plan_tier_changes(list(items), now=now, policy=policy)]


# ------------------------------------------------------------------------------------------ promote


@pytest.mark.parametrize(
    ("count", "importance", "idle", "promoted"),
    [
        (10, 0.8, DAY, True),
        (9, 0.8, DAY, False),
        (10, 0.79, DAY, False),
        (10, 0.8, 30 * DAY, True),  # idle exactly 30 days: not yet idle
        (10, 0.8, 30 * DAY + SECOND, False),  # would be demoted again: no promotion
    ],
)
def test_promotion_to_core(count: int, importance: float, idle: timedelta, promoted: bool) -> None:
    for tier in (Tier.WORKING, Tier.PERIPHERAL):
        expected = [(tier, Tier.CORE)] if promoted else []
        if tier is Tier.PERIPHERAL and not promoted and idle <= 60 * DAY:
            expected = [(Tier.PERIPHERAL, Tier.WORKING)]  # revived instead
        assert moves(item(tier, idle=idle, count=count, importance=importance)) == expected


# ------------------------------------------------------------------------------------------- demote


def test_core_demoted_after_more_than_30_idle_days() -> None:
    assert moves(item(Tier.CORE, idle=30 * DAY, count=50, importance=0.9)) == []
    [change] = plan_tier_changes([item(Tier.CORE, idle=30 * DAY + SECOND, count=50, importance=0.9)], now=NOW)
    assert (change.old_tier, change.new_tier) == (Tier.CORE, Tier.WORKING)
    assert change.reason == "not accessed since 2024-04-01T11:59:59.000000Z: more than 30 days"


@pytest.mark.parametrize(
    ("idle", "importance", "demoted"),
    [(60 * DAY, 0.3, False), (60 * DAY + SECOND, 0.3, True), (60 * DAY + SECOND, 0.5, False), (90 * DAY, 0.49, True)],
)
def test_working_to_peripheral(idle: timedelta, importance: float, demoted: bool) -> None:
    expected = [(Tier.WORKING, Tier.PERIPHERAL)] if demoted else []
    assert moves(item(Tier.WORKING, idle=idle, importance=importance)) == expected


def test_a_long_idle_unimportant_core_item_goes_straight_to_peripheral() -> None:
    [change] = plan_tier_changes([item(Tier.CORE, idle=90 * DAY, importance=0.3)], now=NOW)
    assert (change.old_tier, change.new_tier) == (Tier.CORE, Tier.PERIPHERAL)
    since = "not accessed since 2024-02-01T12:00:00.000000Z"
    assert change.reason == f"{since}: more than 30 days; {since}: more than 60 days, importance 0.3"


def test_never_accessed_items_count_from_creation() -> None:
    assert moves(item(Tier.WORKING, created_ago=60 * DAY, importance=0.1)) == []
    assert moves(item(Tier.WORKING, created_ago=61 * DAY, importance=0.1)) == [(Tier.WORKING, Tier.PERIPHERAL)]
    assert idle_time(item(created_ago=DAY), NOW) == DAY


def test_revival_of_peripheral_items() -> None:
    assert moves(item(Tier.PERIPHERAL, idle=60 * DAY)) == [(Tier.PERIPHERAL, Tier.WORKING)]
    assert moves(item(Tier.PERIPHERAL, idle=60 * DAY + SECOND)) == []
    assert moves(item(Tier.PERIPHERAL, created_ago=DAY)) == []  # created cold, never accessed: stays cold


# ----------------------------------------------------------------------------------- general rules


def test_archived_items_are_left_alone_and_order_is_kept() -> None:
    a = item(Tier.CORE, idle=40 * DAY)
    b = item(Tier.CORE, idle=40 * DAY, archived=True)
    c = item(Tier.WORKING, idle=DAY, count=10, importance=0.9)
    assert [ch.uid for ch in plan_tier_changes([a, b, c], now=NOW)] == [a.uid, c.uid]


def test_a_naive_now_is_utc_and_a_future_access_is_recent() -> None:
    naive = NOW.replace(tzinfo=None) + 31 * DAY
    assert moves(item(Tier.CORE, idle=DAY), now=naive) == [(Tier.CORE, Tier.WORKING)]
    assert idle_time(item(idle=-DAY), NOW) == timedelta(0)


def test_custom_policy() -> None:
    policy = TierPolicy(promote_min_access_count=2, promote_min_importance=0.5, core_idle=timedelta(days=1))
    assert moves(item(idle=DAY, count=2, importance=0.5), policy=policy) == [(Tier.WORKING, Tier.CORE)]
    assert moves(item(Tier.CORE, idle=DAY + SECOND), policy=policy) == [(Tier.CORE, Tier.WORKING)]
    with pytest.raises(ValueError, match="frozen"):
        policy.core_idle = timedelta(days=2)  # type: ignore[misc]


def test_defaults_are_the_documented_ones() -> None:
    policy = TierPolicy()
    assert (policy.promote_min_access_count, policy.promote_min_importance, policy.core_idle,
            policy.peripheral_idle, policy.peripheral_max_importance) == (10, 0.8, 30 * DAY, 60 * DAY, 0.5)  # fmt: skip


def apply(items: list[MemoryItem], changes: list[TierChange]) -> list[MemoryItem]:
    new = {c.uid: c.new_tier for c in changes}
    return [i.model_copy(update={"tier": new.get(i.uid, i.tier)}) for i in items]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(Tier)), st.one_of(st.none(), st.integers(0, 120)), st.integers(0, 20),
                          st.sampled_from([0.1, 0.49, 0.5, 0.79, 0.8, 1.0])), max_size=20))  # fmt: skip
def test_a_plan_once_applied_is_stable(rows: list[tuple[Tier, int | None, int, float]]) -> None:
    items = [item(t, idle=None if d is None else d * DAY, count=n, importance=imp) for t, d, n, imp in rows]
    changes = plan_tier_changes(items, now=NOW)
    assert all(c.old_tier is not c.new_tier for c in changes)
    assert plan_tier_changes(apply(items, changes), now=NOW) == []
