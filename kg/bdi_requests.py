"""The BDI graph's requests: what linking two records, listing a record's edges and finding kind-sequence paths
take, each declared once.

:class:`kg.bdi.BDIService` accepts these models (``link``, ``relations``, ``paths``); the tools ``graph_link``,
``graph_relations`` and ``graph_path`` (cli/tools/graph_links.py) are these models plus ``agent_id``, and ``mabos
graph link|relations|path`` generates its parameters from them (docs/decisions/2026-11-28-request-models.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kg.models.base import RecordId
from kg.models.bdi import MAX_PATH_LENGTH
from kg.models.request import Request

#: The relations an agent may create (``agent-owns`` is implied by a record's owner, never stored).
LinkKind = Literal["belief-supports-goal", "desire-motivates-goal", "goal-requires-plan", "goal-decomposition",
                   "plan-contains-step", "step-depends-on", "agent-has-skill", "decision-resolves-goal",
                   "derived-from", "case-used-plan"]  # fmt: skip
MAX_PATHS = 10_000
_KINDS = "belief, desire, goal, intention, plan, plan_step (or step), fact, case, agent, memory, memory:<type>"


class GraphLinkRequest(Request):
    """A typed edge to create between two records the agent can see."""

    relation: LinkKind = Field(
        description="The edge's kind (source -> target): belief-supports-goal, desire-motivates-goal, "
        "goal-requires-plan, goal-decomposition (parent -> subgoal), plan-contains-step, step-depends-on (dependent "
        "-> dependency), agent-has-skill (agent -> skill memory), decision-resolves-goal (decision memory -> goal), "
        "derived-from (fact or memory -> its source), case-used-plan."
    )
    source_uid: RecordId = Field(description="The source record's uid, e.g. 'B-01J...' for belief-supports-goal.")
    target_uid: RecordId = Field(description="The target record's uid, e.g. 'G-01J...'.")
    scope: str | None = Field(
        default=None, max_length=256, description="Where the edge lives (default the agent's own scope)."
    )


class GraphRelationsRequest(Request):
    """The record whose edges to list."""

    uid: RecordId = Field(description="The record whose edges to list (either end), e.g. 'G-01J...'.")


class GraphPathRequest(Request):
    """The node kinds a path goes through, in order, and where and along what it may go."""

    kinds: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        min_length=1,
        max_length=MAX_PATH_LENGTH,
        description=f"The node kinds along the path, in order (1..{MAX_PATH_LENGTH}), e.g. ['belief', 'goal', "
        f"'plan']; kinds: {_KINDS}.",
    )
    start_uid: RecordId | None = Field(default=None, description="Start the paths at this node (its kind: kinds[0]).")
    relation: LinkKind | None = Field(default=None, description="Follow only edges of this relation.")
    limit: int = Field(default=100, ge=1, le=MAX_PATHS, description="At most this many paths (1..10000).")


__all__ = ["MAX_PATHS", "GraphLinkRequest", "GraphPathRequest", "GraphRelationsRequest", "LinkKind"]
