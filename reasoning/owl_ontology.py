"""The ontology set ``mabos reason owl-rl`` reasons with: the workspace's ``ontologies/*.jsonld`` plus files the
operator names, as one rdflib graph with the prefixes the files declare (they drive the CURIE mapping of
:mod:`kg.rdf.terms`). Apart from :mod:`reasoning.owl` (the closure and the service) to keep each module small.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rdflib import Graph

from kg.errors import InputError
from kg.limits import read_text_bounded, refuse_remote_context, refuse_xml_dtd
from kg.rdf.terms import SCHEMES

#: Parser per file extension (``.jsonld`` files are the workspace's own ontologies).
FORMATS: dict[str, str] = {".jsonld": "json-ld", ".json": "json-ld", ".ttl": "turtle", ".owl": "xml",
                           ".rdf": "xml", ".nt": "nt", ".n3": "n3"}  # fmt: skip


def _jsonld_prefixes(text: str) -> dict[str, str]:
    """Prefixes declared in a JSON-LD document's top-level ``@context`` (rdflib binds many more itself)."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    contexts: list[Any] = []
    for item in data if isinstance(data, list) else [data]:
        context = item.get("@context") if isinstance(item, dict) else None
        contexts += context if isinstance(context, list) else [context]
    declared = {
        key: value.get("@id") if isinstance(value, dict) else value
        for context in contexts
        if isinstance(context, dict)
        for key, value in context.items()
        if not key.startswith("@")
    }
    return {key: iri for key, iri in declared.items() if isinstance(iri, str) and iri.startswith(SCHEMES)}


def parse_ontology_file(path: Path) -> tuple[Graph, dict[str, str]]:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("ontology", f"{path}: unknown ontology format (use {', '.join(sorted(FORMATS))})")
    try:
        text = read_text_bounded(path, "ontology")  # at most 100 MB, read in chunks
        if fmt == "xml":  # rdflib's RDF/XML parser (expat) expands internal entities: no DTD at all
            refuse_xml_dtd(text, "ontology", str(path))
        elif fmt == "json-ld":  # rdflib would fetch a context named by IRI (a file: IRI reads the local disk)
            refuse_remote_context(json.loads(text), "ontology", str(path))
        with warnings.catch_warnings():  # rdflib's own JSON-LD parser still builds a ConjunctiveGraph
            warnings.filterwarnings("ignore", "ConjunctiveGraph is deprecated", DeprecationWarning)
            graph = Graph(bind_namespaces="none").parse(data=text, format=fmt, publicID=path.resolve().as_uri())
    except (InputError, MemoryError):
        raise
    except Exception as exc:  # rdflib's parsers raise many unrelated types; one clear line instead
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise InputError("ontology", f"{path}: does not parse as {fmt}: {reason}") from exc
    prefixes = _jsonld_prefixes(text) if fmt == "json-ld" else {p: str(ns) for p, ns in graph.namespaces()}
    return graph, prefixes


def load_ontology(workspace_path: Path, extra: Sequence[Path] = ()) -> Graph:
    """The workspace's active ontology set (``ontologies/*.jsonld``, not templates or proposals) plus the
    ``extra`` files, as one graph (:func:`kg.ontology.typeql.load_graph`: named graphs merged, so a file with
    a top-level ``@id`` beside its ``@graph`` keeps its nodes).

    ``extra`` files are parsed by their extension. Prefixes the files declare are bound in the result (first
    declaration wins), next to rdf/rdfs/owl/xsd; they drive the CURIE mapping.

    Raises:
        InputError: a file is missing, has an unknown extension or does not parse (naming the file).
    """
    from kg.ontology.typeql import load_graph, ontology_files  # noqa: PLC0415 - not needed to map IRIs (fact import)

    folder = workspace_path / "ontologies"
    paths = [*(ontology_files(folder) if folder.is_dir() else []), *extra]
    ontology = Graph(bind_namespaces="core")
    ontology += load_graph(paths)  # rdflib binds ~30 prefixes of its own: keep only what the files declare
    for path in paths:
        declared = (_jsonld_prefixes(path.read_text(encoding="utf-8")) if path.suffix.lower() in (".jsonld", ".json")
                    else parse_ontology_file(path)[1])  # fmt: skip
        bound = {p for p, _ in ontology.namespaces()}
        for prefix, ns in declared.items():
            if prefix and prefix not in bound:
                ontology.bind(prefix, ns)
    return ontology


__all__ = ["FORMATS", "load_ontology", "parse_ontology_file"]
