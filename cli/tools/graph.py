"""BDI and graph tools: the BDI maintenance cycle and the cross-agent graph queries.

``bdi_cycle`` runs :func:`reasoning.bdi.run_cycle` (or :func:`~reasoning.bdi.run_all`), as ``mabos bdi cycle``
does. ``graph_query`` answers one catalogue query of :mod:`reasoning.graph_queries` on the backend
:func:`sync.reads.graph_backend` picks, as ``mabos graph query NAME`` does: TypeDB when it is configured and
reachable, else the local store (``source`` says which, ``fallback_reason`` why).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from cli.tools.overrides import optional_agent
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.errors import InputError
from reasoning.bdi import CycleResult, run_all, run_cycle
from reasoning.bdi.requests import CycleRequest
from reasoning.graph_queries import GraphQueries
from reasoning.graph_query_models import GraphQueryResult, QueryName, any_query_fields, query_names_text
from sync.reads import graph_backend

GROUP = "graph"

# ------------------------------------------------------------------------------------------ bdi_cycle


class BdiCycleInput(CycleRequest, ToolInput):
    """Input of ``bdi_cycle``: the cycle of ``agent_id``, or of every agent with ``all_agents``."""


class BdiCycleResults(ToolOutput):
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


class GraphQueryBase(ToolInput):
    """The fields of ``graph_query``'s input that are not a query's parameters: whose view, and which query."""

    agent_id: str | None = Field(
        default=None,
        description="Whose visibility applies (that agent's readable scopes). Leave empty for every agent's records "
        "(the operator view; a server bound to one agent always uses its agent).",
    )
    name: QueryName = Field(description=query_names_text())


#: Input of ``graph_query``: the base's fields, then every query's parameters, each declared once in its query's
#: model (reasoning/graph_query_models.py) and gathered here by :func:`any_query_fields`.
GraphQueryInput = create_model(
    "GraphQueryInput",
    __base__=GraphQueryBase,
    __module__=__name__,
    __doc__="""Input of ``graph_query``: the query's name and its parameters (only those of that query).

    Without ``agent_id`` (and on an unbound server) the query sees every agent's records: the operator view.
    """,
    **any_query_fields(),
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
    input=GraphQueryInput,
    output=GraphQueryAnswer,
    description="""Ask the shared BDI graph a cross-agent question by name: goals-behind (goals behind schedule),
    paths (belief -> goal -> plan chains), belief-conflicts (disagreeing beliefs across agents), lineage (what a
    fact or memory derives from), belief-holders (who believes something about a subject) or blocked-steps (plan
    steps waiting on unfinished work). Pass only the chosen query's parameters. Answers from TypeDB when it is
    configured and reachable, else from the local store (same results; source says which). Returns the results
    with count and truncated.""",
)
def graph_query(ctx: ToolContext, args: GraphQueryBase) -> GraphQueryAnswer:
    """Answer one catalogue query."""
    agent = optional_agent(ctx, args)
    ws = ctx.workspace()
    backend, reason = graph_backend(ws)
    params = args.model_dump(exclude={"agent_id", "name"}, exclude_none=True)
    result = GraphQueries(backend, ws.scopes, ws.clock).run(args.name, params, agent=agent)
    return GraphQueryAnswer(**dict(result), fallback_reason=reason)


__all__ = ["BdiCycleInput", "BdiCycleResults", "GraphQueryAnswer", "GraphQueryBase", "GraphQueryInput", "QueryName"]
