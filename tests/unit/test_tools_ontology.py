"""The ontology tools (cli/tools/ontology.py) through ``cli.tools.call`` on a real workspace and its shipped
ontologies: propose -> validate -> merge, list, scaffold, bad input, agent binding and private scopes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kg
from cli import tools
from cli.tools.ontology import ProposalList, ScaffoldResult, ValidationReport
from cli.tools.overrides import CommandContext
from kg.errors import ConflictError, InputError, NotFoundError, ScopeError
from kg.models import OntologyProposal, ProposalStatus
from tests.records import VENDOR


@pytest.fixture
def ws_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh workspace with agents ``a``, ``b`` and ``knowledge`` (closed again: tools open it by path)."""
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    with kg.init_workspace(tmp_path / "ws") as ws:
        for agent in ("a", "b", "knowledge"):
            ws.agents.add(agent)
    return tmp_path / "ws"


def call(ws_path: Path, name: str, agent: str | None = None, **args: Any) -> Any:
    return tools.call(name, workspace=ws_path, agent=agent, **args)


def graph_ids(path: Path) -> set[str]:
    return {node["@id"] for node in json.loads(path.read_text(encoding="utf-8"))["@graph"]}


def test_propose_validate_merge_changes_the_domain_file(ws_path: Path) -> None:
    domain_file = ws_path / "ontologies" / "sbvr-business.jsonld"
    assert "biz:DropshipVendor" not in graph_ids(domain_file)
    proposal = call(ws_path, "ontology_propose_concept", agent_id="a", **VENDOR)
    assert isinstance(proposal, OntologyProposal)
    assert (proposal.status, proposal.node_id, proposal.proposed_by, proposal.scope) == (
        ProposalStatus.PENDING, "DropshipVendor", "a", "global",
    )  # fmt: skip
    assert "biz:DropshipVendor" not in graph_ids(domain_file)  # proposing changes no file

    report = call(ws_path, "ontology_validate_proposal", agent_id="knowledge", uid=proposal.uid)
    assert isinstance(report, ValidationReport)
    assert report.valid and report.uid == proposal.uid and report.checks
    assert all(c.ok for c in report.checks)

    merged = call(ws_path, "ontology_merge_approved", agent_id="knowledge", uid=proposal.uid)
    assert isinstance(merged, OntologyProposal)
    assert merged.status is ProposalStatus.APPROVED_MERGED
    assert [(h.status.value, h.by) for h in merged.history] == [
        ("pending", "a"), ("validated", "knowledge"), ("approved-merged", "knowledge"),
    ]  # fmt: skip
    assert "biz:DropshipVendor" in graph_ids(domain_file)
    with pytest.raises(ConflictError, match="merge happens once"):
        call(ws_path, "ontology_merge_approved", agent_id="knowledge", uid=proposal.uid)


def test_validate_defaults_to_the_proposer_and_records_an_invalid_proposal(ws_path: Path) -> None:
    bad = call(ws_path, "ontology_propose_concept", agent_id="a", **{**VENDOR, "parent_class": "biz:NoSuchClass"})
    report = call(ws_path, "ontology_validate_proposal", uid=bad.uid)
    assert not report.valid
    assert any(not c.ok and "NoSuchClass" in c.message for c in report.checks)
    listed = call(ws_path, "ontology_list_proposals", status="invalid")
    assert [(p.uid, p.history[-1].by) for p in listed.proposals] == [(bad.uid, "a")]
    with pytest.raises(ConflictError, match="only a validated proposal can be merged"):
        call(ws_path, "ontology_merge_approved", agent_id="knowledge", uid=bad.uid)


def test_list_filters_by_status_and_domain_and_limits(ws_path: Path) -> None:
    first = call(ws_path, "ontology_propose_concept", agent_id="a", **VENDOR)
    second = call(ws_path, "ontology_propose_concept", agent_id="b", **{**VENDOR, "node_id": "biz:Reseller",
                                                                         "label": "Reseller"})  # fmt: skip
    everything = call(ws_path, "ontology_list_proposals")
    assert isinstance(everything, ProposalList)
    assert [p.uid for p in everything.proposals] == [first.uid, second.uid] and not everything.truncated
    one = call(ws_path, "ontology_list_proposals", limit=1)
    assert [p.uid for p in one.proposals] == [first.uid] and one.truncated
    assert call(ws_path, "ontology_list_proposals", status="pending", domain="sbvr-business").proposals
    assert call(ws_path, "ontology_list_proposals", domain="mabos-core").proposals == []
    assert call(ws_path, "ontology_list_proposals", status="rejected").proposals == []


def test_a_private_proposal_is_invisible_to_other_agents(ws_path: Path) -> None:
    private = call(ws_path, "ontology_propose_concept", agent_id="a", scope="agent:a", **VENDOR)
    assert [p.uid for p in call(ws_path, "ontology_list_proposals", agent_id="a").proposals] == [private.uid]
    assert call(ws_path, "ontology_list_proposals", agent_id="b").proposals == []
    assert [p.uid for p in call(ws_path, "ontology_list_proposals").proposals] == [private.uid]  # operator view
    with pytest.raises(NotFoundError, match="visible to 'b'"):
        call(ws_path, "ontology_validate_proposal", agent_id="b", uid=private.uid)
    assert call(ws_path, "ontology_list_proposals", status="pending").proposals[0].uid == private.uid  # unchanged


def test_scaffold_creates_a_domain_once(ws_path: Path) -> None:
    created = call(ws_path, "ontology_scaffold_domain", template="saas", domain="acme")
    assert isinstance(created, ScaffoldResult)
    path = Path(created.path)
    assert path == ws_path / "ontologies" / "acme.jsonld" and path.is_file()
    assert any(i.startswith("acme:") for i in graph_ids(path))
    before = path.read_bytes()
    with pytest.raises(ConflictError, match="exists already"):
        call(ws_path, "ontology_scaffold_domain", template="saas", domain="acme")
    assert path.read_bytes() == before
    with pytest.raises(InputError, match="template"):
        call(ws_path, "ontology_scaffold_domain", template="no-such-template", domain="other")
    assert not (ws_path / "ontologies" / "other.jsonld").exists()


def test_a_command_context_chooses_another_ontology_folder(ws_path: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "onto"
    with kg.open_workspace(ws_path) as ws:
        ctx = CommandContext(workspace_obj=ws, ontology_dir=elsewhere)
        created = tools.run(ctx, "ontology_scaffold_domain", {"template": "agency", "domain": "studio"})
    assert isinstance(created, ScaffoldResult)
    assert Path(created.path) == elsewhere / "studio.jsonld" and (elsewhere / "studio.jsonld").is_file()
    assert not (ws_path / "ontologies" / "studio.jsonld").exists()


@pytest.mark.parametrize(
    ("name", "args", "field"),
    [
        ("ontology_propose_concept", {**VENDOR, "agent_id": "a", "node_type": "widget"}, "node_type"),
        ("ontology_propose_concept", {**VENDOR, "agent_id": "a", "colour": "red"}, "colour"),
        ("ontology_propose_concept", {k: v for k, v in VENDOR.items() if k != "label"} | {"agent_id": "a"}, "label"),
        ("ontology_propose_concept", {**VENDOR, "agent_id": "a", "node_id": "other:Vendor"}, "node_id"),
        ("ontology_propose_concept", {**VENDOR}, "agent_id"),
        ("ontology_validate_proposal", {}, "uid"),
        ("ontology_list_proposals", {"status": "done"}, "status"),
        ("ontology_list_proposals", {"limit": 0}, "limit"),
        ("ontology_scaffold_domain", {"template": "saas"}, "domain"),
    ],
)
def test_malformed_calls_name_the_field_and_change_nothing(ws_path: Path, name: str, args: dict[str, Any],
                                                           field: str) -> None:  # fmt: skip
    with pytest.raises(InputError) as caught:
        call(ws_path, name, **args)
    assert caught.value.field == field
    assert call(ws_path, "ontology_list_proposals").proposals == []


def test_a_bound_agent_cannot_act_as_another(ws_path: Path) -> None:
    with pytest.raises(ScopeError, match="agent_id"):
        call(ws_path, "ontology_propose_concept", agent="a", agent_id="b", **VENDOR)
    assert call(ws_path, "ontology_list_proposals").proposals == []
    own = call(ws_path, "ontology_propose_concept", agent="a", **VENDOR)  # agent_id defaults to the bound agent
    assert own.proposed_by == "a"
    for name, args in (
        ("ontology_validate_proposal", {"uid": own.uid}),
        ("ontology_merge_approved", {"uid": own.uid}),
        ("ontology_list_proposals", {}),
        ("ontology_scaffold_domain", {"template": "saas", "domain": "acme"}),
    ):
        with pytest.raises(ScopeError):
            call(ws_path, name, agent="a", agent_id="b", **args)
    assert call(ws_path, "ontology_list_proposals").proposals[0].status is ProposalStatus.PENDING
    assert not (ws_path / "ontologies" / "acme.jsonld").exists()
