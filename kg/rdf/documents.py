"""What an RDF import takes: :class:`RdfDocument` (declared with the import's request in :mod:`kg.facts_requests`),
the formats and the file suffixes that name them.

Apart from :mod:`kg.rdf.parse` so that the ``fact_import`` tool and ``mabos fact`` declare their input without
importing the parser (pyoxigraph): it loads when a document is parsed.
"""

from __future__ import annotations

from kg.facts_requests import MAX_DOCUMENT, RdfDocument, RdfFormat

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
#: A distinct triple: subject, predicate, object and the object's datatype or "@" language ("" for an entity).
Key = tuple[str, str, str, str]


__all__ = ["MAX_DOCUMENT", "SUFFIX_FORMATS", "Key", "RdfDocument", "RdfFormat"]
