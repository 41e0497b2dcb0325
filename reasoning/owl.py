"""OWL 2 RL over an agent's facts: the service behind ``mabos reason owl-rl``.

The ontology files of the workspace and the agent's readable facts become one rdflib graph; owlrl
computes its OWL 2 RL closure; the *new* class memberships (``rdf:type``) and property assertions come
back as facts (source ``owl-rl``, derived). See ``docs/owl-rl.md``.

Terms map to RDF nodes as :mod:`kg.rdf.terms` says (the mapping RDF import shares): aliases such as ``type`` and
``subClassOf`` in predicate position, full IRIs as themselves, CURIEs of a prefix the ontology binds (or
rdf/rdfs/owl/xsd) expanded and compacted back, any other term ``urn:mabos:<term>``, percent-encoded.

Objects of literal facts become :class:`rdflib.Literal` (``xsd:integer`` / ``xsd:decimal`` when the text is
such a number in canonical form, a plain string otherwise) and come back as their lexical form. Within one
run, an IRI that an input fact spelled in some way (a full IRI inside a bound namespace, say) comes back
with that same spelling (:class:`TermMap` remembers it).

owlrl records no provenance: the ``support`` of an :class:`Entailment` is the input facts that mention its
subject or object (at most :data:`MAX_SUPPORT`), the facts about the same individuals, not a proof.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rdflib import OWL, RDF, RDFS, XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from kg.errors import InputError
from kg.models import MAX_OBJECT, MAX_TERM, LiveTriple, agent_scope
from kg.models.request import requested
from kg.rdf import terms as rdf_terms
from kg.rdf.terms import CORE_PREFIXES, PREDICATE_ALIASES, PREDICATE_NAMES, PREFIX, iri_to_term
from kg.workspace import Workspace
from reasoning.owl_ontology import load_ontology
from reasoning.owl_requests import Entailment, OwlRlReport, OwlRlRequest

#: The source of facts written by :func:`run_owl_rl` (and the mark its truth maintenance looks for).
OWL_RL_SOURCE = "owl-rl"
#: The OWL 2 RL engines: our own (default) and the owlrl library (the reference implementation).
ENGINES = ("mabos", "owlrl")
#: At most this many supporting fact uids per entailment.
MAX_SUPPORT = 50
#: Entailments in these namespaces (as class, predicate or subject) are RDF/OWL bookkeeping, never facts.
BUILTIN_NAMESPACES: tuple[str, ...] = (str(RDF), str(RDFS), str(OWL), str(XSD))
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)\Z")
_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+\Z")
_ERROR = URIRef("http://www.daml.org/2002/03/agents/agent-ont#error")  # where owlrl puts inconsistencies


# --------------------------------------------------------------------------------------------- terms


def _prefixes(graph: Graph) -> dict[str, str]:
    """Usable prefix -> namespace bindings of a graph, rdf/rdfs/owl/xsd always included."""
    bound = {p: str(ns) for p, ns in graph.namespaces() if PREFIX.match(p) and p not in ("http", "https", "urn")}
    return {**bound, **CORE_PREFIXES}


def term_to_iri(term: str, prefixes: Mapping[str, str] = CORE_PREFIXES, *, predicate: bool = False) -> URIRef:
    """The IRI of a fact term as an rdflib node (:func:`kg.rdf.terms.term_to_iri`)."""
    return URIRef(rdf_terms.term_to_iri(term, prefixes, predicate=predicate))


def literal(text: str) -> Literal:
    """A literal object: ``xsd:integer``/``xsd:decimal`` for canonical numbers, else a plain string."""
    for pattern, datatype in ((_INTEGER, XSD.integer), (_DECIMAL, XSD.decimal)):
        if pattern.match(text) and str(typed := Literal(text, datatype=datatype)) == text:
            return typed
    return Literal(text)


class TermMap:
    """Fact terms <-> RDF nodes for one closure, remembering how the input facts spelled each IRI."""

    def __init__(self, prefixes: Mapping[str, str]) -> None:
        self.prefixes = dict(prefixes)
        self.spelling: dict[URIRef, str] = {}

    def iri(self, term: str, *, predicate: bool = False) -> URIRef:
        """The IRI of ``term``; remembered so that it comes back spelled the same way."""
        iri = term_to_iri(term, self.prefixes, predicate=predicate)
        if not (predicate and term in PREDICATE_ALIASES):
            self.spelling.setdefault(iri, term)
        return iri

    def node(self, obj: str, object_kind: str) -> Node:
        """The RDF object of a fact: a literal or an IRI."""
        return literal(obj) if object_kind == "literal" else self.iri(obj)

    def term(self, iri: URIRef, *, predicate: bool = False) -> str:
        """The fact term of an IRI."""
        if predicate and str(iri) in PREDICATE_NAMES:
            return PREDICATE_NAMES[str(iri)]
        return self.spelling.get(iri) or iri_to_term(iri, self.prefixes, predicate=predicate)


# --------------------------------------------------------------------------------------------- closure


@dataclass
class Closure:
    """What one owlrl run gave: the entailments and the size of the graph around it."""

    entailments: list[Entailment]
    triples_before: int
    triples_after: int
    inconsistencies: list[str] = field(default_factory=list)


def _builtin(node: Node) -> bool:
    return isinstance(node, URIRef) and str(node).startswith(BUILTIN_NAMESPACES)


def _wanted(s: Node, p: Node, o: Node) -> bool:
    """A class membership or property assertion between named resources, outside the RDF/OWL vocabulary."""
    if not isinstance(s, URIRef) or isinstance(o, BNode) or _builtin(s):
        return False
    if p == RDF.type:
        return isinstance(o, URIRef) and not _builtin(o)
    return not _builtin(p)


def _storable(subject: str, predicate: str, obj: str) -> bool:
    terms = ((subject, MAX_TERM), (predicate, MAX_TERM), (obj, MAX_OBJECT))
    return all(text.strip() and len(text) <= limit and "\x00" not in text for text, limit in terms)


def compute_closure(facts: Sequence[LiveTriple], ontology: Graph, *, engine: str = "mabos") -> Closure:
    """:func:`owl_rl_closure` with the graph sizes and the inconsistencies found.

    ``engine`` is ``mabos`` (our own engine, :mod:`reasoning.owl2rl`, the default) or ``owlrl`` (the reference
    implementation, about a hundred times slower); both give the same closure.
    """
    if engine not in ENGINES:
        raise InputError("engine", f"must be one of {', '.join(ENGINES)}")
    terms = TermMap(_prefixes(ontology))
    graph = Graph(bind_namespaces="none")
    graph += ontology
    mentions: dict[Node, list[int]] = {}
    for index, fact in enumerate(facts):
        s, o = terms.iri(fact.subject), terms.node(fact.object, fact.object_kind)
        graph.add((s, terms.iri(fact.predicate, predicate=True), o))
        for node in {s, o}:
            mentions.setdefault(node, []).append(index)
    before = set(graph)
    if engine == "owlrl":
        import owlrl  # noqa: PLC0415 - the reference engine, on request only

        owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
        after: set[tuple[Node, Node, Node]] = set(graph)
        errors = sorted(str(o) for _, _, o in graph.triples((None, _ERROR, None)))
    else:
        from reasoning import owl2rl  # noqa: PLC0415 - the closure, not the term mapping fact import uses

        result = owl2rl.closure(graph)
        after = result.triples()
        errors = sorted(result.inconsistencies + result.errors)
    entailments = [
        entailment
        for s, p, o in after
        if (s, p, o) not in before and _wanted(s, p, o)
        for entailment in _entailment(terms, facts, mentions, (s, p, o))
    ]
    entailments.sort(key=lambda e: e.key)
    return Closure(entailments, len(before), len(after), errors)


def _entailment(
    terms: TermMap, facts: Sequence[LiveTriple], mentions: Mapping[Node, list[int]], triple: tuple[Node, Node, Node]
) -> Iterable[Entailment]:
    """Zero or one entailment: none when no input fact mentions it (pure ontology) or it cannot be a fact."""
    s, p, o = triple
    indexes = sorted({i for node in (s, o) for i in mentions.get(node, ())})[:MAX_SUPPORT]
    subject, predicate = terms.term(URIRef(str(s))), terms.term(URIRef(str(p)), predicate=True)
    obj = str(o) if isinstance(o, Literal) else terms.term(URIRef(str(o)))
    if not indexes or not _storable(subject, predicate, obj):
        return []
    support = [facts[i] for i in indexes]
    kind = "literal" if isinstance(o, Literal) else "entity"
    return [Entailment(subject=subject, predicate=predicate, object=obj, object_kind=kind,
                       support=[f.uid for f in support], confidence=min(f.confidence for f in support))]  # fmt: skip


def owl_rl_closure(facts: Sequence[LiveTriple], ontology: Graph, *, engine: str = "mabos") -> list[Entailment]:
    """The new class and property facts OWL 2 RL draws from ``ontology`` plus ``facts``.

    Kept: ``rdf:type`` triples whose class lies outside rdf/rdfs/owl/xsd, and triples whose predicate lies
    outside them; dropped: blank nodes, literal subjects, subjects in those namespaces, triples already in
    the graph before the closure (so every input fact, compared as RDF), and triples no input fact mentions.
    owlrl gives no provenance: ``support`` is the input facts about the same subject or object, not a proof.
    ``ontology`` is not modified.
    """
    return compute_closure(facts, ontology, engine=engine).entailments


# --------------------------------------------------------------------------------------------- service


def _inputs(ws: Workspace, agent_id: str) -> tuple[list[LiveTriple], list[LiveTriple]]:
    """The agent's readable live facts valid now except owl-rl's, and owl-rl's own facts in its scope."""
    scopes, now = ws.scopes.readable(agent_id), ws.clock.now()
    asserted = list(ws.ports.facts.live_triples(scopes=scopes, valid_at=now, derived=False))
    derived = list(ws.ports.facts.live_triples(scopes=scopes, valid_at=now, derived=True))
    ours: set[str] = set()
    for start in range(0, len(derived), 500):
        found = ws.ports.facts.get_many(t.uid for t in derived[start : start + 500])
        ours |= {uid for uid, fact in found.items() if fact.source == OWL_RL_SOURCE}
    own = agent_scope(agent_id)
    earlier = [t for t in derived if t.uid in ours and t.scope == own]
    return asserted + [t for t in derived if t.uid not in ours], earlier


def run_owl_rl(ws: Workspace, agent_id: str, request: OwlRlRequest | None = None, /, *,
               ontology: Sequence[Path] = (), **fields: Any) -> OwlRlReport:  # fmt: skip
    """OWL 2 RL over the workspace ontology (plus ``ontology`` files, the operator's) and the facts ``agent_id``
    can read, as the request (or its fields as keywords: ``dry_run``, ``engine``, ``limit``) asks.

    Input: the agent's readable live facts valid now, asserted and derived, except those owl-rl wrote
    itself. Unless ``dry_run``, every entailment is written to the agent's own scope (source ``owl-rl``,
    ``derived_from`` = its support, confidence = the lowest of the support) and earlier owl-rl facts of that
    scope that no longer follow are retracted. A second run changes nothing. The report lists the first
    ``limit`` entailments; ``entailed`` counts them all.

    Raises:
        InputError: an ontology file is missing or does not parse (nothing is written).
        NotFoundError: unknown agent.
    """
    asked = requested(OwlRlRequest, request, fields)
    dry_run = asked.dry_run
    started = time.perf_counter()
    own = agent_scope(agent_id)
    ws.scopes.check_write(agent_id, own)
    graph = load_ontology(ws.path, ontology)
    facts, earlier = _inputs(ws, agent_id)
    closure = compute_closure(facts, graph, engine=asked.engine)
    report = OwlRlReport(agent_id=agent_id, dry_run=dry_run, input_facts=len(facts), ontology_triples=len(graph),
                         entailed=len(closure.entailments), triples_before=closure.triples_before,
                         triples_after=closure.triples_after, inconsistencies=closure.inconsistencies,
                         entailments=closure.entailments[: asked.limit])  # fmt: skip
    keys = {e.key for e in closure.entailments}
    stale = [t.uid for t in earlier if (t.subject, t.predicate, t.object) not in keys]
    if dry_run:
        existing = {(t.subject, t.predicate, t.object) for t in earlier}
        report.unchanged = len(keys & existing)
        report.created = len(keys) - report.unchanged
        report.retracted = sorted(stale)
    else:
        _write(ws, agent_id, closure.entailments, report)
        if stale:
            report.retracted = ws.facts.retract(agent_id, uids=stale, scope=own)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _write(ws: Workspace, agent_id: str, entailments: Sequence[Entailment], report: OwlRlReport) -> None:
    inputs = [
        {"subject": e.subject, "predicate": e.predicate, "object": e.object, "object_kind": e.object_kind,
         "confidence": e.confidence, "source": OWL_RL_SOURCE, "scope": agent_scope(agent_id),
         "derived_from": e.support}
        for e in entailments
    ]  # fmt: skip
    written = ws.facts.assert_many(agent_id, inputs, keep_uids=True)
    report.created, report.updated, report.unchanged = written.created, written.updated, written.unchanged
    for entailment, uid in zip(entailments, written.uids, strict=True):
        entailment.uid = uid


__all__ = [
    "BUILTIN_NAMESPACES",
    "MAX_SUPPORT",
    "OWL_RL_SOURCE",
    "Closure",
    "Entailment",
    "OwlRlReport",
    "TermMap",
    "compute_closure",
    "literal",
    "load_ontology",
    "owl_rl_closure",
    "run_owl_rl",
    "term_to_iri",
]
