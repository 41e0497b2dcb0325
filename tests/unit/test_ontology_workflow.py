"""The proposal workflow (kg/ontology/proposals.py): propose, list, validate, merge, reject, diff."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

import kg.ontology.merge
import kg.ontology.proposals
from kg.errors import ConflictError, InputError, NotFoundError, ScopeError
from kg.models import OntologyProposal, ProposalStatus, parse
from kg.ontology.files import dump_json, ontology_json
from kg.ontology.proposals import OntologyService, split_node_id
from kg.ontology.requests import ProposalRequest, RejectRequest

BIZ = "sbvr-business.jsonld"


def propose(svc: OntologyService, agent: str = "a", **fields) -> OntologyProposal:
    data = {
        "domain": "sbvr-business", "node_type": "class", "node_id": "Supplier", "label": "Supplier",
        "parent_class": "biz:Party", "sbvr_definition": "A supplier is a party that provides products.",
        "rationale": "we buy from suppliers",
    }  # fmt: skip
    data.update(fields)
    return svc.propose(agent, **data)


def ontology_bytes(svc: OntologyService) -> dict[str, bytes]:
    return {
        str(p.relative_to(svc.ontology_dir)): p.read_bytes()
        for p in sorted(svc.ontology_dir.rglob("*"))
        if p.is_file() and "proposals" not in p.parts
    }


def proposals_file(svc: OntologyService, domain: str = "sbvr-business") -> dict:
    return json.loads((svc.ontology_dir / "proposals" / f"{domain}-proposals.json").read_text(encoding="utf-8"))


def node(svc: OntologyService, node_id: str, file: str = BIZ) -> dict:
    graph = json.loads((svc.ontology_dir / file).read_text(encoding="utf-8"))["@graph"]
    return next(n for n in graph if n["@id"] == node_id)


def merged(svc: OntologyService, **fields) -> OntologyProposal:
    p = propose(svc, **fields)
    assert all(c.ok for c in svc.validate(p.uid, "knowledge"))
    return svc.merge(p.uid, "knowledge")


# ------------------------------------------------------------------------------------------------ propose


def test_a_proposal_starts_pending_and_shared(svc, clock) -> None:
    p = propose(svc, node_id="biz:Supplier", sbvr_synonyms=["Vendor"])
    assert (p.status, p.scope, p.node_id, p.proposed_by) == (ProposalStatus.PENDING, "global", "Supplier", "a")
    assert [(h.status, h.by, h.at) for h in p.history] == [(ProposalStatus.PENDING, "a", clock.now())]
    assert svc.get(p.uid) == p


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [("ecommerce:DropshipFulfillment", "ecommerce", "DropshipFulfillment"), ("Dropship", "ecommerce", "Dropship")],
)
def test_split_node_id(text, prefix, expected) -> None:
    assert split_node_id(text, prefix) == expected


@pytest.mark.parametrize(
    ("text", "message"), [("biz:Dropship", "is not the domain's prefix 'ecommerce'"), ("a:b:c", "<prefix>:")]
)
def test_split_node_id_refuses_another_prefix(text, message) -> None:
    with pytest.raises(InputError, match="node_id") as err:
        split_node_id(text, "ecommerce")
    assert message in str(err.value)


def test_the_service_splits_with_the_domain_files_prefix(svc) -> None:
    assert svc.split_node_id("sbvr-business", "biz:Supplier") == "Supplier"
    with pytest.raises(InputError, match="node_id: prefix 'mabos'"):
        propose(svc, node_id="mabos:Supplier")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"domain": "nope"}, "domain"),
        ({"node_type": "concept"}, "node_type"),
        ({"node_id": "Has Space"}, "node_id"),
        ({"label": " "}, "label"),
        ({"range": "biz:Order"}, "range"),
        ({"node_type": "object_property", "node_id": "supplies"}, "parent_class"),
        ({"multi_valued": True}, "multi_valued"),
    ],
)  # fmt: skip
def test_bad_proposals_are_refused_with_the_field(svc, fields, field) -> None:
    with pytest.raises(InputError) as err:
        propose(svc, **fields)
    assert err.value.field == field
    assert svc.list() == []


def test_the_proposer_must_be_a_known_agent_writing_an_allowed_scope(svc) -> None:
    with pytest.raises(NotFoundError, match="no agent 'zed'"):
        propose(svc, "zed")
    with pytest.raises(ScopeError):
        propose(svc, scope="agent:b")
    assert propose(svc, scope="agent:a").scope == "agent:a"


def test_list_filters_and_narrows_to_what_an_agent_reads(svc) -> None:
    shared = propose(svc)
    private = propose(svc, "b", node_id="Vendor", label="Vendor", scope="agent:b")
    rejected = svc.reject(propose(svc, node_id="Broker", label="Broker").uid, "knowledge", "not needed")
    assert [p.uid for p in svc.list()] == [shared.uid, private.uid, rejected.uid]
    assert [p.uid for p in svc.list("pending")] == [shared.uid, private.uid]
    assert [p.uid for p in svc.list(ProposalStatus.REJECTED, "sbvr-business")] == [rejected.uid]
    assert [p.uid for p in svc.list(agent_id="a")] == [shared.uid, rejected.uid]
    assert svc.list(domain="mabos-core") == []
    with pytest.raises(InputError, match="status: Input should be 'pending', 'validated'"):
        svc.list("merged")


# ------------------------------------------------------------------------------------------------ proposals file


def test_the_proposals_file_mirrors_every_shared_proposal(svc) -> None:
    first = propose(svc)
    propose(svc, "b", node_id="Vendor", label="Vendor", scope="agent:b")
    second = propose(svc, node_id="Broker", label="Broker")
    path = svc.ontology_dir / "proposals" / "sbvr-business-proposals.json"
    expected = {"domain": "sbvr-business", "proposals": [p.model_dump(mode="json") for p in (first, second)]}
    assert path.read_bytes() == dump_json(expected).encode("utf-8")
    before = path.stat().st_mtime_ns
    svc.write_proposals_file("sbvr-business")
    assert path.stat().st_mtime_ns == before  # same content: not rewritten
    assert not list(path.parent.glob(".*"))  # no temporary file left behind


def test_the_proposals_file_follows_every_step(svc, clock) -> None:
    p = propose(svc)
    clock.advance(timedelta(minutes=1))
    svc.validate(p.uid, "knowledge")
    clock.advance(timedelta(minutes=1))
    svc.merge(p.uid, "knowledge")
    (entry,) = proposals_file(svc)["proposals"]
    assert entry["status"] == "approved-merged"
    assert [(h["status"], h["by"], h["at"]) for h in entry["history"]] == [
        ("pending", "a", "2024-05-01T12:00:00.000000Z"),
        ("validated", "knowledge", "2024-05-01T12:01:00.000000Z"),
        ("approved-merged", "knowledge", "2024-05-01T12:02:00.000000Z"),
    ]
    assert entry["history"][2]["note"] == f"merged into {BIZ}"
    assert {c["check"] for c in entry["validation_result"]} >= {"shacl", "owl_rl", "typeql"}


# ------------------------------------------------------------------------------------------------ validate


def test_validate_records_the_outcome_and_leaves_the_ontology_alone(svc, clock) -> None:
    before = ontology_bytes(svc)
    good, bad = propose(svc), propose(svc, node_id="Custmer", label="Custmer")
    clock.advance(timedelta(seconds=30))
    assert all(c.ok for c in svc.validate(good.uid, "knowledge"))
    checks = svc.validate(bad.uid, "b")
    assert [c.check for c in checks if not c.ok] == ["near_duplicate"]
    assert ontology_bytes(svc) == before
    stored = svc.get(bad.uid)
    assert stored.status is ProposalStatus.INVALID and stored.validation_result == checks
    assert (stored.history[-1].by, stored.history[-1].at, stored.history[-1].note) == (
        "b",
        clock.now(),
        "failed: near_duplicate",
    )
    assert svc.get(good.uid).status is ProposalStatus.VALIDATED


def test_validation_can_be_repeated_until_a_final_status(svc) -> None:
    p = propose(svc)
    svc.validate(p.uid, "knowledge")
    svc.validate(p.uid, "b")
    assert [h.status.value for h in svc.get(p.uid).history] == ["pending", "validated", "validated"]
    svc.reject(p.uid, "knowledge", "out of scope")
    with pytest.raises(ConflictError, match="rejected"):
        svc.validate(p.uid, "knowledge")
    with pytest.raises(NotFoundError, match="no agent"):
        svc.validate(propose(svc, node_id="Broker", label="Broker").uid, "zed")


# ------------------------------------------------------------------------------------------------ merge


def test_merge_writes_the_node_with_provenance_in_sorted_position(svc, clock) -> None:
    old = (svc.ontology_dir / BIZ).read_text(encoding="utf-8")
    clock.advance(timedelta(hours=1))
    result = merged(svc, sbvr_synonyms=["Vendor"])
    assert result.status is ProposalStatus.APPROVED_MERGED
    assert node(svc, "biz:Supplier") == {
        "@id": "biz:Supplier", "@type": "owl:Class", "rdfs:label": "Supplier",
        "rdfs:subClassOf": {"@id": "biz:Party"},
        "mabos:sbvr_definition": "A supplier is a party that provides products.",
        "mabos:sbvr_synonyms": ["Vendor"],
        "mabos:proposed_by": "a",
        "mabos:proposed_at": {"@value": "2024-05-01T13:00:00.000000Z", "@type": "xsd:dateTime"},
        "mabos:approved_by": "knowledge",
        "mabos:approved_at": {"@value": "2024-05-01T13:00:00.000000Z", "@type": "xsd:dateTime"},
        "mabos:rationale": "we buy from suppliers",
    }  # fmt: skip
    data = json.loads(old)
    ids = [n["@id"] for n in json.loads((svc.ontology_dir / BIZ).read_text(encoding="utf-8"))["@graph"]]
    assert ids.index("biz:Supplier") == ids.index("biz:placesOrder") - 1  # before the first id sorting after it
    data["@graph"].insert(ids.index("biz:Supplier"), node(svc, "biz:Supplier"))
    assert (svc.ontology_dir / BIZ).read_text(encoding="utf-8") == ontology_json(data)


def test_merge_leaves_every_other_byte_alone(svc) -> None:
    old = (svc.ontology_dir / BIZ).read_bytes()
    others = {k: v for k, v in ontology_bytes(svc).items() if k != BIZ}
    merged(svc, node_type="datatype_property", node_id="vatNumber", label="VAT number", parent_class=None,
           domain_class="biz:Party", range="xsd:string")  # fmt: skip
    new = (svc.ontology_dir / BIZ).read_bytes()
    head = next(i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y)
    assert new[:head] == old[:head] and new.endswith(old[head:])  # one insertion, nothing else touched
    assert b'"biz:vatNumber"' in new[head : head + len(new) - len(old)]
    assert {k: v for k, v in ontology_bytes(svc).items() if k != BIZ} == others


def test_a_merge_happens_once(svc) -> None:
    p = merged(svc)
    after = ontology_bytes(svc)
    with pytest.raises(ConflictError, match="already merged"):
        svc.merge(p.uid, "knowledge")
    with pytest.raises(ConflictError, match="approved-merged"):
        svc.reject(p.uid, "knowledge", "too late")
    assert ontology_bytes(svc) == after and svc.get(p.uid).status is ProposalStatus.APPROVED_MERGED


def test_only_a_validated_proposal_merges(svc) -> None:
    pending = propose(svc)
    with pytest.raises(ConflictError, match="only a validated proposal can be merged"):
        svc.merge(pending.uid, "knowledge")
    invalid = propose(svc, node_id="Custmer", label="Custmer")
    svc.validate(invalid.uid, "knowledge")
    with pytest.raises(ConflictError, match="is invalid"):
        svc.merge(invalid.uid, "knowledge")


def test_merge_revalidates_against_the_current_files(svc) -> None:
    first, second = propose(svc), propose(svc, sbvr_synonyms=["Vendor"])
    svc.validate(first.uid, "knowledge")
    svc.validate(second.uid, "knowledge")
    svc.merge(first.uid, "knowledge")
    before = ontology_bytes(svc)
    with pytest.raises(ConflictError, match=r"no longer validates.*new_id: biz:Supplier is already defined"):
        svc.merge(second.uid, "knowledge")
    assert ontology_bytes(svc) == before
    assert svc.get(second.uid).status is ProposalStatus.VALIDATED


def test_a_failed_post_merge_check_restores_the_exact_bytes(svc, monkeypatch) -> None:
    p = propose(svc)
    svc.validate(p.uid, "knowledge")
    before, mirror = ontology_bytes(svc), proposals_file(svc)
    seen = []

    def broken(active, name, node, shapes):
        seen.append(active.files[name].raw)
        return ["owl_rl: pretend inconsistency"]

    monkeypatch.setattr(kg.ontology.proposals, "merge_problems", broken)
    with pytest.raises(ConflictError, match="rolled back: owl_rl: pretend inconsistency"):
        svc.merge(p.uid, "knowledge")
    assert seen and seen[0] != before[BIZ]  # the check saw the written file
    assert ontology_bytes(svc) == before
    assert svc.get(p.uid).status is ProposalStatus.VALIDATED and len(svc.get(p.uid).history) == 2
    assert proposals_file(svc) == mirror


def test_a_written_node_that_breaks_the_shapes_is_rolled_back(svc, monkeypatch) -> None:
    p = propose(svc)
    svc.validate(p.uid, "knowledge")
    before = ontology_bytes(svc)
    real = kg.ontology.merge.insert_node

    def without_label(text, node):
        return real(text, {k: v for k, v in node.items() if k != "rdfs:label"})

    monkeypatch.setattr(kg.ontology.merge, "insert_node", without_label)
    with pytest.raises(ConflictError, match=r"rolled back: shacl: biz:Supplier rdfs:label"):
        svc.merge(p.uid, "knowledge")
    assert ontology_bytes(svc) == before and svc.get(p.uid).status is ProposalStatus.VALIDATED


def test_a_store_failure_after_writing_restores_the_file(svc, monkeypatch) -> None:
    p = propose(svc)
    svc.validate(p.uid, "knowledge")
    before = ontology_bytes(svc)

    def refuse(*args, **kwargs):
        raise ConflictError("status: changed meanwhile")

    monkeypatch.setattr(svc.store.proposals, "update", refuse)
    with pytest.raises(ConflictError, match="changed meanwhile"):
        svc.merge(p.uid, "knowledge")
    assert ontology_bytes(svc) == before


def test_merged_files_still_pass_the_whole_file_check(svc) -> None:
    merged(svc)
    merged(svc, node_type="object_property", node_id="provides", label="provides", parent_class=None,
           domain_class="biz:Supplier", range="biz:Product",
           sbvr_definition="A supplier provides products.")  # fmt: skip
    assert node(svc, "biz:provides")["rdfs:domain"] == {"@id": "biz:Supplier"}
    assert all(result.ok for result in svc.check())


def test_a_reference_to_a_prefix_the_file_does_not_bind_is_written_as_a_full_iri(svc) -> None:
    core = svc.ontology_dir / "mabos-core.jsonld"
    data = json.loads(core.read_text(encoding="utf-8"))
    del data["@context"]["biz"]
    core.write_text(ontology_json(data), encoding="utf-8")
    merged(svc, domain="mabos-core", node_type="object_property", node_id="servesCustomer", label="serves customer",
           parent_class=None, domain_class="mabos:Agent", range="biz:Customer",
           sbvr_definition="An agent serves a customer.")  # fmt: skip
    assert node(svc, "mabos:servesCustomer", "mabos-core.jsonld")["rdfs:range"] == {
        "@id": "https://w3id.org/mabos/business#Customer"
    }


def test_every_step_is_an_outbox_event(svc, ws) -> None:
    p = merged(svc)
    rows = ws._store.db.read("SELECT op, payload FROM outbox WHERE aggregate = 'proposal' ORDER BY seq")
    assert [json.loads(r[1])["status"] for r in rows] == ["pending", "validated", "approved-merged"]
    assert json.loads(rows[-1][1]) == p.model_dump(mode="json")


# ------------------------------------------------------------------------------------------------ reject, diff


def test_reject_records_who_when_and_why(svc, clock) -> None:
    p = propose(svc)
    clock.advance(timedelta(days=1))
    with pytest.raises(InputError, match="reason"):
        svc.reject(p.uid, "knowledge", "  ")
    rejected = svc.reject(p.uid, "knowledge", "covered by biz:Party")
    assert rejected.status is ProposalStatus.REJECTED
    last = rejected.history[-1]
    assert (last.status, last.by, last.at, last.note) == (
        ProposalStatus.REJECTED,
        "knowledge",
        clock.now(),
        "covered by biz:Party",
    )
    assert proposals_file(svc)["proposals"][0]["status"] == "rejected"
    with pytest.raises(ConflictError, match="rejected"):
        svc.reject(p.uid, "knowledge", "again")
    with pytest.raises(ConflictError, match="is rejected"):
        svc.merge(p.uid, "knowledge")


def test_diff_shows_the_merge_without_writing(svc) -> None:
    p = propose(svc)
    svc.validate(p.uid, "knowledge")
    before = ontology_bytes(svc)
    diff = svc.diff(p.uid, approved_by="knowledge")
    assert ontology_bytes(svc) == before
    assert diff.startswith(f"--- a/{BIZ}\n+++ b/{BIZ}\n@@ ")
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == [] and '      "@id": "biz:Supplier",' in added
    assert '      "rdfs:subClassOf": {"@id": "biz:Party"},' in added
    assert '      "mabos:approved_by": "knowledge",' in added
    old = before[BIZ].decode().splitlines()
    svc.merge(p.uid, "knowledge")
    new = (svc.ontology_dir / BIZ).read_text(encoding="utf-8").splitlines()
    assert len(new) - len(old) == len(added)
    assert "<approver>" in svc.diff(propose(svc, node_id="Broker", label="Broker").uid)


def test_validate_merge_diff_and_reject_take_their_requests(svc) -> None:
    """A request or the uid as an argument are one validation (kg.ontology.requests): the same rules either way."""
    p = propose(svc)
    asked = ProposalRequest(uid=p.uid)
    assert [c.ok for c in svc.validate(asked, "knowledge")] == [c.ok for c in svc.validate(p.uid, "knowledge")]
    assert svc.diff(asked, approved_by="knowledge") == svc.diff(p.uid, approved_by="knowledge")
    for bad in ("", "x" * 300):
        with pytest.raises(InputError, match=r"^uid: "):
            svc.validate(bad, "knowledge")
    with pytest.raises(InputError, match=r"^reason: give it in the RejectRequest"):
        svc.reject(RejectRequest(uid=p.uid, reason="ok"), "knowledge", "beside the request")
    assert svc.merge(asked, "knowledge").status is ProposalStatus.APPROVED_MERGED
    with pytest.raises(InputError, match=r"^reason: say why the proposal is rejected"):
        parse(RejectRequest, {"uid": p.uid, "reason": " \t "})  # the tool's input, as over MCP
