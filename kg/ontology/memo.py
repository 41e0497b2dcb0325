"""In-process memo of ontology check results, keyed by a digest of exactly what a check reads.

The OWL 2 RL closure (owlrl) and SHACL validation (pySHACL) of an ontology take about a second each and
depend on nothing but their input triples. A long-lived process (the MCP server, the web console, a test
session) re-checks the same unchanged files on every ``ontology_check`` or proposal validation, so
:mod:`kg.ontology.consistency` remembers the results here:

* the key is :func:`graph_digest` of each input graph: SHA-256 over its sorted triples, every term written
  with its kind, lexical form, datatype and language, blank nodes first relabelled canonically
  (:func:`rdflib.compare.to_canonical_graph`) so that the same file parsed twice gives the same key;
* a result that mentions a blank node of its inputs (its label is random per parse) is not stored: it is
  only valid for that one parse, so the next check computes it again;
* a change to any triple changes the key; nothing is ever invalidated by time, and each memo keeps only the
  most recently used :data:`SIZE` results (values are short tuples, never graphs).

:func:`clear` empties every memo and :func:`uncached` turns them off for a block (tests compare both ways).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from rdflib import BNode, Graph, Literal
from rdflib.compare import to_canonical_graph
from rdflib.term import Node

V = TypeVar("V")
Triple = tuple[Node, Node, Node]
#: Results each memo keeps (least recently used dropped first).
SIZE = 256

_state = {"enabled": True}
_memos: list[Memo[Any]] = []


class Memo(Generic[V]):
    """A bounded, thread-safe least-recently-used map from a key to a result nobody mutates.

    ``size`` bounds the sum of ``weight(value)`` (one per result by default; parsed graphs weigh their triples).
    """

    def __init__(self, name: str, size: int = SIZE, weight: Callable[[V], int] = lambda _: 1) -> None:
        self.name = name
        self.size = size
        self.weight = weight
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()
        _memos.append(self)

    def get(self, key: Hashable) -> V | None:
        """The result stored under ``key`` (None when absent or memos are off)."""
        if not _state["enabled"]:
            return None
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: Hashable, value: V) -> None:
        """Remember ``value`` (a no-op while memos are off)."""
        if not _state["enabled"]:
            return
        weight = self.weight(value)
        if weight > self.size:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._total += weight - (old[1] if old else 0)
            self._items[key] = (value, weight)
            while self._total > self.size:
                self._total -= self._items.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every result and reset the counters."""
        with self._lock:
            self._items.clear()
            self._total = self.hits = self.misses = 0


def clear() -> None:
    """Empty every memo of the process."""
    for memo in _memos:
        memo.clear()


@contextmanager
def uncached() -> Iterator[None]:
    """Compute every check afresh (and store nothing) inside the block."""
    before = _state["enabled"]
    _state["enabled"] = False
    try:
        yield
    finally:
        _state["enabled"] = before


def _term(term: Node) -> tuple[str, ...]:
    if isinstance(term, Literal):
        return ("l", str(term), str(term.datatype or ""), term.language or "")
    return ("b" if isinstance(term, BNode) else "u", str(term))


def blank_labels(*graphs: Iterable[Triple]) -> frozenset[str]:
    """The labels of the blank nodes of ``graphs`` (graphs or sets of triples)."""
    return frozenset(str(term) for graph in graphs for triple in graph for term in triple if isinstance(term, BNode))


def as_graph(triples: Graph | Iterable[Triple]) -> Graph:
    """``triples`` as an rdflib graph (a graph is returned as it is)."""
    if isinstance(triples, Graph):
        return triples
    graph = Graph(bind_namespaces="none")
    graph += triples  # rdflib adds any iterable of triples
    return graph


def graph_digest(graph: Graph | Iterable[Triple]) -> str:
    """SHA-256 of a graph's triples, the same for every parse of the same content (see the module docstring)."""
    triples = graph if isinstance(graph, Graph) else list(graph)
    if blank_labels(triples):
        triples = to_canonical_graph(as_graph(triples))
    rows = sorted((_term(s), _term(p), _term(o)) for s, p, o in triples)
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def mentions(texts: Iterable[str], labels: frozenset[str]) -> bool:
    """Whether any text contains any of the blank-node ``labels`` (such a result is not stored)."""
    return bool(labels) and any(label in text for text in texts for label in labels)


__all__ = ["SIZE", "Memo", "as_graph", "blank_labels", "clear", "graph_digest", "mentions", "uncached"]
