"""Rule tools: create, import, list and toggle rules; constraint checks and policy evaluation.

Every handler calls :class:`reasoning.service.RuleService` or :class:`reasoning.service.Reasoner`, the same
services ``mabos rule|constraint|policy`` use through these tools. The engine's dataclass results (violations,
firings) are returned as the pydantic models below. The inference tools live in :mod:`cli.tools.inference`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.models import Operator, Rule, RuleType, Severity
from kg.workspace import Workspace
from reasoning.bounds import ClosureStatus
from reasoning.rule_service import MAX_IMPORT_RULES
from reasoning.rules.patterns import parse_pattern
from reasoning.service import Reasoner, RuleService

GROUP = "rules"
MAX_CONDITIONS = 64  # as kg.models.Rule
MAX_CONTEXT = 64  # context entries of one policy evaluation
#: Characters of one imported rule document.
MAX_DOCUMENT = 1_000_000


def rules_of(ws: Workspace) -> RuleService:
    """The rule service of a workspace."""
    return RuleService(ws.ports, ws.scopes, ws.clock)


def reasoner_of(ws: Workspace) -> Reasoner:
    """The reasoner of a workspace, bounded by its ``[reasoning]`` limits."""
    return Reasoner.for_workspace(ws)


# ---------------------------------------------------------------------------------------------- models


class TripleIn(BaseModel):
    """A triple pattern: each term is a constant such as 'acme' or a ?variable such as '?x'."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(description="The subject: a ?variable such as '?x', or a constant such as 'acme'.")
    predicate: str = Field(description="The predicate, e.g. 'isTaxable' (a constant or a ?variable).")
    object: str = Field(description="The object: a ?variable or a value, e.g. 'true' or '$50,000'.")


class ConditionInput(TripleIn):
    """One condition of a rule: a triple pattern and an operator on the object."""

    operator: Operator = Field(
        Operator.EQ,
        description="How the fact's object compares to this object: eq, ne, gt, lt, gte, lte, contains. Numbers "
        "such as '$50,000' or '15%' compare numerically.",
    )


class ConclusionInput(TripleIn):
    """The triple an inference rule concludes; each of its ?variables must be bound by a condition."""


class RuleCreateInput(ToolInput):
    """Arguments of ``rule_create``."""

    name: str = Field(description="A short name for the rule, e.g. 'taxable' (1-256 characters).")
    type: RuleType = Field(
        RuleType.INFERENCE,
        description="inference (derives its conclusion), constraint (violated when all conditions hold) or "
        "policy (asks for an action when all conditions hold).",
    )
    conditions: list[ConditionInput | str] = Field(
        min_length=1,
        max_length=MAX_CONDITIONS,
        description="The conditions, all of which must hold (1-64). Each is an object, or a string "
        "'SUBJECT PREDICATE [OPERATOR] OBJECT' such as '?x hasRevenue gt $1,000,000' (operators eq, ne, gt, lt, "
        "gte, lte, contains or =, !=, >, <, >=, <=, ~). Policies can test the evaluation context with "
        "'context KEY OPERATOR VALUE'.",
    )
    conclusion: ConclusionInput | str | None = Field(
        None,
        description="What an inference rule concludes (required for inference rules), as an object or a string "
        "'SUBJECT PREDICATE OBJECT' such as '?x isTaxable true'. Every ?variable must be bound by a condition.",
    )
    description: str = Field("", description="What the rule is for, in plain words.")
    confidence_factor: float = Field(
        0.9, ge=0.0, le=1.0, description="0..1: a derived fact's confidence is the weakest condition's times this."
    )
    violation_message: str = Field(
        "", description="Constraints: the message of a violation; ?variables are filled in, e.g. '?x must be audited'."
    )
    severity: Severity = Field(Severity.WARNING, description="Constraints: how serious a violation is.")
    action: str = Field("", description="Policies: the action asked for when the policy fires, e.g. 'ask finance'.")
    escalate: bool = Field(False, description="Policies: whether a firing escalates to a human.")
    domain: str = Field("general", description="A label grouping related rules, e.g. 'tax'.")
    scope: str | None = Field(
        None, description="Where to store the rule: global, agent:<id> or project:<name> (default the agent's own)."
    )
    enabled: bool = Field(True, description="Whether the rule takes part in inference and checks right away.")


class RuleListInput(ToolInput):
    """Arguments of ``rule_list``."""

    type: RuleType | None = Field(None, description="Only rules of this kind (inference, constraint or policy).")
    enabled: bool | None = Field(None, description="true: only enabled rules; false: only disabled; omit for all.")
    domain: str | None = Field(None, description="Only rules of this domain label.")


class RuleList(BaseModel):
    """Rules, oldest first."""

    rules: list[Rule] = Field(description="The rules the agent can read.")


class RuleToggleInput(ToolInput):
    """Arguments of ``rule_toggle``."""

    rule_id: str = Field(description="The rule's uid (from rule_list or rule_create), e.g. 'R-01J...'.")
    enabled: bool | None = Field(None, description="The state to set; omit to flip the current state.")


class NoArguments(ToolInput):
    """Only the acting agent."""


class TripleOut(BaseModel):
    """A fact as the rule engine sees it."""

    subject: str
    predicate: str
    object: str
    confidence: float
    uid: str | None = Field(None, description="The stored fact's uid; null for a fact only derived in this run.")


class PatternOut(BaseModel):
    """A condition with the known bindings applied; unbound ?variables remain."""

    subject: str
    predicate: str
    object: str
    operator: Operator


class RuleMatch(BaseModel):
    """A rule whose conditions all hold: which rule, the variable bindings and the facts that matched."""

    rule_id: str
    name: str
    bindings: dict[str, str]
    facts: list[TripleOut] = Field(description="The facts that matched the conditions.")


class Violation(RuleMatch):
    """A constraint whose conditions all hold."""

    severity: Severity
    message: str = Field(description="The violation message with its ?variables filled in.")


class ClosureCut(BaseModel):
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


class PolicyEvalInput(ToolInput):
    """Arguments of ``policy_eval``."""

    context: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_CONTEXT,
        description="Facts of the situation at hand, KEY -> VALUE (at most 64), e.g. {'amount': '12000'}; each "
        "becomes the triple 'context KEY VALUE' for this evaluation only (nothing is stored).",
    )


class PolicyFiring(RuleMatch):
    """A policy whose conditions all hold: the action it asks for."""

    action: str = Field(description="The action to take, ?variables substituted.")
    escalate: bool = Field(description="Whether this should go to a human.")


class PolicyFiringList(ClosureCut):
    """The policies that fired (empty when none did)."""

    firings: list[PolicyFiring]


class RuleImportInput(ToolInput):
    """Arguments of ``rule_import``."""

    document: str = Field(
        max_length=MAX_DOCUMENT,
        description="The rules as a JSON or YAML document: a list of rules or {'rules': [...]} (what "
        "'mabos rule export' writes), at most 1,000,000 characters and 1,000 rules.",
    )
    format: Literal["json", "yaml"] = Field(description="json or yaml.")


class ImportedRules(BaseModel):
    """The rules an import stored (all of them, or none when one was refused)."""

    rules: list[Rule]


# ---------------------------------------------------------------------------------------------- rules


def _pattern(value: ConditionInput | ConclusionInput | str, field: str, *, operators: bool) -> dict[str, str]:
    if isinstance(value, str):
        return parse_pattern(value, field, operators=operators)
    return value.model_dump(mode="json")


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
    agent = ctx.agent_for(args)
    fields = args.model_dump(mode="json", exclude={"agent_id", "conditions", "conclusion"})
    fields["conditions"] = [_pattern(c, f"conditions[{i}]", operators=True) for i, c in enumerate(args.conditions)]
    if args.conclusion is not None:
        fields["conclusion"] = _pattern(args.conclusion, "conclusion", operators=False)
    return rules_of(ctx.workspace()).create(agent, **fields)


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
    return ImportedRules(rules=rules_of(ctx.workspace()).import_document(ctx.agent_for(args), args.document,
                                                                         args.format))  # fmt: skip


@tool(
    "rule_list",
    group=GROUP,
    description="List the rules the agent can read (its own, shared and global), oldest first, optionally only "
    "one kind, only enabled or disabled ones, or one domain. Use it to find a rule's uid or to see what the "
    "reasoning tools will apply.",
)
def rule_list(ctx: ToolContext, args: RuleListInput) -> RuleList:
    """Rules the agent can read."""
    kind = args.type.value if args.type is not None else None
    found = rules_of(ctx.workspace()).list(ctx.agent_for(args), type=kind, enabled=args.enabled, domain=args.domain)
    return RuleList(rules=found)


@tool(
    "rule_toggle",
    group=GROUP,
    description="Enable or disable a rule (flip it when 'enabled' is omitted). Disabled rules take no part in "
    "inference, constraint checks or policies. Returns the changed rule.",
)
def rule_toggle(ctx: ToolContext, args: RuleToggleInput) -> Rule:
    """Enable, disable or flip a rule."""
    return rules_of(ctx.workspace()).toggle(ctx.agent_for(args), args.rule_id, enabled=args.enabled)


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
    fired, closure = reasoner_of(ctx.workspace()).policy_report(ctx.agent_for(args), args.context)
    return PolicyFiringList(firings=[PolicyFiring.model_validate(asdict(p)) for p in fired],
                            **ClosureCut.fields(closure))  # fmt: skip


__all__ = [
    "ClosureCut",
    "ConclusionInput",
    "ConditionInput",
    "ImportedRules",
    "PatternOut",
    "PolicyFiring",
    "PolicyFiringList",
    "RuleList",
    "RuleMatch",
    "TripleIn",
    "TripleOut",
    "Violation",
    "ViolationList",
    "parse_pattern",
    "reasoner_of",
    "rules_of",
]
