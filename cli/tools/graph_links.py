"""Graph edge tools: link two records with a typed relation, list a record's relations, find kind-sequence paths.

``mabos graph link|relations|path`` run these tools, so the CLI, the Python API and MCP share the validation and
the scope checks of :class:`kg.bdi.BDIService`: both ends of a new edge must be visible to the agent and the edge
is written only in a scope it may write; relations and paths hold only edges and nodes in scopes it may read.

``graph_path`` is not ``graph_query`` with ``name=paths``: it follows edges in either direction through an exact
sequence of node kinds (``belief goal plan``), optionally from one node and along one relation, as ``mabos graph
path`` always did; ``graph_query`` answers the catalogue's directed belief/desire -> goal -> plan chains.

The inputs are the BDI service's requests (:mod:`kg.bdi_requests`) plus ``agent_id``.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.bdi_requests import GraphLinkRequest, GraphPathRequest, GraphRelationsRequest, LinkKind
from kg.models import GraphPath, Relation

GROUP = "graph"


class GraphLinkInput(GraphLinkRequest, ToolInput):
    """Arguments of ``graph_link``."""


class GraphRelationsInput(GraphRelationsRequest, ToolInput):
    """Arguments of ``graph_relations``."""


class RelationList(ToolOutput):
    """Edges found by ``graph_relations``."""

    relations: list[Relation] = Field(description="The edges the agent can see, oldest first.")
    count: int = Field(description="How many edges were returned.")


class GraphPathInput(GraphPathRequest, ToolInput):
    """Arguments of ``graph_path``."""


class PathList(ToolOutput):
    """Paths found by ``graph_path``."""

    paths: list[GraphPath] = Field(description="Each path's node uids, kinds, labels and the relations between.")
    count: int = Field(description="How many paths were returned (limit reached when count == limit).")


_LINK = (
    "Link two records of the agent's graph with a typed relation, e.g. a belief that supports a goal, a goal that "
    "requires a plan, a plan that contains a step, a step that depends on another. Both records must be visible to "
    "the agent and play the relation's roles; the edge lives in the agent's own scope unless a writable scope is "
    "given. Returns the edge with its uid."
)
_RELATIONS = (
    "List the typed edges from or to one record (belief, goal, plan, step, fact, memory ...) that the agent can "
    "see. Use it to see what supports a goal, which plans it has, what a step depends on. Returns the edges."
)
_PATH = (
    "Find paths through the agent's visible graph whose nodes have the given kinds in order (e.g. belief, goal, "
    "plan), following edges either way, optionally from one start node and along one relation only. Use it to "
    "check why a plan exists or which plans a belief supports. Returns each path's nodes, labels and relations."
)


@tool("graph_link", group=GROUP, description=_LINK)
def graph_link(ctx: ToolContext, args: GraphLinkInput) -> Relation:
    """Create an edge through the BDI service (both ends readable, the edge's scope writable)."""
    return ctx.workspace().bdi.link(ctx.agent_for(args), args)


@tool("graph_relations", group=GROUP, description=_RELATIONS)
def graph_relations(ctx: ToolContext, args: GraphRelationsInput) -> RelationList:
    """Edges touching a record, in the agent's readable scopes."""
    found = ctx.workspace().bdi.relations(ctx.agent_for(args), args)
    return RelationList(relations=found, count=len(found))


@tool("graph_path", group=GROUP, description=_PATH)
def graph_path(ctx: ToolContext, args: GraphPathInput) -> PathList:
    """Kind-sequence paths through readable nodes and edges."""
    found = ctx.workspace().bdi.paths(ctx.agent_for(args), args)
    return PathList(paths=found, count=len(found))


__all__ = ["GraphLinkInput", "GraphPathInput", "GraphRelationsInput", "LinkKind", "PathList", "RelationList"]
