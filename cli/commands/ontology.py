"""``mabos ontology propose|list|validate|merge|reject|diff|scaffold|to-typeql|check``.

Every command runs its registry tool (:mod:`cli.tools.ontology`, :mod:`cli.tools.ontology_admin`) on the command's
ontology folder; ``to-typeql`` writes the schema the tool returns to the file the operator chose."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cli import render
from cli.common import Session, example, ontology_options
from cli.options import Cli, request_options
from cli.tools.ontology import (
    ListInput,
    MergeInput,
    ProposalList,
    ProposeInput,
    ScaffoldInput,
    ScaffoldResult,
    ValidateInput,
    ValidationReport,
)
from cli.tools.ontology_admin import DiffInput, OntologyCheck, ProposalDiff, RejectInput, TypeQLResult
from kg.models import OntologyProposal
from kg.ontology.files import atomic_write
from kg.ontology.requests import MAX_LIST
from kg.workspace import ONTOLOGY_DIR

#: Where ``to-typeql`` writes by default, inside the workspace.
TYPEQL_OUT = Path("schema") / "typedb" / "ontology.tql"
PROPOSAL = Cli(argument=True, metavar="PROPOSAL_ID")
#: The operator's commands: no acting agent (every proposal visible; the scaffold acts for nobody).
OPERATOR = Cli(hidden=True)


def by(help_text: str, *, flag: str = "--by", required: bool = False) -> Cli:
    """The acting agent as the command names its role (``--by``: who proposes, validates, rejects;
    ``--approved-by``: who merges)."""
    name = flag.removeprefix("--").replace("-", "_")
    option = click.Option([flag, name], required=required, default=None, help=help_text)
    return Cli(params=(option,), build=lambda **given: given[name])


def _proposal_line(p: OntologyProposal) -> tuple[Any, ...]:
    return (p.uid, p.status.value, p.domain, p.node_type.value, p.node_id, p.label, p.proposed_by)


def _proposals(found: list[OntologyProposal]) -> Any:
    columns = ("uid", "status", "domain", "type", "id", "label", "by")
    return render.table("Ontology proposals", columns, [_proposal_line(p) for p in found])


def _checks(checks: list[Any]) -> Any:
    return render.table("Checks", ("check", "ok", "message"), [(c.check, "yes" if c.ok else "NO", c.message)
                                                                for c in checks])  # fmt: skip


@click.group("ontology")
def ontology() -> None:
    """The shared ontology: propose -> validate -> merge (or reject), scaffold domains, convert to TypeQL."""


@ontology.command("propose", help=example(
    "Propose a class or property for a domain ontology (status pending). --id takes PREFIX:LocalName or "
    "LocalName; --parent, --domain-class and --range take ids of existing nodes (or xsd: types for datatype "
    "ranges).",
    "mabos ontology propose --domain ecommerce --type class --id ecommerce:DropshipFulfillment "
    "--label 'Dropship Fulfillment' --parent ecommerce:Fulfillment --definition 'Fulfillment in which the "
    "supplier ships directly to the customer' --rationale 'three suppliers ship direct' --by agent-1 --json",
))  # fmt: skip
@request_options(ProposeInput, agent_id=by("The proposing agent.", required=True), node_type=Cli(flag="--type"),
                 node_id=Cli(flag="--id"), parent_class=Cli(flag="--parent"), sbvr_definition=Cli(flag="--definition"),
                 sbvr_synonyms=Cli(flag="--synonym"))  # fmt: skip
@ontology_options
def propose(out: Session, *, request: ProposeInput) -> None:
    proposal = out.run("ontology_propose_concept", request, OntologyProposal)
    out.emit(proposal, render.done(f"{proposal.uid} pending: {proposal.domain}:{proposal.node_id}"),
             render.note(f"next: mabos ontology validate {proposal.uid}"))  # fmt: skip


@ontology.command("list", help=example(
    "Proposals, oldest first, optionally by status and domain.",
    "mabos ontology list --status pending --domain ecommerce --json",
))  # fmt: skip
@request_options(ListInput, agent_id=OPERATOR, limit=Cli(hidden=True, value=MAX_LIST))
@ontology_options
def list_(out: Session, *, request: ListInput) -> None:
    found = out.run("ontology_list_proposals", request, ProposalList)
    out.emit(found.proposals, _proposals(found.proposals) if found.proposals else render.note("no proposals"))


@ontology.command("validate", help=example(
    "Run every check on a proposal (JSON-LD, SHACL, parent/domain/range exist, near-duplicate labels, naming, "
    "SBVR definition, OWL-RL consistency, TypeQL mappability); the ontology files are not changed. Exit 0 when "
    "valid, 1 when not (the checks are printed either way).",
    "mabos ontology validate O-01J... --json",
))  # fmt: skip
@request_options(ValidateInput, uid=PROPOSAL, agent_id=by("Who validates (default: the proposer)."))
@ontology_options
def validate(out: Session, *, request: ValidateInput) -> None:
    uid = request.uid
    report = out.run("ontology_validate_proposal", request, ValidationReport)
    out.emit(report, render.done(f"{uid} validated") if report.valid else render.note(f"{uid} invalid"),
             _checks(report.checks))  # fmt: skip
    if not report.valid:
        click.get_current_context().exit(1)


@ontology.command("merge", help=example(
    "Merge a validated proposal into its domain file (re-validated first; provenance on the node; the whole "
    "file re-checked after the write and restored byte for byte if anything breaks). A merge happens once.",
    "mabos ontology merge O-01J... --approved-by knowledge-agent --json",
))  # fmt: skip
@request_options(MergeInput, uid=PROPOSAL, agent_id=by("The approving agent.", flag="--approved-by", required=True))
@ontology_options
def merge(out: Session, *, request: MergeInput) -> None:
    merged = out.run("ontology_merge_approved", request, OntologyProposal)
    out.emit(merged, render.done(f"{request.uid} merged into {merged.domain}: {merged.domain}:{merged.node_id}"))


@ontology.command("reject", help=example(
    "Reject a proposal, recording who, when and why.",
    "mabos ontology reject O-01J... --reason 'duplicate of biz:Shipment' --by knowledge-agent",
))  # fmt: skip
@request_options(RejectInput, uid=PROPOSAL, agent_id=by("Who rejects (default: the proposer)."))
@ontology_options
def reject(out: Session, *, request: RejectInput) -> None:
    rejected = out.run("ontology_reject_proposal", request, OntologyProposal)
    out.emit(rejected, render.done(f"{request.uid} rejected: {request.reason}"))


@ontology.command("diff", help=example(
    "What merging a proposal would change in its domain file (a unified diff; nothing is written). For a merged "
    "proposal: a line saying where, by whom and when it was merged, then the change the merge made.",
    "mabos ontology diff O-01J...",
))  # fmt: skip
@request_options(DiffInput, uid=PROPOSAL, agent_id=OPERATOR)
@ontology_options
def diff(out: Session, *, request: DiffInput) -> None:
    found = out.run("ontology_diff", request, ProposalDiff)
    out.emit_text(found, found.diff)


@ontology.command("scaffold", help=example(
    "Create a domain ontology ontologies/<domain>.jsonld from a template (saas, ecommerce, consulting, agency): "
    "every id moves to the namespace https://w3id.org/mabos/<domain># under the prefix <domain> (hyphens "
    "dropped: pet-shop -> petshop).",
    "mabos ontology scaffold --template saas --domain acme",
))  # fmt: skip
@request_options(ScaffoldInput, agent_id=OPERATOR)
@ontology_options
def scaffold(out: Session, *, request: ScaffoldInput) -> None:
    created = out.run("ontology_scaffold_domain", request, ScaffoldResult)
    out.emit(created, render.done(f"created {created.path}"))


@ontology.command("to-typeql", help=example(
    "Convert the active ontology set to a TypeQL 3 schema (entity, relation and attribute types); deterministic. "
    "Written to <workspace>/schema/typedb/ontology.tql unless --out is given ('-' prints it).",
    "mabos ontology to-typeql --out ontology.tql",
))  # fmt: skip
@click.option("--out", "out_path", default=None, help="File to write, or '-' for standard output.")
@ontology_options
def to_typeql_(out: Session, *, out_path: str | None) -> None:
    schema = out.run("ontology_to_typeql", {}, TypeQLResult)
    if out_path == "-":
        click.echo(schema.text, nl=False)
        return
    target = Path(out_path) if out_path else out.workspace().path / TYPEQL_OUT
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, schema.text.encode("utf-8"))
    folder = out.ontology_dir or out.workspace().path / ONTOLOGY_DIR
    summary = {"path": str(target), "files": [str(folder / name) for name in schema.files], "counts": schema.counts,
               "notes": schema.notes}  # fmt: skip
    wrote = render.done(f"wrote {target}: " + ", ".join(f"{v} {k}" for k, v in schema.counts.items()))
    out.emit(summary, wrote, *(render.note(n.message) for n in schema.notes[:20]))


@ontology.command("check", help=example(
    "Run SHACL and OWL-RL over every file of the active ontology set; exit 1 if any fails.",
    "mabos ontology check --json",
))  # fmt: skip
@ontology_options
def check(out: Session) -> None:
    result = out.run("ontology_check", {}, OntologyCheck)
    rows = [(r.file, r.domain, "yes" if r.ok else "NO", "; ".join(c.message for c in r.checks if not c.ok))
            for r in result.files]  # fmt: skip
    out.emit(result.files, render.table("Ontology check", ("file", "domain", "ok", "problems"), rows))
    if not result.ok:
        click.get_current_context().exit(1)


GROUPS = [ontology]

__all__ = ["GROUPS", "TYPEQL_OUT"]
