"""OWL 2 RL (reasoning.owl): term mapping, ontology loading, closure filters, write-back and truth maintenance.

Everything runs on real rdflib and owlrl over small graphs (a closure here takes tens of milliseconds).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, URIRef

from kg.errors import InputError, NotFoundError
from kg.models import LiveTriple
from kg.rdf.terms import CORE_PREFIXES, NAMESPACE, PREDICATE_ALIASES, iri_to_term
from reasoning.owl import (
    OWL_RL_SOURCE,
    TermMap,
    compute_closure,
    literal,
    load_ontology,
    owl_rl_closure,
    run_owl_rl,
    term_to_iri,
)

ZOO = "http://example.org/zoo#"
MABOS_CONTEXT = {"mabos": NAMESPACE, "owl": str(OWL), "rdfs": str(RDFS)}


def triple(n: int, s: str, p: str, o: str, kind: str = "entity", *, confidence: float = 1.0) -> LiveTriple:
    """An input fact as the store hands it out (uids only need to be distinct here)."""
    return LiveTriple(f"F-{n:026d}", s, p, o, confidence, None, "agent:a", kind)


def keys(entailments) -> set[tuple[str, str, str]]:
    return {e.key for e in entailments}


def write_ontology(ws_path: Path, name: str, graph: list[dict], context: dict | None = None) -> Path:
    path = ws_path / "ontologies" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"@context": context or MABOS_CONTEXT, "@graph": graph}), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _no_base_ontologies(ws):
    """Start from an empty ontology folder: these tests bring their own (init copies the base set in)."""
    for path in (ws.path / "ontologies").glob("*.jsonld"):
        path.unlink()


@pytest.fixture
def zoo(ws):
    """A workspace ontology ``Dog subClassOf Animal`` (in urn:mabos:, so plain fact terms match it)."""
    write_ontology(ws.path, "zoo.jsonld", [{"@id": "mabos:Dog", "@type": "owl:Class",
                                            "rdfs:subClassOf": {"@id": "mabos:Animal"}}])  # fmt: skip
    return ws


def owl_facts(ws, agent="a"):
    """Live owl-rl facts visible to ``agent``, by (subject, predicate, object)."""
    return {(f.subject, f.predicate, f.object): f for f in ws.facts.query(agent, limit=1000)
            if f.source == OWL_RL_SOURCE}  # fmt: skip


# ------------------------------------------------------------------------------------------ term mapping


def test_aliases_full_iris_curies_and_plain_terms():
    assert term_to_iri("isA", predicate=True) == RDF.type
    assert term_to_iri("subClassOf", predicate=True) == RDFS.subClassOf
    assert term_to_iri("type") == URIRef(NAMESPACE + "type")  # aliases only in predicate position
    assert term_to_iri("https://example.org/x") == URIRef("https://example.org/x")
    assert term_to_iri("owl:TransitiveProperty") == OWL.TransitiveProperty
    assert term_to_iri("zoo:Dog", {**CORE_PREFIXES, "zoo": ZOO}) == URIRef(ZOO + "Dog")
    assert term_to_iri("zoo:Dog") == URIRef(NAMESPACE + "zoo:Dog")  # unbound prefix: just a term
    assert term_to_iri("big dog 100%") == URIRef(NAMESPACE + "big%20dog%20100%25")
    assert term_to_iri("http://a b") == URIRef(NAMESPACE + "http://a%20b")  # not a usable IRI
    assert iri_to_term(term_to_iri("urn:mabos:x")) == "urn:mabos:x"  # never confused with the encoding
    assert iri_to_term(RDF.type, predicate=True) == "type"
    assert iri_to_term(RDF.type) == "rdf:type"
    assert iri_to_term(URIRef(ZOO + "Animal"), {**CORE_PREFIXES, "zoo": ZOO}) == "zoo:Animal"


def test_literals_are_typed_only_when_the_text_survives():
    assert literal("42") == Literal("42", datatype=XSD.integer)
    assert literal("-1.50") == Literal("-1.50", datatype=XSD.decimal)
    for text in ("007", "+5", "1e3", "$50,000", "true", "Rex"):
        assert literal(text) == Literal(text)
        assert str(literal(text)) == text


@given(st.text(min_size=1))
def test_term_iri_term_is_the_identity(term):
    assume(not term.startswith(tuple(CORE_PREFIXES.values())))  # a full IRI there comes back as a CURIE
    prefixes = {**CORE_PREFIXES, "zoo": ZOO}
    assert iri_to_term(term_to_iri(term, prefixes), prefixes) == term
    if term not in PREDICATE_ALIASES:
        assert iri_to_term(term_to_iri(term, prefixes, predicate=True), prefixes, predicate=True) == term


@given(st.text(min_size=1))
def test_the_iri_of_a_term_is_stable_and_remembered_spellings_come_back(term):
    iri = term_to_iri(term)
    assert term_to_iri(iri_to_term(iri)) == iri
    terms = TermMap(CORE_PREFIXES)
    assert terms.term(terms.iri(term)) == term


def test_a_full_iri_in_a_bound_namespace_keeps_the_inputs_spelling():
    full = str(OWL) + "Thing"
    assert iri_to_term(term_to_iri(full)) == "owl:Thing"  # normalised without a memory ...
    terms = TermMap(CORE_PREFIXES)
    assert terms.term(terms.iri(full)) == full  # ... but a run keeps the spelling its facts used


# ------------------------------------------------------------------------------------------ ontology files


def test_load_ontology_reads_the_active_set_and_extra_files(ws, tmp_path):
    write_ontology(ws.path, "zoo.jsonld", [{"@id": "zoo:Dog", "rdfs:subClassOf": {"@id": "zoo:Animal"}}],
                   {"zoo": ZOO, "rdfs": str(RDFS)})  # fmt: skip
    cat = [{"@id": "zoo:Cat", "rdfs:subClassOf": {"@id": "zoo:Animal"}}]  # a template: not in the active set
    write_ontology(ws.path, "templates/zoo-template.jsonld", cat, {"zoo": ZOO, "rdfs": str(RDFS)})
    (ws.path / "ontologies" / "ignored.ttl").write_text("not turtle at all", encoding="utf-8")
    extra = tmp_path / "extra.ttl"
    extra.write_text("@prefix ex: <http://example.org/ex#> .\nex:a ex:b ex:c .\n", encoding="utf-8")

    graph = load_ontology(ws.path, [extra])

    assert (URIRef(ZOO + "Dog"), RDFS.subClassOf, URIRef(ZOO + "Animal")) in graph
    assert len(graph) == 2
    bound = dict(graph.namespaces())
    assert bound["zoo"] == URIRef(ZOO) and bound["ex"] == URIRef("http://example.org/ex#")
    assert "schema" not in bound  # only what the files declare, plus the core prefixes


def test_no_ontology_is_an_empty_graph(ws):
    assert len(load_ontology(ws.path)) == 0


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("broken.jsonld", "{not json", "does not parse as json-ld"),
        ("broken.ttl", "@prefix : <x> . :a :b", "does not parse as turtle"),
        ("onto.xlsx", "whatever", "unknown ontology format"),
    ],
)
def test_bad_ontology_files_name_the_file(ws, tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        load_ontology(ws.path, [path])
    assert info.value.field == "ontology" and name in str(info.value)
    assert "\n" not in str(info.value)


def test_a_missing_extra_file_is_an_input_error(ws, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_ontology(ws.path, [tmp_path / "nope.jsonld"])


# ------------------------------------------------------------------------------------------ the closure


def test_subclass_domain_range_subproperty_inverse_transitive_sameas():
    facts = [
        triple(1, "Dog", "subClassOf", "Animal"),
        triple(2, "rex", "type", "Dog", confidence=0.8),
        triple(3, "owns", "domain", "Person"),
        triple(4, "owns", "range", "Possession"),
        triple(5, "alice", "owns", "rex"),
        triple(6, "owns", "inverseOf", "ownedBy"),
        triple(7, "name", "subPropertyOf", "label"),
        triple(8, "rex", "name", "Rex", "literal"),
        triple(9, "partOf", "type", "owl:TransitiveProperty"),
        triple(10, "paw", "partOf", "leg"),
        triple(11, "leg", "partOf", "body"),
        triple(12, "rex", "sameAs", "rexy"),
    ]

    found = {e.key: e for e in owl_rl_closure(facts, Graph())}

    assert {
        ("rex", "type", "Animal"),
        ("alice", "type", "Person"),
        ("rex", "type", "Possession"),
        ("rex", "label", "Rex"),
        ("rex", "ownedBy", "alice"),
        ("paw", "partOf", "body"),
        ("rexy", "type", "Dog"),
        ("rexy", "ownedBy", "alice"),
    } <= set(found)
    assert found[("rex", "label", "Rex")].object_kind == "literal"
    assert found[("paw", "partOf", "body")].support == [facts[9].uid, facts[10].uid]
    assert found[("rex", "type", "Animal")].confidence == 0.8  # the lowest of the facts about rex and Animal


def test_only_new_class_and_property_facts_come_back():
    facts = [triple(1, "Dog", "subClassOf", "Animal"), triple(2, "rex", "isA", "Dog"),
             triple(3, "rex", "a", "Animal"), triple(4, "rex", "rdf:type", "owl:NamedIndividual")]  # fmt: skip

    closure = compute_closure(facts, Graph())

    assert closure.entailments == []  # rex is already an Animal; owl:Thing, sameAs rex rex ... are noise
    assert closure.triples_after > closure.triples_before == 4


def test_types_through_an_ontology_graph_keep_its_curies():
    ontology = Graph(bind_namespaces="core")
    ontology.bind("zoo", ZOO)
    ontology.add((URIRef(ZOO + "Dog"), RDFS.subClassOf, URIRef(ZOO + "Animal")))
    facts = [triple(1, "rex", "type", "zoo:Dog"), triple(2, "fido", "type", ZOO + "Dog")]

    assert keys(owl_rl_closure(facts, ontology)) == {("rex", "type", "zoo:Animal"), ("fido", "type", "zoo:Animal")}
    assert len(ontology) == 1  # not modified


def test_entailments_about_the_ontology_alone_are_left_out():
    ontology = Graph()
    ontology.add((URIRef(ZOO + "lassie"), RDF.type, URIRef(ZOO + "Dog")))
    ontology.add((URIRef(ZOO + "Dog"), RDFS.subClassOf, URIRef(ZOO + "Animal")))

    assert owl_rl_closure([triple(1, "rex", "type", "Cat")], ontology) == []


def test_inconsistencies_are_reported():
    facts = [triple(1, "Dog", "owl:disjointWith", "Cat"), triple(2, "rex", "type", "Dog"),
             triple(3, "rex", "type", "Cat")]  # fmt: skip

    assert compute_closure(facts, Graph()).inconsistencies


# ------------------------------------------------------------------------------------------ the service


def test_run_writes_derived_owl_rl_facts(zoo):
    rex = zoo.facts.assert_fact("a", "rex", "type", "Dog", confidence=0.7)[0]
    zoo.facts.assert_fact("a", "name", "subPropertyOf", "label")
    zoo.facts.assert_fact("a", "rex", "name", "Rex", object_kind="literal", confidence=0.9)

    report = run_owl_rl(zoo, "a")

    stored = owl_facts(zoo)
    assert set(stored) == {("rex", "type", "Animal"), ("rex", "label", "Rex")}
    animal = stored[("rex", "type", "Animal")]
    assert animal.scope == "agent:a" and animal.confidence == 0.7 and rex.uid in animal.derived_from
    assert stored[("rex", "label", "Rex")].object_kind.value == "literal"
    assert zoo.facts.query("a", subject="rex", predicate="type", object="Animal", only_derived=True)
    assert (report.input_facts, report.ontology_triples, report.entailed, report.created) == (3, 2, 2, 2)
    assert report.retracted == [] and report.triples_after > report.triples_before
    assert {e.uid for e in report.entailments} == {f.uid for f in stored.values()}


def test_a_second_run_changes_nothing(zoo, snapshot):
    zoo.facts.assert_fact("a", "rex", "type", "Dog")
    zoo.facts.assert_fact("a", "partOf", "type", "owl:TransitiveProperty")
    zoo.facts.assert_fact("a", "paw", "partOf", "leg")
    zoo.facts.assert_fact("a", "leg", "partOf", "body")
    first = run_owl_rl(zoo, "a")
    before = snapshot(zoo)

    second = run_owl_rl(zoo, "a")

    assert first.created == 2 and second.input_facts == first.input_facts  # owl-rl facts are not input
    assert (second.created, second.updated, second.unchanged, second.retracted) == (0, 0, 2, [])
    assert snapshot(zoo) == before


def test_facts_that_no_longer_follow_are_retracted(zoo):
    rex = zoo.facts.assert_fact("a", "rex", "type", "Dog")[0]
    zoo.facts.assert_fact("a", "fido", "type", "Dog")
    other = zoo.facts.assert_fact("a", "x", "y", "z", derived_from=[rex.uid], source="inference")[0]
    run_owl_rl(zoo, "a")
    gone = owl_facts(zoo)[("rex", "type", "Animal")]

    zoo.facts.retract("a", uids=[rex.uid])
    report = run_owl_rl(zoo, "a")

    assert report.retracted == [gone.uid]
    assert set(owl_facts(zoo)) == {("fido", "type", "Animal")}
    assert zoo.facts.get("a", other.uid).retracted_at is None  # other derived facts are not owl-rl's business


def test_private_facts_of_another_agent_never_reach_the_closure(zoo):
    zoo.facts.assert_fact("b", "rex", "type", "Dog")  # agent:b
    zoo.facts.assert_fact("a", "fido", "type", "Dog", scope="global")

    report = run_owl_rl(zoo, "a")

    assert keys(report.entailments) == {("fido", "type", "Animal")}
    assert report.input_facts == 1
    assert set(owl_facts(zoo, "b")) == set()  # written to agent:a, which b cannot read


def test_a_bad_ontology_writes_nothing(zoo, snapshot):
    zoo.facts.assert_fact("a", "rex", "type", "Dog")
    (zoo.path / "ontologies" / "broken.jsonld").write_text('{"@context": ', encoding="utf-8")
    before = snapshot(zoo)

    with pytest.raises(InputError, match=r"broken\.jsonld"):
        run_owl_rl(zoo, "a")

    assert snapshot(zoo) == before


def test_dry_run_reports_without_writing(zoo, snapshot):
    zoo.facts.assert_fact("a", "rex", "type", "Dog")
    before = snapshot(zoo)

    report = run_owl_rl(zoo, "a", dry_run=True)

    assert report.dry_run and report.created == 1 and keys(report.entailments) == {("rex", "type", "Animal")}
    assert snapshot(zoo) == before


def test_extra_ontology_files_and_unknown_agents(ws, tmp_path):
    extra = tmp_path / "zoo.ttl"
    extra.write_text(f"@prefix zoo: <{ZOO}> .\n@prefix rdfs: <{RDFS}> .\nzoo:Dog rdfs:subClassOf zoo:Animal .\n",
                     encoding="utf-8")  # fmt: skip
    ws.facts.assert_fact("a", "rex", "type", "zoo:Dog")

    assert keys(run_owl_rl(ws, "a", ontology=[extra]).entailments) == {("rex", "type", "zoo:Animal")}
    with pytest.raises(NotFoundError):
        run_owl_rl(ws, "nobody")


@pytest.mark.parametrize("engine", ["mabos", "owlrl"])
def test_both_engines_give_the_same_entailments(engine):
    facts = [
        triple(1, "Dog", "subClassOf", "Animal"),
        triple(2, "rex", "type", "Dog"),
        triple(3, "owns", "inverseOf", "ownedBy"),
        triple(4, "alice", "owns", "rex"),
        triple(5, "hasMother", "type", "owl:FunctionalProperty"),
        triple(6, "rex", "hasMother", "bella"),
        triple(7, "rex", "hasMother", "bell"),
        triple(8, "bell", "type", "Dog"),
    ]

    ours = compute_closure(facts, Graph(), engine="mabos")
    other = compute_closure(facts, Graph(), engine=engine)

    assert ours.entailments == other.entailments
    assert ours.triples_after == other.triples_after
    assert ("bella", "type", "Dog") in keys(ours.entailments)  # prp-fp merged bell and bella


def test_an_unknown_engine_is_an_input_error():
    with pytest.raises(InputError, match="engine"):
        compute_closure([], Graph(), engine="fast")
