"""OWL 2 RL closure of a set of RDF triples in mabos's own engine.

``closure(triples)`` interns the terms, adds the profile's one-time triples (cls-thing, cls-nothing1, prp-ap
and the datatype rules dt-type1/2 as the reference implementation, owlrl, applies them), then runs the
per-triple rules (:mod:`reasoning.owl2rl.rules`) until the work queue is empty and the whole-store rules
(:mod:`reasoning.owl2rl.slow`) until neither adds a triple. Equality is kept as representatives and
expanded on output (:meth:`reasoning.owl2rl.store.TripleStore.expand`).

Example:
    >>> from rdflib import OWL, RDF, RDFS, URIRef
    >>> ex = "http://example.org/"
    >>> dog, animal, rex = URIRef(ex + "Dog"), URIRef(ex + "Animal"), URIRef(ex + "rex")
    >>> result = closure([(dog, RDFS.subClassOf, animal), (rex, RDF.type, dog)])
    >>> (rex, RDF.type, animal) in result.triples()
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from owlrl.AxiomaticTriples import OWLRL_Datatypes_Disjointness
from owlrl.DatatypeHandling import AltXSDToPYTHON
from owlrl.OWLRL import OWLRL_Annotation_properties
from owlrl.XsdDatatypes import OWL_Datatype_Subsumptions, OWL_RL_Datatypes
from rdflib import OWL, RDF, RDFS, Literal
from rdflib.term import Node

from reasoning.owl2rl.rules import Rules
from reasoning.owl2rl.slow import inconsistencies, slow_pass
from reasoning.owl2rl.store import Terms, TripleStore
from reasoning.owl2rl.vocab import Vocab

RdfTriple = tuple[Node, Node, Node]


@dataclass
class Closure:
    """The result of one run: the closure (expanded on demand), what failed to hold, and figures."""

    store: TripleStore
    input_count: int
    seconds: float
    rounds: int
    inconsistencies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def triples(self) -> set[RdfTriple]:
        """Every triple of the closure (input included) as RDF terms."""
        node = self.store.terms.node
        return {(node(s), node(p), node(o)) for s, p, o in self.store.expand()}

    def iter_ids(self) -> Iterator[tuple[int, int, int]]:
        """The closure as interned integers (cheaper than :meth:`triples` for counting)."""
        return self.store.expand()

    @property
    def stored(self) -> int:
        """Triples held (one per equality class: before expansion)."""
        return self.store.size


def _one_time(terms: Terms, triples: list[tuple[int, int, int]], errors: list[str]) -> list[tuple[int, int, int]]:
    """cls-thing, cls-nothing1, prp-ap and the datatype rules, as owlrl applies them before its cycles."""
    t = terms.id
    out = [(t(OWL.Thing), t(RDF.type), t(OWL.Class)), (t(OWL.Nothing), t(RDF.type), t(OWL.Class))]
    out += [(t(prop), t(RDF.type), t(OWL.AnnotationProperty)) for prop in OWLRL_Annotation_properties]
    return out + _datatypes(terms, triples, errors)


def _literal_types(terms: Terms, errors: list[str]) -> dict[int, Node]:
    """dt-type2: each literal of an OWL 2 RL datatype has that type (and must match it: dt-not-type)."""
    rl_types = set(OWL_RL_Datatypes)
    implicit: dict[int, Node] = {}
    for number in terms.literals:
        lit = terms.node(number)
        if isinstance(lit, Literal) and lit.datatype is not None and lit.datatype in rl_types:
            implicit[number] = lit.datatype
            try:
                AltXSDToPYTHON.get(lit.datatype, str)(str(lit))
            except ValueError:
                errors.append(f"dt-not-type: the literal {lit!r} does not match its datatype {lit.datatype}")
    return implicit


def _datatypes(terms: Terms, triples: list[tuple[int, int, int]], errors: list[str]) -> list[tuple[int, int, int]]:
    """dt-type1/2, the datatype subsumptions and the disjointness of the datatypes in use."""
    t = terms.id
    type_id, same_id, datatype = t(RDF.type), t(OWL.sameAs), t(RDFS.Datatype)
    implicit = _literal_types(terms, errors)
    used: set[Node] = set(implicit.values())
    explicit: dict[int, set[Node]] = {}
    rl_ids = {t(dt) for dt in OWL_RL_Datatypes}
    for s, p, o in triples:
        if p == type_id and o in rl_ids:
            used.add(terms.node(o))
            if s not in implicit:
                explicit.setdefault(s, set()).add(terms.node(o))
    for s, p, o in triples:
        if p == same_id:
            if o in implicit:
                explicit.setdefault(s, set()).add(implicit[o])
            if o in explicit:
                explicit.setdefault(s, set()).add(terms.node(o))
            if s in explicit:
                explicit.setdefault(o, set()).add(terms.node(s))
    out = [(number, type_id, t(dt)) for number, dt in implicit.items()]
    out += [(t(dt), type_id, datatype) for dt in OWL_RL_Datatypes]
    out += [(t(dt), type_id, datatype) for dts in explicit.values() for dt in dts]
    for number, dts in [*explicit.items(), *((n, {d}) for n, d in implicit.items())]:
        for dt in dts:
            for wider in OWL_Datatype_Subsumptions.get(dt, ()):
                out += [(number, type_id, t(wider)), (t(wider), type_id, datatype)]
                used.add(wider)
    out += [(t(a), t(p), t(b)) for a, p, b in OWLRL_Datatypes_Disjointness if a in used and b in used]
    return out


def closure(triples: Iterable[RdfTriple], *, max_rounds: int = 1_000) -> Closure:
    """The OWL 2 RL closure of ``triples`` (any iterable of RDF term triples, an rdflib Graph included)."""
    start = time.perf_counter()
    terms = Terms()
    vocab = Vocab.intern(terms)
    t = terms.id
    encoded = [(t(s), t(p), t(o)) for s, p, o in triples]
    store = TripleStore(terms, vocab.same_as)
    rules = Rules(store, vocab)
    store.on_merge = rules.clear_caches
    errors: list[str] = []
    store.load(encoded)
    store.load(_one_time(terms, encoded, errors))
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        rules.run()
        if slow_pass(rules) == 0 and not store.queue:
            break
    return Closure(
        store=store,
        input_count=len(encoded),
        seconds=time.perf_counter() - start,
        rounds=rounds,
        inconsistencies=inconsistencies(rules),
        errors=errors,
    )
