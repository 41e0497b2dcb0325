"""The rules and inference use cases' requests: what ``infer forward|backward|abduce``, ``knowledge explain``,
``policy eval`` and ``rule create|import|list|toggle|delete|export`` take, each declared once.

:class:`reasoning.service.Reasoner` and :class:`reasoning.rule_service.RuleService` accept these models; the tools
``infer_forward`` ... ``rule_export`` (cli/tools/inference.py, rules.py, rules_admin.py) are these models plus
``agent_id``, and ``mabos infer|knowledge|policy|rule ...`` generate their options from them
(docs/decisions/2026-11-28-request-models.md). They live in ``reasoning``, beside their services: ``kg`` must not
import ``reasoning``. ``constraint check`` takes nothing but the acting agent. The limits are the services'.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kg.models import Operator, RecordId, RuleType, Severity
from kg.models.request import Request

#: Rounds of one forward chaining, and how many rules deep one proof goes, at most.
MAX_ITERATIONS = 100
MAX_DEPTH = 10
#: Default and largest page of derived facts in a forward report.
PAGE = 1_000
MAX_PAGE = 10_000
#: The bounds of one forward closure unless mabos.toml [reasoning] sets others (reasoning.bounds.DEFAULT_LIMITS).
DEFAULT_MAX_DERIVED = 50_000
DEFAULT_MAX_JOIN = 2_000_000
MAX_HYPOTHESES = 100
MAX_FINDINGS = 100
MAX_QUESTION = 2_000
MAX_CONDITIONS = 64  # as kg.models.Rule
MAX_CONTEXT = 64  # context entries of one policy evaluation
#: Characters of one imported rule document, and its rules.
MAX_DOCUMENT = 1_000_000
MAX_IMPORT_RULES = 1_000

# ---------------------------------------------------------------------------------------------- patterns


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


# ---------------------------------------------------------------------------------------------- inference


class ForwardRequest(Request):
    """Forward chaining: whether to persist, its bounds and the page of derived facts to return."""

    persist: bool = Field(
        False,
        description="Store the derived facts (source 'inference', with rule and supporting facts) and retract "
        "earlier derived facts that no longer follow. Without it nothing is written.",
    )
    max_iterations: int = Field(10, ge=1, le=MAX_ITERATIONS, description="Rounds of rule application (1-100).")
    max_derived: int | None = Field(
        None,
        ge=1,
        description="Stop after deriving this many facts (at most, and by default, the workspace's "
        f"bound: {DEFAULT_MAX_DERIVED:,} unless mabos.toml [reasoning] says otherwise). A cut run says "
        "fixpoint=false and why.",
    )
    max_join: int | None = Field(
        None,
        ge=1,
        description="Stop after the joins examined this many candidate facts (at most, and by default, "
        f"the workspace's bound: {DEFAULT_MAX_JOIN:,} unless mabos.toml [reasoning] says otherwise).",
    )
    offset: int = Field(0, ge=0, description="Return the derived facts from this position (paging; see next_offset).")
    limit: int = Field(PAGE, ge=1, le=MAX_PAGE, description=f"Return at most this many derived facts (1-{MAX_PAGE}).")


class BackwardRequest(TripleIn, Request):
    """A goal to prove (a ?variable asks 'which ones?') and how deep a proof may go."""

    max_depth: int = Field(5, ge=1, le=MAX_DEPTH, description="How many rules deep a proof may go (1-10).")


class AbduceRequest(TripleIn, Request):
    """An observation to explain (a ?variable asks 'which ones?') and how many hypotheses to return."""

    limit: int = Field(20, ge=1, le=MAX_HYPOTHESES, description="At most this many hypotheses, best first (1-100).")


class KnowledgeRequest(Request):
    """A question for every reasoning method at once."""

    question: str = Field(
        max_length=MAX_QUESTION, description="A question in plain words (not empty), e.g. 'Is acme taxable?'."
    )
    limit: int = Field(20, ge=1, le=MAX_FINDINGS, description="At most this many findings (1-100).")


class PolicyEvalRequest(Request):
    """The situation the enabled policies are evaluated in."""

    context: dict[str, str] = Field(
        default_factory=dict,
        max_length=MAX_CONTEXT,
        description="Facts of the situation at hand, KEY -> VALUE (at most 64), e.g. amount -> 12000; each becomes "
        "the triple 'context KEY VALUE' for this evaluation only: nothing is stored.",
    )


# ---------------------------------------------------------------------------------------------- rules


class RuleCreateRequest(Request):
    """One rule to validate and store."""

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


class RuleImportRequest(Request):
    """A rule document to validate and store whole."""

    document: str = Field(
        max_length=MAX_DOCUMENT,
        description="The rules as a JSON or YAML document: a list of rules or {'rules': [...]} (what "
        "'mabos rule export' writes), at most 1,000,000 characters and 1,000 rules.",
    )
    format: Literal["json", "yaml"] = Field(description="json or yaml.")


class RuleListRequest(Request):
    """Which of the readable rules to list."""

    type: RuleType | None = Field(None, description="Only rules of this kind (inference, constraint or policy).")
    enabled: bool | None = Field(
        None, description="Only enabled rules (true) or only disabled ones (false); all when omitted."
    )
    domain: str | None = Field(None, description="Only rules of this domain label.")


class RuleToggleRequest(Request):
    """The rule to enable, disable or flip."""

    rule_id: str = Field(description="The rule's uid (from rule_list or rule_create), e.g. 'R-01J...'.")
    enabled: bool | None = Field(None, description="The state to set; omit to flip the current state.")


class RuleDeleteRequest(Request):
    """The rule to delete."""

    rule_id: RecordId = Field(description="The rule's uid (from rule_list or rule_create), e.g. 'R-01J...'.")


class RuleExportRequest(Request):
    """The format of the exported rule document."""

    format: Literal["json", "yaml"] = Field("json", description="json or yaml.")


__all__ = [
    "DEFAULT_MAX_DERIVED",
    "DEFAULT_MAX_JOIN",
    "MAX_CONDITIONS",
    "MAX_CONTEXT",
    "MAX_DEPTH",
    "MAX_DOCUMENT",
    "MAX_FINDINGS",
    "MAX_HYPOTHESES",
    "MAX_IMPORT_RULES",
    "MAX_ITERATIONS",
    "MAX_PAGE",
    "MAX_QUESTION",
    "PAGE",
    "AbduceRequest",
    "BackwardRequest",
    "ConclusionInput",
    "ConditionInput",
    "ForwardRequest",
    "KnowledgeRequest",
    "PolicyEvalRequest",
    "RuleCreateRequest",
    "RuleDeleteRequest",
    "RuleExportRequest",
    "RuleImportRequest",
    "RuleListRequest",
    "RuleToggleRequest",
    "TripleIn",
]
