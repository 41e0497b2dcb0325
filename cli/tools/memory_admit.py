"""``memory_admit``: candidate memories through admission control, dedup decisions and a write.

``mabos memory admit`` runs this tool, so the CLI, the Python API and MCP share one validation of the candidates
and the scope checks of :class:`kg.memory.write_policy.MemoryWriter`: a candidate naming a scope the agent may not
write refuses the whole call before anything is queued, novelty is judged against the agent's own items only, and
dedup never merges across scopes (a derived item's scope is never wider than the narrowest of its sources).
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.memory.admission import AdmissionResult, evaluate
from kg.memory.admission_requests import MAX_CANDIDATES, AdmitRequest
from kg.memory.write_policy import MemoryWriter, OfferReport

GROUP = "memory"


class MemoryAdmitInput(AdmitRequest, ToolInput):
    """Arguments of ``memory_admit``."""


class AdmitResult(ToolOutput):
    """A dry run's admission decisions, or what a write did."""

    dry_run: bool = Field(description="Whether this was a dry run (nothing written).")
    admission: list[AdmissionResult] | None = Field(
        default=None, description="Dry run: the admission decision, score and reason of each candidate."
    )
    report: OfferReport | None = Field(
        default=None, description="Write: admission results and the outcome (stage, action, reason) of each."
    )


_ADMIT = (
    "Offer candidate memories (e.g. extracted from a conversation) to admission control, which scores utility, "
    "confidence, novelty, recency and type and admits the worthwhile ones; then dedup decides against the agent's "
    "memories (merge, support, contextualize, skip or create; by the configured LLM, else similarity rules) and "
    "writes them, keeping history. dry_run only scores. Returns each candidate's decision and outcome."
)


@tool("memory_admit", group=GROUP, description=_ADMIT)
def memory_admit(ctx: ToolContext, args: MemoryAdmitInput) -> AdmitResult:
    """Score (dry run) or admit, dedup and write the candidates as the agent."""
    agent, ws = ctx.agent_for(args), ctx.workspace()
    if args.dry_run:
        ws.scopes.require_agent(agent)
        existing = ws.memory.list_items(agent, include_archived=False)
        preset = "balanced" if args.preset == "off" else args.preset
        results = evaluate(args.candidates, existing=existing, now=ws.clock.now(), preset=preset, embedder=ws.embedder)
        return AdmitResult(dry_run=True, admission=results)
    from kg.conversation.llm import configured_chat  # noqa: PLC0415 - the chat client loads only where a model may run

    writer = MemoryWriter(ws.memory, agent, embedder=ws.embedder, chat=configured_chat(ws.config),
                          admission=None if args.preset == "off" else args.preset)  # fmt: skip
    report = writer.offer(args.candidates)
    report.outcomes += writer.close().outcomes
    return AdmitResult(dry_run=False, report=report)


__all__ = ["MAX_CANDIDATES", "AdmitResult", "MemoryAdmitInput"]
