"""Entity resolution, predicate mapping and functional predicates for extracted facts.

**Entities.** A subject or entity object an extractor names is matched, in this order, against the
entities the agent can already see (subjects and entity objects of its visible facts), their aliases (the
objects of ``alias``/``hasAlias``/``aka``/``name`` facts point back to their subject) and the labels of the
ontology classes: exact id, then the normalised form (lower case, runs of non-letters as one ``_``: ``New
York`` = ``new-york`` = ``new_york``), then embedding similarity of at least :data:`SIMILARITY` (when an
embedder is configured; names of three characters or more). Only when nothing matches is a new entity id
made (the normalised form).

**Predicates.** A predicate is mapped to an ontology property when one's local name or label matches it
(normalised, case-insensitive: ``lives in`` -> ``livesIn``), else written in camelCase.

**Functional predicates** (one current value per subject): ontology properties typed
``owl:FunctionalProperty``, annotated ``mabos:multi_valued false`` or restricted by ``owl:maxCardinality 1``
(or ``owl:maxQualifiedCardinality 1``), plus the default list :data:`DEFAULT_FUNCTIONAL`.

**Opposite predicates** (the same subject and object cannot hold both at once: ``likes``/``dislikes``):
``owl:propertyDisjointWith`` in the ontology (either direction), plus :data:`DEFAULT_OPPOSITES`.
"""

from __future__ import annotations

import copy
import functools
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef

from kg.ontology.graphs import load_graph, ontology_files
from kg.ports import Embedder

log = logging.getLogger("mabos")

#: Predicates with one current value per subject unless the ontology says more (docs/extraction.md).
DEFAULT_FUNCTIONAL = frozenset({"livesIn", "worksAt", "age", "name", "occupation", "marriedTo", "hasSpouse",
                                "hasWife", "hasHusband", "comesFrom", "bornIn", "birthday"})  # fmt: skip
#: Predicates that cannot hold with the same subject and object at once, unless the ontology says more.
DEFAULT_OPPOSITES: dict[str, frozenset[str]] = {"likes": frozenset({"dislikes"}),
                                                "prefers": frozenset({"dislikes"}),
                                                "dislikes": frozenset({"likes", "prefers"})}  # fmt: skip
MULTI_VALUED = URIRef("https://w3id.org/mabos/core#multi_valued")
#: Facts whose object is another name of their subject.
ALIAS_PREDICATES = frozenset({"alias", "hasAlias", "aka", "name", "sameAs"})
#: The least cosine similarity at which a new name is taken for an existing entity.
SIMILARITY = 0.9
_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


def normalise(name: str) -> str:
    """``New York`` -> ``new_york``; ``newYork`` -> ``new_york``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.strip())
    return _NON_WORD.sub("_", spaced.lower()).strip("_")


def camel(name: str) -> str:
    """``lives in`` / ``lives_in`` / ``livesIn`` -> ``livesIn``."""
    words = [w for w in normalise(name).split("_") if w]
    return words[0] + "".join(w.capitalize() for w in words[1:]) if words else name


def _local(iri: str) -> str:
    return re.split(r"[#/:]", iri)[-1]


@dataclass
class Vocabulary:
    """Ontology terms extraction uses: property names by normalised name or label, functional properties,
    and class labels (entities)."""

    properties: dict[str, str] = field(default_factory=dict)
    functional: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)
    opposites: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def from_graph(cls, graph: Graph) -> Vocabulary:
        """Read properties, their labels and functional declarations, and class labels from ``graph``."""
        vocab = cls()
        kinds = (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property, OWL.FunctionalProperty)
        for kind in kinds:
            for prop in graph.subjects(RDF.type, kind):
                if not isinstance(prop, URIRef):
                    continue
                name = _local(str(prop))
                vocab.properties.setdefault(normalise(name), name)
                for label in graph.objects(prop, RDFS.label):
                    vocab.properties.setdefault(normalise(str(label)), name)
                if kind == OWL.FunctionalProperty:
                    vocab.functional.add(name)
        vocab._read_exclusions(graph)
        for restriction in graph.subjects(RDF.type, OWL.Restriction):
            on = graph.value(restriction, OWL.onProperty)
            for limit in (OWL.maxCardinality, OWL.maxQualifiedCardinality, OWL.cardinality):
                value = graph.value(restriction, limit)
                if on is not None and isinstance(value, Literal) and str(value) == "1":
                    vocab.functional.add(_local(str(on)))
        for cls_node in graph.subjects(RDF.type, OWL.Class):
            for label in graph.objects(cls_node, RDFS.label):
                vocab.labels.setdefault(normalise(str(label)), _local(str(cls_node)))
        return vocab

    def _read_exclusions(self, graph: Graph) -> None:
        """``mabos:multi_valued false`` (functional) and ``owl:propertyDisjointWith`` (opposites) of ``graph``."""
        for prop, value in graph.subject_objects(MULTI_VALUED):
            if isinstance(prop, URIRef) and isinstance(value, Literal) and str(value).lower() in ("false", "0"):
                self.functional.add(_local(str(prop)))
        for one, other in graph.subject_objects(OWL.propertyDisjointWith):
            a, b = _local(str(one)), _local(str(other))
            self.opposites.setdefault(a, set()).add(b)
            self.opposites.setdefault(b, set()).add(a)

    @classmethod
    def from_directory(cls, directory: Path) -> Vocabulary:
        """The vocabulary of the ontology files in ``directory`` (empty when there are none or they do not load);
        read once per set of files (paths, sizes and modification times), a copy each call."""
        try:
            files = ontology_files(directory)
            key = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)
            read = _read_vocabulary(key)
        except Exception as exc:  # the ontology is optional for extraction: camelCase and defaults still work
            log.warning("extraction: ontology not read (%s); default predicates only", exc)
            return cls()
        return copy.deepcopy(read)

    def predicate(self, name: str) -> str:
        """The ontology property ``name`` maps to, else ``name`` in camelCase."""
        return self.properties.get(normalise(name), camel(name))

    def is_functional(self, predicate: str) -> bool:
        """Whether a subject has one current value of ``predicate``."""
        return predicate in self.functional or predicate in DEFAULT_FUNCTIONAL

    def opposite(self, predicate: str) -> frozenset[str]:
        """The predicates that cannot hold with ``predicate`` for the same subject and object."""
        return frozenset(self.opposites.get(predicate, set())) | DEFAULT_OPPOSITES.get(predicate, frozenset())


@functools.lru_cache(maxsize=8)
def _read_vocabulary(files: tuple[tuple[str, int, int], ...]) -> Vocabulary:
    """The vocabulary of ``files`` (path, modification time, size: a changed file is read again)."""
    return Vocabulary.from_graph(load_graph([Path(f[0]) for f in files]))


@dataclass(frozen=True)
class Resolution:
    """An entity name resolved: the id used and how (``exact``, ``alias``, ``normalised``, ``ontology``,
    ``embedding`` or ``new``)."""

    name: str
    entity: str
    method: str
    similarity: float | None = None


class EntityResolver:
    """Matches names against known entities (module docstring); learns the entities it makes."""

    def __init__(self, known: Iterable[str], aliases: Iterable[tuple[str, str]], vocabulary: Vocabulary,
                 embedder: Embedder | None = None, *, similarity: float = SIMILARITY) -> None:  # fmt: skip
        self.exact: set[str] = set()
        self.by_norm: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.vocabulary = vocabulary
        self.embedder = embedder
        self.similarity = similarity
        self._names: list[str] = []
        self._vectors: np.ndarray | None = None
        for entity in known:
            self.learn(entity)
        for entity, alias in aliases:
            self.aliases.setdefault(normalise(alias), entity)

    def learn(self, entity: str) -> None:
        """Know ``entity`` from now on."""
        if entity not in self.exact:
            self.exact.add(entity)
            self.by_norm.setdefault(normalise(entity), entity)
            self._names.append(entity)
            self._vectors = None

    def resolve(self, name: str) -> Resolution:
        """The entity ``name`` refers to (a new one is learnt)."""
        if name in self.exact:
            return Resolution(name, name, "exact")
        norm = normalise(name)
        if norm in self.aliases:
            return Resolution(name, self.aliases[norm], "alias")
        if norm in self.by_norm:
            return Resolution(name, self.by_norm[norm], "normalised")
        if norm in self.vocabulary.labels:
            return Resolution(name, self.vocabulary.labels[norm], "ontology")
        near = self._nearest(name)
        if near is not None:
            return near
        entity = norm or "thing"
        self.learn(entity)
        return Resolution(name, entity, "new")

    def _nearest(self, name: str) -> Resolution | None:
        if self.embedder is None or len(name) < 3 or not self._names:
            return None
        if self._vectors is None:
            self._vectors = _unit(self.embedder.embed([n.replace("_", " ") for n in self._names]))
        [query] = _unit(self.embedder.embed([name.replace("_", " ")]))
        scores = self._vectors @ query
        best = int(np.argmax(scores))
        score = float(scores[best])
        if score >= self.similarity:
            return Resolution(name, self._names[best], "embedding", round(score, 4))
        return None


def _unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = matrix / norms
    return unit


__all__ = ["ALIAS_PREDICATES", "DEFAULT_FUNCTIONAL", "DEFAULT_OPPOSITES", "SIMILARITY", "EntityResolver", "Resolution",
           "Vocabulary",
           "camel", "normalise"]  # fmt: skip
