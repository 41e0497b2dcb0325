"""Ontology files on disk: where they live, parsing them with rdflib, and writing them byte-stably.

The *active set* of a workspace is ``<ontology dir>/*.jsonld`` (not ``templates/`` nor ``proposals/``). A
domain file is one JSON object: an inline ``@context``, the namespace as ``@id``, ``@type`` ``owl:Ontology``,
``mabos:domain`` (the file's stem), ``mabos:prefix`` and the nodes in ``@graph``.

JSON-LD reads a top-level object that has both an ``@id`` and a ``@graph`` as a *named graph*: parsed into
a plain :class:`rdflib.Graph` its nodes vanish. :func:`parse_jsonld` therefore parses into a dataset and
merges every graph.

Writes go through :func:`atomic_write` (temporary file, fsync, rename). :func:`insert_node` splices a node
into the ``@graph`` array of the file's text, so every other byte stays as it was.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from rdflib import OWL, RDF, RDFS, XSD, Dataset, Graph, Literal, URIRef

from kg.errors import WorkspaceError
from kg.limits import refuse_remote_context
from kg.memory.files import atomic_write, directory_lock
from kg.ontology.layout import dump_json, graph_spans, insert_node, insertion_index, ontology_json, render_node
from kg.ontology.memo import Memo

#: Every mabos ontology IRI starts with this.
IRI_BASE = "https://w3id.org/mabos/"
#: The mabos core namespace (annotation properties such as ``mabos:sbvr_definition``).
MABOS = "https://w3id.org/mabos/core#"
#: Prefixes every file may use, whatever its context says.
STANDARD_PREFIXES: dict[str, str] = {"rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL), "xsd": str(XSD)}
#: ``@type`` of the node kinds a proposal can add.
NODE_KINDS: dict[URIRef, str] = {
    OWL.Class: "class",
    OWL.ObjectProperty: "object_property",
    OWL.DatatypeProperty: "datatype_property",
}
SBVR_DEFINITION = URIRef(MABOS + "sbvr_definition")
SBVR_SYNONYMS = URIRef(MABOS + "sbvr_synonyms")

#: Triples the process-wide memos of parsed files and of union graphs each hold at most (about 3 kB a triple).
SHARED_TRIPLES = 20_000

_SHAPES: Memo[Graph] = Memo("shapes", SHARED_TRIPLES, weight=lambda graph: len(graph) + 1)
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _data_dir(*parts: str) -> Path | None:
    """``<repo>/<parts>`` in a source checkout, else ``<prefix>/share/mabos/<parts>``; None if neither exists."""
    for root in (Path(__file__).resolve().parents[2], Path(sys.prefix) / "share" / "mabos"):
        candidate = root.joinpath(*parts)
        if candidate.is_dir():
            return candidate
    return None


def shapes_dir() -> Path:
    """Where the SHACL shapes live: ``schema/shapes`` of the source tree or ``<prefix>/share/mabos``."""
    found = _data_dir("schema", "shapes")
    if found is None or not any(found.glob("*.ttl")):
        raise WorkspaceError("schema: no SHACL shapes (schema/shapes/*.ttl) found in the source tree or share/mabos")
    return found


def repository_ontology_dir() -> Path | None:
    """The ``ontologies/`` directory shipped with mabos (base files and ``templates/``), if present."""
    return _data_dir("ontologies")


# ------------------------------------------------------------------------------------------------ parsing


def parse_jsonld(text: str) -> Graph:
    """Every triple of a JSON-LD document (named graphs merged into one graph).

    Raises whatever rdflib or json raise for a document that does not parse, and an InputError for one that names
    a context by IRI (:func:`kg.limits.refuse_remote_context`: rdflib would fetch it, from the disk or the network).
    """
    refuse_remote_context(json.loads(text), "document", "JSON-LD")
    dataset = Dataset()
    with warnings.catch_warnings():  # rdflib's JSON-LD parser still uses deprecated dataset internals
        warnings.simplefilter("ignore", DeprecationWarning)
        dataset.parse(data=text, format="json-ld")
    graph = Graph(bind_namespaces="none")
    for s, p, o, _ in dataset.quads((None, None, None, None)):
        graph.add((s, p, o))
    return graph


def read_shapes(directory: Path) -> Graph:
    """Every ``*.ttl`` file of a shapes directory as one graph.

    The graph is shared with every caller that reads the same files (path and bytes) in this process, so the
    checks keyed on it find their remembered results (:mod:`kg.ontology.memo`): read it, never change it.
    """
    files = [(path, path.read_bytes()) for path in sorted(directory.glob("*.ttl"))]
    key = tuple((str(path), hashlib.sha256(raw).hexdigest()) for path, raw in files)
    graph = _SHAPES.get(key)
    if graph is None:
        graph = Graph()
        for path, raw in files:
            graph.parse(data=raw, format="turtle", publicID=path.absolute().as_uri())
        _SHAPES.put(key, graph)
    return graph


def context_prefixes(context: Any) -> dict[str, str]:
    """Prefix -> namespace for the string entries of an inline ``@context`` that are absolute IRIs."""
    contexts = context if isinstance(context, list) else [context]
    found: dict[str, str] = {}
    for ctx in contexts:
        if isinstance(ctx, dict):
            for key, value in ctx.items():
                if isinstance(value, str) and not key.startswith("@") and _ABSOLUTE.match(value):
                    found.setdefault(key, value)
    return found


@dataclass
class DomainFile:
    """One parsed ontology file (or the reason it did not parse)."""

    path: Path
    raw: bytes
    data: dict[str, Any] = field(default_factory=dict)
    graph: Graph = field(default_factory=Graph)
    error: str = ""

    @property
    def name(self) -> str:
        """The domain name (the file's stem)."""
        return self.path.stem

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the bytes."""
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def prefixes(self) -> dict[str, str]:
        """Prefixes its context binds."""
        return context_prefixes(self.data.get("@context"))

    @property
    def prefix(self) -> str:
        """``mabos:prefix`` of the file (the domain name when absent)."""
        value = self.data.get("mabos:prefix")
        return value if isinstance(value, str) and value else self.name

    @property
    def namespace(self) -> str:
        """The namespace: the file's ``@id``, else what its prefix is bound to, else the convention."""
        value = self.data.get("@id")
        if isinstance(value, str) and value.startswith(("http://", "https://")):
            return value
        return self.prefixes.get(self.prefix, f"{IRI_BASE}{self.name}#")

    @cached_property
    def subjects(self) -> frozenset[URIRef]:
        """Every IRI the file says something about."""
        return frozenset(s for s in self.graph.subjects() if isinstance(s, URIRef))


def read_domain_file(path: Path, raw: bytes | None = None) -> DomainFile:
    """Parse one file: its JSON (must be an object with an ``@graph`` list) and its triples."""
    raw = path.read_bytes() if raw is None else raw
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("@graph"), list):
            return DomainFile(path, raw, error="not a JSON object with an @graph list")
        return DomainFile(path, raw, data, parse_jsonld(text))
    except Exception as exc:  # json and rdflib raise many unrelated types: one readable line instead
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        return DomainFile(path, raw, error=f"does not parse: {reason}")


@dataclass
class ActiveSet:
    """The parsed files of an ontology directory, with their union and an index of defined nodes."""

    directory: Path
    files: dict[str, DomainFile]

    def require_parsed(self) -> None:
        """Raise WorkspaceError naming the first file that does not parse."""
        for domain in self.files.values():
            if domain.error:
                raise WorkspaceError(
                    f"ontology: {domain.path} {domain.error}; fix it first (see 'mabos ontology check')"
                )

    @cached_property
    def graph(self) -> Graph:
        """The union of every file's triples."""
        return _union(self.files.values())

    @cached_property
    def prefixes(self) -> dict[str, str]:
        """Every prefix some file binds (first binding wins, files in name order), plus rdf/rdfs/owl/xsd."""
        found: dict[str, str] = {}
        for domain in self.files.values():
            for prefix, namespace in domain.prefixes.items():
                found.setdefault(prefix, namespace)
            found.setdefault(domain.prefix, domain.namespace)
        return {**found, **STANDARD_PREFIXES}

    @cached_property
    def kinds(self) -> dict[URIRef, str]:
        """Defined classes and properties: IRI -> ``class``/``object_property``/``datatype_property``."""
        found: dict[URIRef, str] = {}
        for rdf_type, kind in NODE_KINDS.items():
            for subject in self.graph.subjects(RDF.type, rdf_type):
                if isinstance(subject, URIRef):
                    found.setdefault(subject, kind)
        return found

    def names(self, iri: URIRef) -> list[str]:
        """Labels and SBVR synonyms of a node."""
        return [
            str(o) for p in (RDFS.label, SBVR_SYNONYMS) for o in self.graph.objects(iri, p) if isinstance(o, Literal)
        ]

    @cached_property
    def name_index(self) -> list[tuple[URIRef, str]]:
        """(node, lower-cased label or synonym) for every defined class and property."""
        return [(iri, name.casefold()) for iri in self.kinds for name in self.names(iri)]

    def domain_of(self, iri: URIRef) -> DomainFile | None:
        """The file that defines a node (its first file in name order)."""
        return next((d for d in self.files.values() if iri in d.subjects), None)


_PARSED: Memo[DomainFile] = Memo("parsed ontology files", SHARED_TRIPLES, weight=lambda d: len(d.graph) + 1)
_UNIONS: Memo[tuple[tuple[Graph, ...], Graph]] = Memo("ontology unions", SHARED_TRIPLES, weight=lambda v: len(v[1]) + 1)


def _read_shared(path: Path, raw: bytes, digest: str) -> DomainFile:
    """:func:`read_domain_file`, or the file parsed earlier in this process from the same bytes (any path)."""
    shared = _PARSED.get(digest)
    if shared is None:
        shared = read_domain_file(path, raw)
        _PARSED.put(digest, shared)
    return shared if shared.path == path else replace(shared, path=path)


def _union(files: Iterable[DomainFile]) -> Graph:
    """The union of the files' graphs, shared while the same parsed graphs are unioned again."""
    files = list(files)
    graphs = tuple(domain.graph for domain in files)
    key = tuple(domain.digest for domain in files)
    found = _UNIONS.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], graphs, strict=True)):
        return found[1]
    union = Graph(bind_namespaces="none")
    for graph in graphs:
        union += graph
    _UNIONS.put(key, (graphs, union))
    return union


class OntologyFiles:
    """Loads active sets, keeping parsed files by content hash for the life of the instance.

    Files (and the union of an active set) are also shared by content hash with every other instance of the
    process (:mod:`kg.ontology.memo`): a tool call opens a new service, and unchanged files are not parsed again.
    Their graphs and JSON are read, never written.
    """

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str], DomainFile] = {}
        self._last: tuple[tuple[tuple[str, str], ...], ActiveSet] | None = None  # the union graph is costly

    def load(self, directory: Path) -> ActiveSet:
        """The active set of ``directory`` (the same object again while no file changed)."""
        paths = sorted(directory.glob("*.jsonld")) if directory.is_dir() else []
        files: dict[str, DomainFile] = {}
        keys = []
        for path in paths:
            raw = path.read_bytes()
            key = (str(path), hashlib.sha256(raw).hexdigest())
            if key not in self._parsed:
                self._parsed[key] = _read_shared(path, raw, key[1])
            files[path.stem] = self._parsed[key]
            keys.append(key)
        self._parsed = {key: self._parsed[key] for key in keys}  # older versions are not needed again
        if self._last is not None and self._last[0] == tuple(keys):
            return self._last[1]
        active = ActiveSet(directory, files)
        self._last = (tuple(keys), active)
        return active


# ------------------------------------------------------------------------------------------------ terms


def resolve(term: str, prefixes: Mapping[str, str], default_namespace: str) -> URIRef | None:
    """The IRI of a CURIE, a full IRI or a bare local name (in ``default_namespace``); None for an unknown prefix."""
    if term.startswith(("http://", "https://", "urn:")):
        return URIRef(term)
    prefix, colon, local = term.partition(":")
    if not colon:
        return URIRef(default_namespace + term)
    if prefix in prefixes:
        return URIRef(prefixes[prefix] + local)
    return None


def compact(iri: str, prefixes: Mapping[str, str]) -> str:
    """``prefix:local`` for the longest namespace of ``prefixes`` that ``iri`` starts with, else ``iri``."""
    best = ""
    for prefix, namespace in prefixes.items():
        if iri.startswith(namespace) and len(iri) > len(namespace) and len(namespace) > len(prefixes.get(best, "")):
            best = prefix
    return f"{best}:{iri[len(prefixes[best]) :]}" if best else iri


__all__ = [
    "IRI_BASE",
    "MABOS",
    "NODE_KINDS",
    "STANDARD_PREFIXES",
    "ActiveSet",
    "DomainFile",
    "OntologyFiles",
    "atomic_write",
    "compact",
    "context_prefixes",
    "directory_lock",
    "dump_json",
    "graph_spans",
    "insert_node",
    "insertion_index",
    "ontology_json",
    "parse_jsonld",
    "read_domain_file",
    "read_shapes",
    "render_node",
    "repository_ontology_dir",
    "resolve",
    "shapes_dir",
]
