"""Ontology graphs: the active ontology files of a folder and one rdflib graph loaded from them (JSON-LD, Turtle,
RDF/XML, N-Triples, TriG, N-Quads), refusing remote JSON-LD contexts.

A parsed file's triples and prefixes are kept for the process, keyed by the SHA-256 of its text (:data:`_PARSED`):
``reason_owl_rl``, ``ontology_to_typeql`` and the extraction vocabulary load the same unchanged files on every call of
a long-lived process (the MCP server, the console), and rdflib's JSON-LD parser takes ~0.3 s for the shipped set. A
file is parsed with its own location as the base IRI, so the key holds the path too unless the parse shows the text
means the same anywhere (:func:`_anywhere`): then a workspace in another folder with the same files (every new
workspace has the shipped ones) finds them parsed. The file is still read on every call, so a changed file is parsed
again; each call gets a graph of its own to change as it likes.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

from rdflib import Dataset, Graph
from rdflib.term import BNode, Literal, Node, URIRef

from kg.errors import InputError
from kg.limits import read_text_bounded, refuse_remote_context, refuse_xml_dtd
from kg.ontology.memo import Memo

#: Parsers by file extension (:func:`load_graph`).
FORMATS: dict[str, str] = {".jsonld": "json-ld", ".json": "json-ld", ".ttl": "turtle", ".nt": "nt",
                           ".owl": "xml", ".rdf": "xml", ".trig": "trig", ".nq": "nquads"}  # fmt: skip


#: A parsed file: its triples (named graphs merged) and the prefixes it declares, in the parser's order.
Parsed = tuple[tuple[tuple[Node, Node, Node], ...], tuple[tuple[str, URIRef], ...]]
#: Triples the memo of parsed files holds at most (the shipped ontologies have ~3,200).
PARSED_TRIPLES = 50_000
_PARSED: Memo[Parsed] = Memo("parsed ontology graphs", PARSED_TRIPLES, weight=lambda parsed: len(parsed[0]) + 1)


def ontology_files(directory: Path) -> list[Path]:
    """The active set: ``directory/*.jsonld``, sorted by name (``templates/`` and ``proposals/`` are not in it).

    Raises:
        InputError: ``directory`` does not exist.
    """
    if not directory.is_dir():
        raise InputError("ontology", f"{directory}: no such directory")
    return sorted(path for path in directory.glob("*.jsonld") if path.is_file())


def load_graph(paths: Sequence[Path]) -> Graph:
    """Parse the files (by extension, :data:`FORMATS`) and merge them into one graph.

    Every named graph of a file is merged too: a JSON-LD document whose top level has both ``@id`` and
    ``@graph`` (the mabos ontology layout) puts its nodes in a named graph, which a plain ``Graph.parse``
    would drop. Prefixes the files declare are bound on the result (the first declaration wins).

    Raises:
        InputError: a file is missing, has an unknown extension, uses a remote JSON-LD ``@context`` or does
            not parse; the message names the file.
    """
    merged = Graph(bind_namespaces="core")
    for path in paths:
        triples, namespaces = _parse(path)
        merged.addN((subject, predicate, obj, merged) for subject, predicate, obj in triples)
        bound = {prefix for prefix, _ in merged.namespaces()}
        for prefix, namespace in namespaces:
            if prefix and prefix not in bound:
                merged.bind(prefix, namespace)
    return merged


def _parse(path: Path) -> Parsed:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("ontology", f"{path}: unknown ontology format (use {', '.join(sorted(FORMATS))})")
    if not path.is_file():
        raise InputError("ontology", f"{path}: no such file")
    try:
        text = read_text_bounded(path, "ontology")  # at most 100 MB, read in chunks
        base = path.resolve().as_uri()
        anywhere = (fmt, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
        known = _PARSED.get(anywhere) or _PARSED.get((base, *anywhere))
        if known is not None:  # the same text parsed before: it passed the checks below then
            return known
        if fmt == "json-ld":
            refuse_remote_context(json.loads(text), "ontology", str(path))  # rdflib would fetch it
        elif fmt == "xml":  # rdflib's RDF/XML parser (expat) expands internal entities: no DTD at all
            refuse_xml_dtd(text, "ontology", str(path))
        dataset = Dataset()
        with warnings.catch_warnings():  # rdflib's JSON-LD parser goes through deprecated ConjunctiveGraph APIs
            warnings.simplefilter("ignore", DeprecationWarning)
            dataset.parse(data=text, format=fmt, publicID=base)
    except (InputError, MemoryError):
        raise
    except Exception as exc:  # rdflib's parsers raise many unrelated types: one clear line instead
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise InputError("ontology", f"{path}: does not parse as {fmt}: {reason}") from exc
    parsed = (tuple((s, p, o) for s, p, o, _ in dataset.quads((None, None, None, None))), tuple(dataset.namespaces()))
    _PARSED.put(anywhere if _anywhere(parsed, base) else (base, *anywhere), parsed)
    return parsed


def _anywhere(parsed: Parsed, base: str) -> bool:
    """Whether the same text parses to these triples and prefixes at any path: no IRI (term, datatype or prefix)
    has the base's scheme, and no blank node.

    A relative IRI resolves to one with the base's scheme (``file:``, RFC 3986 5.2.2), so a parse without any did
    not use the base (a file naming ``file:`` IRIs itself is kept by path too, which is only cautious). Blank nodes
    are labelled per parse: two files with the same text in different places keep nodes of their own, as two parses
    give them, so a file with any is kept by path.
    """
    scheme = base.partition(":")[0] + ":"
    triples, namespaces = parsed
    for term in chain.from_iterable(triples):
        if isinstance(term, BNode):
            return False
        iri = term.datatype if isinstance(term, Literal) else term
        if isinstance(iri, URIRef) and iri.startswith(scheme):
            return False
    return not any(namespace.startswith(scheme) for _, namespace in namespaces)
