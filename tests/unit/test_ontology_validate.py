"""Validation of ontology proposals (kg/ontology/validate.py): every check fails and passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rdflib import Graph

from kg.errors import InputError, WorkspaceError
from kg.ids import new_id
from kg.models import OntologyProposal
from kg.ontology.files import OntologyFiles, read_shapes, repository_ontology_dir
from kg.ontology.validate import (
    RESERVED_LABELS,
    RESERVED_WORDS,
    levenshtein,
    typeql_label,
    validate_proposal,
)
from tests.unit.conftest import ONTOLOGY_DATA as DATA

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["jsonld", "shacl", "references", "new_id", "near_duplicate", "naming", "sbvr_definition", "owl_rl", "typeql"]


@pytest.fixture
def onto(tmp_path: Path) -> Path:
    target = tmp_path / "ontologies"
    shutil.copytree(DATA / "ontologies", target)
    return target


@pytest.fixture
def shapes() -> Graph:
    return read_shapes(DATA / "shapes")


def proposal(**fields) -> OntologyProposal:
    data = {
        "uid": new_id("proposal"), "agent_id": "a", "scope": "global", "created_at": "2024-05-01T12:00:00Z",
        "proposed_by": "a", "domain": "sbvr-business", "node_type": "class", "node_id": "Supplier",
        "label": "Supplier", "parent_class": "biz:Party",
        "sbvr_definition": "A supplier is a party that provides products to the business.",
    }  # fmt: skip
    data.update(fields)
    return OntologyProposal.model_validate(data)


def prop(kind: str, node_id: str, label: str, range_: str | None, **more: object) -> dict[str, object]:
    """The fields of a property proposal (``kind``: object or datatype): no parent class, a domain class
    (``biz:Party`` unless ``more`` names another) and a range."""
    return {"node_type": f"{kind}_property", "node_id": node_id, "label": label, "parent_class": None,
            "domain_class": "biz:Party", "range": range_, **more}  # fmt: skip


def results(onto: Path, shapes: Graph, **fields) -> dict[str, tuple[bool, str]]:
    checks = validate_proposal(proposal(**fields), OntologyFiles().load(onto), shapes)
    assert [c.check for c in checks] == NAMES
    return {c.check: (c.ok, c.message) for c in checks}


def failed(onto: Path, shapes: Graph, **fields) -> dict[str, str]:
    return {name: message for name, (ok, message) in results(onto, shapes, **fields).items() if not ok}


def add_file(onto: Path, domain: str, graph: list[dict]) -> None:
    ns = f"https://w3id.org/mabos/{domain}#"
    context = {"owl": "http://www.w3.org/2002/07/owl#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
               "mabos": "https://w3id.org/mabos/core#", "biz": "https://w3id.org/mabos/business#",
               domain: ns}  # fmt: skip
    doc = {"@context": context, "@id": ns, "@type": "owl:Ontology", "mabos:domain": domain, "mabos:prefix": domain,
           "@graph": graph}  # fmt: skip
    (onto / f"{domain}.jsonld").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------ passing


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"parent_class": None},
        {"parent_class": "owl:Thing", "sbvr_synonyms": ["Vendor"]},
        {"parent_class": "https://w3id.org/mabos/business#Party"},
        prop("object", "supplies", "supplies", "biz:Product", sbvr_definition="A party supplies a product."),
        prop("datatype", "leadTimeDays", "lead time days", "xsd:integer", domain_class="Product",
             sbvr_definition="Days to deliver a product."),
        prop("datatype", "supplierCode", "supplier code", "xsd:string", multi_valued=True, sbvr_definition="A code."),
        {"domain": "mabos-core", "node_id": "Intention", "label": "Intention", "parent_class": "mabos:Goal"},
    ],
)  # fmt: skip
def test_a_good_proposal_passes_every_check(onto, shapes, fields) -> None:
    assert failed(onto, shapes, **fields) == {}


# ------------------------------------------------------------------------------------------------ one check each


def test_jsonld_fails_for_a_reference_that_is_not_an_iri(onto, shapes) -> None:
    problems = failed(onto, shapes, parent_class="biz:Some Thing")
    assert "not a valid IRI" in problems["jsonld"]
    assert set(problems) == {"jsonld", "references"}


def test_shacl_uses_the_shapes_it_is_given(onto, shapes) -> None:
    strict = Graph().parse(data="""
        @prefix sh: <http://www.w3.org/ns/shacl#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        <urn:x:LongLabel> a sh:NodeShape ; sh:targetClass owl:Class ;
            sh:property [ sh:path rdfs:label ; sh:minLength 10 ] .
    """, format="turtle")  # fmt: skip
    assert failed(onto, strict, label="Supplier") == {"shacl": failed(onto, strict)["shacl"]}
    assert "biz:Supplier rdfs:label" in failed(onto, strict)["shacl"]
    assert failed(onto, strict, label="Supplier of goods") == {}


def test_shacl_fails_for_a_property_without_a_range(onto, shapes) -> None:
    problems = failed(onto, shapes, **prop("object", "supplies", "supplies", None))
    assert "rdfs:range" in problems["shacl"]
    assert "range: required" in problems["references"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"parent_class": "biz:Nope"}, "'biz:Nope' is not a class"),
        ({"parent_class": "foo:Party"}, "unknown prefix"),
        ({"parent_class": "biz:placesOrder"}, "is not a class"),
        ({"parent_class": "biz:Supplier"}, "the proposed node itself"),
        (prop("datatype", "rating", "rating", "biz:Product"), "not an xsd: datatype"),
        (prop("object", "supplies", "supplies", "biz:Nothing"), "'biz:Nothing' is not a class"),
    ],
)  # fmt: skip
def test_references_must_exist(onto, shapes, fields, message) -> None:
    assert message in failed(onto, shapes, **fields)["references"]


def test_new_id_fails_for_an_existing_node(onto, shapes) -> None:
    problems = failed(onto, shapes, node_id="Product", label="Goods")
    assert "biz:Product is already defined in sbvr-business.jsonld (class)" in problems["new_id"]


@pytest.mark.parametrize(("label", "other"), [("Custmer", "customer"), ("CLIENTS", "client"), ("Ordr", "order")])
def test_near_duplicate_labels_and_synonyms_fail(onto, shapes, label, other) -> None:
    problems = failed(onto, shapes, node_id="Thing" + label.title().replace(" ", ""), label=label)
    assert f"within 2 edits of {other!r}" in problems["near_duplicate"]


def test_near_duplicate_also_checks_the_proposed_synonyms(onto, shapes) -> None:
    assert "'Produkt'" in failed(onto, shapes, sbvr_synonyms=["Produkt"])["near_duplicate"]
    assert "near_duplicate" not in failed(onto, shapes, label="Supplies Co")  # 3 edits from anything


@pytest.mark.parametrize(
    ("fields", "style"),
    [
        ({"node_id": "supplier"}, "PascalCase"),
        ({"node_id": "Supplier_Party"}, "PascalCase"),
        (prop("object", "Supplies", "supplies", "biz:Product"), "camelCase"),
        (prop("datatype", "lead_time", "lead time", "xsd:string"), "camelCase"),
    ],
)  # fmt: skip
def test_naming_conventions(onto, shapes, fields, style) -> None:
    assert style in failed(onto, shapes, **fields)["naming"]


def test_an_sbvr_definition_is_required(onto, shapes) -> None:
    problems = failed(onto, shapes, sbvr_definition="  ")
    assert "missing" in problems["sbvr_definition"]
    assert "sbvr_definition" in problems["shacl"]  # the fixture shapes require it too


def test_owl_rl_finds_a_class_that_cannot_have_members(onto, shapes) -> None:
    add_file(onto, "robots", [
        {"@id": "robots:Machine", "@type": "owl:Class", "rdfs:label": "Machine", "mabos:sbvr_definition": "A machine."},
        {"@id": "robots:Android", "owl:disjointWith": {"@id": "biz:Person"}},
    ])  # fmt: skip
    base = {"domain": "robots", "node_id": "Android", "label": "Android", "sbvr_definition": "A humanlike robot."}
    problems = failed(onto, shapes, **base, parent_class="biz:Person")
    assert list(problems) == ["owl_rl"]
    assert "Android" in problems["owl_rl"] and "Person" in problems["owl_rl"]
    assert failed(onto, shapes, **base, parent_class="robots:Machine") == {}


def test_owl_rl_follows_the_parent_chain_to_disjoint_classes(onto, shapes) -> None:
    add_file(onto, "mixed", [
        {"@id": "mixed:Hybrid", "@type": "owl:Class", "rdfs:label": "Hybrid", "mabos:sbvr_definition": "Both.",
         "rdfs:subClassOf": [{"@id": "biz:Person"}, {"@id": "biz:Organization"}]},
    ])  # fmt: skip
    problems = failed(onto, shapes, domain="mixed", node_id="SoleTrader", label="Sole trader",
                      parent_class="mixed:Hybrid")  # fmt: skip
    assert "owl_rl" in problems


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"node_id": "Entity", "label": "Entity kind"}, "'entity' is a reserved word"),
        ({"node_id": "Owns", "label": "Owner ship"}, "'owns' is a reserved word"),
        ({"node_id": "Label", "label": "Tag name"}, "'label' is a TypeQL built-in name"),
        (prop("datatype", "order", "sequence number", "xsd:string"), "already taken by biz:Order (class)"),
        (prop("datatype", "checksum", "checksum", "xsd:hexBinary"), "has no TypeQL value type"),
    ],
)  # fmt: skip
def test_typeql_mappability(onto, shapes, fields, message) -> None:
    problems = failed(onto, shapes, **fields)
    assert message in problems["typeql"]
    assert set(problems) == {"typeql"}


def test_typeql_single_inheritance(onto, shapes) -> None:
    add_file(onto, "extra", [{"@id": "biz:Hybrid", "rdfs:subClassOf": {"@id": "biz:Person"}}])
    problems = failed(onto, shapes, node_id="Hybrid", label="Hybrid party", parent_class="biz:Customer")
    assert problems == {"typeql": problems["typeql"]}
    assert "single inheritance" in problems["typeql"]


# ------------------------------------------------------------------------------------------------ edges


def test_an_unknown_domain_is_an_input_error(onto, shapes) -> None:
    with pytest.raises(InputError, match="domain: no ontology 'nope'"):
        validate_proposal(proposal(domain="nope"), OntologyFiles().load(onto), shapes)


def test_a_broken_file_in_the_active_set_stops_validation(onto, shapes) -> None:
    (onto / "broken.jsonld").write_text("{not json", encoding="utf-8")
    with pytest.raises(WorkspaceError, match=r"broken.jsonld does not parse"):
        validate_proposal(proposal(), OntologyFiles().load(onto), shapes)


def test_validation_reads_only(onto, shapes) -> None:
    before = {p: p.read_bytes() for p in sorted(onto.rglob("*")) if p.is_file()}
    validate_proposal(proposal(), OntologyFiles().load(onto), shapes)
    validate_proposal(proposal(node_id="Custmer"), OntologyFiles().load(onto), shapes)
    assert {p: p.read_bytes() for p in sorted(onto.rglob("*")) if p.is_file()} == before


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("", "", 0), ("", "abc", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2), ("same", "same", 0),
     ("customer", "custmer", 1), ("ab", "ba", 2)],
)  # fmt: skip
def test_levenshtein(a, b, distance) -> None:
    assert levenshtein(a, b) == levenshtein(b, a) == distance
    assert levenshtein(a, b, limit=1) == min(distance, 2)


@pytest.mark.parametrize(
    ("name", "label"),
    [("DropshipFulfillment", "dropship-fulfillment"), ("placesOrder", "places-order"), ("HTTPServer", "http-server"),
     ("order2Cash", "order2-cash"), ("Entity", "entity")],
)  # fmt: skip
def test_typeql_labels(name, label) -> None:
    assert typeql_label(name) == label


def test_the_reserved_words_are_the_converters() -> None:
    assert len(RESERVED_WORDS) == 41
    assert RESERVED_WORDS <= RESERVED_LABELS and {"string", "label", "count"} <= RESERVED_LABELS


# ------------------------------------------------------------------------------------------------ real files


BASE = ROOT / "ontologies" / "sbvr-business.jsonld"
SHAPES = ROOT / "schema" / "shapes"


@pytest.mark.skipif(not (BASE.is_file() and SHAPES.is_dir()), reason="the base ontologies or shapes are not there yet")
def test_a_proposal_validates_against_the_shipped_ontologies(tmp_path: Path) -> None:
    shipped = repository_ontology_dir()
    assert shipped is not None
    onto = tmp_path / "ontologies"
    shutil.copytree(shipped, onto)
    active = OntologyFiles().load(onto)
    parent = next(iri for iri, kind in sorted(active.kinds.items()) if kind == "class" and "business#" in iri)
    checks = validate_proposal(
        proposal(node_id="ZqxProbeConcept", label="Zqx probe concept", parent_class=str(parent)),
        active, read_shapes(SHAPES),
    )  # fmt: skip
    assert [c for c in checks if not c.ok] == []
