"""The OWL 2 RL schema rules that fire on a new axiom (scm-*, and the axiom side of cax-sco, cax-eqc, prp-dom,
prp-rng, prp-spo1, prp-eqp and prp-inv): functions of the store and its vocabulary that
:class:`reasoning.owl2rl.rules.Rules` dispatches to by the new triple's predicate."""

from __future__ import annotations

from reasoning.owl2rl.store import TripleStore
from reasoning.owl2rl.vocab import Vocab


def sub_class(store: TripleStore, v: Vocab, c1: int, c2: int) -> None:
    """cax-sco, scm-sco (both premises), scm-eqc2, scm-dom1 and scm-rng1 (class side)."""
    add, subjects = store.add, store.subjects
    if c1 != c2:
        if not _implied_sub_class(store, v, c1, c2):
            for x in list(subjects(v.type, c1)):
                add(x, v.type, c2)
        _transitive(store, c1, c2, v.sco)
        for q in list(subjects(v.domain, c1)):
            add(q, v.domain, c2)
        for q in list(subjects(v.range, c1)):
            add(q, v.range, c2)
    if store.has(c2, v.sco, c1):
        add(c1, v.eqc, c2)
        add(c2, v.eqc, c1)


def _transitive(store: TripleStore, lower: int, upper: int, link: int) -> None:
    """scm-sco / scm-spo for a new ``lower link upper``: ``lower`` under all above ``upper``, all below
    ``lower`` under ``upper``."""
    for top in list(store.objects(upper, link)):
        if top != lower:
            store.add(lower, link, top)
    for bottom in list(store.subjects(link, lower)):
        if bottom not in (lower, upper):
            store.add(bottom, link, upper)


def sub_property(store: TripleStore, v: Vocab, p1: int, p2: int) -> None:
    """prp-spo1, scm-spo (both premises), scm-eqp2, scm-dom2 and scm-rng2 (property side)."""
    add, objects = store.add, store.objects
    if p1 == p2:
        return
    for x, y in store.pairs(p1):
        add(x, p2, y)
    _transitive(store, p1, p2, v.spo)
    if store.has(p2, v.spo, p1):
        add(p1, v.eqp, p2)
        add(p2, v.eqp, p1)
    for c in list(objects(p2, v.domain)):
        add(p1, v.domain, c)
    for c in list(objects(p2, v.range)):
        add(p1, v.range, c)


def domain_range(store: TripleStore, v: Vocab, q: int, p: int, c: int) -> None:
    """prp-dom / prp-rng (axiom side), scm-dom1/2 and scm-rng1/2 (axiom side)."""
    add = store.add
    if not _implied_typing(store, v, q, p, c):
        if p == v.domain:
            for x, _ in store.pairs(q):
                add(x, v.type, c)
        else:
            for _, y in store.pairs(q):
                add(y, v.type, c)
    for c2 in list(store.objects(c, v.sco)):
        if c2 != c:
            add(q, p, c2)
    for p1 in list(store.subjects(v.spo, q)):
        if p1 != q:
            add(p1, p, c)


def _implied_sub_class(store: TripleStore, v: Vocab, c1: int, c2: int) -> bool:
    """Whether ``c1 sco c2`` follows from stored ``c1 sco c, c sco c2``: then every member of ``c1`` reaches
    ``c2`` through ``c`` (those triples' own rules type them), and scanning the members again is waste."""
    sco = v.sco
    # c must lie strictly above c1 (not equivalent to it), or two equivalent classes would each wait for the other
    return any(c not in (c1, c2) and store.has(c, sco, c2) and not store.has(c, sco, c1)
               for c in store.objects(c1, sco))  # fmt: skip


def _implied_typing(store: TripleStore, v: Vocab, q: int, p: int, c: int) -> bool:
    """Whether a domain (or range) axiom ``q p c`` adds no typing of its own: a stored ``q p c1`` with
    ``c1 sco c`` (scm-dom1) or ``q spo q2`` with ``q2 p c`` (scm-dom2) already types the same resources."""
    # strictly narrower classes and properties only (equivalent ones would each wait for the other)
    by_class = any(c1 != c and store.has(c1, v.sco, c) and not store.has(c, v.sco, c1)
                   for c1 in store.objects(q, p))  # fmt: skip
    return by_class or any(q2 != q and store.has(q2, p, c) and not store.has(q2, v.spo, q)
                           for q2 in store.objects(q, v.spo))  # fmt: skip


def equivalent_class(store: TripleStore, v: Vocab, c1: int, c2: int) -> None:
    """cax-eqc1/2 and scm-eqc1."""
    if c1 == c2:
        return
    add = store.add
    for x in list(store.subjects(v.type, c1)):
        add(x, v.type, c2)
    for x in list(store.subjects(v.type, c2)):
        add(x, v.type, c1)
    add(c1, v.sco, c2)
    add(c2, v.sco, c1)


def equivalent_property(store: TripleStore, v: Vocab, p1: int, p2: int) -> None:
    """prp-eqp1/2 and scm-eqp1."""
    if p1 == p2:
        return
    add = store.add
    for x, y in store.pairs(p1):
        add(x, p2, y)
    for x, y in store.pairs(p2):
        add(x, p1, y)
    add(p1, v.spo, p2)
    add(p2, v.spo, p1)


def inverse_of(store: TripleStore, p1: int, p2: int) -> None:
    """prp-inv1/2 for the triples of either property already stored."""
    add = store.add
    for x, y in store.pairs(p1):
        add(y, p2, x)
    for x, y in store.pairs(p2):
        add(y, p1, x)


__all__ = ["domain_range", "equivalent_class", "equivalent_property", "inverse_of", "sub_class", "sub_property"]
