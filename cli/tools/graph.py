"""BDI and graph tools: the BDI maintenance cycle and the cross-agent graph queries.

``bdi_cycle`` runs :func:`reasoning.bdi.run_cycle` (or :func:`~reasoning.bdi.run_all`), as ``mabos bdi cycle``
does. ``graph_query`` answers one catalogue query of :mod:`reasoning.graph_queries` on the backend
:func:`sync.reads.graph_backend` picks, as ``mabos graph query NAME`` does: TypeDB when it is configured and
reachable, else the local store (``source`` says which, ``fallback_reason`` why).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from cli.tools.overrides import optional_agent
from cli.tools.registry import ToolContext, ToolInput, tool
from kg.errors import InputError
from reasoning.bdi import CycleResult, run_all, run_cycle
from reasoning.bdi.requests import CycleRequest
from reasoning.graph_queries import GraphQueries
from reasoning.graph_query_models import MAX_PATH_DEPTH, GraphQueryResult
from sync.reads import graph_backend

GROUP = "graph"

# ------------------------------------------------------------------------------------------ bdi_cycle


class BdiCycleInput(CycleRequest, ToolInput):
    """Input of ``bdi_cycle``: the cycle of ``agent_id``, or of every agent with ``all_agents``."""


class BdiCycleResults(BaseModel):
    """One cycle result per agent, in agent-id order (camelCase keys, as the seed's BdiCycleResult)."""

    results: list[CycleResult]


@tool(
    "bdi_cycle",
    group=GROUP,
    description="""Run the BDI maintenance cycle for the agent: detect conflicting beliefs and facts (a report
    is written to agents/<id>/memory/bdi-conflicts/), drop stale intentions by deadline and commitment strategy,
    recompute desire priorities and, on Sundays, build the weekly memory summaries. Use it periodically or after
    many belief changes. Returns counts (staleIntentionsPruned, desiresPrioritized, conflictsDetected) and what
    was done to which record.""",
)
def bdi_cycle(ctx: ToolContext, args: BdiCycleInput) -> BdiCycleResults:
    """Run the cycle for one agent or for all of them."""
    ws = ctx.workspace()
    if not args.all_agents:
        return BdiCycleResults(results=[run_cycle(ws, ctx.agent_for(args))])
    ctx.require_operator("all_agents", "every agent's cycle")
    if args.agent_id is not None:
        raise InputError("all_agents", "give agent_id or all_agents, not both")
    return BdiCycleResults(results=run_all(ws))


# ------------------------------------------------------------------------------------------ graph_query

QueryName = Literal["goals-behind", "paths", "belief-conflicts", "lineage", "belief-holders", "blocked-steps"]


class GraphQueryInput(ToolInput):
    """Input of ``graph_query``: the query's name and its parameters (only those of that query).

    Without ``agent_id`` (and on an unbound server) the query sees every agent's records: the operator view.
    """

    agent_id: str | None = Field(
        default=None,
        description="Whose visibility applies (that agent's readable scopes). Leave empty for every agent's records "
        "(the operator view; a server bound to one agent always uses its agent).",
    )
    name: QueryName = Field(
        description="goals-behind: open goals whose progress lags the time elapsed towards their deadline "
        "(tolerance, at, limit). paths: belief/desire -> goal (-> subgoal) -> plan (-> step) chains (start, to, "
        "max_depth, limit). belief-conflicts: active beliefs about one subject that disagree, across agents, with "
        "the goals they support (min_certainty, limit). lineage: what a fact or memory was derived from and what "
        "was derived from it (uid, direction, max_depth). belief-holders: which agents hold a belief about a "
        "subject (subject, match, min_certainty). blocked-steps: open plan steps waiting on unfinished "
        "dependencies (limit)."
    )
    tolerance: float | None = Field(
        default=None, ge=0, le=1, description="goals-behind: report only goals behind by more than this (0..1; 0)."
    )
    at: datetime | None = Field(default=None, description="goals-behind: judge at this ISO-8601 moment (default: now).")
    start: str | None = Field(
        default=None,
        description="paths: where paths start: belief, desire, goal, plan, a uid, or kind:uid (default belief).",
    )
    to: str | None = Field(
        default=None, description="paths: where paths end: goal, plan, step, a uid, or kind:uid (default plan)."
    )
    max_depth: int | None = Field(
        default=None,
        ge=1,
        le=50,
        description=f"paths: most relations on a path (1..{MAX_PATH_DEPTH}; 4). lineage: most derivation steps "
        "(1..50; 10).",
    )
    limit: int | None = Field(
        default=None, ge=1, le=10_000, description="goals-behind, paths, belief-conflicts, blocked-steps: at most "
        "this many results (1..10000; 100)."
    )  # fmt: skip
    min_certainty: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="belief-conflicts: both beliefs more certain than this (0.6). belief-holders: least certainty "
        "counted (0).",
    )
    uid: str | None = Field(default=None, max_length=256, description="lineage: the fact or memory uid (required).")
    direction: Literal["ancestors", "descendants", "both"] | None = Field(
        default=None, description="lineage: ancestors, descendants or both (default both)."
    )
    subject: str | None = Field(
        default=None, max_length=1024, description="belief-holders: the subject, e.g. 'acme revenue' (required)."
    )
    match: Literal["subject", "contains"] | None = Field(
        default=None,
        description="belief-holders: subject (the belief's derived subject equals it; default) or contains (the "
        "belief's text contains it).",
    )


class GraphQueryAnswer(GraphQueryResult[Any]):
    """A graph query's answer, and why the local store answered although TypeDB is configured."""

    fallback_reason: str | None = Field(
        default=None,
        description="Why the local store answered although TypeDB is configured (unreachable, circuit breaker "
        "open, outbox backlog); null otherwise.",
    )


@tool(
    "graph_query",
    group=GROUP,
    description="""Ask the shared BDI graph a cross-agent question by name: goals-behind (goals behind schedule),
    paths (belief -> goal -> plan chains), belief-conflicts (disagreeing beliefs across agents), lineage (what a
    fact or memory derives from), belief-holders (who believes something about a subject) or blocked-steps (plan
    steps waiting on unfinished work). Pass only the chosen query's parameters. Answers from TypeDB when it is
    configured and reachable, else from the local store (same results; source says which). Returns the results
    with count and truncated.""",
)
def graph_query(ctx: ToolContext, args: GraphQueryInput) -> GraphQueryAnswer:
    """Answer one catalogue query."""
    agent = optional_agent(ctx, args)
    ws = ctx.workspace()
    backend, reason = graph_backend(ws)
    params = args.model_dump(exclude={"agent_id", "name"}, exclude_none=True)
    result = GraphQueries(backend, ws.scopes, ws.clock).run(args.name, params, agent=agent)
    return GraphQueryAnswer(**dict(result), fallback_reason=reason)


__all__ = ["BdiCycleInput", "BdiCycleResults", "GraphQueryAnswer", "GraphQueryInput", "QueryName"]
