"""``mabos ontology ...``: the README's propose -> validate -> merge workflow on a real workspace, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from kg.workspace import base_ontologies_dir

if TYPE_CHECKING:
    from conftest import Mabos

DROPSHIP = ("--domain", "ecommerce", "--type", "class", "--id", "ecommerce:DropshipFulfillment", "--label",
            "Dropship Fulfillment", "--parent", "ecommerce:Fulfillment", "--definition",
            "Fulfillment in which the supplier ships directly to the customer", "--rationale",
            "three suppliers ship direct", "--by", "sales-agent")  # fmt: skip


def test_init_copies_the_base_ontologies_once(ready: Mabos) -> None:
    base = base_ontologies_dir()
    assert base is not None
    folder = ready.workspace / "ontologies"
    shipped = sorted(p.relative_to(base) for p in [*base.glob("*.jsonld"), *base.glob("templates/*.jsonld")])
    assert sorted(p.relative_to(folder) for p in folder.rglob("*.jsonld")) == shipped
    (folder / "mabos-core.jsonld").write_text("{}", encoding="utf-8")  # the workspace's own from now on
    ready.ok("init")
    assert (folder / "mabos-core.jsonld").read_text(encoding="utf-8") == "{}"


def test_propose_validate_merge(ready: Mabos) -> None:
    scaffolded = ready.json("ontology", "scaffold", "--template", "ecommerce", "--domain", "ecommerce")
    domain_file = Path(scaffolded["path"])
    proposal = ready.json("ontology", "propose", *DROPSHIP)
    assert (proposal["status"], proposal["node_id"], proposal["domain"]) == (
        "pending", "DropshipFulfillment", "ecommerce")  # fmt: skip
    before = domain_file.read_bytes()

    report = ready.json("ontology", "validate", proposal["uid"])
    assert report["valid"] and {c["check"] for c in report["checks"]} >= {"shacl", "owl_rl", "typeql", "near_duplicate"}
    assert domain_file.read_bytes() == before  # validation never writes

    diff = ready.ok("ontology", "diff", proposal["uid"]).stdout
    assert '+      "@id": "ecommerce:DropshipFulfillment",' in diff
    merged = ready.json("ontology", "merge", proposal["uid"], "--approved-by", "finance-agent")
    assert merged["status"] == "approved-merged"
    assert [h["status"] for h in merged["history"]] == ["pending", "validated", "approved-merged"]
    node = next(n for n in json.loads(domain_file.read_text())["@graph"] if n["@id"] == "ecommerce:DropshipFulfillment")
    assert (node["mabos:proposed_by"], node["mabos:approved_by"]) == ("sales-agent", "finance-agent")
    again = ready("ontology", "merge", proposal["uid"], "--approved-by", "finance-agent")
    assert again.exit_code == 1 and "a merge happens once" in again.stderr

    review = json.loads((ready.workspace / "ontologies" / "proposals" / "ecommerce-proposals.json").read_text())
    assert [p["uid"] for p in review["proposals"]] == [proposal["uid"]]
    assert ready.json("ontology", "check")[0]["ok"]
    tql = ready.json("ontology", "to-typeql")
    assert "entity dropship-fulfillment sub fulfillment" in Path(tql["path"]).read_text()


def test_an_invalid_proposal_exits_1_and_lists_its_checks_then_is_rejected(ready: Mabos) -> None:
    bad = ready.json("ontology", "propose", "--domain", "sbvr-business", "--type", "class", "--id", "biz:customerz",
                     "--label", "Customers", "--parent", "biz:NoSuchParent", "--by", "sales-agent")  # fmt: skip
    result = ready("ontology", "validate", bad["uid"], "--json")
    assert result.exit_code == 1 and result.stderr == ""
    failed = {c["check"] for c in json.loads(result.stdout)["checks"] if not c["ok"]}
    assert failed >= {"references", "near_duplicate", "naming", "sbvr_definition"}
    refused = ready("ontology", "merge", bad["uid"], "--approved-by", "finance-agent")
    assert refused.exit_code == 1 and "only a validated proposal can be merged" in refused.stderr
    rejected = ready.json("ontology", "reject", bad["uid"], "--reason", "a near-duplicate of Customer",
                          "--by", "finance-agent")  # fmt: skip
    assert rejected["status"] == "rejected" and rejected["history"][-1]["note"] == "a near-duplicate of Customer"
    assert [p["uid"] for p in ready.json("ontology", "list", "--status", "rejected")] == [bad["uid"]]


def test_bad_input_is_one_line_and_writes_nothing(ready: Mabos) -> None:
    wrong_prefix = ready("ontology", "propose", "--domain", "sbvr-business", *DROPSHIP[2:])  # an ecommerce: id
    assert wrong_prefix.exit_code == 1 and wrong_prefix.stderr.startswith("error: node_id:")
    no_domain = ready("ontology", "propose", *DROPSHIP)  # not scaffolded
    assert no_domain.exit_code == 1 and no_domain.stderr.startswith("error: domain:")
    unknown = ready("ontology", "scaffold", "--template", "bakery", "--domain", "x")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: template:")
    assert ready.json("ontology", "list") == []
