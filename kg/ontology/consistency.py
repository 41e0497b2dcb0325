"""SHACL conformance and OWL 2 RL consistency of ontology nodes, on the part of the ontology that matters.

A full OWL 2 RL closure of the base ontologies takes seconds with owlrl (pure Python, every rule over
every triple per cycle), so a check closes only what can matter:

* the *module* of a node: its own triples, everything reachable from them (superclasses, domains, ranges,
  restriction and list nodes ...) and the axioms that point at a reached node from outside
  (``owl:disjointWith``, ``owl:equivalentClass``, list membership ...);
* and only for nodes whose module contains an axiom that can make an ontology inconsistent in OWL 2 RL
  (disjointness, complements, ``owl:Nothing``, irreflexive or asymmetric properties, ``owl:differentFrom``,
  maximum cardinalities, negative assertions: :data:`CONSTRAINT_PREDICATES`, :data:`CONSTRAINT_TYPES`).
  Without one, no OWL 2 RL rule can derive an inconsistency, so there is nothing to close;
* without annotation triples (labels, definitions, provenance ...), which no OWL 2 RL rule reads.

A schema without individuals is always consistent, so each class gets a *probe* member and each property a
probe assertion: a probe that ends up in two disjoint classes (or in ``owl:Nothing``) shows the class or
property cannot have members. The result is "no OWL 2 RL inconsistency with one member per node", reported
as owlrl's messages (probes are named ``urn:mabos:probe:<node>``), plus any ill-typed literal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import owlrl
from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from kg.ontology.files import compact

#: Axioms followed *into* a reached node as well as out of it.
INCOMING = frozenset({
    OWL.disjointWith, OWL.equivalentClass, OWL.equivalentProperty, OWL.sameAs, OWL.inverseOf,
    OWL.propertyDisjointWith, OWL.complementOf, OWL.members, OWL.distinctMembers, OWL.disjointUnionOf,
    OWL.unionOf, OWL.intersectionOf, RDF.first, RDF.rest,
})  # fmt: skip
#: Predicates of the axioms OWL 2 RL's inconsistency rules need (eq-diff, prp-pdw, prp-npa, cls-com,
#: cls-maxc, cls-maxqc, cax-dw, cax-adc and the list-based forms).
CONSTRAINT_PREDICATES = frozenset({
    OWL.disjointWith, OWL.complementOf, OWL.propertyDisjointWith, OWL.differentFrom, OWL.sourceIndividual,
    OWL.maxCardinality, OWL.maxQualifiedCardinality, OWL.members, OWL.distinctMembers, OWL.disjointUnionOf,
})  # fmt: skip
#: Types that make a node a constraint (prp-irp, prp-asyp, cax-adc, prp-adp, eq-diff2/3, prp-npa).
CONSTRAINT_TYPES = frozenset({
    OWL.IrreflexiveProperty, OWL.AsymmetricProperty, OWL.AllDisjointClasses, OWL.AllDisjointProperties,
    OWL.AllDifferent, OWL.NegativePropertyAssertion,
})  # fmt: skip
_VOCABULARY = tuple(str(ns) for ns in (RDF, RDFS, OWL, XSD))
_ERROR = URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")  # where owlrl writes inconsistencies
PROBE = "urn:mabos:probe:"

Sources = Graph | Sequence[Graph]


def _graphs(graphs: Sources) -> list[Graph]:
    return [graphs] if isinstance(graphs, Graph) else list(graphs)


def _expandable(node: Node) -> bool:
    return isinstance(node, BNode) or (isinstance(node, URIRef) and not str(node).startswith(_VOCABULARY))


def module(graphs: Sources, seeds: Iterable[Node]) -> Graph:
    """The triples of ``graphs`` (read as one) that can affect the seeds' members (see the module docstring)."""
    sources = _graphs(graphs)
    out = Graph(bind_namespaces="none")
    todo = [s for s in seeds if _expandable(s)]
    seen = set(todo)
    while todo:
        node = todo.pop()
        reached = []
        for graph in sources:
            for s, p, o in graph.triples((node, None, None)):
                out.add((s, p, o))
                reached.append(o)
            for s, p, o in graph.triples((None, None, node)):
                if p in INCOMING:
                    out.add((s, p, o))
                    reached.append(s)
        for other in reached:
            if other not in seen and _expandable(other):
                seen.add(other)
                todo.append(other)
    return out


def constrained(graphs: Sources, seeds: Iterable[Node]) -> set[Node]:
    """The seeds whose module holds an axiom that can make OWL 2 RL inconsistent.

    Walks backwards from the nodes of those axioms: a node reaches them if it points at one (any predicate)
    or one of them points at it through an :data:`INCOMING` predicate, the reverse of :func:`module`.
    """
    sources = _graphs(graphs)
    anchors: set[Node] = set()
    for graph in sources:
        for s, p, o in graph:
            if p in CONSTRAINT_PREDICATES or (p == RDF.type and o in CONSTRAINT_TYPES) or o == OWL.Nothing:
                anchors.update([s, o] if p in INCOMING else [s])
    todo = [a for a in anchors if _expandable(a)]
    reach = set(todo)
    while todo:
        node = todo.pop()
        for graph in sources:
            found = list(graph.subjects(None, node))
            found += [o for p, o in graph.predicate_objects(node) if p in INCOMING]
            for other in found:
                if other not in reach and _expandable(other):
                    reach.add(other)
                    todo.append(other)
    return {s for s in seeds if s in reach}


def probes(graph: Graph, nodes: Iterable[Node]) -> list[tuple[Node, Node, Node]]:
    """One member per class, one assertion per property (named ``urn:mabos:probe:<node>``)."""
    triples: list[tuple[Node, Node, Node]] = []
    for node in nodes:
        name = URIRef(PROBE + str(node))
        if (node, RDF.type, OWL.Class) in graph:
            triples.append((name, RDF.type, node))
        elif (node, RDF.type, OWL.ObjectProperty) in graph:
            triples.append((name, node, URIRef(PROBE + "value-of-" + str(node))))
        elif (node, RDF.type, OWL.DatatypeProperty) in graph:
            triples.append((name, node, Literal("probe")))
    return triples


def _without_annotations(graph: Graph) -> Graph:
    """``graph`` less the literal-valued triples of predicates no OWL 2 RL rule reads."""
    data = {p for p in graph.subjects(RDF.type, OWL.DatatypeProperty)}
    kept = Graph(bind_namespaces="none")
    for s, p, o in graph:
        if not isinstance(o, Literal) or p in data or (str(p).startswith(_VOCABULARY) and p not in _ANNOTATIONS):
            kept.add((s, p, o))
    return kept


_ANNOTATIONS = frozenset({RDFS.label, RDFS.comment, RDFS.seeAlso, RDFS.isDefinedBy, OWL.versionInfo})


def owl_rl_problems(graphs: Sources, nodes: Iterable[Node]) -> list[str]:
    """Inconsistencies OWL 2 RL finds among ``nodes`` with their probes, and ill-typed literals (sorted)."""
    nodes = list(nodes)
    scope = module(graphs, nodes)
    problems = {f"ill-typed literal {o!r} on {s}" for s, _, o in scope if isinstance(o, Literal) and o.ill_typed}
    relevant = constrained(graphs, nodes)
    if relevant:
        closed = _without_annotations(module(graphs, relevant))
        for triple in probes(closed, sorted(relevant, key=str)):
            closed.add(triple)
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(closed)
        problems.update(" ".join(str(o).split()) for o in closed.objects(None, _ERROR))
    return sorted(problems)


def shacl_problems(
    data: Graph, shapes: Graph, focus: Iterable[Node] | None = None, prefixes: Mapping[str, str] | None = None
) -> list[str]:
    """SHACL violations of ``data`` (only those whose focus node is in ``focus`` when given), sorted.

    Each reads ``<focus node> <path>: <message>`` with IRIs compacted by ``prefixes``.
    """
    import pyshacl  # noqa: PLC0415 - pyshacl pulls rdflib's SPARQL parser: loaded on first use, not at CLI start

    _, report, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none", allow_infos=True,
                                    allow_warnings=True)  # fmt: skip
    wanted = None if focus is None else set(focus)
    found = set()
    for result in report.subjects(RDF.type, SH.ValidationResult):
        node = report.value(result, SH.focusNode)
        if (wanted is not None and node not in wanted) or report.value(result, SH.resultSeverity) != SH.Violation:
            continue
        path = report.value(result, SH.resultPath)
        message = report.value(result, SH.resultMessage)
        where = _name(node, prefixes) + (f" {_name(path, prefixes)}" if path is not None else "")
        found.add(f"{where}: {message}" if message is not None else where)
    return sorted(found)


def _name(node: Node | None, prefixes: Mapping[str, str] | None) -> str:
    return compact(str(node), prefixes) if prefixes and isinstance(node, URIRef) else str(node)


__all__ = [
    "CONSTRAINT_PREDICATES",
    "CONSTRAINT_TYPES",
    "INCOMING",
    "PROBE",
    "constrained",
    "module",
    "owl_rl_problems",
    "probes",
    "shacl_problems",
]
