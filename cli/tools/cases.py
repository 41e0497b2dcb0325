"""Case-based reasoning and the method router: cbr_store, cbr_retrieve and reason.

The handlers make the calls ``mabos cbr store|retrieve`` and ``mabos reason run`` make: the
:class:`reasoning.cases.CaseService` of the workspace and :func:`reasoning.router.reason` with the engines of
:func:`reasoning.cases.router_engines`. Limits are the services' (retrieve k 1..100, router top 1..35).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.errors import InputError
from kg.models import MAX_CONTENT, MAX_LIST, CaseOutcome, CaseSituation, CaseSolution, RecordId, Unit
from kg.workspace import Workspace
from reasoning.cases import CaseService, StoredCase, router_engines
from reasoning.cbr import DEFAULT_K, CBRWeights, RetrievalResult
from reasoning.router import AUTO, Problem, ProblemProfile, RouterResult, reason
from reasoning.router.run import MAX_METHODS
from reasoning.service import Reasoner

MAX_K = 100  # CaseService.retrieve's ceiling

#: Short names accepted for the methods with an engine.
ALIASES = {"bayesian": "bayesian_update", "bayes": "bayesian_update", "decision": "expected_utility",
           "eu": "expected_utility", "cbr": "case_based", "case-based": "case_based"}  # fmt: skip

_Item = Annotated[str, Field(max_length=1024)]


def cases_of(ws: Workspace) -> CaseService:
    """The case service of a workspace."""
    return CaseService(ws.store, ws.scopes, ws.clock, ws.embedder)


# ---------------------------------------------------------------------------------------------- cbr_store


class CbrStoreInput(ToolInput):
    """Arguments of ``cbr_store``: one past case."""

    situation: CaseSituation = Field(
        description="The situation: {beliefs: [..], desires: [..], context: 'free text'}; beliefs and desires are "
        "uids (B-..., D-...) or short statements."
    )
    solution: CaseSolution = Field(description="What was done: {plan_id: 'P-...' or null, actions: ['..']}.")
    outcome: CaseOutcome = Field(
        description="How it went: {success: true|false, metrics: {name: number}, lessons: ['..']}."
    )
    scope: str | None = Field(None, description="Where to store it (default the agent's own scope 'agent:<id>').")
    uid: RecordId | None = Field(None, description="Optional: the uid (C-...) to store it under; default a new one.")


@tool(
    "cbr_store",
    group="cases",
    input=CbrStoreInput,
    output=StoredCase,
    description="""Store a past case (situation, solution, outcome) so that similar situations can reuse it later.
    Use it after a plan finished, successfully or not. An identical situation in the scope is stored once (the
    stored case comes back with created=false); past the capacity (10,000 per scope) the least useful cases
    (failed, then oldest) are dropped. Returns the stored case, whether it was created and the pruned uids.""",
)
def cbr_store(ctx: ToolContext, args: CbrStoreInput) -> StoredCase:
    """Store a case through the case service."""
    agent = ctx.agent_for(args)
    fields = args.model_dump(exclude={"agent_id"}, exclude_none=True)
    return cases_of(ctx.workspace()).store_case(agent, **fields)


# ---------------------------------------------------------------------------------------------- cbr_retrieve


class CbrRetrieveInput(ToolInput):
    """Arguments of ``cbr_retrieve``: the current situation."""

    beliefs: list[_Item] = Field(
        default_factory=list, max_length=MAX_LIST, description="The current beliefs (uids or short statements)."
    )
    desires: list[_Item] = Field(
        default_factory=list, max_length=MAX_LIST, description="The current desires (uids or short statements)."
    )
    context: str = Field(
        "", max_length=MAX_CONTENT, description="Free text compared with the cases' contexts (needs the embedder)."
    )
    k: int = Field(DEFAULT_K, ge=1, le=MAX_K, description="How many cases at most (1..100, default 5).")
    min_score: Unit = Field(0.0, description="Only cases scoring at least this (0..1, default 0).")
    weights: CBRWeights | None = Field(
        None, description="Optional weights {beliefs: 0.6, desires: 0.4, context: 0.2} (beliefs:desires is a ratio)."
    )


@tool(
    "cbr_retrieve",
    group="cases",
    input=CbrRetrieveInput,
    output=RetrievalResult,
    description="""Find the past cases most similar to the current situation, to reuse what worked (and avoid what
    failed). Score S = 0.6 x belief overlap + 0.4 x desire overlap (Jaccard), blended with the context's text
    similarity (weight 0.2) when a context is given and the embedder loads. Returns the matches best first, each with
    its score, the similarity terms, the solution and the outcome, plus notes (e.g. why context was not used).""",
)
def cbr_retrieve(ctx: ToolContext, args: CbrRetrieveInput) -> RetrievalResult:
    """Retrieve similar cases through the case service."""
    agent = ctx.agent_for(args)
    return cases_of(ctx.workspace()).retrieve(
        agent, beliefs=args.beliefs, desires=args.desires, context=args.context, k=args.k, weights=args.weights,
        min_score=args.min_score,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------- reason


class ReasonInput(ToolInput):
    """Arguments of ``reason``: the problem and which method(s) to run."""

    problem: str = Field("", max_length=MAX_CONTENT, description="The problem or question in plain words.")
    method: str | None = Field(
        None,
        max_length=64,
        description="One method id (e.g. deductive, abductive, case_based, bayesian_update, expected_utility, "
        "counterfactual; aliases bayes, decision, cbr), or 'auto' to pick from the problem's profile. "
        "Default 'auto' when methods is not given.",
    )
    methods: list[str] | None = Field(
        None,
        min_length=1,
        max_length=MAX_METHODS,
        description="Several method ids to run and compare (multi-method fusion: agreements, disagreements, "
        "majority). Give either method or methods.",
    )
    top: int = Field(1, ge=1, le=MAX_METHODS, description="In auto mode: how many best-scored methods to run (1..35).")
    profile: ProblemProfile | None = Field(
        None,
        description="The problem's profile for auto mode: {uncertainty, complexity, data_availability, stakes: "
        "low|medium|high, domain: finance|operations|strategy|legal|technical|marketing|people|general}; "
        "classified from the problem text when omitted.",
    )
    inputs: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Inputs per method id: deductive {goal: 'S P O'} (prove it; else forward chaining), abductive "
        "{observation: 'S P O'}, case_based {beliefs: [..], desires: [..], context}, bayesian_update {hypotheses: "
        "[{label, prior, evidence: [{p_given_h, p_given_not_h}]}]}, expected_utility {options: [{name, outcomes: "
        "[{probability, utility}]}]}.",
    )


def _target(args: ReasonInput) -> str | list[str]:
    if args.method is not None and args.methods is not None:
        raise InputError("method", "give either method or methods, not both")
    if args.methods is not None:
        return [ALIASES.get(m, m) for m in args.methods]
    return ALIASES.get(args.method, args.method) if args.method else AUTO


@tool(
    "reason",
    group="cases",
    input=ReasonInput,
    output=RouterResult,
    description="""Route a problem to one of 35 reasoning methods and run it. Deductive (over the agent's facts and
    rules), abductive, case-based, bayesian_update and expected_utility compute an answer; the other methods return
    a structured prompt for your own LLM (kind 'llm_prompt'). method='auto' (the default) classifies the problem
    and runs the best-scored method(s); methods=[..] runs several and reports agreements, disagreements and the
    majority. Returns the mode, the methods run, the profile and scores (auto), each result and the fusion report.""",
)
def reason_tool(ctx: ToolContext, args: ReasonInput) -> RouterResult:
    """Run the reasoning-method router with the workspace's deductive, abductive and case-based engines."""
    agent = ctx.agent_for(args)
    target = _target(args)
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    engines = router_engines(Reasoner(ws.store, ws.scopes, ws.clock, ws.facts), cases_of(ws), agent)
    problem = Problem(text=args.problem, profile=args.profile, inputs=args.inputs)
    return reason(problem, target, top=args.top, engines=engines)


__all__ = [
    "ALIASES",
    "CbrRetrieveInput",
    "CbrStoreInput",
    "ReasonInput",
    "cases_of",
    "cbr_retrieve",
    "cbr_store",
    "reason_tool",
]
