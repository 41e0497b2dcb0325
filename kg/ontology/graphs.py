"""Ontology graphs: the active ontology files of a folder and one rdflib graph loaded from them (JSON-LD, Turtle,
RDF/XML, N-Triples, TriG, N-Quads), refusing remote JSON-LD contexts."""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path

from rdflib import Dataset, Graph

from kg.errors import InputError
from kg.limits import read_text_bounded, refuse_remote_context, refuse_xml_dtd

#: Parsers by file extension (:func:`load_graph`).
FORMATS: dict[str, str] = {".jsonld": "json-ld", ".json": "json-ld", ".ttl": "turtle", ".nt": "nt",
                           ".owl": "xml", ".rdf": "xml", ".trig": "trig", ".nq": "nquads"}  # fmt: skip


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
        dataset = _parse(path)
        for subject, predicate, obj, _ in dataset.quads((None, None, None, None)):
            merged.add((subject, predicate, obj))
        bound = {prefix for prefix, _ in merged.namespaces()}
        for prefix, namespace in dataset.namespaces():
            if prefix and prefix not in bound:
                merged.bind(prefix, namespace)
    return merged


def _parse(path: Path) -> Dataset:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("ontology", f"{path}: unknown ontology format (use {', '.join(sorted(FORMATS))})")
    if not path.is_file():
        raise InputError("ontology", f"{path}: no such file")
    try:
        text = read_text_bounded(path, "ontology")  # at most 100 MB, read in chunks
        if fmt == "json-ld":
            refuse_remote_context(json.loads(text), "ontology", str(path))  # rdflib would fetch it
        elif fmt == "xml":  # rdflib's RDF/XML parser (expat) expands internal entities: no DTD at all
            refuse_xml_dtd(text, "ontology", str(path))
        dataset = Dataset()
        with warnings.catch_warnings():  # rdflib's JSON-LD parser goes through deprecated ConjunctiveGraph APIs
            warnings.simplefilter("ignore", DeprecationWarning)
            dataset.parse(data=text, format=fmt, publicID=path.resolve().as_uri())
    except (InputError, MemoryError):
        raise
    except Exception as exc:  # rdflib's parsers raise many unrelated types: one clear line instead
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise InputError("ontology", f"{path}: does not parse as {fmt}: {reason}") from exc
    return dataset
