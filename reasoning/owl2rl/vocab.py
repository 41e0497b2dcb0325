"""The RDF, RDFS and OWL terms the OWL 2 RL rules name, interned once per run."""

from __future__ import annotations

from dataclasses import dataclass, fields

from rdflib import OWL, RDF, RDFS, URIRef

from reasoning.owl2rl.store import Terms

#: Field name -> IRI of every vocabulary term a rule names.
IRIS: dict[str, URIRef] = {
    "type": RDF.type, "first": RDF.first, "rest": RDF.rest, "nil": RDF.nil, "property": RDF.Property,
    "sco": RDFS.subClassOf, "spo": RDFS.subPropertyOf, "domain": RDFS.domain, "range": RDFS.range,
    "datatype": RDFS.Datatype,
    "same_as": OWL.sameAs, "different_from": OWL.differentFrom, "eqc": OWL.equivalentClass,
    "eqp": OWL.equivalentProperty, "inverse_of": OWL.inverseOf, "klass": OWL.Class, "thing": OWL.Thing,
    "nothing": OWL.Nothing, "object_property": OWL.ObjectProperty, "datatype_property": OWL.DatatypeProperty,
    "annotation_property": OWL.AnnotationProperty,
    "functional": OWL.FunctionalProperty, "inverse_functional": OWL.InverseFunctionalProperty,
    "symmetric": OWL.SymmetricProperty, "asymmetric": OWL.AsymmetricProperty,
    "transitive": OWL.TransitiveProperty, "irreflexive": OWL.IrreflexiveProperty,
    "chain": OWL.propertyChainAxiom, "disjoint_property": OWL.propertyDisjointWith,
    "intersection_of": OWL.intersectionOf, "union_of": OWL.unionOf, "complement_of": OWL.complementOf,
    "one_of": OWL.oneOf, "some_values": OWL.someValuesFrom, "all_values": OWL.allValuesFrom,
    "has_value": OWL.hasValue, "on_property": OWL.onProperty, "on_class": OWL.onClass,
    "max_cardinality": OWL.maxCardinality, "max_qualified": OWL.maxQualifiedCardinality,
    "disjoint_with": OWL.disjointWith, "has_key": OWL.hasKey, "all_different": OWL.AllDifferent,
    "all_disjoint_classes": OWL.AllDisjointClasses, "members": OWL.members,
    "distinct_members": OWL.distinctMembers,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Vocab:
    """The integer of each vocabulary term in one run's :class:`Terms`."""

    type: int
    first: int
    rest: int
    nil: int
    property: int
    sco: int
    spo: int
    domain: int
    range: int
    datatype: int
    same_as: int
    different_from: int
    eqc: int
    eqp: int
    inverse_of: int
    klass: int
    thing: int
    nothing: int
    object_property: int
    datatype_property: int
    annotation_property: int
    functional: int
    inverse_functional: int
    symmetric: int
    asymmetric: int
    transitive: int
    irreflexive: int
    chain: int
    disjoint_property: int
    intersection_of: int
    union_of: int
    complement_of: int
    one_of: int
    some_values: int
    all_values: int
    has_value: int
    on_property: int
    on_class: int
    max_cardinality: int
    max_qualified: int
    disjoint_with: int
    has_key: int
    all_different: int
    all_disjoint_classes: int
    members: int
    distinct_members: int

    @classmethod
    def intern(cls, terms: Terms) -> Vocab:
        """Intern every vocabulary term in ``terms``."""
        return cls(**{f.name: terms.id(IRIS[f.name]) for f in fields(cls)})
