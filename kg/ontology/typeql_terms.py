"""What the JSON-LD -> TypeQL conversion names and decides: namespaces, value types, the notes it records, and
the identifiers it gives each class and property (kebab-case, unique, never a reserved word)."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

from rdflib import OWL, RDF, RDFS, XSD, Namespace, URIRef
from rdflib.term import Node

from kg.models import Model
from kg.models.typeql import AVOIDED_WORDS, IDENTIFIER_RE

CORE_NS = "https://w3id.org/mabos/core#"


BUSINESS_NS = "https://w3id.org/mabos/business#"


MABOS = Namespace(CORE_NS)


_INTEGERS = ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
             "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte")  # fmt: skip


_STRINGS = ("string", "anyURI", "normalizedString", "token", "language", "Name", "NCName", "NMTOKEN")


#: XSD (and RDF literal) datatypes -> TypeQL 3 value types. Any other range gives ``string`` and a note.
VALUE_TYPES: dict[str, str] = {
    **{str(XSD[name]): "integer" for name in _INTEGERS},
    **{str(XSD[name]): "string" for name in _STRINGS},
    str(XSD.boolean): "boolean", str(XSD.decimal): "decimal", str(XSD.double): "double", str(XSD["float"]): "double",
    str(XSD.date): "date", str(XSD.dateTime): "datetime", str(XSD.dateTimeStamp): "datetime-tz",
    str(XSD.duration): "duration", str(RDFS.Literal): "string", str(RDF.langString): "string",
    str(RDF.PlainLiteral): "string",
}  # fmt: skip


TypeKind = Literal["entity", "relation", "attribute"]


NoteKind = Literal["inheritance", "renamed", "reference", "skipped"]


_NoteFn = Callable[[NoteKind, Node, str], None]


_T = TypeVar("_T")


_KIND_MARKS: tuple[tuple[TypeKind, frozenset[Node]], ...] = (
    ("entity", frozenset({OWL.Class, RDFS.Class})),
    ("relation", frozenset({OWL.ObjectProperty})),
    ("attribute", frozenset({OWL.DatatypeProperty})),
)


_KIND_RANK: dict[str, int] = {"entity": 0, "relation": 1, "attribute": 2}


_BUILTIN = (str(RDF), str(RDFS), str(OWL), str(XSD))


_SHORT = {str(RDF): "rdf:", str(RDFS): "rdfs:", str(OWL): "owl:", str(XSD): "xsd:", CORE_NS: "mabos:"}


class Note(Model):
    """One decision the converter took that a reader of the schema should know about.

    ``kind`` is ``inheritance`` (multiple inheritance flattened, a subclass cycle broken), ``renamed`` (the
    identifier is not the plain kebab-cased local name), ``reference`` (a domain, range or superclass that is
    not a loaded class or a supported datatype) or ``skipped`` (a node or axiom left out of the schema).
    """

    kind: NoteKind
    iri: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.iri}: {self.message}"


def kebab_case(name: str) -> str:
    """``DropshipFulfillment`` -> ``dropship-fulfillment``, ``hasURL`` -> ``has-url``, ``order_id`` -> ``order-id``.

    Accents are stripped and any other non-alphanumeric run becomes one ``-``; the result may be empty or
    start with a digit (:func:`to_typeql` then prefixes it).
    """
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"([a-z])([A-Z])", r"\1-\2", text)
    text = re.sub(r"([A-Z0-9])([A-Z][a-z])", r"\1-\2", text)
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _usable(name: str) -> bool:
    return bool(IDENTIFIER_RE.match(name)) and name not in AVOIDED_WORDS


def _split_iri(iri: str) -> tuple[str, str]:
    """(namespace, local name): the local name follows the last ``#``, else the last ``/``, else ``:``."""
    for separator in "#/:":
        if separator in iri:
            namespace, local = iri.rsplit(separator, 1)
            return namespace + separator, local
    return "", iri


def _namespace_rank(iri: str) -> int:
    return 0 if iri.startswith(CORE_NS) else 1 if iri.startswith(BUSINESS_NS) else 2


def _short(node: Node) -> str:
    text = str(node)
    for namespace, prefix in _SHORT.items():
        if text.startswith(namespace):
            return prefix + text[len(namespace) :]
    return text


@dataclass(frozen=True)
class _Term:
    iri: URIRef
    kind: TypeKind
    base: str  # the kebab-cased local name (or label): the identifier it would like
    prefix: str  # its domain prefix, used to rename it

    @property
    def claim(self) -> tuple[int, int, str]:
        """Who keeps a contested name: entities, then relations, then attributes; core, business, others."""
        return _KIND_RANK[self.kind], _namespace_rank(str(self.iri)), str(self.iri)


def _assign_identifiers(terms: Iterable[_Term], note: _NoteFn) -> dict[URIRef, str]:
    """Bare names first (one winner per name), then ``<prefix>-<name>``, then ``-2``, ``-3`` ... for the rest."""
    claims: dict[str, list[_Term]] = defaultdict(list)
    for term in sorted(terms, key=lambda t: t.claim):
        claims[term.base].append(term)
    ids: dict[URIRef, str] = {}
    losers: list[tuple[_Term, _Term | None]] = []
    for base, claimants in claims.items():
        winner = claimants[0] if _usable(base) else None
        if winner is not None:
            ids[winner.iri] = base
        losers += [(term, winner) for term in claimants if term is not winner]
    used = set(ids.values())
    for term, winner in sorted(losers, key=lambda pair: pair[0].claim):
        stem = f"{term.prefix}-{term.base}" if term.base else term.prefix
        name = next(
            c for c in (stem, *(f"{stem}-{n}" for n in range(2, len(used) + 3))) if _usable(c) and c not in used
        )
        used.add(name)
        ids[term.iri] = name
        if winner is not None:
            reason = f"{term.base} is taken by {winner.iri}"
        elif not term.base:
            reason = "the IRI has no usable local name or label"
        elif term.base in AVOIDED_WORDS:
            reason = f"{term.base} is a TypeQL keyword or built-in name"
        else:
            reason = f"{term.base} does not start with a letter"
        note("renamed", term.iri, f"identifier {name}: {reason}")
    return ids
