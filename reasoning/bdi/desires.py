"""Desire re-prioritisation (R5): a desire's priority follows its urgency and the goals it motivates.

For each active desire of the agent, with its open goals (``pending`` or ``active``, reached by
``desire-motivates-goal`` edges)::

    U = urgency                                         (0..1; left out when the desire has none)
    G = max over open goals of  (priority - 1) / 9 * (1 - progress)
                                                        (left out when there is no open goal;
                                                         a goal without priority counts 5,
                                                         without progress 0)
    score    = mean of the terms present (U, G)
    priority = 1 + round_half_up(9 * score)             (1..10)

So the most important unfinished goal pulls its desire up, finished work lets it sink, and an
urgent desire rises even before any goal serves it. A desire with neither urgency nor open goals
keeps the priority it was given: there is nothing to recompute it from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from kg.models import BDINode, NodeKind, RelationKind
from kg.workspace import Workspace
from reasoning.bdi.models import DesireChange

OPEN_GOAL_STATUSES = ("pending", "active")
DEFAULT_GOAL_PRIORITY = 5
MAX_NODES = 100_000
MAX_GOALS_PER_DESIRE = 10_000


def _goal_weight(goal: BDINode) -> float:
    priority = goal.priority if goal.priority is not None else DEFAULT_GOAL_PRIORITY
    progress = goal.progress if goal.progress is not None else 0.0
    return (priority - 1) / 9 * (1 - progress)


def desire_priority(urgency: float | None, goals: Iterable[BDINode]) -> int | None:
    """The priority (1..10) the formula gives, or None when it has nothing to go on."""
    terms = [] if urgency is None else [urgency]
    weights = [_goal_weight(g) for g in goals if g.status in OPEN_GOAL_STATUSES]
    if weights:
        terms.append(max(weights))
    if not terms:
        return None
    score = sum(terms) / len(terms)
    return min(10, max(1, 1 + math.floor(9 * score + 0.5)))


def _motivated_goals(ws: Workspace, agent_id: str, desire: BDINode, goals: dict[str, BDINode]) -> list[BDINode]:
    paths = ws.bdi.paths(agent_id, ["desire", "goal"], start_uid=desire.uid,
                         relation=RelationKind.DESIRE_MOTIVATES_GOAL.value, limit=MAX_GOALS_PER_DESIRE)  # fmt: skip
    uids = dict.fromkeys(path.nodes[1] for path in paths)
    return [goals[uid] if uid in goals else ws.bdi.get(agent_id, uid) for uid in uids]


def reprioritize_desires(ws: Workspace, agent_id: str) -> list[DesireChange]:
    """Recompute the priority of the agent's active desires; update and return those that changed."""
    desires = ws.bdi.list(agent_id, NodeKind.DESIRE, owner=agent_id, status="active", limit=MAX_NODES)
    if not desires:
        return []
    goals = {g.uid: g for g in ws.bdi.list(agent_id, NodeKind.GOAL, limit=MAX_NODES)}
    changes = []
    for desire in desires:
        motivated = _motivated_goals(ws, agent_id, desire, goals)
        new = desire_priority(desire.urgency, motivated)
        if new is None or new == desire.priority:
            continue
        ws.bdi.update(agent_id, desire.uid, priority=new)
        open_goals = sum(1 for g in motivated if g.status in OPEN_GOAL_STATUSES)
        changes.append(DesireChange(uid=desire.uid, content=desire.content, old_priority=desire.priority,
                                    new_priority=new, goals=open_goals))  # fmt: skip
    return changes
