"""The triple store of the OWL 2 RL engine: integer terms, three indexes, and equality by representatives.

Terms are interned as small integers (:class:`Terms`). A triple ``(s, p, o)`` lives in two nested indexes,
``pso[p][s] -> {o}`` and ``pos[p][o] -> {s}``, and the terms it mentions as subject or object are indexed by
predicate so that equality can find every triple of a term.

``owl:sameAs`` is never stored as triples. Equal terms are merged (union-find); the store keeps only the
triples of each class's representative, and :meth:`TripleStore.expand` writes the copies back out (every
member in every position, the ``sameAs`` cliques, and ``x sameAs x`` for every term: rule eq-ref) when the
closure is read. A merge rewrites the loser's triples to the representative and queues them, so every rule
sees the merged terms.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator

from rdflib import BNode, Literal
from rdflib.term import Node

Triple = tuple[int, int, int]
_EMPTY: frozenset[int] = frozenset()


class Terms:
    """Interns RDF terms as integers and back."""

    def __init__(self) -> None:
        self.ids: dict[Node, int] = {}
        self.nodes: list[Node] = []
        self.literals: set[int] = set()
        self.bnodes: set[int] = set()

    def id(self, node: Node) -> int:
        """The integer of ``node`` (interned on first use)."""
        found = self.ids.get(node)
        if found is not None:
            return found
        number = len(self.nodes)
        self.ids[node] = number
        self.nodes.append(node)
        if isinstance(node, Literal):
            self.literals.add(number)
        elif isinstance(node, BNode):
            self.bnodes.add(number)
        return number

    def node(self, number: int) -> Node:
        """The RDF term of an integer."""
        return self.nodes[number]


class TripleStore:
    """Indexed triples over integer terms, with a work queue of triples whose rules have not fired yet."""

    def __init__(self, terms: Terms, same_as: int) -> None:
        self.terms = terms
        self.same_as = same_as
        self.pso: defaultdict[int, defaultdict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        self.pos: defaultdict[int, defaultdict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        # term -> predicates it is subject / object of: built at the first merge, kept from then on
        self.as_subject: defaultdict[int, set[int]] | None = None
        self.as_object: defaultdict[int, set[int]] | None = None
        self.parent: dict[int, int] = {}  # union-find over merged terms (absent: its own representative)
        self.members: dict[int, list[int]] = {}  # representative -> every term merged into it (itself first)
        self.queue: deque[Triple] = deque()
        self.size = 0
        self.on_merge: Callable[[], None] | None = None

    # ------------------------------------------------------------------ reads

    def objects(self, s: int, p: int) -> set[int] | frozenset[int]:
        """Objects of ``(s, p, ?)``."""
        by_s = self.pso.get(p)
        if by_s is None:
            return _EMPTY
        return by_s.get(s, _EMPTY)

    def subjects(self, p: int, o: int) -> set[int] | frozenset[int]:
        """Subjects of ``(?, p, o)``."""
        by_o = self.pos.get(p)
        if by_o is None:
            return _EMPTY
        return by_o.get(o, _EMPTY)

    def pairs(self, p: int) -> Iterator[tuple[int, int]]:
        """Every ``(s, o)`` of predicate ``p`` (a snapshot: safe while rules add triples)."""
        by_s = self.pso.get(p)
        if not by_s:
            return iter(())
        return iter([(s, o) for s, objs in by_s.items() for o in objs])

    def has(self, s: int, p: int, o: int) -> bool:
        """Whether ``(s, p, o)`` holds (terms taken as they are: callers pass representatives)."""
        by_s = self.pso.get(p)
        return by_s is not None and o in by_s.get(s, _EMPTY)

    def find(self, term: int) -> int:
        """The representative of ``term``'s equality class."""
        parent = self.parent
        root = term
        while root in parent:
            root = parent[root]
        while term != root:  # path compression
            nxt = parent[term]
            parent[term] = root
            term = nxt
        return root

    # ------------------------------------------------------------------ writes

    def add(self, s: int, p: int, o: int) -> bool:
        """Store a triple (as representatives) and queue it; False when it was already there or is not RDF.

        A literal in predicate position is refused, as in OWL 2 RL's generalised triples.
        """
        if self.parent:
            s, p, o = self.find(s), self.find(p), self.find(o)
        if p == self.same_as:
            self.merge(s, o)
            return False
        objs = self.pso[p][s]
        if o in objs or p in self.terms.literals:
            return False
        objs.add(o)
        self.pos[p][o].add(s)
        if self.as_subject is not None and self.as_object is not None:
            self.as_subject[s].add(p)
            self.as_object[o].add(p)
        self.size += 1
        self.queue.append((s, p, o))
        return True

    def load(self, triples: Iterable[Triple]) -> None:
        """Add many triples (each queued for its rules)."""
        add = self.add
        for s, p, o in triples:
            add(s, p, o)

    def _remove(self, s: int, p: int, o: int) -> None:
        self.pso[p][s].discard(o)
        self.pos[p][o].discard(s)
        self.size -= 1

    def merge_all(self, terms: list[int]) -> None:
        """All of ``terms`` are one individual: merge each into the first."""
        for other in terms[1:]:
            self.merge(terms[0], other)

    def merge(self, a: int, b: int) -> None:
        """``a sameAs b``: merge the two classes and move the loser's triples to the representative."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.as_subject is None or self.as_object is None:
            self.as_subject, self.as_object = defaultdict(set), defaultdict(set)
            for s, p, o in self.canonical():
                self.as_subject[s].add(p)
                self.as_object[o].add(p)
        keep, lose = (ra, rb) if len(self.members.get(ra, (ra,))) >= len(self.members.get(rb, (rb,))) else (rb, ra)
        self.parent[lose] = keep
        self.members[keep] = self.members.pop(keep, [keep]) + self.members.pop(lose, [lose])
        moved: list[Triple] = []
        for p in list(self.as_subject.pop(lose, ())):
            moved.extend((lose, p, o) for o in list(self.pso[p].get(lose, ())))
        for p in list(self.as_object.pop(lose, ())):
            moved.extend((s, p, lose) for s in list(self.pos[p].get(lose, ())))
        if lose in self.pso:
            moved.extend((s, lose, o) for s, objs in list(self.pso[lose].items()) for o in list(objs))
        for s, p, o in set(moved):
            if self.has(s, p, o):
                self._remove(s, p, o)
        for s, p, o in set(moved):
            self.add(s, p, o)
        if self.on_merge is not None:
            self.on_merge()

    # ------------------------------------------------------------------ output

    def canonical(self) -> Iterator[Triple]:
        """Every stored triple (representatives only)."""
        for p, by_s in self.pso.items():
            for s, objs in by_s.items():
                for o in objs:
                    yield s, p, o

    def expand(self) -> Iterator[Triple]:
        """The closure as plain triples: copies for every merged term, sameAs cliques, and eq-ref.

        Triples with a blank node in predicate position are left out (they are generalised RDF that only
        serves the derivation).
        """
        members = self.members
        bnodes = self.terms.bnodes
        seen_terms: set[int] = {self.same_as}
        for s, p, o in self.canonical():
            seen_terms.update((s, p, o))
            if p in bnodes:
                continue
            for s2 in members.get(s, (s,)):
                for p2 in members.get(p, (p,)):
                    for o2 in members.get(o, (o,)):
                        yield s2, p2, o2
        for group in members.values():
            seen_terms.update(group)
            for a in group:
                for b in group:
                    yield a, self.same_as, b
        merged = {t for group in members.values() for t in group}
        for term in seen_terms:
            if term not in merged:
                yield term, self.same_as, term
