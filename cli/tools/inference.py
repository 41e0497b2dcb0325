"""Inference tools: forward chaining (bounded and paged), backward chaining, abduction and ``knowledge_explain``.

Every handler calls :class:`reasoning.service.Reasoner` (bounded by the workspace's ``[reasoning]`` limits,
:meth:`~reasoning.service.Reasoner.for_workspace`) with its input: the service's request model
(:mod:`reasoning.requests`) plus ``agent_id``. The engine's dataclass results (proofs, hypotheses) are returned as
the pydantic models below.
"""

from __future__ import annotations

from dataclasses import asdict

from pydantic import Field

from cli.tools.overrides import may_tune_process
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from cli.tools.rules import GROUP, PatternOut, TripleOut, reasoner_of
from kg.models.base import new_list
from reasoning.bounds import MAX_PROOF_STEPS
from reasoning.requests import (
    MAX_FINDINGS,
    MAX_HYPOTHESES,
    MAX_QUESTION,
    AbduceRequest,
    BackwardRequest,
    ForwardRequest,
    KnowledgeRequest,
)
from reasoning.service import ForwardReport, KnowledgeAnswer

# ---------------------------------------------------------------------------------------------- models


class ForwardInput(ForwardRequest, ToolInput):
    """Arguments of ``infer_forward``."""


class BackwardInput(BackwardRequest, ToolInput):
    """Arguments of ``infer_backward``."""


class RuleRef(ToolOutput):
    """The rule a proof step applied."""

    id: str | None = None
    name: str | None = None


class ProofStep(ToolOutput):
    """One node of a proof tree: a stored fact (``fact`` set) or a rule application (``rule`` set)."""

    triple: list[str] = Field(description="[subject, predicate, object].")
    confidence: float
    fact: str | None = Field(None, description="The stored fact's uid (leaves).")
    rule: RuleRef | None = Field(None, description="The rule applied (inner nodes).")
    bindings: dict[str, str] = {}
    children: list[ProofStep] = Field(default_factory=new_list, description="The proofs of the rule's conditions.")


class ProofOutcome(ToolOutput):
    """The result of a backward proof."""

    goal: list[str] = Field(description="[subject, predicate, object] as asked.")
    proved: bool
    proofs: list[ProofStep] = Field(description="One proof tree per distinct answer.")
    gaps: list[PatternOut] = Field(description="When not proved: the missing facts that would complete a proof.")
    complete: bool = Field(True, description="False when the search stopped at its step bound (max_steps): the "
                           "proofs found hold; 'not proved' then means not proved within the bound.")  # fmt: skip
    steps: int = Field(0, description="Steps the search took (goals opened and facts tried).")
    note: str | None = Field(None, description="One sentence when the search was cut, saying what to do.")


class AbduceInput(AbduceRequest, ToolInput):
    """Arguments of ``infer_abductive``."""


class Hypothesis(ToolOutput):
    """A rule that would explain the observation."""

    rule_id: str
    name: str
    score: float = Field(description="(supported conditions / all conditions) x confidence factor.")
    confidence_factor: float
    bindings: dict[str, str]
    supported: list[TripleOut] = Field(description="Conditions the facts already satisfy.")
    missing: list[PatternOut] = Field(description="Conditions still unsupported: what to check next.")


class HypothesisList(ToolOutput):
    """Hypotheses, best first."""

    hypotheses: list[Hypothesis]


class KnowledgeInput(KnowledgeRequest, ToolInput):
    """Arguments of ``knowledge_explain``."""


# ---------------------------------------------------------------------------------------------- tools


@tool(
    "infer_forward",
    group=GROUP,
    description="Forward chaining: derive everything the enabled inference rules entail from the agent's "
    "asserted facts, to a fixpoint or a bound (max_derived facts, max_join candidate facts examined: then "
    "fixpoint=false and a note say so; what was derived holds). With persist=true the derived facts are stored "
    "(so fact_query finds them) and, at a fixpoint, derived facts that no longer follow are retracted; re-running "
    "adds nothing new. Returns one page of the derived facts (offset, limit; next_offset for the next page) with "
    "confidence and rule, total_derived, and what was stored or retracted.",
)
def infer_forward(ctx: ToolContext, args: ForwardInput) -> ForwardReport:
    """Forward chaining (optionally persisted)."""
    return reasoner_of(ctx.workspace()).forward(ctx.agent_for(args), args, tune_process=may_tune_process(ctx))


@tool(
    "infer_backward",
    group=GROUP,
    description="Backward chaining: try to prove one goal (subject, predicate, object; ?variables allowed) from "
    "the agent's facts and inference rules. Use to answer 'is X true, and why?'. Returns proof trees when "
    "proved, otherwise the knowledge gaps: the missing facts that would complete a proof. The search takes at "
    f"most {MAX_PROOF_STEPS:,} steps; past them complete=false and a note say so (what was found holds).",
)
def infer_backward(ctx: ToolContext, args: BackwardInput) -> ProofOutcome:
    """Prove a goal or report its gaps."""
    result = reasoner_of(ctx.workspace()).backward(ctx.agent_for(args), args)
    return ProofOutcome(
        goal=list(result.goal),
        proved=result.proved,
        proofs=[ProofStep.model_validate(p.to_dict()) for p in result.proofs],
        gaps=[PatternOut.model_validate(asdict(g)) for g in result.gaps],
        complete=result.complete,
        steps=result.steps,
        note=result.note,
    )


@tool(
    "infer_abductive",
    group=GROUP,
    description="Abduction: given an observation (subject, predicate, object), find the inference rules that "
    "would explain it, ranked by (supported conditions / all conditions) x confidence factor. Use to ask 'why "
    "might X be so?' or 'what should I check next?'. Returns hypotheses, best first, with the supported and the "
    "missing conditions.",
)
def infer_abductive(ctx: ToolContext, args: AbduceInput) -> HypothesisList:
    """Hypotheses explaining an observation, best first."""
    found = reasoner_of(ctx.workspace()).abduce(ctx.agent_for(args), args)
    return HypothesisList(hypotheses=[Hypothesis.model_validate(asdict(h)) for h in found])


@tool(
    "knowledge_explain",
    group=GROUP,
    description="Answer a plain-language question ('Is acme taxable?') with every reasoning method at once: "
    "direct facts, forward inference, backward proofs and abduction. Use when you do not know which method "
    "applies. Returns the findings, each saying which method found it, and a count per method; fixpoint, "
    "backward_complete and a note say when a bound cut the forward closure or the backward proofs.",
)
def knowledge_explain(ctx: ToolContext, args: KnowledgeInput) -> KnowledgeAnswer:
    """A question answered by every method."""
    return reasoner_of(ctx.workspace()).knowledge_explain(ctx.agent_for(args), args)


__all__ = [
    "MAX_FINDINGS",
    "MAX_HYPOTHESES",
    "MAX_QUESTION",
    "AbduceInput",
    "BackwardInput",
    "ForwardInput",
    "Hypothesis",
    "HypothesisList",
    "KnowledgeInput",
    "ProofOutcome",
    "ProofStep",
    "RuleRef",
]
