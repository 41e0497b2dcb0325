"""Rule tools: create, import, list and toggle rules; constraint checks and policy evaluation.

Every handler calls :class:`reasoning.service.RuleService` or :class:`reasoning.service.Reasoner`, the same
services ``mabos rule|constraint|policy`` use through these tools. The inputs are the services' request models
(:mod:`reasoning.requests`) plus ``agent_id``; their fields, limits and descriptions are declared there once. The
engine's dataclass results (violations, firings) are returned as the pydantic models below. The inference tools
live in :mod:`cli.tools.inference`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.models import Operator, Rule, Severity
from kg.workspace import Workspace
from reasoning.bounds import ClosureStatus
from reasoning.requests import (
    MAX_CONDITIONS,
    MAX_CONTEXT,
    MAX_DOCUMENT,
    MAX_IMPORT_RULES,
    ConclusionInput,
    ConditionInput,
    PolicyEvalRequest,
    RuleCreateRequest,
    RuleImportRequest,
    RuleListRequest,
    RuleToggleRequest,
    TripleIn,
)
from reasoning.rules.patterns import parse_pattern
from reasoning.service import Reasoner, RuleService

GROUP = "rules"


def rules_of(ws: Workspace) -> RuleService:
    """The rule service of a workspace."""
    return RuleService(ws.ports, ws.scopes, ws.clock)


def reasoner_of(ws: Workspace) -> Reasoner:
    """The reasoner of a workspace, bounded by its ``[reasoning]`` limits."""
    return Reasoner.for_workspace(ws)


# ---------------------------------------------------------------------------------------------- models


class RuleCreateInput(RuleCreateRequest, ToolInput):
    """Arguments of ``rule_create``."""


class RuleListInput(RuleListRequest, ToolInput):
    """Arguments of ``rule_list``."""


class RuleList(ToolOutput):
    """Rules, oldest first."""

    rules: list[Rule] = Field(description="The rules the agent can read.")


class RuleToggleInput(RuleToggleRequest, ToolInput):
    """Arguments of ``rule_toggle``."""


class NoArguments(ToolInput):
    """Only the acting agent."""


class TripleOut(ToolOutput):
    """A fact as the rule engine sees it."""

    subject: str
    predicate: str
    object: str
    confidence: float
    uid: str | None = Field(None, description="The stored fact's uid; null for a fact only derived in this run.")


class PatternOut(ToolOutput):
    """A condition with the known bindings applied; unbound ?variables remain."""

    subject: str
    predicate: str
    object: str
    operator: Operator


class RuleMatch(ToolOutput):
    """A rule whose conditions all hold: which rule, the variable bindings and the facts that matched."""

    rule_id: str
    name: str
    bindings: dict[str, str]
    facts: list[TripleOut] = Field(description="The facts that matched the conditions.")


class Violation(RuleMatch):
    """A constraint whose conditions all hold."""

    severity: Severity
    message: str = Field(description="The violation message with its ?variables filled in.")


class ClosureCut(ToolOutput):
    """Whether a check over the forward closure is complete: the fields every constraint or policy result carries."""

    fixpoint: bool = Field(True, description="False when a bound cut the forward closure the rules ran on.")
    truncated: bool = Field(False, description="True when the run itself stopped (1,000 results or max_join).")
    note: str | None = Field(None, description="When the closure or the run was cut: which bound, and what to do.")

    @staticmethod
    def fields(closure: ClosureStatus) -> dict[str, Any]:
        """The three fields of a closure's status."""
        return {"fixpoint": closure.fixpoint, "truncated": not closure.checked, "note": closure.note}


class ViolationList(ClosureCut):
    """The violations found (empty when every constraint holds)."""

    violations: list[Violation]


class PolicyEvalInput(PolicyEvalRequest, ToolInput):
    """Arguments of ``policy_eval``."""


class PolicyFiring(RuleMatch):
    """A policy whose conditions all hold: the action it asks for."""

    action: str = Field(description="The action to take, ?variables substituted.")
    escalate: bool = Field(description="Whether this should go to a human.")


class PolicyFiringList(ClosureCut):
    """The policies that fired (empty when none did)."""

    firings: list[PolicyFiring]


class RuleImportInput(RuleImportRequest, ToolInput):
    """Arguments of ``rule_import``."""


class ImportedRules(ToolOutput):
    """The rules an import stored (all of them, or none when one was refused)."""

    rules: list[Rule]


# ---------------------------------------------------------------------------------------------- rules


@tool(
    "rule_create",
    group=GROUP,
    description="Store a new rule. Inference rules derive their conclusion when all conditions hold (run "
    "infer_forward to apply them); constraint rules report violations (constraint_check); policy rules ask for an "
    "action (policy_eval). The rule is validated first: a conclusion variable no condition binds is refused and "
    "nothing is stored. Returns the stored rule with its uid.",
)
def rule_create(ctx: ToolContext, args: RuleCreateInput) -> Rule:
    """Validate and store one rule."""
    return rules_of(ctx.workspace()).create(ctx.agent_for(args), args)


@tool(
    "rule_import",
    group=GROUP,
    description=f"Store every rule of a JSON or YAML document (a list of rules or {{'rules': [...]}}, as "
    f"'mabos rule export' writes; at most {MAX_IMPORT_RULES} rules). Each rule gets a new uid and the agent as "
    "owner; a scope naming another agent's private scope becomes the agent's own. Every rule is validated "
    "first: if one is refused (the error names it, e.g. rules[2].conclusion), none is stored.",
)
def rule_import(ctx: ToolContext, args: RuleImportInput) -> ImportedRules:
    """Validate and store every rule of a document."""
    return ImportedRules(rules=rules_of(ctx.workspace()).import_document(ctx.agent_for(args), args))


@tool(
    "rule_list",
    group=GROUP,
    description="List the rules the agent can read (its own, shared and global), oldest first, optionally only "
    "one kind, only enabled or disabled ones, or one domain. Use it to find a rule's uid or to see what the "
    "reasoning tools will apply.",
)
def rule_list(ctx: ToolContext, args: RuleListInput) -> RuleList:
    """Rules the agent can read."""
    return RuleList(rules=rules_of(ctx.workspace()).list(ctx.agent_for(args), args))


@tool(
    "rule_toggle",
    group=GROUP,
    description="Enable or disable a rule (flip it when 'enabled' is omitted). Disabled rules take no part in "
    "inference, constraint checks or policies. Returns the changed rule.",
)
def rule_toggle(ctx: ToolContext, args: RuleToggleInput) -> Rule:
    """Enable, disable or flip a rule."""
    return rules_of(ctx.workspace()).toggle(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------------------- checks


@tool(
    "constraint_check",
    group=GROUP,
    description="Check the enabled constraint rules against the agent's facts and everything the inference "
    "rules derive from them. Use before acting on facts that must satisfy business rules. Returns each violation "
    "with its severity, message and the facts that triggered it; an empty list means every constraint holds.",
)
def constraint_check(ctx: ToolContext, args: NoArguments) -> ViolationList:
    """Violations of the enabled constraints."""
    found, closure = reasoner_of(ctx.workspace()).constraint_report(ctx.agent_for(args))
    return ViolationList(violations=[Violation.model_validate(asdict(v)) for v in found], **ClosureCut.fields(closure))


@tool(
    "policy_eval",
    group=GROUP,
    description="Evaluate the enabled policy rules on the agent's facts plus a context describing the situation "
    "at hand (e.g. {'amount': '12000', 'channel': 'web'}; nothing is stored). Use before taking an action that "
    "policies may govern. Returns the policies that fired: the action each asks for and whether to escalate.",
)
def policy_eval(ctx: ToolContext, args: PolicyEvalInput) -> PolicyFiringList:
    """Policies that fire on the facts plus the context."""
    fired, closure = reasoner_of(ctx.workspace()).policy_report(ctx.agent_for(args), args)
    return PolicyFiringList(firings=[PolicyFiring.model_validate(asdict(p)) for p in fired],
                            **ClosureCut.fields(closure))  # fmt: skip


__all__ = [
    "MAX_CONDITIONS",
    "MAX_CONTEXT",
    "MAX_DOCUMENT",
    "ClosureCut",
    "ConclusionInput",
    "ConditionInput",
    "ImportedRules",
    "NoArguments",
    "PatternOut",
    "PolicyEvalInput",
    "PolicyFiring",
    "PolicyFiringList",
    "RuleCreateInput",
    "RuleImportInput",
    "RuleList",
    "RuleListInput",
    "RuleMatch",
    "RuleToggleInput",
    "TripleIn",
    "TripleOut",
    "Violation",
    "ViolationList",
    "parse_pattern",
    "reasoner_of",
    "rules_of",
]
