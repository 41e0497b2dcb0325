"""RDF documents (Turtle, N-Triples, JSON-LD, RDF/XML) -> facts, through the bulk assert path.

A way into the fact store (not reasoning): each triple becomes one fact of the importing agent. pyoxigraph parses
the documents and :mod:`kg.rdf.parse` maps the terms as ``mabos reason owl-rl`` does (:func:`kg.rdf.terms.iri_to_term`
with the core prefixes only), so an imported graph reasons as it was:

* an IRI becomes the IRI itself (``http://...``), ``rdf``/``rdfs``/``owl``/``xsd`` IRIs become CURIEs
  (``owl:Class``), ``urn:mabos:<term>`` becomes ``<term>``; in predicate position ``rdf:type`` becomes
  ``type``, ``rdfs:subClassOf`` ``subClassOf`` and so on (the aliases of :data:`kg.rdf.terms.PREDICATE_NAMES`);
* a blank node becomes ``_:<label>`` (random labels, unique within one import only);
* a literal becomes its lexical form (typed ones in rdflib's normal form) with ``object_kind`` ``literal`` (an
  IRI object is an ``entity``); a literal that is empty or only whitespace cannot be a fact object and is
  counted in ``skipped``.

Documents of up to :data:`OVERLAP_CHARS` characters in all are stored as pyoxigraph reads them: a
:class:`~kg.rdf.parse.TripleStream` feeds one :meth:`kg.facts.FactService.assert_triples` call in batches of
10,000 (validation, scope checks, history and outbox events as for any bulk assert), read and screened in a helper
thread while this one writes the batch before, all in one transaction committed once every document is read:
a malformed document changes nothing, and a triple the model refuses keeps the batches before its own, as when
every document was parsed first. Larger inputs are parsed whole first, then stored one transaction per batch
with progress after each commit. ``parse_seconds`` is the time until the last document was read (storing
overlaps it when streamed), ``store_seconds`` the rest. See docs/facts-bulk.md and
docs/decisions/2026-11-29-lubm-import-speed.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kg.errors import InputError
from kg.facts_requests import FactImportRequest
from kg.models.request import requested
from kg.rdf.documents import SUFFIX_FORMATS, Key, RdfDocument

if TYPE_CHECKING:
    from kg.workspace import Workspace

IMPORT_BATCH = 10_000
#: Documents of at most this many characters in all are stored as they are parsed, in one transaction
#: (LUBM(1) has 8 million); larger ones are parsed whole first, then stored one transaction per batch, with
#: progress after each (docs/decisions/2026-11-29-lubm-import-speed.md).
OVERLAP_CHARS = 32_000_000
#: The source of every imported fact.
SOURCE = "rdf-import"

#: A progress callback: called with (facts stored, triples in all) after each batch.
Progress = Callable[[int, int], None]


class ImportReport(BaseModel):
    """What an import stored, and how long parsing and storing took."""

    model_config = ConfigDict(defer_build=True)  # built when an import reports, not when a fact command loads this

    triples: int = Field(description="Triples parsed from all documents (after merging duplicates).")
    created: int
    updated: int
    unchanged: int
    skipped: int = Field(description="Triples with an empty or whitespace-only literal object (not facts).")
    parse_seconds: float = Field(description="Parsing and term mapping time (pyoxigraph).")
    store_seconds: float = Field(description="Time of the bulk assert (validation, scopes, store, outbox).")


def rows_to_facts(
    rows: Sequence[Key], scope: str | None, handed: Callable[[int], None] | None = None
) -> Iterator[dict[str, Any]]:
    """The fact dicts of ``rows`` (:attr:`~kg.rdf.parse.Parsed.rows`), each built when it is asked for: what
    :func:`import_documents` stores, as ``assert_many`` items (the bench's and the tests' reference path).

    ``handed`` is called with the number of facts handed over so far each time a new batch of
    :data:`IMPORT_BATCH` starts being taken.
    """
    extra = {"source": SOURCE, **({"scope": scope} if scope is not None else {})}
    for start in range(0, len(rows), IMPORT_BATCH):
        if handed is not None and start:
            handed(start)
        for s, p, o, mark in rows[start : start + IMPORT_BATCH]:
            yield {"subject": s, "predicate": p, "object": o, "object_kind": "literal" if mark else "entity", **extra}


def _after(action: Callable[[], None]) -> Iterator[Key]:
    """No rows: ``action()`` once the rows chained before are exhausted."""
    action()
    yield from ()


def import_documents(
    ws: Workspace,
    agent_id: str,
    documents: FactImportRequest | Sequence[RdfDocument],
    *,
    scope: str | None = None,
    progress: Progress | None = None,
    tune_process: bool = False,
) -> ImportReport:
    """Parse the documents and assert their triples as facts of ``agent_id`` (in the scope when given): a
    :class:`~kg.facts_requests.FactImportRequest`, or its ``documents`` and ``scope``.

    One :meth:`~kg.facts.FactService.assert_triples` call takes all the triples (streamed, see the module's
    docstring). ``progress`` is told (facts committed plus triples skipped, triples in all) after each commit: once
    at the end when the documents are streamed in one transaction, after each batch when they were parsed first.
    ``tune_process`` is passed to :func:`~kg.rdf.parse.parse_documents` and
    :meth:`~kg.facts.FactService.assert_triples` (only the process's owner, the CLI, sets it).
    """
    if not documents:
        raise InputError("documents", "give at least one RDF document")
    request = requested(FactImportRequest, documents, {"scope": scope}, first="documents")
    documents, scope = request.documents, request.scope
    ws.scopes.require_agent(agent_id)
    if scope is not None:
        ws.scopes.check_write(agent_id, scope)
    from kg.rdf.parse import TripleStream, parse_documents  # noqa: PLC0415 - the parsers load when there is a document

    started = time.perf_counter()
    reported = [-1]

    def report(done: int, total: int) -> None:
        if progress is not None and done != reported[0]:
            reported[0] = done
            progress(done, total)

    if sum(len(document.content) for document in documents) <= OVERLAP_CHARS:
        stream = TripleStream(documents)
        parse_end = [started]
        rows = chain(stream, _after(lambda: parse_end.append(time.perf_counter())))  # no generator frame per row
        result = ws.facts.assert_triples(agent_id, rows, scope=scope, source=SOURCE, batch_size=IMPORT_BATCH,
                                         atomic_source=True, tune_process=tune_process)  # fmt: skip
        total, skipped, parsed_at = stream.triples, stream.skipped, parse_end[-1]
    else:
        parsed = parse_documents(documents, tune_process=tune_process)
        parsed_at = time.perf_counter()
        total, skipped = parsed.triples, parsed.skipped
        result = ws.facts.assert_triples(agent_id, parsed.rows, scope=scope, source=SOURCE, batch_size=IMPORT_BATCH,
                                         stored=lambda count: report(count + skipped, total),
                                         tune_process=tune_process)  # fmt: skip
    report(total, total)
    return ImportReport(
        triples=total,
        created=result.created,
        updated=result.updated,
        unchanged=result.unchanged,
        skipped=skipped,
        parse_seconds=round(parsed_at - started, 3),
        store_seconds=round(time.perf_counter() - parsed_at, 3),
    )


__all__ = [
    "IMPORT_BATCH",
    "SUFFIX_FORMATS",
    "ImportReport",
    "Progress",
    "RdfDocument",
    "import_documents",
    "rows_to_facts",
]
