"""Tier management (seed 004): which memory items move between the core, working and peripheral tiers.

The seed calls the tiers hot, warm and cold; here they are ``core``, ``working`` and ``peripheral``
(:class:`kg.models.Tier`). :func:`plan_tier_changes` is pure: it reads items and a time and returns
the changes; the nightly job applies them through the memory service.

Rules, with the defaults of :class:`TierPolicy` ("idle" = time since the last access, or since
creation for an item never accessed):

1. **promote to core** — an item not in core with ``access_count >= 10`` and
   ``importance >= 0.8`` that is not idle for more than 30 days (an idle item would be demoted
   again by rule 2 the next night);
2. **demote core -> working** — a core item idle for more than 30 days;
3. **demote working -> peripheral** — a working item idle for more than 60 days with
   ``importance < 0.5``;
4. **revive peripheral -> working** — a peripheral item accessed within the last 60 days (a
   cold item that is being used again warms up; it can reach core through rule 1). This rule
   is our addition: without it a cold item could only ever come back by promotion.

The rules run in that order on one item, so an item can move two steps in one plan (a core item
idle for 90 days with importance 0.3 goes straight to peripheral) and the plan is stable: planning
again after applying it changes nothing. Archived items are left alone.

The seed's exact thresholds are not available to this project; these defaults are our choice
(recorded in docs/bdi-cycle.md) and every one of them is a field of :class:`TierPolicy`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from pydantic import ConfigDict, Field

from kg.models import MemoryItem, Model, Tier, Unit, format_ts, to_utc


class TierPolicy(Model):
    """Thresholds of the tier rules (frozen; make a new policy to change one).

    Attributes:
        promote_min_access_count: Accesses an item needs to be promoted to core (default 10).
        promote_min_importance: Importance an item needs to be promoted to core (default 0.8).
        core_idle: Idle time after which a core item is demoted to working (default 30 days;
            demoted when idle for *more* than this).
        peripheral_idle: Idle time after which a working item may go peripheral (default 60 days,
            more than this); also the window in which an access revives a peripheral item.
        peripheral_max_importance: A working item goes peripheral only when its importance is
            *below* this (default 0.5).
    """

    model_config = ConfigDict(frozen=True)

    promote_min_access_count: int = Field(default=10, ge=0)
    promote_min_importance: Unit = 0.8
    core_idle: timedelta = Field(default=timedelta(days=30))
    peripheral_idle: timedelta = Field(default=timedelta(days=60))
    peripheral_max_importance: Unit = 0.5


class TierChange(Model):
    """One planned move of a memory item between tiers."""

    model_config = ConfigDict(frozen=True)

    uid: str
    old_tier: Tier
    new_tier: Tier
    reason: str


def idle_time(item: MemoryItem, now: datetime) -> timedelta:
    """Time since the item was last accessed (or created, if never); never negative."""
    last = item.accessed_at or item.created_at
    return max(timedelta(0), to_utc(now) - last)


def _days(span: timedelta) -> str:
    return f"{span / timedelta(days=1):g} days"


def _steps(item: MemoryItem, now: datetime, policy: TierPolicy) -> tuple[Tier, list[str]]:
    tier, idle, reasons = item.tier, idle_time(item, now), []
    last = item.accessed_at or item.created_at
    since = f"not accessed since {format_ts(last)}{'' if item.accessed_at else ' (creation)'}"
    if (tier is not Tier.CORE and item.access_count >= policy.promote_min_access_count
            and item.importance >= policy.promote_min_importance and idle <= policy.core_idle):  # fmt: skip
        tier = Tier.CORE
        reasons.append(f"accessed {item.access_count} times, importance {item.importance:g}")
    if tier is Tier.CORE and idle > policy.core_idle:
        tier = Tier.WORKING
        reasons.append(f"{since}: more than {_days(policy.core_idle)}")
    if tier is Tier.WORKING and idle > policy.peripheral_idle and item.importance < policy.peripheral_max_importance:
        tier = Tier.PERIPHERAL
        reasons.append(f"{since}: more than {_days(policy.peripheral_idle)}, importance {item.importance:g}")
    if tier is Tier.PERIPHERAL and item.accessed_at is not None and idle <= policy.peripheral_idle:
        tier = Tier.WORKING
        reasons.append(f"accessed again at {format_ts(item.accessed_at)}")
    return tier, reasons


def plan_tier_changes(
    items: Iterable[MemoryItem], *, now: datetime, policy: TierPolicy | None = None
) -> list[TierChange]:
    """The tier moves due at ``now``, in the order of ``items`` (items that stay put are left out).

    Args:
        items: Memory items with their current tier, access count, last access and importance.
        now: The time to judge idleness at (a naive datetime means UTC).
        policy: Thresholds; :class:`TierPolicy` defaults when omitted.
    """
    policy = policy or TierPolicy()
    changes = []
    for item in items:
        if item.archived_at is not None:
            continue
        tier, reasons = _steps(item, now, policy)
        if tier is not item.tier:
            changes.append(TierChange(uid=item.uid, old_tier=item.tier, new_tier=tier, reason="; ".join(reasons)))
    return changes
