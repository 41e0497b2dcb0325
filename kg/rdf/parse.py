"""RDF documents -> fact terms, parsed by pyoxigraph (Rust) and mapped as ``mabos reason owl-rl`` maps them.

:class:`TripleStream` yields compact ``(subject, predicate, object, datatype or "@" language)`` tuples
(:data:`Key`), duplicates merged, as pyoxigraph reads the documents; a malformed document raises an
:class:`~kg.errors.InputError` naming it when the reading reaches it (:mod:`kg.rdf.importer` stores the rows
as they come in one transaction that such an error rolls back). :func:`parse_documents` reads every document
before it returns. The mapping (docs/facts-bulk.md, "RDF term mapping") is the one the
rdflib parser gave before:

* IRIs through :func:`kg.rdf.terms.iri_to_term` with the core prefixes (each distinct IRI mapped once);
* blank nodes ``_:<label>`` with pyoxigraph's random labels (``rename_blank_nodes``), so two documents, or two
  imports, never share one;
* a literal's lexical form; a typed literal (neither a plain string nor language-tagged) is brought to rdflib's
  normal form (``"01"^^xsd:integer`` -> ``1``, ``"1"^^xsd:boolean`` -> ``true``), as rdflib's parsers did, so a
  graph imports to the same facts whichever parser read it (rdflib loads for the first such literal only).
  Empty or whitespace-only literals are skipped.

RDF/XML with a DOCTYPE or an entity declaration is refused before pyoxigraph reads it
(:func:`kg.limits.refuse_xml_dtd`): it expands internal entities ("billion laughs"), with no switch to stop it.
RDF/XML and JSON-LD nested more than :data:`kg.limits.MAX_NESTING` levels deep are refused as well
(:func:`kg.limits.refuse_deep_nesting`): its time (RDF/XML) or memory (JSON-LD) grows faster than the depth.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from typing import Any, NamedTuple

import pyoxigraph as ox

from kg.errors import InputError
from kg.facts_fast import gc_paused
from kg.limits import refuse_deep_nesting, refuse_xml_dtd
from kg.rdf.documents import SUFFIX_FORMATS, Key, RdfDocument, RdfFormat
from kg.rdf.terms import CORE_PREFIXES, NAMESPACE, iri_to_term

PARSERS: dict[str, ox.RdfFormat] = {
    "turtle": ox.RdfFormat.TURTLE,
    "nt": ox.RdfFormat.N_TRIPLES,
    "json-ld": ox.RdfFormat.JSON_LD,
    "xml": ox.RdfFormat.RDF_XML,
    "nquads": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
}
#: The formats whose nesting pyoxigraph pays for more than linearly, and the syntax that nests
#: (:func:`kg.limits.refuse_deep_nesting`; Turtle's and TriG's brackets and quoted triples cost it linear time).
NESTED: dict[str, str] = {"xml": "xml", "json-ld": "json"}
XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
#: The IRIs :func:`kg.rdf.terms.iri_to_term` may rewrite start with one of these; any other stays as it is.
MAPPED = (NAMESPACE, *CORE_PREFIXES.values())
MISSING: Any = object()


class Parsed(NamedTuple):
    """The distinct triples of some documents as fact terms, and how many had a blank literal object."""

    #: ``(subject, predicate, object, datatype or "@" language)``; the last is ``""`` for an entity object
    rows: list[Key]
    skipped: int

    @property
    def triples(self) -> int:
        """Distinct triples read (stored and skipped)."""
        return len(self.rows) + self.skipped


def normal_literal(text: str, datatype: str) -> str:
    """rdflib's normal lexical form of a typed literal (``text`` itself when it is not a valid one)."""
    from rdflib import Literal as RdfLiteral  # noqa: PLC0415 - only a typed literal needs rdflib (~0.2 s to load)
    from rdflib import URIRef  # noqa: PLC0415

    with warnings.catch_warnings():  # rdflib warns about some ill-typed forms; they stay as written
        warnings.simplefilter("ignore")
        return str(RdfLiteral(text, datatype=URIRef(datatype)))


class TermMapper:
    """pyoxigraph terms -> fact terms for one import, each distinct term mapped once."""

    def __init__(self) -> None:
        self.nodes: dict[ox.NamedNode | ox.BlankNode | ox.Triple, str] = {}  # a Triple is refused, never kept
        self.predicates: dict[ox.NamedNode, str] = {}
        #: literal -> (text, its datatype or "@" language: part of the duplicate key), None when blank
        self.literals: dict[ox.Literal, tuple[str, str] | None] = {}

    def node(self, node: ox.NamedNode | ox.BlankNode | ox.Triple) -> str:
        """The fact term of a subject or an IRI / blank node object."""
        if type(node) is ox.Triple:
            raise ValueError("a triple term (RDF 1.2 '<<( ... )>>') cannot be a fact's subject or object")
        if type(node) is ox.BlankNode:
            term = f"_:{node.value}"
        else:
            iri = node.value
            term = iri_to_term(iri) if iri.startswith(MAPPED) else iri  # most IRIs are themselves: skip the search
        self.nodes[node] = term
        return term

    def predicate(self, node: ox.NamedNode) -> str:
        """The fact term of a predicate (``rdf:type`` -> ``type`` ...)."""
        term = self.predicates[node] = iri_to_term(node.value, CORE_PREFIXES, predicate=True)
        return term

    def literal(self, node: ox.Literal) -> tuple[str, str] | None:
        """The lexical form of a literal and its datatype or language; None for an empty or blank one."""
        text, language = node.value, node.language
        if language is not None:
            mark = f"@{language}"
        else:
            mark = node.datatype.value
            if mark != XSD_STRING:
                text = normal_literal(text, mark)
        mapped = self.literals[node] = (text, mark) if text.strip() else None
        return mapped

    def read(self, quads: Iterator[ox.Quad], seen: set[Key], blank: set[tuple[str, str, ox.Literal]]) -> Iterator[Key]:
        """Yield each triple of ``quads`` not in ``seen`` (and add it; graph names are dropped); add those with a
        blank literal to ``blank`` instead.

        Duplicates merge as in one RDF graph: each distinct triple comes once, in the documents' order.
        """
        nodes, predicates, literals = self.nodes, self.predicates, self.literals
        add, missing = seen.add, MISSING
        last: Any = None  # the subject before (RDF/XML and Turtle give a subject's triples one after the other)
        s = ""
        for quad in quads:
            subject = quad.subject
            if subject != last:  # one comparison instead of hashing the same subject again
                last = subject
                s = nodes.get(subject) or self.node(subject)
            predicate, obj = quad.predicate, quad.object
            p = predicates.get(predicate) or self.predicate(predicate)
            if type(obj) is ox.Literal:
                mapped = literals.get(obj, missing)
                if mapped is missing:
                    mapped = self.literal(obj)
                if mapped is None:
                    blank.add((s, p, obj))
                    continue
                text, mark = mapped
                key = (s, p, text, mark)
            else:
                key = (s, p, nodes.get(obj) or self.node(obj), "")
            if key not in seen:
                add(key)
                yield key


def _quads(document: RdfDocument) -> Iterator[ox.Quad]:
    return ox.parse(
        document.content.encode(),  # bytes: a str that is not valid UTF-8 (a lone surrogate) fails here, clearly
        PARSERS[document.format],
        base_iri=document.base_iri,
        rename_blank_nodes=True,
    )


class TripleStream:
    """The distinct triples of some documents as fact rows (:data:`Key`), yielded as pyoxigraph reads them.

    Iterate once. A document that does not parse raises an :class:`~kg.errors.InputError` naming it when the
    iteration reaches it, after the rows of the documents before it were yielded: a caller that stores rows as
    they come keeps them uncommitted until the iteration ends (:meth:`kg.facts.FactService.assert_triples` with
    ``atomic_source``). :attr:`skipped` (triples with a blank literal object) is complete once it has.

    The duplicate check's sets are released, one key at a time, by the thread that exhausts the stream (the
    screening thread of a streamed import, while the writing thread is still busy), not when the stream is
    dropped: freeing LUBM(1)'s 100,866 keys, and the garbage collector's first walk over them once a load
    re-enables it, took about 40 ms of CPU on the writing thread after its last batch
    (docs/decisions/2026-11-29-lubm-import-speed.md, "Fifth pass").
    """

    def __init__(self, documents: Sequence[RdfDocument]) -> None:
        self.documents = documents
        self._seen: set[Key] = set()
        self._blank: set[tuple[str, str, ox.Literal]] = set()
        self._counts: tuple[int, int] | None = None  # (rows, skipped) once the stream is exhausted

    @property
    def rows(self) -> int:
        """Distinct triples yielded so far (the one being yielded included)."""
        return len(self._seen) if self._counts is None else self._counts[0]

    @property
    def skipped(self) -> int:
        """Distinct triples with an empty or whitespace-only literal object read so far (not facts)."""
        return len(self._blank) if self._counts is None else self._counts[1]

    @property
    def triples(self) -> int:
        """Distinct triples read so far (yielded and skipped)."""
        return self.rows + self.skipped

    def __iter__(self) -> Iterator[Key]:
        mapper = TermMapper()
        for index, document in enumerate(self.documents):
            if document.base_iri is not None:
                try:
                    ox.NamedNode(document.base_iri)
                except ValueError as exc:
                    raise InputError(f"documents[{index}].base_iri", f"must be an absolute IRI: {exc}") from None
            if document.format == "xml":  # pyoxigraph expands entities, even a DTD's inside the root element
                refuse_xml_dtd(document.content, f"documents[{index}]", document.name)
            if document.format in NESTED:  # and its time (XML) or memory (JSON-LD) grows faster than the depth
                refuse_deep_nesting(document.content, NESTED[document.format], f"documents[{index}]", document.name)
            try:
                yield from mapper.read(_quads(document), self._seen, self._blank)
            except MemoryError:
                raise  # out of memory is not a syntax error (a worker answers "error: memory: ...")
            except Exception as exc:  # SyntaxError, UnicodeEncodeError, OSError ...: one clear line instead
                reason = " ".join(str(exc).split())[:200] or type(exc).__name__
                raise InputError(
                    f"documents[{index}]", f"{document.name} is not valid {document.format}: {reason}"
                ) from None
        self._counts = (len(self._seen), len(self._blank))
        _release(self._seen)
        _release(self._blank)


def _release(values: set[Any]) -> None:
    """Empty ``values`` one item at a time: each pop frees its item, and between pops the thread can hand the GIL
    over (``set.clear`` would keep it for the whole set, ~10-20 ms for 100,000 keys, while the writing thread
    waits for it after each SQLite statement)."""
    pop = values.pop
    for _ in range(len(values)):
        pop()


def parse_documents(documents: Sequence[RdfDocument], *, tune_process: bool = False) -> Parsed:
    """The distinct triples of every document as fact rows; a document that does not parse is an InputError.

    ``tune_process`` pauses the process's cyclic garbage collector while the documents are read
    (:func:`kg.facts_fast.gc_paused`): about three new tuples per triple, none in a cycle, which the collector's
    full passes would walk again and again for nothing. A setting of the whole process: only its owner may ask
    (``mabos fact import`` does); by default nothing outside the call changes.
    """
    stream = TripleStream(documents)
    with gc_paused() if tune_process else nullcontext():
        rows = list(stream)
    return Parsed(rows, stream.skipped)


__all__ = [
    "PARSERS",
    "SUFFIX_FORMATS",
    "Key",
    "Parsed",
    "RdfDocument",
    "RdfFormat",
    "TermMapper",
    "TripleStream",
    "parse_documents",
]
