"""Ontology tools: propose a concept, validate it, merge it, list proposals, scaffold a domain ontology.

The inputs are the service's requests (:mod:`kg.ontology.requests`) plus ``agent_id``. Every tool runs
:class:`kg.ontology.proposals.OntologyService` on the workspace's ``ontologies/`` folder (a CLI
command may choose another with ``--ontology-dir``: :class:`cli.tools.overrides.CommandContext`), the same
service ``mabos ontology ...`` uses.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from cli.tools.overrides import ontology_dir, optional_agent
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.errors import NotFoundError
from kg.models import OntologyProposal, ValidationCheck
from kg.ontology.proposals import OntologyService
from kg.ontology.requests import ListRequest, ProposalRequest, ProposeRequest, ScaffoldRequest
from kg.workspace import ONTOLOGY_DIR

GROUP = "ontology"


def service(ctx: ToolContext) -> OntologyService:
    """The ontology service on the context's workspace and ontology folder."""
    ws = ctx.workspace()
    return OntologyService(ws.ports, ws.scopes, ws.clock, ontology_dir(ctx) or ws.path / ONTOLOGY_DIR)


def readable(svc: OntologyService, uid: str, agent: str | None) -> OntologyProposal:
    """The proposal, or NotFoundError when ``agent`` may not read its scope (as if it did not exist)."""
    proposal = svc.get(uid)
    if agent is not None and proposal.scope not in svc.scopes.readable(agent):
        raise NotFoundError(f"proposal: no proposal {uid!r} visible to {agent!r}")
    return proposal


def visible(ctx: ToolContext, args: ToolInput, uid: str) -> tuple[OntologyService, OntologyProposal, str | None]:
    """The service, proposal ``uid`` and the acting agent (None: the operator), for the tools whose agent is
    optional; NotFoundError when the agent may not read the proposal's scope (as if it did not exist)."""
    svc, agent = service(ctx), optional_agent(ctx, args)
    return svc, readable(svc, uid, agent), agent


class ProposalInput(ProposalRequest, ToolInput):
    """Base of the inputs naming one proposal."""


class ProposalOutcome(ToolOutput):
    """Base of the outputs about one proposal."""

    uid: str = Field(description="The proposal's uid.")


# ------------------------------------------------------------------------------------------ propose


class ProposeInput(ProposeRequest, ToolInput):
    """Input of ``ontology_propose_concept``; ``agent_id`` is the proposer."""


@tool(
    "ontology_propose_concept",
    group=GROUP,
    description="""Propose a new class or property for a shared domain ontology when the data needs a concept the
    ontology lacks. Records a pending proposal (nothing in the ontology changes yet) and returns it with its uid;
    next, ontology_validate_proposal checks it and ontology_merge_approved adds it.""",
)
def ontology_propose_concept(ctx: ToolContext, args: ProposeInput) -> OntologyProposal:
    """Record a pending proposal."""
    return service(ctx).propose(ctx.agent_for(args), args)


# ------------------------------------------------------------------------------------------ validate


class ValidateInput(ProposalInput):
    """Input of ``ontology_validate_proposal``; ``agent_id`` is the validator (default: the proposer)."""

    agent_id: str | None = Field(default=None, description="The validating agent (default: the proposer).")


class ValidationReport(ProposalOutcome):
    """The checks run on a proposal; ``valid`` when every one passed."""

    valid: bool = Field(description="True when every check passed (status validated), else status invalid.")
    checks: list[ValidationCheck] = Field(description="Every check with its outcome and message.")


@tool(
    "ontology_validate_proposal",
    group=GROUP,
    description="""Run every check on an ontology proposal: JSON-LD, SHACL, that the parent/domain/range exist,
    near-duplicate labels, naming, the SBVR definition, OWL-RL consistency and TypeQL mappability. Records the
    proposal as validated or invalid; the ontology files are not changed. Returns valid and each check's message
    (fix an invalid proposal by proposing again).""",
)
def ontology_validate_proposal(ctx: ToolContext, args: ValidateInput) -> ValidationReport:
    """Validate a proposal."""
    svc, proposal, agent = visible(ctx, args, args.uid)
    checks = svc.validate(args, agent or proposal.proposed_by)
    return ValidationReport(uid=args.uid, valid=all(c.ok for c in checks), checks=checks)


# ------------------------------------------------------------------------------------------ merge


class MergeInput(ProposalInput):
    """Input of ``ontology_merge_approved``; ``agent_id`` is the approver."""


@tool(
    "ontology_merge_approved",
    group=GROUP,
    description="""Approve a validated ontology proposal and merge it into its domain ontology file (re-validated
    first, provenance recorded, rolled back if the file stops validating). A proposal is merged once. Returns the
    proposal with status approved-merged; fails for a proposal that is not validated.""",
)
def ontology_merge_approved(ctx: ToolContext, args: MergeInput) -> OntologyProposal:
    """Merge a validated proposal."""
    svc = service(ctx)
    agent = ctx.agent_for(args)
    readable(svc, args.uid, agent)
    return svc.merge(args, agent)


# ------------------------------------------------------------------------------------------ list


class ListInput(ListRequest, ToolInput):
    """Input of ``ontology_list_proposals``; with ``agent_id`` only what that agent may read."""

    agent_id: str | None = Field(
        default=None, description="List only what this agent may read; empty: every proposal (operator view)."
    )


class ProposalList(ToolOutput):
    """Ontology proposals, oldest first."""

    proposals: list[OntologyProposal]
    truncated: bool = Field(default=False, description="True when more proposals matched than the limit.")


@tool(
    "ontology_list_proposals",
    group=GROUP,
    description="""List ontology proposals, oldest first, optionally by status (pending, validated, invalid,
    approved-merged, rejected) and domain. Use it to find proposals to review or to check whether a concept was
    already proposed. Returns each proposal with its uid, status, history and last validation.""",
)
def ontology_list_proposals(ctx: ToolContext, args: ListInput) -> ProposalList:
    """List proposals."""
    found = service(ctx).list(args, agent_id=optional_agent(ctx, args))
    return ProposalList(proposals=found[: args.limit], truncated=len(found) > args.limit)


# ------------------------------------------------------------------------------------------ scaffold


class ScaffoldInput(ScaffoldRequest, ToolInput):
    """Input of ``ontology_scaffold_domain``."""

    agent_id: str | None = Field(default=None, description="Optional: the acting agent (only checked).")


class ScaffoldResult(ToolOutput):
    """The domain ontology file created."""

    domain: str
    template: str
    path: str = Field(description="The file written: <workspace>/ontologies/<domain>.jsonld.")


@tool(
    "ontology_scaffold_domain",
    group=GROUP,
    description="""Create a new domain ontology from a template (saas, ecommerce, consulting, agency) when a
    business domain has no ontology yet: every id moves to the namespace https://w3id.org/mabos/<domain>#.
    Fails if the domain exists. Returns the file written.""",
)
def ontology_scaffold_domain(ctx: ToolContext, args: ScaffoldInput) -> ScaffoldResult:
    """Create a domain ontology file from a template."""
    optional_agent(ctx, args)  # a bound server refuses another agent
    path: Path = service(ctx).scaffold(args)
    return ScaffoldResult(domain=args.domain, template=args.template, path=str(path))


__all__ = [
    "ListInput",
    "MergeInput",
    "ProposalInput",
    "ProposalList",
    "ProposalOutcome",
    "ProposeInput",
    "ScaffoldInput",
    "ScaffoldResult",
    "ValidateInput",
    "ValidationReport",
    "readable",
    "service",
    "visible",
]
