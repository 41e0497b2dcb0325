"""Entity resolution by embedding similarity with the real packaged model (all-MiniLM-L6-v2), and the ontology's
functional properties and labels read by rdflib (issue 21)."""

from __future__ import annotations

from rdflib import Graph

from kg.extraction.entities import SIMILARITY, EntityResolver, Vocabulary
from kg.recall.embedder import SentenceTransformerEmbedder

TTL = """
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix ex: <http://example.org/> .
ex:hasCeo a owl:ObjectProperty, owl:FunctionalProperty ; rdfs:label "has chief executive" .
ex:headquarteredIn a owl:ObjectProperty ; rdfs:label "headquartered in" .
ex:Company a owl:Class ; rdfs:label "Company" ;
    rdfs:subClassOf [ a owl:Restriction ; owl:onProperty ex:headquarteredIn ; owl:maxCardinality 1 ] .
ex:tags a owl:DatatypeProperty .
"""


def test_a_near_name_resolves_by_embedding_and_a_different_one_is_new(model: SentenceTransformerEmbedder) -> None:
    resolver = EntityResolver(["acme_corporation", "paris"], [], Vocabulary(), model)
    near = resolver.resolve("Acme Corp.")
    assert (near.entity, near.method) == ("acme_corporation", "embedding")
    assert near.similarity is not None and near.similarity >= SIMILARITY
    other = resolver.resolve("Lyon")
    assert (other.entity, other.method) == ("lyon", "new")


def test_the_ontology_names_properties_labels_and_functional_ones() -> None:
    vocab = Vocabulary.from_graph(Graph().parse(data=TTL, format="turtle"))
    assert vocab.predicate("has chief executive") == "hasCeo"
    assert vocab.predicate("headquartered in") == "headquarteredIn"
    assert vocab.predicate("likes to eat") == "likesToEat"  # no property fits: camelCase
    assert vocab.is_functional("hasCeo") and vocab.is_functional("headquarteredIn")
    assert not vocab.is_functional("tags") and vocab.is_functional("livesIn")  # the default list
    assert vocab.labels["company"] == "Company"
