"""RDF documents (Turtle, N-Triples, JSON-LD, RDF/XML) -> facts, through the bulk assert path.

Each triple becomes one fact of the importing agent. Terms use the mapping of ``mabos reason owl-rl``
(:func:`reasoning.owl.iri_to_term` with the core prefixes only), so an imported graph reasons as it was:

* an IRI becomes the IRI itself (``http://...``), ``rdf``/``rdfs``/``owl``/``xsd`` IRIs become CURIEs
  (``owl:Class``), ``urn:mabos:<term>`` becomes ``<term>``; in predicate position ``rdf:type`` becomes
  ``type``, ``rdfs:subClassOf`` ``subClassOf`` and so on (the aliases of :data:`reasoning.owl.PREDICATE_NAMES`);
* a blank node becomes ``_:<label>`` (labels are rdflib's, unique within one import only);
* a literal becomes its lexical form with ``object_kind`` ``literal`` (an IRI object is an ``entity``); a
  literal that is empty or only whitespace cannot be a fact object and is counted in ``skipped``.

Facts go to :meth:`kg.facts.FactService.assert_many` in batches of 10,000 (one transaction each, with
validation, scope checks, history, full-text index and outbox events). Parsing (rdflib) and storing are
timed separately. See docs/facts-bulk.md.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, Literal, cast

from pydantic import BaseModel, Field
from rdflib import BNode, Graph, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.term import Node

from kg.errors import InputError
from kg.workspace import Workspace
from reasoning.owl import CORE_PREFIXES, iri_to_term

RdfFormat = Literal["turtle", "nt", "json-ld", "xml"]
#: File suffix -> rdflib format (``.owl`` and ``.rdf`` files are RDF/XML, as LUBM's are).
SUFFIX_FORMATS: dict[str, RdfFormat] = {
    ".ttl": "turtle",
    ".nt": "nt",
    ".jsonld": "json-ld",
    ".json": "json-ld",
    ".owl": "xml",
    ".rdf": "xml",
    ".xml": "xml",
}
IMPORT_BATCH = 10_000
MAX_DOCUMENT = 100_000_000

#: Set by a caller that shows progress (the CLI): called with (facts stored, triples in all) after each batch.
PROGRESS: ContextVar[Callable[[int, int], None] | None] = ContextVar("fact_import_progress", default=None)


class RdfDocument(BaseModel):
    """One RDF document to import."""

    name: str = Field(max_length=1_024, description="Where it came from (a file name), for error messages.")
    format: RdfFormat = Field(description="turtle, nt, json-ld or xml (RDF/XML: .owl and .rdf files).")
    content: str = Field(max_length=MAX_DOCUMENT, description="The document text (at most 100,000,000 characters).")
    base_iri: str | None = Field(
        None, max_length=4_096, description="The IRI relative IRIs resolve against (the CLI gives the file: URI)."
    )


class ImportReport(BaseModel):
    """What an import stored, and how long parsing and storing took."""

    triples: int = Field(description="Triples parsed from all documents (after merging duplicates).")
    created: int
    updated: int
    unchanged: int
    skipped: int = Field(description="Triples with an empty or whitespace-only literal object (not facts).")
    parse_seconds: float = Field(description="rdflib parsing time.")
    store_seconds: float = Field(description="Time of the bulk assert (validation, scopes, store, outbox).")


def parse_documents(documents: Sequence[RdfDocument]) -> Graph:
    """One graph of every document; a document rdflib cannot read is an :class:`InputError` naming it."""
    graph = Graph()
    for index, document in enumerate(documents):
        try:
            with warnings.catch_warnings():  # rdflib's JSON-LD parser warns about its own ConjunctiveGraph use
                warnings.filterwarnings("ignore", "ConjunctiveGraph is deprecated", DeprecationWarning)
                graph.parse(data=document.content, format=document.format, publicID=document.base_iri)
        except Exception as exc:  # rdflib raises many types (SAXParseException, BadSyntax, JSON errors ...)
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise InputError(
                f"documents[{index}]", f"{document.name} is not valid {document.format}: {reason}"
            ) from None
    return graph


def _term(node: Node, predicate: bool = False) -> str:
    if isinstance(node, BNode):
        return f"_:{node}"
    # a URIRef in (PREDICATE_NAMES has URIRef keys), a plain str out (a URIRef would miss the fast path)
    return str(iri_to_term(cast(URIRef, node), CORE_PREFIXES, predicate=predicate))


def triples_to_facts(graph: Graph, scope: str | None, skipped: list[int]) -> Iterator[dict[str, Any]]:
    """The fact dicts of ``graph``'s triples (``skipped[0]`` counts the blank literals left out).

    Each term is mapped once: the caches are keyed by the term's plain text (rdflib's terms hash and compare
    in Python, a ``str`` in C), one cache for blank nodes, one for IRIs, one for predicates.
    """
    blanks: dict[str, str] = {}
    iris: dict[str, str] = {}
    predicates: dict[str, str] = {}
    extra = {"source": "rdf-import", **({"scope": scope} if scope is not None else {})}
    plain = str.__str__  # the text of a term as an exact str, without rdflib's Python-level methods
    for subject, predicate, obj in graph:
        if isinstance(obj, RdfLiteral):
            text, kind = plain(obj), "literal"
            if not text.strip():
                skipped[0] += 1
                continue
        else:
            cache = blanks if type(obj) is BNode else iris
            key = plain(obj)
            text = cache.get(key) or cache.setdefault(key, _term(obj))
            kind = "entity"
        cache = blanks if type(subject) is BNode else iris
        key = plain(subject)
        name = plain(predicate)
        yield {
            "subject": cache.get(key) or cache.setdefault(key, _term(subject)),
            "predicate": predicates.get(name) or predicates.setdefault(name, _term(predicate, predicate=True)),
            "object": text,
            "object_kind": kind,
            **extra,
        }


def import_documents(
    ws: Workspace, agent_id: str, documents: Sequence[RdfDocument], *, scope: str | None = None
) -> ImportReport:
    """Parse ``documents`` and assert their triples as facts of ``agent_id`` (in ``scope`` when given)."""
    if not documents:
        raise InputError("documents", "give at least one RDF document")
    ws.scopes.require_agent(agent_id)
    if scope is not None:
        ws.scopes.check_write(agent_id, scope)
    started = time.perf_counter()
    graph = parse_documents(documents)
    parsed = time.perf_counter()
    total, skipped = len(graph), [0]
    progress = PROGRESS.get()
    created = updated = unchanged = 0
    facts = triples_to_facts(graph, scope, skipped)
    done = 0
    while batch := [fact for _, fact in zip(range(IMPORT_BATCH), facts, strict=False)]:
        try:
            result = ws.facts.assert_many(agent_id, batch, batch_size=IMPORT_BATCH)
        except InputError as exc:  # number the fact across batches, as one assert_many call would
            bad = re.match(r"facts\[(\d+)\](.*)", exc.field)
            if bad is None:
                raise
            raise InputError(f"facts[{done + int(bad[1])}]{bad[2]}", exc.rule) from None
        created, updated, unchanged = created + result.created, updated + result.updated, unchanged + result.unchanged
        done += len(batch)
        if progress is not None:
            progress(done + skipped[0], total)
    return ImportReport(
        triples=total,
        created=created,
        updated=updated,
        unchanged=unchanged,
        skipped=skipped[0],
        parse_seconds=round(parsed - started, 3),
        store_seconds=round(time.perf_counter() - parsed, 3),
    )


__all__ = ["PROGRESS", "SUFFIX_FORMATS", "ImportReport", "RdfDocument", "import_documents", "triples_to_facts"]
