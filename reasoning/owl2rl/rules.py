"""The OWL 2 RL rules that fire on one new triple (semi-naive: each new triple joins the whole store).

Every rule of the profile's tables whose body has two or more atoms is written once per atom that can be
the new one, so a conclusion is found whichever of its premises arrives last. Rule names follow the OWL 2
RL profile (W3C, section 4.3): prp-* property axioms, cls-* classes, cax-* class axioms, scm-* schema.
The rules over lists whose members are read at firing time (intersections and unions) keep a cache that a
new list axiom clears; property chains, keys, enumerations and the restriction schema rules run in
:mod:`reasoning.owl2rl.slow` whenever the queue runs dry. The rules a new schema axiom starts (subclass, subproperty,
domain, range, equivalence, inverse) are functions of :mod:`reasoning.owl2rl.schema`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from reasoning.owl2rl import schema
from reasoning.owl2rl.plans import EMPTY_PLAN, ClassPlan, Lists, PropertyPlan, class_plan, is_one, property_plan
from reasoning.owl2rl.store import TripleStore
from reasoning.owl2rl.vocab import Vocab


class Rules:
    """The per-triple rules over one store."""

    def __init__(self, store: TripleStore, v: Vocab) -> None:
        self.store = store
        self.v = v
        self._intersections: dict[int, list[tuple[int, list[int]]]] | None = None  # member -> (class, members)
        self._unions: dict[int, list[int]] | None = None  # member -> union classes
        self.property_classes = {v.object_property, v.datatype_property, v.property}
        self.meta_classes = {v.functional, v.inverse_functional, v.symmetric, v.transitive}
        self.schema_classes = {v.klass} | self.property_classes | self.meta_classes
        self.schema_predicates = {
            v.domain, v.range, v.spo, v.eqp, v.inverse_of, v.sco, v.eqc, v.intersection_of, v.union_of,
            v.on_property, v.some_values, v.all_values, v.has_value, v.max_cardinality, v.max_qualified,
            v.on_class, v.first, v.rest,
        }  # fmt: skip
        self.prop_plans: dict[int, PropertyPlan] = {}
        self.class_plans: dict[int, ClassPlan] = {}
        restriction = (v.on_property, v.some_values, v.all_values, v.has_value, v.max_cardinality, v.max_qualified,
                       v.on_class)  # fmt: skip
        #: The schema rules of a new triple, by its predicate (every triple is also data: see ``fire``).
        self.schema_rules: dict[int, Callable[[int, int, int], None]] = {
            v.type: lambda s, _, o: self.typed(s, o),
            v.sco: lambda s, _, o: schema.sub_class(store, v, s, o),
            v.spo: lambda s, _, o: schema.sub_property(store, v, s, o),
            v.domain: lambda s, p, o: schema.domain_range(store, v, s, p, o),
            v.range: lambda s, p, o: schema.domain_range(store, v, s, p, o),
            v.eqc: lambda s, _, o: schema.equivalent_class(store, v, s, o),
            v.eqp: lambda s, _, o: schema.equivalent_property(store, v, s, o),
            v.inverse_of: lambda s, _, o: schema.inverse_of(store, s, o),
            **dict.fromkeys(restriction, lambda s, _, o: self.restriction(s)),
            v.intersection_of: self.boolean_class,
            v.union_of: self.boolean_class,
        }

    # ------------------------------------------------------------------ lists

    def items(self, head: int) -> list[int]:
        """The members of the ``rdf:List`` starting at ``head`` (stops at a cycle or a missing link)."""
        store, v = self.store, self.v
        out: list[int] = []
        seen: set[int] = set()
        node = head
        while node != v.nil and node not in seen:
            seen.add(node)
            firsts = store.objects(node, v.first)
            out.extend(firsts)
            rests = store.objects(node, v.rest)
            if not rests:
                break
            node = next(iter(rests))
        return out

    def list_axioms(self, predicate: int) -> Iterator[tuple[int, list[int]]]:
        """``(x, members)`` of every ``x predicate (m1 ... mn)`` with a non-empty list, over a snapshot of the
        axioms (the caller may add triples)."""
        for x, head in list(self.store.pairs(predicate)):
            members = self.items(head)
            if members:
                yield x, members

    def intersections(self) -> dict[int, list[tuple[int, list[int]]]]:
        """Member class -> the intersection classes it is part of, with all their members."""
        if self._intersections is None:
            index: dict[int, list[tuple[int, list[int]]]] = {}
            for c, members in self.list_axioms(self.v.intersection_of):
                for m in set(members):
                    index.setdefault(m, []).append((c, members))
            self._intersections = index
        return self._intersections

    def unions(self) -> dict[int, list[int]]:
        """Member class -> the union classes it is part of."""
        if self._unions is None:
            index: dict[int, list[int]] = {}
            for c, members in self.list_axioms(self.v.union_of):
                for m in set(members):
                    index.setdefault(m, []).append(c)
            self._unions = index
        return self._unions

    def clear_caches(self) -> None:
        """Forget the list caches and plans (after a merge or a new list axiom)."""
        self._intersections = None
        self._unions = None
        self.prop_plans.clear()
        self.class_plans.clear()

    # ------------------------------------------------------------------ dispatch

    def fire(self, s: int, p: int, o: int) -> None:
        """Every rule with ``(s, p, o)`` as one premise and the rest from the store."""
        v = self.v
        if p in self.schema_predicates or (p == v.type and o in self.meta_classes):
            self.prop_plans.clear()  # a plan built before this triple may miss it (its own rules cover the gap)
            self.class_plans.clear()
        self.data(s, p, o)
        rule = self.schema_rules.get(p)
        if rule is not None:
            rule(s, p, o)

    # ------------------------------------------------------------------ a triple of any predicate

    def data(self, s: int, p: int, o: int) -> None:  # noqa: PLR0912 - one branch per rule of the table
        """prp-dom, prp-rng, prp-fp, prp-ifp, prp-symp, prp-trp, prp-spo1, prp-eqp, prp-inv and the
        restriction rules cls-svf1/2, cls-avf, cls-hv2, cls-maxc2, cls-maxqc3/4 with the new triple as data."""
        plan = self.prop_plans.get(p)
        if plan is None:
            plan = self.prop_plans[p] = property_plan(self.store, self.v, p)
        if plan is EMPTY_PLAN:
            return
        store, v = self.store, self.v
        add = store.add
        if plan.domains or plan.ranges:
            typ = v.type
            s_types = store.objects(s, typ)
            for c in plan.domains:
                if c not in s_types:
                    add(s, typ, c)
            o_types = store.objects(o, typ)
            for c in plan.ranges:
                if c not in o_types:
                    add(o, typ, c)
        if plan.functional:
            for y in list(store.objects(s, p)):
                if y != o:
                    store.merge(o, y)
        if plan.inverse_functional:
            for x in list(store.subjects(p, o)):
                if x != s:
                    store.merge(s, x)
        if plan.symmetric:
            add(o, p, s)
        if plan.transitive:
            for z in list(store.objects(o, p)):
                add(s, p, z)
            for w in list(store.subjects(p, s)):
                add(w, p, o)
        for q in plan.supers:
            add(s, q, o)
        for q in plan.inverses:
            add(o, q, s)
        if plan.restrictions:
            typ, thing = v.type, v.thing
            s_types = store.objects(s, typ)
            for rp in plan.restrictions:
                r = rp.r
                if r not in s_types:
                    o_types = store.objects(o, typ)
                    for y in rp.some_values:
                        if y == thing or y in o_types:
                            add(s, typ, r)
                    if o in rp.has_value:
                        add(s, typ, r)
                else:
                    for y in rp.all_values:
                        add(o, typ, y)
                    if rp.max_one:
                        self._max_one(r, s, p)

    def _max_one(self, r: int, u: int, p: int) -> None:
        """cls-maxc2 and cls-maxqc3/4 for ``u`` of type ``r`` (a max-1 restriction on ``p``)."""
        store, v = self.store, self.v
        if self._is_one(r, v.max_cardinality):
            store.merge_all(list(store.objects(u, p)))
        if self._is_one(r, v.max_qualified):
            for cc in list(store.objects(r, v.on_class)):
                store.merge_all([y for y in store.objects(u, p) if cc == v.thing or store.has(y, v.type, cc)])

    def _is_one(self, r: int, predicate: int) -> bool:
        return is_one(self.store, r, predicate)

    # ------------------------------------------------------------------ rdf:type

    def typed(self, x: int, c: int) -> None:  # noqa: PLR0912 - one branch per rule of the table
        """cax-sco, cax-eqc, cls-int1/2, cls-uni, cls-svf1 (class side), cls-avf, cls-hv1, cls-maxc2 and the
        schema rules that start from a typing (scm-cls, scm-op, scm-dp and the property characteristics)."""
        plan = self.class_plans.get(c)
        if plan is None:
            lists = Lists(self.items, self.intersections(), self.unions())
            plan = self.class_plans[c] = class_plan(self.store, self.v, c, lists, self.schema_classes)
        store, v = self.store, self.v
        add, typ = store.add, v.type
        x_types = store.objects(x, typ)
        for c2 in plan.supers:
            if c2 not in x_types:
                add(x, typ, c2)
        for ic, members in plan.intersections:
            if ic not in x_types and all(m in x_types for m in members):
                add(x, typ, ic)
        for r, props in plan.filler_of:  # x is a filler: whoever points at it has r's type
            for p in props:
                for u in list(store.subjects(p, x)):
                    add(u, typ, r)
        if plan.restriction_on:  # c is a restriction
            for p in plan.restriction_on:
                for y in list(store.objects(c, v.all_values)):
                    for val in list(store.objects(x, p)):
                        add(val, typ, y)
                for y in list(store.objects(c, v.has_value)):
                    add(x, p, y)
                self._max_one(c, x, p)
        if plan.schema:
            self._schema_typing(x, c)

    def _schema_typing(self, x: int, c: int) -> None:
        store, v = self.store, self.v
        add = store.add
        if c == v.klass:
            add(x, v.sco, x)
            add(x, v.eqc, x)
            add(x, v.sco, v.thing)
            add(v.nothing, v.sco, x)
        elif c in self.property_classes:
            add(x, v.spo, x)
            add(x, v.eqp, x)
        elif c == v.functional:
            for values in [list(objs) for objs in store.pso.get(x, {}).values() if len(objs) > 1]:
                store.merge_all(values)
        elif c == v.inverse_functional:
            for subjects in [list(subs) for subs in store.pos.get(x, {}).values() if len(subs) > 1]:
                store.merge_all(subjects)
        elif c == v.symmetric:
            for a, b in store.pairs(x):
                add(b, x, a)
        elif c == v.transitive:
            for a, b in store.pairs(x):
                for z in list(store.objects(b, x)):
                    add(a, x, z)

    def restriction(self, r: int) -> None:
        """The restriction rules over the whole store when a piece of restriction ``r`` arrives."""
        store, v = self.store, self.v
        add, objects = store.add, store.objects
        for p in list(objects(r, v.on_property)):
            for y in list(objects(r, v.some_values)):
                for u, val in store.pairs(p):
                    if y == v.thing or store.has(val, v.type, y):
                        add(u, v.type, r)
            members = list(store.subjects(v.type, r))
            for y in list(objects(r, v.has_value)):
                for u in members:
                    add(u, p, y)
                for u in list(store.subjects(p, y)):
                    add(u, v.type, r)
            for u in members:
                for y in list(objects(r, v.all_values)):
                    for val in list(objects(u, p)):
                        add(val, v.type, y)
                self._max_one(r, u, p)

    def boolean_class(self, c: int, p: int, head: int) -> None:
        """cls-int1/2 and scm-int for an intersection; cls-uni and scm-uni for a union (a new list axiom: the
        list caches are cleared first)."""
        self.clear_caches()
        store, v = self.store, self.v
        add = store.add
        members = self.items(head)
        if p == v.intersection_of:
            if members:
                for y in list(store.subjects(v.type, members[0])):
                    if all(store.has(y, v.type, m) for m in members[1:]):
                        add(y, v.type, c)
            for y in list(store.subjects(v.type, c)):
                for m in members:
                    add(y, v.type, m)
            for m in members:
                add(c, v.sco, m)
        else:
            for m in members:
                for y in list(store.subjects(v.type, m)):
                    add(y, v.type, c)
                add(m, v.sco, c)

    def run(self, triples: Iterable[tuple[int, int, int]] = ()) -> None:
        """Fire the rules of every queued triple until the queue is empty."""
        queue, find, fire, store = self.store.queue, self.store.find, self.fire, self.store
        for triple in triples:
            queue.append(triple)
        while queue:
            s, p, o = queue.popleft()
            if store.parent:
                s, p, o = find(s), find(p), find(o)
                if not store.has(s, p, o):
                    continue
            fire(s, p, o)
