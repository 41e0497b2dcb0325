"""Stale-intention pruning (R5): by deadline, and by the agent's commitment strategy.

An active or suspended intention is stale when

* its deadline has passed (``deadline < now``), whatever the strategy; or
* it went without an update for *more than* the strategy's stall period (the seed's
  ``daysSinceUpdate > stallDays``): open-minded 7 days, cautious 3 days; a single-minded agent
  never gives up on a stalled intention, only on a missed deadline.

Pruning never deletes: the intention's status becomes ``dropped`` (through the BDI service, so the
change is scope-checked, stamped and sent to the outbox like any other update).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from kg.models import BDINode, CommitmentStrategy, NodeKind
from kg.workspace import Workspace
from reasoning.bdi.models import PrunedIntention

#: How long an intention may go without an update, per commitment strategy (None: forever).
STALL_PERIODS: dict[CommitmentStrategy, timedelta | None] = {
    CommitmentStrategy.SINGLE_MINDED: None,
    CommitmentStrategy.OPEN_MINDED: timedelta(days=7),
    CommitmentStrategy.CAUTIOUS: timedelta(days=3),
}
#: Statuses of intentions the cycle may prune (completed and dropped ones are left alone).
PRUNABLE = ("active", "suspended")
PRUNED_STATUS = "dropped"
MAX_INTENTIONS = 100_000


def stale_reason(
    intention: BDINode, strategy: CommitmentStrategy, now: datetime
) -> Literal["deadline", "stalled"] | None:
    """Why ``intention`` is stale at ``now`` under ``strategy``, or None when it is not."""
    if intention.status not in PRUNABLE:
        return None
    if intention.deadline is not None and intention.deadline < now:
        return "deadline"
    period = STALL_PERIODS[strategy]
    if period is not None and now - intention.updated_at > period:
        return "stalled"
    return None


def prune_stale_intentions(
    ws: Workspace, agent_id: str, strategy: CommitmentStrategy, now: datetime
) -> list[PrunedIntention]:
    """Drop the agent's stale intentions; return what was dropped, oldest first."""
    pruned = []
    for status in PRUNABLE:
        for node in ws.bdi.list(agent_id, NodeKind.INTENTION, owner=agent_id, status=status, limit=MAX_INTENTIONS):
            reason = stale_reason(node, strategy, now)
            if reason is None:
                continue
            ws.bdi.update(agent_id, node.uid, status=PRUNED_STATUS)
            pruned.append(PrunedIntention(uid=node.uid, content=node.content, reason=reason,
                                          deadline=node.deadline, updated_at=node.updated_at))  # fmt: skip
    return sorted(pruned, key=lambda p: (p.updated_at, p.uid))
