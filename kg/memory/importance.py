"""Importance as the OpenClaw memory enhancement spec (section 2) computes it, capped at 1, and when it is
recalculated.

The formula:

- content signals (up to 0.4): preference words 0.15, decision words 0.15, goal/plan words 0.15, identity
  words 0.2, lesson words 0.1;
- a type baseline: identity 0.2, goal 0.18, decision 0.16, preference 0.15, lesson 0.12, skill 0.1, fact 0.08,
  event 0.05 (any other type 0.05);
- access: 0.03 per access, up to 0.2;
- recency: ``0.1 * exp(-0.005 * age in hours)``;
- engagement (up to 0.1 each part as the spec adds them): a user reaction 0.1, a ``critical`` tag 0.1 or an
  ``important`` tag 0.05.

Only items that got their importance from the formula are recalculated: extracted items (source
``extraction``, tag ``extracted``) that no caller gave an explicit importance since (an explicit change adds the
tag ``importance:manual``, and such an item is never recalculated again). The spec's triggers: an access (a
recall that returns the item, in the same write that counts the access), a new related memory (an item of the
agent sharing a tag with it, marker tags aside), a tag change, and the maintenance pass (the nightly job).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from kg.models import MemoryItem

TYPE_WEIGHTS = {"identity": 0.2, "goal": 0.18, "decision": 0.16, "preference": 0.15, "lesson": 0.12, "skill": 0.1,
                "fact": 0.08, "event": 0.05}  # fmt: skip
_SIGNALS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("preference", "prefer"), 0.15),
    (("decision", "decided", "chose"), 0.15),
    (("goal", "want", "plan"), 0.15),
    (("identity", "i am", "my name", "call me"), 0.2),
    (("lesson", "learned", "mistake"), 0.1),
)
#: The tag every extracted item carries; with source ``extraction`` it marks an importance from the formula.
FORMULA_TAG = "extracted"
#: Added when a caller sets the importance of a formula-weighted item: it is never recalculated again.
MANUAL_TAG = "importance:manual"
#: Tags that say where an item came from or what dedup did to it, not what it is about: they never make two
#: items related.
MARKER_TAGS = frozenset({FORMULA_TAG, MANUAL_TAG, "session-summary", "context", "contradicts", "merged",
                         "contradicted", "superseded"})  # fmt: skip


def content_score(content: str) -> float:
    """The content signals of ``content`` (at most 0.4)."""
    text = content.lower()
    return min(sum(weight for words, weight in _SIGNALS if any(w in text for w in words)), 0.4)


def importance(content: str, memory_type: str, *, created_at: datetime, now: datetime, access_count: int = 0,
               tags: Sequence[str] = (), user_reaction: bool = False) -> float:  # fmt: skip
    """The spec's importance of a memory, in [0, 1] (rounded to 4 places)."""
    score = content_score(content)
    score += TYPE_WEIGHTS.get(memory_type, 0.05)
    score += min(access_count * 0.03, 0.2)
    age_hours = max((now - created_at).total_seconds() / 3600, 0.0)
    score += 0.1 * math.exp(-0.005 * age_hours)
    if user_reaction:
        score += 0.1
    if "critical" in tags:
        score += 0.1
    elif "important" in tags:
        score += 0.05
    return round(min(score, 1.0), 4)


def formula_weighted(item: MemoryItem) -> bool:
    """Whether ``item``'s importance comes from the formula (and so is recalculated)."""
    return item.source == "extraction" and FORMULA_TAG in item.tags and MANUAL_TAG not in item.tags


def item_importance(item: MemoryItem, now: datetime, *, access_count: int | None = None,
                    tags: Sequence[str] | None = None) -> float:  # fmt: skip
    """The formula's importance of ``item`` at ``now`` (with another access count or tags when given)."""
    return importance(item.content, item.type.value, created_at=item.created_at, now=now,
                      access_count=item.access_count if access_count is None else access_count,
                      tags=item.tags if tags is None else tags)  # fmt: skip


def recalculated(items: Iterable[MemoryItem], now: datetime, *,
                 accessed: Collection[str] = ()) -> dict[str, float]:  # fmt: skip
    """New importances of the formula-weighted ``items`` whose value changes (those in ``accessed`` counted
    with one more access)."""
    out: dict[str, float] = {}
    for item in items:
        if not formula_weighted(item) or item.archived_at is not None:
            continue
        value = item_importance(item, now, access_count=item.access_count + (item.uid in accessed))
        if abs(value - item.importance) >= 1e-4:
            out[item.uid] = value
    return out


def topic_tags(tags: Iterable[str]) -> list[str]:
    """The tags that say what an item is about (marker and ``category:`` tags left out)."""
    return sorted({t for t in tags if t not in MARKER_TAGS and not t.startswith("category:")})


__all__ = ["FORMULA_TAG", "MANUAL_TAG", "MARKER_TAGS", "TYPE_WEIGHTS", "content_score", "formula_weighted",
           "importance", "item_importance", "recalculated", "topic_tags"]  # fmt: skip
