"""The ontology proposal workflow: propose -> validate -> merge (or reject), each step with who and when.

Statuses: ``pending`` -> ``validated`` / ``invalid`` (re-validation allowed) -> ``approved-merged`` or
``rejected``. A merge needs ``validated`` and re-validates against the current files first; a merged or
rejected proposal is final (a second merge or reject raises :class:`~kg.errors.ConflictError`). A failed
merge changes nothing: the domain file gets its exact previous bytes back and the proposal keeps its status.

Every change is stored (with an outbox event) and then mirrored, for review in git, to
``<ontology dir>/proposals/<domain>-proposals.json``: every proposal of the domain outside private
``agent:`` scopes, oldest first, rewritten atomically and byte-for-byte the same for the same proposals.

Proposals are shared (scope ``global``) unless a scope is given; the proposer and every reviewer must be
known agents.
"""

from __future__ import annotations

import builtins
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from rdflib import Graph

from kg.clock import Clock
from kg.errors import ConflictError, InputError
from kg.models import (
    OntologyProposal,
    ProposalNodeType,
    ProposalStatus,
    ValidationCheck,
    new_record_id,
    parse,
)
from kg.models.request import requested
from kg.ontology.files import (
    ActiveSet,
    DomainFile,
    OntologyFiles,
    atomic_write,
    directory_lock,
    dump_json,
    read_shapes,
    shapes_dir,
)
from kg.ontology.merge import FileCheck, file_checks, merge_problems, merge_record, merged_text, unified_diff
from kg.ontology.requests import ListRequest, ProposalRequest, ProposeRequest, RejectRequest, ScaffoldRequest
from kg.ontology.scaffold import scaffold as scaffold_file
from kg.ontology.validate import build_node, domain_file, validate_proposal
from kg.ports import GraphStore
from kg.scopes import ScopePolicy

PROPOSALS_DIR = "proposals"
#: Statuses a proposal may be validated or rejected from.
OPEN = (ProposalStatus.PENDING, ProposalStatus.VALIDATED, ProposalStatus.INVALID)
_CURIE = re.compile(r"^([A-Za-z_][\w.-]*):([A-Za-z][A-Za-z0-9_]*)\Z")


def split_node_id(text: str, prefix: str) -> str:
    """The local name of ``ecommerce:DropshipFulfillment`` (or of a bare ``DropshipFulfillment``).

    Raises:
        InputError: (field ``node_id``) the prefix is not ``prefix`` or the text is not ``prefix:Name``.
    """
    if ":" not in text:
        return text
    match = _CURIE.match(text)
    if not match:
        raise InputError("node_id", f"must be <prefix>:<LocalName> or <LocalName>, got {text[:80]!r}")
    if match.group(1) != prefix:
        raise InputError("node_id", f"prefix {match.group(1)!r} is not the domain's prefix {prefix!r}")
    return match.group(2)


class OntologyService:
    """Proposals over a store and an ontology directory (the active set is ``<ontology_dir>/*.jsonld``)."""

    def __init__(
        self, store: GraphStore, scopes: ScopePolicy, clock: Clock, ontology_dir: Path,
        shapes_dir: Path | None = None,
    ) -> None:  # fmt: skip
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.ontology_dir = ontology_dir
        self._shapes_dir = shapes_dir
        self._shapes: Graph | None = None
        self.files = OntologyFiles()  # parsed files by content hash, for the life of the service

    # ------------------------------------------------------------------------------------------ reading

    @property
    def shapes(self) -> Graph:
        """The SHACL shapes (read once)."""
        if self._shapes is None:
            self._shapes = read_shapes(self._shapes_dir or shapes_dir())
        return self._shapes

    def active(self) -> ActiveSet:
        """The current active set (files re-read; unchanged ones come from the cache)."""
        return self.files.load(self.ontology_dir)

    def get(self, uid: str) -> OntologyProposal:
        """A proposal by uid (NotFoundError if none)."""
        return self.store.proposals.get(uid)

    def list(
        self,
        status: ProposalStatus | str | ListRequest | None = None,
        domain: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> builtins.list[OntologyProposal]:
        """Proposals oldest first: all of them, or those ``agent_id`` may read; optionally by status or domain (a
        request, or its status and domain, validated into one). A request's ``limit`` is its caller's: every match is
        returned."""
        request = requested(ListRequest, status, {"domain": domain}, first="status")
        wanted, domain = request.status, request.domain
        scopes = self.scopes.readable(agent_id) if agent_id is not None else None
        return self.store.proposals.list(scopes=scopes, status=wanted, domain=domain)

    def split_node_id(self, domain: str, text: str) -> str:
        """:func:`split_node_id` with the prefix of ``domain``'s file."""
        return split_node_id(text, self._domain(domain).prefix)

    # ------------------------------------------------------------------------------------------ steps

    def propose(self, agent_id: str, request: ProposeRequest | None = None, **fields: Any) -> OntologyProposal:
        """Record a proposal (status ``pending``) in its ``scope`` (default ``global``): a request, or its fields
        (``domain=``, ``node_type=``, ``node_id=``, ``label=`` ...).

        Raises:
            InputError: a bad field, an unknown domain, a field the node type does not have.
            NotFoundError: unknown agent.  ScopeError: the agent may not write ``scope``.
        """
        asked = requested(ProposeRequest, request, fields)
        target = self.scopes.check_write(agent_id, asked.scope or "global")
        record: dict[str, Any] = {
            "uid": new_record_id("proposal"), "agent_id": agent_id, "scope": target,
            "created_at": self.clock.now(), "domain": asked.domain, "node_type": asked.node_type,
            "node_id": self.split_node_id(asked.domain, asked.node_id), "label": asked.label,
            "parent_class": asked.parent_class or None, "domain_class": asked.domain_class or None,
            "range": asked.range or None, "sbvr_definition": asked.sbvr_definition,
            "sbvr_synonyms": list(asked.sbvr_synonyms), "rationale": asked.rationale,
            "multi_valued": asked.multi_valued, "proposed_by": agent_id,
        }  # fmt: skip
        proposal = parse(OntologyProposal, record)
        _check_fields(proposal)
        self.store.proposals.add(proposal)
        self.write_proposals_file(proposal.domain)
        return proposal

    def validate(self, uid: str | ProposalRequest, by: str) -> builtins.list[ValidationCheck]:
        """Run every check (:mod:`kg.ontology.validate`), record ``validated`` or ``invalid``; files untouched. A
        request, or the proposal's uid."""
        request = requested(ProposalRequest, uid, {}, first="uid")
        self.scopes.require_agent(by)
        proposal = self._open(request.uid, "validate")
        checks = validate_proposal(proposal, self.active(), self.shapes)
        failed = [c.check for c in checks if not c.ok]
        status = ProposalStatus.INVALID if failed else ProposalStatus.VALIDATED
        note = f"failed: {', '.join(failed)}" if failed else "all checks passed"
        self._record(proposal, status, by, note, at=self.clock.now(), validation_result=checks)
        return checks

    def merge(self, uid: str | ProposalRequest, approved_by: str) -> OntologyProposal:
        """Write a validated proposal (a request, or its uid) into its domain file with provenance; refused twice
        (ConflictError).

        Re-validates against the current files first, re-checks the whole file after writing, and restores
        the file's previous bytes if that or recording the new status fails.
        """
        request = requested(ProposalRequest, uid, {}, first="uid")
        self.scopes.require_agent(approved_by)
        with directory_lock(self.ontology_dir):  # one merge or scaffold at a time per ontology folder
            merged = self._merge_locked(request.uid, approved_by)
        self.write_proposals_file(merged.domain)
        return merged

    def _merge_locked(self, uid: str, approved_by: str) -> OntologyProposal:
        proposal = self.get(uid)  # read under the lock: another process may have merged it meanwhile
        if proposal.status is ProposalStatus.APPROVED_MERGED:
            raise ConflictError(f"proposal: {uid} is already merged into {proposal.domain}; a merge happens once")
        if proposal.status is not ProposalStatus.VALIDATED:
            raise ConflictError(f"status: only a validated proposal can be merged; {uid} is {proposal.status.value}")
        active = self.active()
        failed = [f"{c.check}: {c.message}" for c in validate_proposal(proposal, active, self.shapes) if not c.ok]
        if failed:
            raise ConflictError(f"proposal: {proposal.uid} no longer validates, nothing was merged: "
                                f"{'; '.join(failed)}")  # fmt: skip
        now = self.clock.now()
        home, node, text = merged_text(proposal, active, approved_by, now)
        atomic_write(home.path, text.encode("utf-8"))
        try:
            problems = merge_problems(self.active(), home.name, node, self.shapes)
            if problems:
                raise ConflictError(f"merge: {home.path.name} rolled back: {'; '.join(problems)}")
            return self._record(proposal, ProposalStatus.APPROVED_MERGED, approved_by,
                                f"merged into {home.path.name}", at=now, write_file=False)  # fmt: skip
        except BaseException:
            atomic_write(home.path, home.raw)
            raise

    def reject(self, uid: str | RejectRequest, by: str, reason: str | None = None) -> OntologyProposal:
        """Record a rejection with who, when and why (final): a request, or the proposal's uid and the reason."""
        self.scopes.require_agent(by)
        request = requested(RejectRequest, uid, {"reason": reason}, first="uid")
        proposal = self._open(request.uid, "reject")
        return self._record(proposal, ProposalStatus.REJECTED, by, request.reason, at=self.clock.now())

    def diff(self, uid: str | ProposalRequest, approved_by: str = "<approver>") -> str:
        """The unified diff a merge would make to the domain file now (nothing is written); for a merged proposal,
        a line saying it is merged and the change the merge made (:func:`~kg.ontology.merge.merge_record`). A
        request, or the proposal's uid."""
        proposal = self.get(requested(ProposalRequest, uid, {}, first="uid").uid)
        active = self.active()
        active.require_parsed()
        if proposal.status is ProposalStatus.APPROVED_MERGED:
            home = self._domain(proposal.domain)
            node = build_node(proposal, active)
            return merge_record(proposal, home, str(node.node["@id"]))
        home, _, text = merged_text(proposal, active, approved_by, self.clock.now())
        return unified_diff(home, text)

    def scaffold(self, template: str | ScaffoldRequest, domain: str | None = None) -> Path:
        """Create ``<ontology dir>/<domain>.jsonld`` from a template (see :mod:`kg.ontology.scaffold`): a request, or
        its template and domain."""
        request = requested(ScaffoldRequest, template, {"domain": domain}, first="template")
        with directory_lock(self.ontology_dir):  # the existence check and the write, together
            path, text = scaffold_file(request.template, request.domain, self.ontology_dir, self.active())
            atomic_write(path, text.encode("utf-8"))
        return path

    def check(self) -> builtins.list[FileCheck]:
        """SHACL and OWL 2 RL over every file of the active set, one result per file (name order)."""
        active = self.active()
        return [file_checks(active, name, self.shapes) for name in active.files]

    # ------------------------------------------------------------------------------------------ internals

    def _domain(self, domain: str) -> DomainFile:
        return domain_file(domain, self.active())

    def _open(self, uid: str, action: str) -> OntologyProposal:
        proposal = self.get(uid)
        if proposal.status not in OPEN:
            raise ConflictError(f"status: cannot {action} {uid}: it is {proposal.status.value} (final)")
        return proposal

    def _record(
        self, proposal: OntologyProposal, status: ProposalStatus, by: str, note: str, *, at: datetime,
        validation_result: builtins.list[ValidationCheck] | None = None, write_file: bool = True,
    ) -> OntologyProposal:  # fmt: skip
        step = {"status": status, "by": by, "at": at, "note": note}
        changes: dict[str, Any] = {"status": status, "history": [*proposal.model_dump()["history"], step]}
        if validation_result is not None:
            changes["validation_result"] = [c.model_dump() for c in validation_result]
        updated = parse(OntologyProposal, {**proposal.model_dump(), **changes})
        self.store.proposals.update(updated, expected_status=proposal.status)
        if write_file:
            self.write_proposals_file(proposal.domain)
        return updated

    def proposals_file(self, domain: str) -> Path:
        """``<ontology dir>/proposals/<domain>-proposals.json``."""
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z", domain):
            raise InputError("domain", f"not usable in a file name: {domain[:80]!r}")
        return self.ontology_dir / PROPOSALS_DIR / f"{domain}-proposals.json"

    def write_proposals_file(self, domain: str) -> Path:
        """Rewrite the domain's proposals file from the store (only when its bytes change)."""
        path = self.proposals_file(domain)
        with directory_lock(path.parent):  # read the store inside the lock: the last writer writes the newest state
            shared = [p for p in self.store.proposals.list(domain=domain) if not p.scope.startswith("agent:")]
            data = {"domain": domain, "proposals": [p.model_dump(mode="json") for p in sorted(shared, key=_uid)]}
            raw = dump_json(data).encode("utf-8")
            if not path.is_file() or path.read_bytes() != raw:
                atomic_write(path, raw)
        return path


def _uid(proposal: OntologyProposal) -> str:
    return proposal.uid


def _check_fields(proposal: OntologyProposal) -> None:
    """Refuse fields the node type does not have (they would be dropped silently)."""
    if proposal.node_type is ProposalNodeType.CLASS:
        for name in ("domain_class", "range"):
            if getattr(proposal, name):
                raise InputError(name, "a class has no domain or range (use parent_class)")
        if proposal.multi_valued:
            raise InputError("multi_valued", "only a datatype property can be multi-valued")
    elif proposal.parent_class:
        raise InputError("parent_class", "only a class has a parent class")
    elif proposal.multi_valued and proposal.node_type is ProposalNodeType.OBJECT_PROPERTY:
        raise InputError("multi_valued", "only a datatype property can be multi-valued")


__all__ = ["OPEN", "OntologyService", "split_node_id"]
