"""Rule administration tools: delete a rule, export the agent's rules as a document.

``mabos rule delete`` and ``mabos rule export`` run these tools, so the CLI, the Python API and MCP share their
validation and scope checks: a rule may be deleted only by an agent that may write its scope (the deletion is
recorded in the outbox under that agent), and an export holds only the rules the agent can read. ``rule_import``
(:mod:`cli.tools.rules`) reads an export back.
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from cli.tools.rules import GROUP, rules_of
from kg.models import Rule
from reasoning.requests import RuleDeleteRequest, RuleExportRequest
from reasoning.rule_service import RuleExport


class RuleDeleteInput(RuleDeleteRequest, ToolInput):
    """Arguments of ``rule_delete``."""


class RuleDeleted(ToolOutput):
    """The rule a delete removed."""

    uid: str = Field(description="The deleted rule's uid.")
    deleted: bool = Field(True, description="Always true: a rule that cannot be deleted is an error instead.")
    rule: Rule = Field(description="The rule as it was; rule_import of [rule] stores it again (with a new uid).")


class RuleExportInput(RuleExportRequest, ToolInput):
    """Arguments of ``rule_export``."""


_DELETE = (
    "Delete one rule for good: it takes no further part in inference, constraint checks or policies (rule_toggle "
    "disables a rule without deleting it). Only a rule in a scope the agent may write can be deleted: its own, or a "
    "shared scope it was granted. Returns the deleted rule as it was."
)
_EXPORT = (
    "Export every rule the agent can read (its own, shared and global), oldest first, as one JSON or YAML document "
    "{'rules': [...]}. Use it to copy rules to another agent or workspace: rule_import stores the document's rules "
    "again, each with a new uid and the importer as owner."
)


@tool("rule_delete", group=GROUP, description=_DELETE)
def rule_delete(ctx: ToolContext, args: RuleDeleteInput) -> RuleDeleted:
    """Delete a rule the agent can write (NotFoundError when it cannot even read it)."""
    rules, agent = rules_of(ctx.workspace()), ctx.agent_for(args)
    rule = rules.get(agent, args.rule_id)
    return RuleDeleted(uid=rules.delete(agent, args), rule=rule)


@tool("rule_export", group=GROUP, description=_EXPORT)
def rule_export(ctx: ToolContext, args: RuleExportInput) -> RuleExport:
    """The agent's readable rules as a document."""
    return rules_of(ctx.workspace()).export(ctx.agent_for(args), args)


__all__ = ["RuleDeleteInput", "RuleDeleted", "RuleExport", "RuleExportInput"]
