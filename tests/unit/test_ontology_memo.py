"""The in-process memo of ontology checks (kg/ontology/memo.py): unchanged files are checked from memory, a
changed file is checked again, and a remembered result is the result the check computes afresh."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rdflib import BNode

from kg.ontology import consistency, memo
from kg.ontology.files import OntologyFiles, ontology_json, read_shapes, repository_ontology_dir, shapes_dir
from kg.ontology.merge import file_checks
from kg.ontology.proposals import OntologyService
from tests.unit.conftest import ONTOLOGY_DATA as DATA

X = "https://w3id.org/mabos/x#"
#: A domain whose individual breaks a blank-node restriction: owlrl's message names the restriction's label.
SOLO = {
    "@context": {"owl": "http://www.w3.org/2002/07/owl#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
                 "xsd": "http://www.w3.org/2001/XMLSchema#", "mabos": "https://w3id.org/mabos/core#", "x": X},
    "@id": X, "@type": "owl:Ontology", "mabos:domain": "x", "mabos:prefix": "x",
    "@graph": [
        {"@id": "x:Solo", "@type": "owl:Class", "rdfs:label": "Solo",
         "rdfs:subClassOf": {"@type": "owl:Restriction", "owl:onProperty": {"@id": "x:partner"},
                             "owl:maxCardinality": {"@value": "0", "@type": "xsd:nonNegativeInteger"}}},
        {"@id": "x:partner", "@type": "owl:ObjectProperty", "rdfs:label": "partner"},
        {"@id": "x:ann", "@type": "x:Solo", "x:partner": {"@id": "x:bob"}},
    ],
}  # fmt: skip


@pytest.fixture(autouse=True)
def empty_memo() -> None:
    memo.clear()


def edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(ontology_json(data), encoding="utf-8")


def again(svc: OntologyService) -> OntologyService:
    """A new service on the same folder, as every tool call (MCP, console) opens one."""
    return OntologyService(svc.store, svc.scopes, svc.clock, svc.ontology_dir, DATA / "shapes")


def results(svc: OntologyService) -> list[dict[str, Any]]:
    return [r.model_dump() for r in svc.check()]


def failures(svc: OntologyService) -> dict[str, dict[str, str]]:
    return {r.domain: {c.check: c.message for c in r.checks if not c.ok} for r in svc.check()}


def sole_trader(data: dict[str, Any]) -> None:
    data["@graph"].append({"@id": "biz:SoleTrader", "@type": "owl:Class", "rdfs:label": "Sole trader",
                           "rdfs:subClassOf": [{"@id": "biz:Person"}, {"@id": "biz:Organization"}],
                           "mabos:sbvr_definition": "A person trading as an organization."})  # fmt: skip


def test_unchanged_files_are_checked_from_memory_and_a_changed_file_again(svc) -> None:
    first = results(svc)
    assert [r["ok"] for r in first] == [True, True]
    shacl, owl = consistency._VIOLATIONS.hits, consistency._CLOSURES.hits
    assert results(again(svc)) == first
    assert consistency._VIOLATIONS.hits == shacl + 2  # one SHACL result per file, both remembered
    assert consistency._CLOSURES.hits == owl + 1  # sbvr-business has disjointness axioms: one closure

    path = svc.ontology_dir / "sbvr-business.jsonld"
    original = path.read_bytes()
    edit(path, sole_trader)  # now inconsistent: a class under two disjoint classes
    found = failures(again(svc))
    assert list(found["sbvr-business"]) == ["owl_rl"] and found["mabos-core"] == {}
    assert "SoleTrader" in found["sbvr-business"]["owl_rl"] and "Disjoint" in found["sbvr-business"]["owl_rl"]
    with memo.uncached():
        assert failures(again(svc)) == found

    edit(path, lambda d: d["@graph"][0].pop("mabos:sbvr_definition"))  # and now breaks a SHACL shape too
    found = failures(again(svc))["sbvr-business"]
    assert list(found) == ["shacl", "owl_rl"] and "biz:Party mabos:sbvr_definition" in found["shacl"]

    path.write_bytes(original)
    assert results(again(svc)) == first


@pytest.mark.parametrize("state", ["shipped", "fixtures", "inconsistent", "blank nodes"])
def test_a_remembered_result_is_the_result_computed_afresh(state: str, tmp_path: Path) -> None:
    source = repository_ontology_dir() if state == "shipped" else DATA / "ontologies"
    assert source is not None
    folder = tmp_path / "onto"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("templates"))
    if state == "inconsistent":
        edit(folder / "sbvr-business.jsonld", sole_trader)
    if state == "blank nodes":
        (folder / "x.jsonld").write_text(ontology_json(SOLO), encoding="utf-8")
    active, shapes = OntologyFiles().load(folder), read_shapes(shapes_dir())
    with memo.uncached():
        fresh = [file_checks(active, name, shapes) for name in active.files]
    cold = [file_checks(active, name, shapes) for name in active.files]
    hits = consistency._VIOLATIONS.hits
    warm = [file_checks(active, name, shapes) for name in active.files]
    assert fresh == cold == warm
    assert consistency._VIOLATIONS.hits == hits + len(active.files)
    assert any(not r.ok for r in fresh) == (state in ("inconsistent", "blank nodes"))


def test_a_message_naming_a_blank_node_names_the_one_of_the_current_parse(svc) -> None:
    path = svc.ontology_dir / "x.jsonld"
    path.write_text(ontology_json(SOLO), encoding="utf-8")
    labels = {str(t) for triple in svc.active().graph for t in triple if isinstance(t, BNode)}
    message = failures(svc)["x"]["owl_rl"]
    assert "maximum cardinality" in message and any(label in message for label in labels)

    path.write_text(ontology_json(SOLO) + "\n", encoding="utf-8")  # the same triples, parsed again: new labels
    fresh = again(svc)
    new = {str(t) for triple in fresh.active().graph for t in triple if isinstance(t, BNode)}
    assert new and not new & labels
    message = failures(fresh)["x"]["owl_rl"]
    assert any(label in message for label in new) and not any(label in message for label in labels)


def test_files_with_the_same_bytes_are_parsed_once_per_process(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        shutil.copytree(DATA / "ontologies", folder, ignore=shutil.ignore_patterns("templates"))
    edit(two / "mabos-core.jsonld", lambda d: d["@graph"].pop())
    first, second = OntologyFiles().load(one), OntologyFiles().load(two)
    assert second.files["sbvr-business"].graph is first.files["sbvr-business"].graph
    assert second.files["sbvr-business"].path == two / "sbvr-business.jsonld"
    assert second.files["mabos-core"].graph is not first.files["mabos-core"].graph
    assert len(second.files["mabos-core"].graph) < len(first.files["mabos-core"].graph)
    with memo.uncached():
        assert OntologyFiles().load(one).files["sbvr-business"].graph is not first.files["sbvr-business"].graph


def test_a_memo_keeps_the_most_recently_used_results_within_its_size() -> None:
    kept: memo.Memo[str] = memo.Memo("test", size=4, weight=len)
    kept.put("a", "xx")
    kept.put("b", "y")
    assert kept.get("a") == "xx"  # now the most recently used
    kept.put("c", "zz")  # 5 > 4: "b" goes, the least recently used
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("xx", None, "zz")
    kept.put("d", "too big")  # heavier than the whole memo: not kept, nothing dropped
    assert (kept.get("d"), len(kept)) == (None, 2)
    with memo.uncached():
        assert kept.get("a") is None
    memo.clear()
    assert (kept.get("a"), kept.hits) == (None, 0)
