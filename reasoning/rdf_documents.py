"""What an RDF import takes: :class:`RdfDocument`, the formats and the file suffixes that name them.

Apart from :mod:`reasoning.rdf_parse` so that the ``fact_import`` tool and ``mabos fact`` declare their input
without importing the parsers (pyoxigraph, rdflib, owlrl): those load when a document is parsed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kg.limits import MAX_DOCUMENT_BYTES

RdfFormat = Literal["turtle", "nt", "json-ld", "xml", "nquads", "trig"]
#: File suffix -> format (``.owl`` and ``.rdf`` files are RDF/XML, as LUBM's are). N-Quads and TriG carry named
#: graphs: their triples are imported, the graph names dropped (as for JSON-LD's named graphs).
SUFFIX_FORMATS: dict[str, RdfFormat] = {
    ".ttl": "turtle",
    ".nt": "nt",
    ".jsonld": "json-ld",
    ".json": "json-ld",
    ".owl": "xml",
    ".rdf": "xml",
    ".xml": "xml",
    ".nq": "nquads",
    ".trig": "trig",
}
MAX_DOCUMENT = MAX_DOCUMENT_BYTES
#: A distinct triple: subject, predicate, object and the object's datatype or "@" language ("" for an entity).
Key = tuple[str, str, str, str]


class RdfDocument(BaseModel):
    """One RDF document to import."""

    name: str = Field(max_length=1_024, description="Where it came from (a file name), for error messages.")
    format: RdfFormat = Field(
        description="turtle, nt, json-ld, xml (RDF/XML: .owl and .rdf files), nquads or trig (graph names are dropped)."
    )
    content: str = Field(max_length=MAX_DOCUMENT, description="The document text (at most 100,000,000 characters).")
    base_iri: str | None = Field(
        None,
        max_length=4_096,
        description="The absolute IRI relative IRIs resolve against (the CLI gives the file: URI); without it a "
        "relative IRI is refused.",
    )


__all__ = ["MAX_DOCUMENT", "SUFFIX_FORMATS", "Key", "RdfDocument", "RdfFormat"]
