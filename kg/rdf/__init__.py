"""RDF into the fact store: term mapping (:mod:`kg.rdf.terms`, shared with ``mabos reason owl-rl``), the
documents an import takes (:mod:`kg.rdf.documents`), pyoxigraph parsing (:mod:`kg.rdf.parse`) and the import
itself (:mod:`kg.rdf.importer`, ``mabos fact import`` / tool ``fact_import``). See docs/facts-bulk.md.

Nothing is imported here: the parsers load when a document is parsed.
"""
