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

from collections.abc import Collection, Iterable, Mapping, Sequence

import owlrl
from rdflib import OWL, RDF, RDFS, SH, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from kg.ontology.files import compact
from kg.ontology.memo import Memo, as_graph, graph_digest

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
#: OWL 2 RL messages by digest of the closed graph; SHACL violations by digests of (data, shapes).
_CLOSURES: Memo[tuple[str, ...]] = Memo("owl_rl")
_VIOLATIONS: Memo[tuple[tuple[Node, Node | None, Node | None], ...]] = Memo("shacl")

Sources = Graph | Sequence[Graph]
Triple = tuple[Node, Node, Node]


def _graphs(graphs: Sources) -> list[Graph]:
    return [graphs] if isinstance(graphs, Graph) else list(graphs)


def _expandable(node: Node) -> bool:
    return isinstance(node, BNode) or (isinstance(node, URIRef) and not str(node).startswith(_VOCABULARY))


def module(graphs: Sources, seeds: Iterable[Node]) -> Graph:
    """The triples of ``graphs`` (read as one) that can affect the seeds' members (see the module docstring)."""
    return as_graph(module_triples(graphs, seeds))


def module_triples(graphs: Sources, seeds: Iterable[Node]) -> set[Triple]:
    """:func:`module` as a set of triples (no graph is built: checks whose result is remembered need none)."""
    sources = _graphs(graphs)
    out: set[Triple] = set()
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


def probes(graph: Graph | Collection[Triple], nodes: Iterable[Node]) -> list[Triple]:
    """One member per class, one assertion per property (named ``urn:mabos:probe:<node>``)."""
    triples: list[Triple] = []
    for node in nodes:
        name = URIRef(PROBE + str(node))
        if (node, RDF.type, OWL.Class) in graph:
            triples.append((name, RDF.type, node))
        elif (node, RDF.type, OWL.ObjectProperty) in graph:
            triples.append((name, node, URIRef(PROBE + "value-of-" + str(node))))
        elif (node, RDF.type, OWL.DatatypeProperty) in graph:
            triples.append((name, node, Literal("probe")))
    return triples


def _without_annotations(triples: set[Triple]) -> set[Triple]:
    """``triples`` less the literal-valued triples of predicates no OWL 2 RL rule reads."""
    data = {s for s, p, o in triples if p == RDF.type and o == OWL.DatatypeProperty}
    return {
        (s, p, o) for s, p, o in triples
        if not isinstance(o, Literal) or p in data or (str(p).startswith(_VOCABULARY) and p not in _ANNOTATIONS)
    }  # fmt: skip


_ANNOTATIONS = frozenset({RDFS.label, RDFS.comment, RDFS.seeAlso, RDFS.isDefinedBy, OWL.versionInfo})


def owl_rl_problems(graphs: Sources, nodes: Iterable[Node]) -> list[str]:
    """Inconsistencies OWL 2 RL finds among ``nodes`` with their probes, and ill-typed literals (sorted)."""
    nodes = list(nodes)
    scope = module_triples(graphs, nodes)
    problems = {f"ill-typed literal {o!r} on {s}" for s, _, o in scope if isinstance(o, Literal) and o.ill_typed}
    relevant = constrained(graphs, nodes)
    if relevant:
        closed = _without_annotations(module_triples(graphs, relevant))
        closed.update(probes(closed, sorted(relevant, key=str)))
        problems.update(_inconsistencies(closed))
    return sorted(problems)


def _inconsistencies(triples: set[Triple]) -> tuple[str, ...]:
    """owlrl's inconsistency messages once ``triples`` are closed (remembered by digest: :mod:`kg.ontology.memo`)."""
    key = graph_digest(triples)
    found = _CLOSURES.get(key)
    if found is None:
        closed = as_graph(triples)
        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(closed)
        found = tuple(sorted({" ".join(str(o).split()) for o in closed.objects(None, _ERROR)}))
        _CLOSURES.put(key, found)
    return found


def shacl_problems(
    data: Graph | Collection[Triple],
    shapes: Graph,
    focus: Iterable[Node] | None = None,
    prefixes: Mapping[str, str] | None = None,
) -> list[str]:
    """SHACL violations of ``data`` (a graph or its triples; only those whose focus node is in ``focus`` when
    given), sorted.

    Each reads ``<focus node> <path>: <message>`` with IRIs compacted by ``prefixes``.
    """
    wanted = None if focus is None else set(focus)
    found = set()
    for node, path, message in _violations(data, shapes):
        if wanted is not None and node not in wanted:
            continue
        where = _name(node, prefixes) + (f" {_name(path, prefixes)}" if path is not None else "")
        found.add(f"{where}: {message}" if message is not None else where)
    return sorted(found)


def _violations(data: Graph | Collection[Triple], shapes: Graph) -> tuple[tuple[Node, Node | None, Node | None], ...]:
    """(focus node, path, message) of every SHACL violation, remembered by the digests of data and shapes."""
    key = (graph_digest(data), graph_digest(shapes))
    found = _VIOLATIONS.get(key)
    if found is not None:
        return found
    import pyshacl  # noqa: PLC0415 - pyshacl pulls rdflib's SPARQL parser: loaded on first use, not at CLI start

    own = Graph(bind_namespaces="none")  # pyshacl adds RDFS/OWL axioms to its shapes graph: not to the caller's
    own += shapes
    _, report, _ = pyshacl.validate(as_graph(data), shacl_graph=own, inference="none", allow_infos=True,
                                    allow_warnings=True)  # fmt: skip
    results = [r for r in report.subjects(RDF.type, SH.ValidationResult)
               if report.value(r, SH.resultSeverity) == SH.Violation]  # fmt: skip
    found = tuple(tuple(report.value(r, p) for p in (SH.focusNode, SH.resultPath, SH.resultMessage)) for r in results)
    _VIOLATIONS.put(key, found)
    return found


def _name(node: Node | None, prefixes: Mapping[str, str] | None) -> str:
    return compact(str(node), prefixes) if prefixes and isinstance(node, URIRef) else str(node)


__all__ = [
    "CONSTRAINT_PREDICATES",
    "CONSTRAINT_TYPES",
    "INCOMING",
    "PROBE",
    "constrained",
    "module",
    "module_triples",
    "owl_rl_problems",
    "probes",
    "shacl_problems",
]
