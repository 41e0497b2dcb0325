"""Importance as the OpenClaw memory enhancement spec (section 2) computes it, capped at 1:

- content signals (up to 0.4): preference words 0.15, decision words 0.15, goal/plan words 0.15, identity
  words 0.2, lesson words 0.1;
- a type baseline: identity 0.2, goal 0.18, decision 0.16, preference 0.15, lesson 0.12, skill 0.1, fact 0.08,
  event 0.05 (any other type 0.05);
- access: 0.03 per access, up to 0.2;
- recency: ``0.1 * exp(-0.005 * age in hours)``;
- engagement (up to 0.1 each part as the spec adds them): a user reaction 0.1, a ``critical`` tag 0.1 or an
  ``important`` tag 0.05.

Extracted items get it when written (an explicit importance given by a caller still wins).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

TYPE_WEIGHTS = {"identity": 0.2, "goal": 0.18, "decision": 0.16, "preference": 0.15, "lesson": 0.12, "skill": 0.1,
                "fact": 0.08, "event": 0.05}  # fmt: skip
_SIGNALS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("preference", "prefer"), 0.15),
    (("decision", "decided", "chose"), 0.15),
    (("goal", "want", "plan"), 0.15),
    (("identity", "i am", "my name", "call me"), 0.2),
    (("lesson", "learned", "mistake"), 0.1),
)


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


__all__ = ["TYPE_WEIGHTS", "content_score", "importance"]
