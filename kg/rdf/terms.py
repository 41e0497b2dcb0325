"""Fact terms <-> IRIs: the one mapping that RDF import (:mod:`kg.rdf.parse`) and ``mabos reason owl-rl``
(:mod:`reasoning.owl`) share, so that an imported graph reasons as it was.

Plain strings only (no rdflib: an import loads it only for a typed literal). In order:

1. in predicate position, the aliases of :data:`PREDICATE_ALIASES` (``type``, ``a``, ``isA``, ``rdf:type``,
   ``subClassOf``, ...) -> their RDF/RDFS/OWL IRI; on the way back such an IRI in predicate position becomes its
   short name (:data:`PREDICATE_NAMES`: ``type``, ``subClassOf``, ...);
2. full IRIs (``http://``, ``https://``, ``urn:`` but not ``urn:mabos:``; without whitespace, controls or
   characters IRIs forbid) -> themselves;
3. CURIEs ``prefix:local`` whose prefix is bound (in the ontology graph, for owl-rl), or is rdf/rdfs/owl/xsd ->
   expanded, and an IRI inside a bound namespace is compacted back to a CURIE;
4. any other term -> ``urn:mabos:<term>`` with ``%``, whitespace, controls and the characters IRIs forbid
   percent-encoded; it decodes back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import unquote

RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
OWL_NS = "http://www.w3.org/2002/07/owl#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
#: Namespace of terms that are neither full IRIs nor CURIEs of a bound prefix.
NAMESPACE = "urn:mabos:"
#: Prefixes always understood in CURIEs, whatever an ontology binds.
CORE_PREFIXES: dict[str, str] = {"rdf": RDF_NS, "rdfs": RDFS_NS, "owl": OWL_NS, "xsd": XSD_NS}
_TYPE = RDF_NS + "type"
#: Predicate spellings read as RDF/RDFS/OWL vocabulary (predicate position only) -> their IRI.
PREDICATE_ALIASES: dict[str, str] = {
    "type": _TYPE, "a": _TYPE, "isA": _TYPE, "rdf:type": _TYPE,
    "subClassOf": RDFS_NS + "subClassOf", "subPropertyOf": RDFS_NS + "subPropertyOf",
    "domain": RDFS_NS + "domain", "range": RDFS_NS + "range",
    "sameAs": OWL_NS + "sameAs", "inverseOf": OWL_NS + "inverseOf",
    "equivalentClass": OWL_NS + "equivalentClass", "equivalentProperty": OWL_NS + "equivalentProperty",
}  # fmt: skip
#: The short name each aliased IRI comes back as (in predicate position): ``type``, ``subClassOf``, ...
PREDICATE_NAMES: dict[str, str] = {
    iri: alias for alias, iri in PREDICATE_ALIASES.items() if alias not in ("a", "isA", "rdf:type")
}

SCHEMES = ("http://", "https://", "urn:")
_IRI_SPECIALS = frozenset('<>"{}|\\^`')
PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


def unsafe(ch: str) -> bool:
    """Characters that may not appear raw in an IRI (``%`` is handled by the caller)."""
    return ord(ch) <= 0x20 or 0x7F <= ord(ch) <= 0x9F or ch.isspace() or ch in _IRI_SPECIALS


def _encode(term: str) -> str:
    return "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")) if ch == "%" or unsafe(ch) else ch
        for ch in term
    )


def _is_iri(term: str) -> bool:
    return term.startswith(SCHEMES) and not term.startswith(NAMESPACE) and not any(map(unsafe, term))


def term_to_iri(term: str, prefixes: Mapping[str, str] = CORE_PREFIXES, *, predicate: bool = False) -> str:
    """The IRI of a fact term (see the module docstring for the rules)."""
    if predicate and term in PREDICATE_ALIASES:
        return PREDICATE_ALIASES[term]
    if _is_iri(term):
        return str(term)
    prefix, colon, local = term.partition(":")
    if colon and prefix in prefixes and PREFIX.match(prefix) and not any(map(unsafe, local)):
        return prefixes[prefix] + local
    return NAMESPACE + _encode(term)


def iri_to_term(iri: str, prefixes: Mapping[str, str] = CORE_PREFIXES, *, predicate: bool = False) -> str:
    """The fact term of an IRI (a plain ``str`` or an rdflib ``URIRef``): the inverse of :func:`term_to_iri` up to
    aliases and CURIE compaction."""
    iri = str(iri)  # a URIRef never equals a str key: compare plain text
    if iri.startswith(NAMESPACE):
        return unquote(iri[len(NAMESPACE) :], errors="surrogatepass")
    if predicate and iri in PREDICATE_NAMES:
        return PREDICATE_NAMES[iri]
    for prefix, ns in sorted(prefixes.items(), key=lambda item: (-len(item[1]), item[0])):
        local = iri[len(ns) :]
        if iri.startswith(ns) and not any(map(unsafe, local)) and not _is_iri(curie := f"{prefix}:{local}"):
            return curie
    return iri


__all__ = [
    "CORE_PREFIXES",
    "NAMESPACE",
    "OWL_NS",
    "PREDICATE_ALIASES",
    "PREDICATE_NAMES",
    "PREFIX",
    "RDFS_NS",
    "RDF_NS",
    "SCHEMES",
    "XSD_NS",
    "iri_to_term",
    "term_to_iri",
    "unsafe",
]
