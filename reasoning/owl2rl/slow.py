"""OWL 2 RL rules evaluated over the whole store whenever the work queue runs dry, and the consistency checks.

These rules are rare in practice (property chains, keys, enumerations) or read only the schema (the
restriction schema rules scm-hv, scm-svf1/2, scm-avf1/2), so a full pass costs little; the engine repeats
queue and pass until neither adds a triple. The consistency rules (whose conclusion is ``false``) run once
at the fixpoint and report what they found instead of writing triples.
"""

from __future__ import annotations

from collections.abc import Iterator

from reasoning.owl2rl.rules import Rules


def slow_pass(rules: Rules) -> int:
    """Run prp-spo2, prp-key, cls-oo and the restriction schema rules once; return how many triples were new."""
    store = rules.store
    before = store.size
    _chains(rules)
    _keys(rules)
    _one_of(rules)
    _restriction_schema(rules)
    return store.size - before


def _chains(rules: Rules) -> None:
    """prp-spo2: ``p propertyChainAxiom (p1 ... pn)`` and a path u0 p1 u1 ... pn un give ``u0 p un``."""
    store, v = rules.store, rules.v
    for p, chain in rules.list_axioms(v.chain):
        frontier = set(store.pairs(chain[0]))
        for link in chain[1:]:
            frontier = {(start, z) for start, y in frontier for z in store.objects(y, link)}
            if not frontier:
                break
        for start, end in frontier:
            store.add(start, p, end)


def _keys(rules: Rules) -> None:
    """prp-key: two instances of ``c`` with the same values for every key property of ``c`` are the same."""
    store, v = rules.store, rules.v
    for c, keys in rules.list_axioms(v.has_key):
        by_values: dict[tuple[int, ...], list[int]] = {}
        for x in list(store.subjects(v.type, c)):
            combos: list[tuple[int, ...]] = [()]
            for k in keys:
                combos = [(*combo, z) for combo in combos for z in store.objects(x, k)]
            for combo in combos:
                by_values.setdefault(combo, []).append(x)
        for same in by_values.values():
            store.merge_all(same)


def _one_of(rules: Rules) -> None:
    """cls-oo: every member of an enumeration ``c oneOf (y1 ... yn)`` is of type ``c``."""
    store, v = rules.store, rules.v
    for c, members in rules.list_axioms(v.one_of):
        for y in members:
            store.add(y, v.type, c)


def _restriction_schema(rules: Rules) -> None:
    """scm-hv, scm-svf1, scm-svf2, scm-avf1 and scm-avf2 over every pair of restrictions."""
    store, v = rules.store, rules.v
    restrictions = [(r, p) for r, p in store.pairs(v.on_property)]
    for (c1, p1), (c2, p2) in ((a, b) for a in restrictions for b in restrictions):
        sub_property = store.has(p1, v.spo, p2)
        for y1 in store.objects(c1, v.has_value):
            if sub_property and store.has(c2, v.has_value, y1):
                store.add(c1, v.sco, c2)  # scm-hv
        for y1 in store.objects(c1, v.some_values):
            for y2 in store.objects(c2, v.some_values):
                if (p1 == p2 and store.has(y1, v.sco, y2)) or (y1 == y2 and sub_property):
                    store.add(c1, v.sco, c2)  # scm-svf1 / scm-svf2
        for y1 in store.objects(c1, v.all_values):
            for y2 in store.objects(c2, v.all_values):
                if p1 == p2 and store.has(y1, v.sco, y2):
                    store.add(c1, v.sco, c2)  # scm-avf1
                if y1 == y2 and sub_property:
                    store.add(c2, v.sco, c1)  # scm-avf2


def inconsistencies(rules: Rules, limit: int = 100) -> list[str]:
    """The consistency rules that fire at the fixpoint (cax-dw, cls-nothing2, cls-com, prp-irp, prp-asyp,
    prp-pdw, eq-diff1, cls-maxc1), as messages (at most ``limit``)."""
    found: list[str] = []
    for check in (_disjoint_classes, _nothing, _complements, _irreflexive, _asymmetric, _disjoint_properties,
                  _different, _max_zero):  # fmt: skip
        for message in check(rules):
            found.append(message)
            if len(found) >= limit:
                return found
    return found


def _in_both(rules: Rules, axiom: int) -> Iterator[tuple[int, int, int]]:
    """``(x, c1, c2)`` for each class pair ``c1 axiom c2`` (disjointWith, complementOf) and each x typed with both."""
    store, v = rules.store, rules.v
    for c1, c2 in store.pairs(axiom):
        for x in store.subjects(v.type, c1):
            if store.has(x, v.type, c2):
                yield x, c1, c2


def _disjoint_classes(rules: Rules) -> Iterator[str]:
    name = rules.store.terms.node
    for x, c1, c2 in _in_both(rules, rules.v.disjoint_with):
        yield f"cax-dw: {name(x)} is in disjoint classes {name(c1)}, {name(c2)}"


def _nothing(rules: Rules) -> Iterator[str]:
    for x in rules.store.subjects(rules.v.type, rules.v.nothing):
        yield f"cls-nothing2: {rules.store.terms.node(x)} is of type owl:Nothing"


def _complements(rules: Rules) -> Iterator[str]:
    name = rules.store.terms.node
    for x, c1, _ in _in_both(rules, rules.v.complement_of):
        yield f"cls-com: {name(x)} is in {name(c1)} and its complement"


def _irreflexive(rules: Rules) -> Iterator[str]:
    store, v, name = rules.store, rules.v, rules.store.terms.node
    for p in store.subjects(v.type, v.irreflexive):
        for x, y in store.pairs(p):
            if x == y:
                yield f"prp-irp: {name(x)} {name(p)} itself"


def _asymmetric(rules: Rules) -> Iterator[str]:
    store, v, name = rules.store, rules.v, rules.store.terms.node
    for p in store.subjects(v.type, v.asymmetric):
        for x, y in store.pairs(p):
            if store.has(y, p, x):
                yield f"prp-asyp: {name(x)} and {name(y)} both ways on {name(p)}"


def _disjoint_properties(rules: Rules) -> Iterator[str]:
    store, v, name = rules.store, rules.v, rules.store.terms.node
    for p1, p2 in store.pairs(v.disjoint_property):
        for x, y in store.pairs(p1):
            if store.has(x, p2, y):
                yield f"prp-pdw: {name(x)} {name(y)} on disjoint {name(p1)}, {name(p2)}"


def _different(rules: Rules) -> Iterator[str]:
    store, name = rules.store, rules.store.terms.node
    for x, y in store.pairs(rules.v.different_from):
        if store.find(x) == store.find(y):
            yield f"eq-diff1: {name(x)} is both same as and different from {name(y)}"


def _max_zero(rules: Rules) -> Iterator[str]:
    store, v, name = rules.store, rules.v, rules.store.terms.node
    for r, _ in store.pairs(v.max_cardinality):
        if any(getattr(name(n), "value", None) == 0 for n in store.objects(r, v.max_cardinality)):
            for p in store.objects(r, v.on_property):
                for x in store.subjects(v.type, r):
                    if store.objects(x, p):
                        yield f"cls-maxc1: {name(x)} has a {name(p)} value"
