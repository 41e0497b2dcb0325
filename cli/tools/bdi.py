"""BDI node tools: add, list and update beliefs, desires, goals, intentions, plans and plan steps.

Three generic tools with a ``kind`` field (``bdi_add``, ``bdi_list``, ``bdi_update``) rather than one per kind: the
kinds share one node shape and differ only in which optional fields they use (:data:`KIND_FIELDS`) and which
statuses they allow (:data:`kg.models.NODE_STATUSES`). ``mabos belief|desire|goal|intention|plan|step
add|list|update`` run these tools, so the CLI, the Python API and MCP share one validation and the scope checks of
:class:`kg.bdi.BDIService`: a node is written only in a scope the agent may write, listed and updated only when
the agent may read (and, to update, write) its scope. The inputs are the service's requests
(:mod:`kg.bdi_requests`) plus ``agent_id``.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.bdi_requests import KIND_FIELDS, BdiAddRequest, BdiListRequest, BdiUpdateRequest, Status
from kg.models import BDINode

GROUP = "bdi"


class BdiAddInput(BdiAddRequest, ToolInput):
    """Arguments of ``bdi_add``."""


class BdiUpdateInput(BdiUpdateRequest, ToolInput):
    """Arguments of ``bdi_update``: the node and the fields to change (at least one)."""


class BdiListInput(BdiListRequest, ToolInput):
    """Arguments of ``bdi_list``."""


class BdiNodes(ToolOutput):
    """Nodes found by ``bdi_list``."""

    nodes: list[BDINode] = Field(description="The nodes the agent can read, in the store's order.")
    count: int = Field(description="How many nodes were returned.")


_ADD = (
    "Add a node to the agent's BDI graph: a belief (what it holds true, with certainty), desire (what it wants, "
    "priority), goal (a concrete objective: hierarchy level, priority, progress, deadline), intention (a goal it "
    "committed to), plan or plan_step (sequence). Only the fields of that kind are accepted. It lives in the agent's "
    "own scope unless a writable scope is given. Link nodes with graph_link. Returns the node with its uid."
)
_LIST = (
    "List the BDI nodes the agent can read (its own, shared scopes it was granted, global), optionally of one kind, "
    "scope, owner or status. Use it to see current beliefs, open goals, active intentions or a plan's steps before "
    "deciding. Returns the nodes and their count."
)
_UPDATE = (
    "Change fields of one BDI node the agent may write: its text, status (e.g. a goal achieved, a belief revised), "
    "certainty, priority, progress, deadline ... (only the fields of its kind). Give at least one field. Returns the "
    "node as changed."
)


@tool("bdi_add", group=GROUP, description=_ADD)
def bdi_add(ctx: ToolContext, args: BdiAddInput) -> BDINode:
    """Create a node through the BDI service (its write-scope check)."""
    agent = ctx.agent_for(args)
    return ctx.workspace().bdi.add(args, agent)


@tool("bdi_list", group=GROUP, description=_LIST)
def bdi_list(ctx: ToolContext, args: BdiListInput) -> BdiNodes:
    """List nodes through the BDI service (readable scopes only)."""
    nodes = ctx.workspace().bdi.list(ctx.agent_for(args), args)
    return BdiNodes(nodes=nodes, count=len(nodes))


@tool("bdi_update", group=GROUP, description=_UPDATE)
def bdi_update(ctx: ToolContext, args: BdiUpdateInput) -> BDINode:
    """Update a node through the BDI service (read and write scope checks)."""
    return ctx.workspace().bdi.update(ctx.agent_for(args), args)


__all__ = ["KIND_FIELDS", "BdiAddInput", "BdiListInput", "BdiNodes", "BdiUpdateInput", "Status"]
