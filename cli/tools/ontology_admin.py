"""Ontology review tools: reject a proposal, preview a merge as a diff, check the ontology set, convert it to TypeQL.

``mabos ontology reject|diff|check|to-typeql`` run these tools on the command's ontology folder (``--ontology-dir``,
passed outside the tool input: :class:`cli.tools.overrides.CommandContext`), so the CLI, the Python API and MCP
share their validation. A proposal another agent recorded in a scope the caller may not read looks absent (as for
``ontology_validate_proposal``); rejecting one also needs the right to write its scope. ``ontology_to_typeql``
returns the schema text: where it is written is the command's choice (an agent cannot name a file).
"""

from __future__ import annotations

from pydantic import Field

from cli.tools.ontology import GROUP, ProposalInput, ProposalOutcome, service, visible
from cli.tools.overrides import optional_agent
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from kg.errors import InputError
from kg.models import OntologyProposal
from kg.ontology.graphs import load_graph, ontology_files
from kg.ontology.merge import FileCheck
from kg.ontology.requests import RejectRequest
from kg.ontology.typeql import to_typeql
from kg.ontology.typeql_terms import Note


class RejectInput(RejectRequest, ToolInput):
    """Arguments of ``ontology_reject_proposal``; ``agent_id`` is who rejects (default: the proposer)."""

    agent_id: str | None = Field(default=None, description="The rejecting agent (default: the proposer).")


class DiffInput(ProposalInput):
    """Arguments of ``ontology_diff``."""

    agent_id: str | None = Field(default=None, description="Whose visibility applies (empty: the operator's).")


class ProposalDiff(ProposalOutcome):
    """What merging a proposal would change in its domain file."""

    diff: str = Field(description="A unified diff of the domain file (empty when nothing would change).")


class OntologyInput(ToolInput):
    """Arguments of ``ontology_check`` and ``ontology_to_typeql``: the ontology set is shared, no filter applies."""

    agent_id: str | None = Field(default=None, description="The acting agent (optional; only checked).")


class OntologyCheck(ToolOutput):
    """SHACL and OWL 2 RL results per file of the active ontology set."""

    ok: bool = Field(description="True when every file passed every check.")
    files: list[FileCheck] = Field(description="One result per file, in name order.")


class TypeQLResult(ToolOutput):
    """The active ontology set as one TypeQL 3 schema."""

    text: str = Field(description="The define query, header comment included.")
    files: list[str] = Field(description="The ontology files converted (names, in order).")
    counts: dict[str, int] = Field(description="entities, relations, attributes, owns, plays, skipped ...")
    notes: list[Note] = Field(description="The mapping decisions taken (renames, skipped nodes ...).")


_REJECT = (
    "Reject an ontology proposal that should not be merged (a duplicate, a wrong parent, out of scope), recording "
    "who, when and why in its history; final. Only a pending, validated or invalid proposal can be rejected. "
    "Returns the proposal with status rejected."
)
_DIFF = (
    "Preview what merging an ontology proposal would change in its domain file, as a unified diff; nothing is "
    "written. Use it before ontology_merge_approved to review the exact JSON-LD a merge adds."
)
_CHECK = (
    "Check every file of the shared ontology set with SHACL and OWL 2 RL consistency. Use it after merges or "
    "hand edits. Returns ok and, per file, each check with its message."
)
_TYPEQL = (
    "Convert the shared ontology set to one TypeQL 3 schema (entity, relation and attribute types), "
    "deterministically. Returns the define query, the counts of each kind and the mapping notes; nothing is written."
)


@tool("ontology_reject_proposal", group=GROUP, description=_REJECT)
def ontology_reject_proposal(ctx: ToolContext, args: RejectInput) -> OntologyProposal:
    """Reject a proposal the agent may read and whose scope it may write."""
    svc, proposal, agent = visible(ctx, args, args.uid)
    if agent is not None:
        svc.scopes.check_write(agent, proposal.scope)
    return svc.reject(args, agent or proposal.proposed_by)


@tool("ontology_diff", group=GROUP, description=_DIFF)
def ontology_diff(ctx: ToolContext, args: DiffInput) -> ProposalDiff:
    """The diff a merge of the proposal would make now."""
    svc, _, _ = visible(ctx, args, args.uid)
    return ProposalDiff(uid=args.uid, diff=svc.diff(args))


@tool("ontology_check", group=GROUP, description=_CHECK)
def ontology_check(ctx: ToolContext, args: OntologyInput) -> OntologyCheck:
    """SHACL and OWL 2 RL over every file of the active set."""
    optional_agent(ctx, args)  # a bound server refuses another agent
    results = service(ctx).check()
    return OntologyCheck(ok=all(r.ok for r in results), files=results)


@tool("ontology_to_typeql", group=GROUP, description=_TYPEQL)
def ontology_to_typeql(ctx: ToolContext, args: OntologyInput) -> TypeQLResult:
    """The active set as a TypeQL schema (text only; the command writes the file)."""
    optional_agent(ctx, args)
    folder = service(ctx).ontology_dir
    files = ontology_files(folder)
    if not files:
        raise InputError("ontology_dir", f"no ontology files (*.jsonld) in {folder.name}/")
    schema = to_typeql(load_graph(files), sources=[f.name for f in files])
    return TypeQLResult(text=schema.text, files=[f.name for f in files], counts=schema.counts, notes=schema.notes)


__all__ = ["OntologyCheck", "ProposalDiff", "TypeQLResult"]
