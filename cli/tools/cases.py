"""Case-based reasoning and the method router: cbr_store, cbr_retrieve and reason.

The handlers make the calls ``mabos cbr store|retrieve`` and ``mabos reason run`` make: the
:class:`reasoning.cases.CaseService` of the workspace and :func:`reasoning.router.service.reason_for`. The inputs are
the services' request models (:mod:`reasoning.cases_requests`, :mod:`reasoning.router_requests`) plus ``agent_id``;
their fields, limits and descriptions are declared there once (retrieve k 1..100, router top 1..32).
"""

from __future__ import annotations

from cli.tools.registry import ToolContext, ToolInput, tool
from kg.workspace import Workspace
from reasoning.cases import CaseService, StoredCase
from reasoning.cases_requests import MAX_K, CbrRetrieveRequest, CbrStoreRequest
from reasoning.cbr import RetrievalResult
from reasoning.router import RouterResult
from reasoning.router.service import method_context, reason_for
from reasoning.router_requests import ReasonRequest


def cases_of(ws: Workspace) -> CaseService:
    """The case service of a workspace."""
    return CaseService(ws.ports, ws.scopes, ws.clock, ws.embedder)


# ---------------------------------------------------------------------------------------------- cbr_store


class CbrStoreInput(CbrStoreRequest, ToolInput):
    """Arguments of ``cbr_store``: one past case."""


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
    return cases_of(ctx.workspace()).store_case(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------------------- cbr_retrieve


class CbrRetrieveInput(CbrRetrieveRequest, ToolInput):
    """Arguments of ``cbr_retrieve``: the current situation."""


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
    return cases_of(ctx.workspace()).retrieve(ctx.agent_for(args), args)


# ---------------------------------------------------------------------------------------------- reason


class ReasonInput(ReasonRequest, ToolInput):
    """Arguments of ``reason`` (the seed's parameters, plus top, narrate and storing)."""


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
    return reason_for(ctx.workspace(), ctx.agent_for(args), args)


__all__ = [
    "MAX_K",
    "CbrRetrieveInput",
    "CbrStoreInput",
    "ReasonInput",
    "cases_of",
    "cbr_retrieve",
    "cbr_store",
    "method_context",
    "reason_tool",
]
