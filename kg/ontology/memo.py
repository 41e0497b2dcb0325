"""In-process memo of ontology check results, keyed by a digest of exactly what a check reads.

The OWL 2 RL closure (owlrl) and SHACL validation (pySHACL) of an ontology take about a second each and
depend on nothing but their input triples. A long-lived process (the MCP server, the web console, a test
session) re-checks the same unchanged files on every ``ontology_check`` or proposal validation, so
:mod:`kg.ontology.consistency` remembers the results here:

* the key is :func:`graph_digest` of each input graph: SHA-256 over its sorted triples, every term written
  with its kind, lexical form, datatype and language, blank nodes with their labels. Equal keys mean equal
  triples, so a remembered result is exactly what the check would compute again;
* blank-node labels are random per parse, so :mod:`kg.ontology.files` shares parsed files (and shapes) by the
  SHA-256 of their bytes across the process: an unchanged file keeps its labels, and its key. Canonical
  relabelling (:func:`rdflib.compare.to_canonical_graph`) would avoid that but takes seconds on ontologies
  with many similar restrictions, longer than the checks it would save;
* a change to any triple changes the key; nothing expires with time, and each memo keeps only the most
  recently used results up to its size (check results are short tuples, never graphs).

:func:`clear` empties every memo and :func:`uncached` turns them off for a block (tests compare both ways).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Generic, TypeVar

from cachetools import LRUCache
from rdflib import BNode, Graph, Literal
from rdflib.term import Node

V = TypeVar("V")
Triple = tuple[Node, Node, Node]
#: Results each memo keeps (least recently used dropped first).
SIZE = 256

_state = {"enabled": True}
_memos: list[Memo[Any]] = []


class Memo(Generic[V]):
    """A bounded, thread-safe least-recently-used map from a key to a result nobody mutates (cachetools'
    ``LRUCache`` under a lock, with hit counts and the process-wide off switch).

    ``size`` bounds the sum of ``weight(value)`` (one per result by default; parsed graphs weigh their triples).
    """

    def __init__(self, name: str, size: int = SIZE, weight: Callable[[V], int] = lambda _: 1) -> None:
        self.name = name
        self.size = size
        self.hits = 0
        self.misses = 0
        self._items: LRUCache[Hashable, V] = LRUCache(maxsize=size, getsizeof=weight)
        self._lock = threading.Lock()
        _memos.append(self)

    def get(self, key: Hashable) -> V | None:
        """The result stored under ``key`` (None when absent or memos are off)."""
        if not _state["enabled"]:
            return None
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
            return value

    def put(self, key: Hashable, value: V) -> None:
        """Remember ``value`` (a no-op while memos are off, or for a value heavier than the whole memo)."""
        if not _state["enabled"]:
            return
        with self._lock, suppress(ValueError):  # cachetools refuses a value larger than maxsize
            self._items[key] = value

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every result and reset the counters."""
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


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


def as_graph(triples: Graph | Iterable[Triple]) -> Graph:
    """``triples`` as an rdflib graph (a graph is returned as it is)."""
    if isinstance(triples, Graph):
        return triples
    graph = Graph(bind_namespaces="none")
    graph += triples  # rdflib adds any iterable of triples
    return graph


def graph_digest(graph: Iterable[Triple]) -> str:
    """SHA-256 of the triples of a graph (or of a set of triples), blank nodes by label."""
    rows = sorted((_term(s), _term(p), _term(o)) for s, p, o in graph)
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


__all__ = ["SIZE", "Memo", "as_graph", "clear", "graph_digest", "uncached"]
