"""The desire re-prioritisation formula (R5), on goals built in memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.ids import new_id
from kg.models import Goal
from reasoning.bdi import desire_priority

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def goal(priority: int | None = 5, progress: float | None = 0.0, status: str = "pending") -> Goal:
    return Goal(uid=new_id("goal"), agent_id="a", content="g", priority=priority, progress=progress, status=status,
                created_at=T0, updated_at=T0)  # fmt: skip


@pytest.mark.parametrize(
    ("urgency", "goals", "expected"),
    [
        (None, [], None),  # nothing to go on: the priority stays as it is
        (0.0, [], 1),
        (1.0, [], 10),
        (0.5, [], 6),  # 1 + round_half_up(4.5) = 6 (not banker's 4)
        (None, [goal(priority=8)], 8),  # (8 - 1) / 9 = 0.78 -> 1 + round(7) = 8
        (None, [goal(priority=10, progress=0.5)], 6),  # 0.5 -> 1 + round_half_up(4.5)
        (None, [goal(priority=None, progress=None)], 5),  # defaults: priority 5, progress 0
        (0.2, [goal(priority=10)], 6),  # mean(0.2, 1.0) = 0.6 -> 1 + round(5.4)
        (0.2, [goal(priority=10, status="achieved")], 3),  # finished goals are left out: 0.2 -> 1 + round(1.8)
        (None, [goal(priority=10, status="suspended")], None),
        (None, [goal(priority=2), goal(priority=9, status="active"), goal(priority=10, progress=1.0)], 9),  # max
    ],
)
def test_desire_priority(urgency: float | None, goals: list[Goal], expected: int | None) -> None:
    assert desire_priority(urgency, goals) == expected
