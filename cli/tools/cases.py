"""Case-based reasoning and the method router: cbr_store, cbr_retrieve and reason.

The handlers make the calls ``mabos cbr store|retrieve`` and ``mabos reason run`` make: the
:class:`reasoning.cases.CaseService` of the workspace and :func:`reasoning.router.reason` in a
:class:`~reasoning.router.MethodContext` of the agent. Limits are the services' (retrieve k 1..100, router
top 1..32).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.models import MAX_CONTENT, MAX_LIST, CaseOutcome, CaseSituation, CaseSolution, RecordId, Scope, Unit
from kg.workspace import Workspace
from reasoning.cases import CaseService, StoredCase
from reasoning.cbr import DEFAULT_K, CBRWeights, RetrievalResult
from reasoning.router import MethodContext, ProblemClassification, RouterResult, reason
from reasoning.router.run import MAX_METHODS
from reasoning.router.store import store_result

MAX_K = 100  # CaseService.retrieve's ceiling

_Item = Annotated[str, Field(max_length=1024)]


def cases_of(ws: Workspace) -> CaseService:
    """The case service of a workspace."""
    return CaseService(ws.ports, ws.scopes, ws.clock, ws.embedder)


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
    """Arguments of ``reason`` (the seed's parameters, plus top, narrate and storing)."""

    problem: str = Field("", max_length=MAX_CONTENT, description="The problem or question in plain words.")
    method: str | None = Field(
        None,
        max_length=64,
        description="One method id (mode 1), e.g. bayesian, decision-theory, game-theory, counterfactual ('_' works "
        "for '-'), or 'auto'. Omit it to auto-select from problem_classification.",
    )
    problem_classification: ProblemClassification | None = Field(
        None,
        description="Mode 2 (auto-select): {uncertainty: low|medium|high, complexity: simple|moderate|complex, "
        "domain: formal|empirical|social|mixed, time_pressure: none|moderate|urgent, data_availability: "
        "rich|moderate|sparse, stakes: low|medium|high}; read from the problem text when omitted.",
    )
    multi_method: bool = Field(False, description="Mode 3: run several methods and fuse their conclusions.")
    methods: list[Annotated[str, Field(max_length=64)]] | None = Field(
        None, min_length=1, max_length=MAX_METHODS, description="The methods for multi_method (default: best 3)."
    )
    inputs: dict[str, Any] = Field(
        default_factory=dict,
        description="Inputs per method id, e.g. {bayesian: {network: {nodes: {Rain: {parents: [], cpt: {'': 0.2}}}}, "
        "evidence: {}, query: Rain}}; or one method's own object. Without inputs a method reads the agent's "
        "graph (facts, rules, cases, beliefs, goals) where it can; see docs/reasoning-methods.md.",
    )
    top: int = Field(1, ge=1, le=32, description="Auto mode: how many best-scored methods to run.")
    narrate: bool = Field(False, description="Add a short explanation by the configured chat model (if any).")
    store: Literal["memory", "case"] | None = Field(None, description="Store each result as a memory or a case.")
    store_scope: Scope | None = Field(None, description="Where to store (no wider than the result's sources).")
    success: bool | None = Field(None, description="With store='case': how the decision turned out.")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="Seed of simulations (monte-carlo).")


def method_context(ws: Workspace, agent: str, *, seed: int = 0, problem: str = "") -> MethodContext:
    """The context engines run in: the agent, its workspace and the configured chat model (if any, with the
    configured ``[llm] timeout``, as every LLM user of the workspace)."""
    from kg.extraction.workspace import workspace_chat  # noqa: PLC0415 - extraction loads only where a model may run

    chat = workspace_chat(ws)
    return MethodContext(agent_id=agent, workspace=ws, chat=chat, seed=seed, problem=problem)


@tool(
    "reason",
    group="cases",
    description="""Apply a reasoning method to a problem: 32 methods in 6 categories (formal, probabilistic,
    causal, experience, social, meta), each computed by an engine from structured inputs or from the agent's
    facts, rules, cases, beliefs and goals. Three modes: method='bayesian' (explicit); problem_classification
    (auto-select by the seed's scoring); multi_method with methods (fusion: agreements, disagreements, a unified
    conclusion and an overall confidence). Each result: {method, kind: computed|llm_prompt|llm, conclusion,
    confidence, value, trace, used, notes}. A method lacking inputs returns a prompt for your LLM.""",
)
def reason_tool(ctx: ToolContext, args: ReasonInput) -> RouterResult:
    """Run the router for the agent over its workspace; store results on request."""
    agent = ctx.agent_for(args)
    ws = ctx.workspace()
    ws.scopes.require_agent(agent)
    if args.store is not None and args.store_scope is not None:
        ws.scopes.check_write(agent, args.store_scope)
    context = method_context(ws, agent, seed=args.seed, problem=args.problem)
    result = reason(context, args.problem, method=args.method, problem_classification=args.problem_classification,
                    multi_method=args.multi_method, methods=args.methods, inputs=args.inputs, top=args.top,
                    narrate_results=args.narrate)  # fmt: skip
    if args.store is not None:
        stored = [store_result(ws, agent, args.problem, r, store_as=args.store, scope=args.store_scope,
                               success=args.success) for r in result.results if r.kind != "llm_prompt"]  # fmt: skip
        result = result.model_copy(update={"stored": stored})
    return result


__all__ = [
    "CbrRetrieveInput",
    "CbrStoreInput",
    "ReasonInput",
    "cases_of",
    "cbr_retrieve",
    "cbr_store",
    "method_context",
    "reason_tool",
]
