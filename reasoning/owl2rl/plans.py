"""What the rules need to know about one property or one class, read from the schema once and cached.

A plan is rebuilt after any schema triple is processed (the rules of that triple itself join it with all
the data already stored, so a plan that was built just before it misses nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from reasoning.owl2rl.store import TripleStore
from reasoning.owl2rl.vocab import Vocab


class RestrictionPlan(NamedTuple):
    """One restriction on a property: what its fillers and cardinalities are."""

    r: int
    some_values: tuple[int, ...]
    has_value: frozenset[int]
    all_values: tuple[int, ...]
    max_one: bool  # maxCardinality 1 or maxQualifiedCardinality 1


class PropertyPlan(NamedTuple):
    """The schema of one property as the data rules use it."""

    domains: tuple[int, ...]
    ranges: tuple[int, ...]
    functional: bool
    inverse_functional: bool
    symmetric: bool
    transitive: bool
    supers: tuple[int, ...]  # sub- and equivalent properties (prp-spo1, prp-eqp1/2)
    inverses: tuple[int, ...]  # prp-inv1/2
    restrictions: tuple[RestrictionPlan, ...]  # restrictions on this property


EMPTY_PLAN = PropertyPlan((), (), False, False, False, False, (), (), ())


class ClassPlan(NamedTuple):
    """The schema of one class as the typing rules use it."""

    supers: tuple[int, ...]  # cax-sco, cax-eqc1/2, cls-int2 (the members of an intersection), cls-uni
    intersections: tuple[tuple[int, tuple[int, ...]], ...]  # cls-int1: (intersection, its members)
    filler_of: tuple[tuple[int, tuple[int, ...]], ...]  # cls-svf1: (restriction, its properties)
    restriction_on: tuple[int, ...]  # the properties when the class is a restriction
    schema: bool  # typing with this class triggers a schema rule


def property_plan(store: TripleStore, v: Vocab, p: int) -> PropertyPlan:
    """The plan of property ``p`` from the store as it is now."""
    characteristics = store.objects(p, v.type)
    supers = {q for q in store.objects(p, v.spo) if q != p}
    supers |= {q for q in store.objects(p, v.eqp) if q != p}
    supers |= {q for q in store.subjects(v.eqp, p) if q != p}
    inverses = set(store.objects(p, v.inverse_of)) | set(store.subjects(v.inverse_of, p))
    plan = PropertyPlan(
        domains=tuple(store.objects(p, v.domain)),
        ranges=tuple(store.objects(p, v.range)),
        functional=v.functional in characteristics,
        inverse_functional=v.inverse_functional in characteristics,
        symmetric=v.symmetric in characteristics,
        transitive=v.transitive in characteristics,
        supers=tuple(supers),
        inverses=tuple(inverses),
        restrictions=tuple(restriction_plan(store, v, r) for r in store.subjects(v.on_property, p)),
    )
    return EMPTY_PLAN if plan == EMPTY_PLAN else plan


def is_one(store: TripleStore, r: int, predicate: int) -> bool:
    """Whether restriction ``r`` has ``predicate`` (a cardinality) with the value 1."""
    for n in store.objects(r, predicate):
        value = getattr(store.terms.node(n), "value", None)
        if value == 1 and not isinstance(value, bool):
            return True
    return False


def restriction_plan(store: TripleStore, v: Vocab, r: int) -> RestrictionPlan:
    """The plan of restriction ``r``."""
    return RestrictionPlan(
        r=r,
        some_values=tuple(store.objects(r, v.some_values)),
        has_value=frozenset(store.objects(r, v.has_value)),
        all_values=tuple(store.objects(r, v.all_values)),
        max_one=is_one(store, r, v.max_cardinality) or is_one(store, r, v.max_qualified),
    )


class Lists(NamedTuple):
    """How the class plans read lists: the members of a list, and the intersections and unions by member."""

    items: Callable[[int], list[int]]
    intersections: Mapping[int, Sequence[tuple[int, Sequence[int]]]]
    unions: Mapping[int, Sequence[int]]


def class_plan(store: TripleStore, v: Vocab, c: int, lists: Lists, schema_classes: set[int]) -> ClassPlan:
    """The plan of class ``c`` from the store as it is now (``schema_classes``: typings that start schema rules)."""
    supers = {c2 for c2 in store.objects(c, v.sco) if c2 != c}
    supers |= {c2 for c2 in store.objects(c, v.eqc) if c2 != c}
    supers |= {c2 for c2 in store.subjects(v.eqc, c) if c2 != c}
    for head in store.objects(c, v.intersection_of):
        supers.update(lists.items(head))
    supers.update(lists.unions.get(c, ()))
    intersections = tuple((ic, tuple(members)) for ic, members in lists.intersections.get(c, ()))
    filler_of = tuple((r, tuple(store.objects(r, v.on_property))) for r in store.subjects(v.some_values, c))
    return ClassPlan(
        supers=tuple(supers),
        intersections=intersections,
        filler_of=filler_of,
        restriction_on=tuple(store.objects(c, v.on_property)),
        schema=c in schema_classes,
    )
