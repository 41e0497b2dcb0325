"""Facts in memory with hash indexes by predicate, (predicate, subject), (predicate, object), subject and object.

Keys are ``(subject, predicate, object)`` tuples of interned strings, so the joins compare by identity
first and share one copy of each term. Indexes are built on first use and kept up to date by
:meth:`FactIndex.add`, so forward chaining pays only for the ones its rules need.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from reasoning.rules.results import Key, Triple

#: Index kinds: ``p`` predicate, ``ps`` predicate then subject, ``po`` predicate then object (these two
#: are built per predicate on first use), ``s`` subject, ``o`` object.
INDEX_KINDS = ("p", "ps", "po", "s", "o")


class FactIndex:
    """The facts the engine reasons over: confidences, input triples and hash indexes."""

    __slots__ = ("by_o", "by_p", "by_po", "by_ps", "by_s", "conf", "order", "source")

    def __init__(self, facts: Iterable[Triple] = ()) -> None:
        self.conf: dict[Key, float] = {}
        self.source: dict[Key, Triple] = {}  # the input triple kept for each key (highest confidence)
        self.order: list[Key] = []
        self.by_p: dict[str, list[Key]] | None = None
        # predicate -> subject (object) -> keys, built per predicate on first use
        self.by_ps: dict[str, dict[str, list[Key]]] = {}
        self.by_po: dict[str, dict[str, list[Key]]] = {}
        self.by_s: dict[str, list[Key]] | None = None
        self.by_o: dict[str, list[Key]] | None = None
        intern = sys.intern
        conf, source, order = self.conf, self.source, self.order
        for fact in facts:
            key = (intern(fact.subject), intern(fact.predicate), intern(fact.object))
            old = conf.get(key)
            if old is None:
                order.append(key)
            elif fact.confidence <= old:
                continue
            conf[key] = fact.confidence
            source[key] = fact

    def __len__(self) -> int:
        return len(self.order)

    def __contains__(self, key: object) -> bool:
        return key in self.conf

    def ensure(self, kinds: Iterable[str]) -> None:
        """Build the named indexes (see :data:`INDEX_KINDS`) that do not exist yet."""
        builders = {"p": self.predicate_index, "ps": self.predicate_index, "po": self.predicate_index}
        builders |= {"s": self.subject_index, "o": self.object_index}
        for kind in kinds:
            builders[kind]()

    def predicate_index(self) -> dict[str, list[Key]]:
        """predicate -> keys (built on first use)."""
        if self.by_p is None:
            self.by_p = _single(self.order, 1)
        return self.by_p

    def ps(self, predicate: str) -> dict[str, list[Key]]:
        """subject -> keys among the facts with this predicate (built on first use for the predicate)."""
        inner = self.by_ps.get(predicate)
        if inner is None:
            inner = self.by_ps[predicate] = _single(self.predicate_index().get(predicate, []), 0)
        return inner

    def po(self, predicate: str) -> dict[str, list[Key]]:
        """object -> keys among the facts with this predicate (built on first use for the predicate)."""
        inner = self.by_po.get(predicate)
        if inner is None:
            inner = self.by_po[predicate] = _single(self.predicate_index().get(predicate, []), 2)
        return inner

    def subject_index(self) -> dict[str, list[Key]]:
        """subject -> keys (built on first use)."""
        if self.by_s is None:
            self.by_s = _single(self.order, 0)
        return self.by_s

    def object_index(self) -> dict[str, list[Key]]:
        """object -> keys (built on first use)."""
        if self.by_o is None:
            self.by_o = _single(self.order, 2)
        return self.by_o

    def add(self, key: Key, confidence: float) -> None:
        """Add a new key (not already present) to every built index."""
        self.conf[key] = confidence
        self.order.append(key)
        s, p, o = key
        if self.by_p is not None:
            self.by_p.setdefault(p, []).append(key)
        inner = self.by_ps.get(p)
        if inner is not None:
            inner.setdefault(s, []).append(key)
        inner = self.by_po.get(p)
        if inner is not None:
            inner.setdefault(o, []).append(key)
        if self.by_s is not None:
            self.by_s.setdefault(s, []).append(key)
        if self.by_o is not None:
            self.by_o.setdefault(o, []).append(key)

    def triple(self, key: Key) -> Triple:
        """The input triple of a key, or a derived-looking triple (no uid) with the known confidence."""
        found = self.source.get(key)
        if found is not None:
            return found
        return Triple(*key, confidence=self.conf.get(key, 1.0))

    def lookup(self, s: str | None, p: str | None, o: str | None) -> Sequence[Key]:
        """Keys whose known terms (not ``None``) equal the given ones, in insertion order."""
        if p is not None:
            return self._lookup_predicate(s, p, o)
        if s is not None:
            found = self.subject_index().get(s, [])
            return found if o is None else [k for k in found if k[2] == o]
        if o is not None:
            return self.object_index().get(o, [])
        return self.order

    def _lookup_predicate(self, s: str | None, p: str, o: str | None) -> Sequence[Key]:
        if s is not None and o is not None:
            key = (s, p, o)
            return [key] if key in self.conf else []
        if s is not None:
            return self.ps(p).get(s, [])
        if o is not None:
            return self.po(p).get(o, [])
        return self.predicate_index().get(p, [])


def _single(keys: list[Key], position: int) -> dict[str, list[Key]]:
    index: dict[str, list[Key]] = {}
    for key in keys:
        term = key[position]
        bucket = index.get(term)
        if bucket is None:
            index[term] = [key]
        else:
            bucket.append(key)
    return index
