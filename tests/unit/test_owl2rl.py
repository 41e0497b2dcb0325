"""Our OWL 2 RL engine against the reference implementation (owlrl) on the same graphs.

Every test computes both closures of one rdflib graph (so blank nodes are the same objects) and compares
them triple for triple, after taking out owlrl's inconsistency report triples (owlrl writes its errors into
the graph; our engine returns them as messages).
"""

from __future__ import annotations

from pathlib import Path

import owlrl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import OWL, RDF, RDFS, XSD, BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from kg.ontology.typeql import load_graph
from reasoning.owl2rl import closure
from tests.budget import examples

DATA = Path(__file__).resolve().parents[1] / "data" / "owl2rl"
ONTOLOGIES = Path(__file__).resolve().parents[2] / "ontologies"
ERR = "http://www.daml.org/2002/03/agents/agent-ont#"
EX = "http://example.org/"

Triple = tuple[Node, Node, Node]


def reference(graph: Graph) -> set[Triple]:
    """owlrl's OWL 2 RL closure of a copy of ``graph``, without its error-report triples."""
    copy = Graph()
    for triple in graph:
        copy.add(triple)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(copy)
    reports = {s for s, _, o in copy.triples((None, RDF.type, URIRef(ERR + "ErrorMessage")))}
    return {t for t in copy if t[0] not in reports}


def assert_same_closure(graph: Graph) -> None:
    ours = closure(graph).triples()
    ref = reference(graph)
    missing, extra = sorted(ref - ours, key=str), sorted(ours - ref, key=str)
    assert not missing and not extra, f"missing {missing[:5]} extra {extra[:5]}"


def ex(name: str) -> URIRef:
    return URIRef(EX + name)


@pytest.mark.parametrize("name", ["properties_and_classes.ttl", "equality_and_keys.ttl"])
def test_hand_written_graphs_match_owlrl(name: str) -> None:
    graph = Graph()
    graph.parse(DATA / name, format="turtle")
    assert_same_closure(graph)


@pytest.mark.parametrize("name", ["mabos-core.jsonld", "templates/ecommerce.jsonld", "templates/saas.jsonld"])
def test_workspace_ontologies_match_owlrl(name: str) -> None:
    assert_same_closure(load_graph([ONTOLOGIES / name]))


def test_textbook_entailments() -> None:
    """Each rule family on its own, checked against what the OWL 2 RL tables say by hand."""
    g = Graph()
    g.add((ex("Dog"), RDFS.subClassOf, ex("Animal")))
    g.add((ex("rex"), RDF.type, ex("Dog")))
    g.add((ex("ancestor"), RDF.type, OWL.TransitiveProperty))
    for a, b in (("a", "b"), ("b", "c"), ("c", "d")):
        g.add((ex(a), ex("ancestor"), ex(b)))
    g.add((ex("owns"), OWL.inverseOf, ex("ownedBy")))
    g.add((ex("alice"), ex("owns"), ex("rex")))
    triples = closure(g).triples()
    assert (ex("rex"), RDF.type, ex("Animal")) in triples  # cax-sco
    assert (ex("a"), ex("ancestor"), ex("d")) in triples  # prp-trp
    assert (ex("rex"), ex("ownedBy"), ex("alice")) in triples  # prp-inv1
    assert (ex("rex"), OWL.sameAs, ex("rex")) in triples  # eq-ref


def test_functional_property_merges_and_expands_every_copy() -> None:
    g = Graph()
    g.add((ex("hasMother"), RDF.type, OWL.FunctionalProperty))
    g.add((ex("tom"), ex("hasMother"), ex("mary")))
    g.add((ex("tom"), ex("hasMother"), ex("maria")))
    g.add((ex("maria"), ex("livesIn"), ex("rome")))
    result = closure(g)
    triples = result.triples()
    assert (ex("mary"), OWL.sameAs, ex("maria")) in triples  # prp-fp
    assert (ex("maria"), OWL.sameAs, ex("mary")) in triples  # eq-sym
    assert (ex("mary"), ex("livesIn"), ex("rome")) in triples  # eq-rep-s
    assert result.stored < len(triples)  # one representative is stored, the copies come back on output
    assert_same_closure(g)


def test_inconsistencies_are_reported_not_written() -> None:
    g = Graph()
    g.add((ex("Cat"), OWL.disjointWith, ex("Dog")))
    g.add((ex("odd"), RDF.type, ex("Cat")))
    g.add((ex("odd"), RDF.type, ex("Dog")))
    g.add((ex("knows"), RDF.type, OWL.IrreflexiveProperty))
    g.add((ex("bob"), ex("knows"), ex("bob")))
    g.add((ex("Alive"), OWL.complementOf, ex("Dead")))
    g.add((ex("odd"), RDF.type, ex("Alive")))
    g.add((ex("odd"), RDF.type, ex("Dead")))
    result = closure(g)
    assert any(m.startswith("cax-dw") and "odd" in m for m in result.inconsistencies)
    assert any(m.startswith("cls-com") and "odd" in m and "Alive" in m for m in result.inconsistencies)
    assert any(m.startswith("prp-irp") for m in result.inconsistencies)


def test_a_literal_that_does_not_match_its_datatype_is_an_error() -> None:
    g = Graph()
    g.add((ex("rex"), ex("age"), Literal("five", datatype=XSD.integer)))
    assert closure(g).errors


# ------------------------------------------------------------------ random graphs against owlrl

CLASSES = [ex(f"C{i}") for i in range(4)]
PROPS = [ex(f"p{i}") for i in range(3)]
PEOPLE = [ex(f"i{i}") for i in range(4)]
CHARACTERISTICS = [OWL.FunctionalProperty, OWL.InverseFunctionalProperty, OWL.SymmetricProperty,
                   OWL.TransitiveProperty, OWL.ObjectProperty]  # fmt: skip

schema_triple = st.one_of(
    st.tuples(st.sampled_from(CLASSES), st.sampled_from([RDFS.subClassOf, OWL.equivalentClass]),
              st.sampled_from(CLASSES)),
    st.tuples(st.sampled_from(PROPS), st.sampled_from([RDFS.subPropertyOf, OWL.equivalentProperty, OWL.inverseOf]),
              st.sampled_from(PROPS)),
    st.tuples(st.sampled_from(PROPS), st.sampled_from([RDFS.domain, RDFS.range]), st.sampled_from(CLASSES)),
    st.tuples(st.sampled_from(PROPS), st.just(RDF.type), st.sampled_from(CHARACTERISTICS)),
    st.tuples(st.sampled_from(CLASSES), st.just(RDF.type), st.just(OWL.Class)),
)  # fmt: skip
data_triple = st.one_of(
    st.tuples(st.sampled_from(PEOPLE), st.sampled_from(PROPS), st.sampled_from(PEOPLE)),
    st.tuples(st.sampled_from(PEOPLE), st.just(RDF.type), st.sampled_from(CLASSES)),
)
restriction = st.tuples(
    st.sampled_from([OWL.someValuesFrom, OWL.allValuesFrom, OWL.hasValue, OWL.maxCardinality]),
    st.sampled_from(PROPS),
    st.sampled_from(CLASSES),
    st.sampled_from(PEOPLE),
    st.sampled_from(CLASSES),
)


def _add_restriction(g: Graph, spec: tuple[Node, ...], n: int) -> None:
    kind, prop, filler, value, named = spec
    r = BNode(f"r{n}")
    g.add((r, RDF.type, OWL.Restriction))
    g.add((r, OWL.onProperty, prop))
    if kind == OWL.hasValue:
        g.add((r, kind, value))
    elif kind == OWL.maxCardinality:
        g.add((r, kind, Literal(1, datatype=XSD.nonNegativeInteger)))
    else:
        g.add((r, kind, filler))
    g.add((named, OWL.equivalentClass, r))


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=st.lists(schema_triple, max_size=6),
    data=st.lists(data_triple, max_size=8),
    restrictions=st.lists(restriction, max_size=2),
    boolean=st.sampled_from([None, OWL.intersectionOf, OWL.unionOf]),
)
def test_random_graphs_match_owlrl(
    schema: list[Triple], data: list[Triple], restrictions: list[tuple[Node, ...]], boolean: URIRef | None
) -> None:
    g = Graph()
    for triple in schema + data:
        g.add(triple)
    for n, spec in enumerate(restrictions):
        _add_restriction(g, spec, n)
    if boolean is not None:
        head = BNode("list")
        Collection(g, head, [CLASSES[0], CLASSES[1]])
        g.add((ex("Combined"), boolean, head))
    assert_same_closure(g)
