"""Pure parts of the TypeDB fact adapter: TypeQL 3 builders, glob -> regex, fetch documents -> models, upsert plans.

Nothing here talks to a server (:mod:`kg.store.typedb.facts` runs the queries), so every template is a golden
file (``tests/data/typedb/store/facts_*.tql``) and the logic is unit-tested without mocks.

Layout (``docs/typedb-schema.md``): a fact is a ``fact`` entity keyed by ``uid`` owning ``subject-term``,
``predicate-term``, ``object-value`` ... and one ``derived-from-uid`` per parent. Attributes are sets, so the
parents' order (which the port returns) is also kept as a JSON array in :data:`ORDER_ATTRIBUTE`; a fact written
without it (an outbox replay) reads its parents back sorted.

* Values enter query text only through :mod:`kg.store.typedb.literals` (via :func:`kg.store.typedb.writes.literal`).
* Patterns: ``*`` is the wildcard (``\\*`` a literal star, :func:`kg.models.pattern_parts`); a pattern without one
  is an exact ``has``; otherwise ``like`` with an anchored, escaped regex (:func:`glob_regex`, Rust ``regex``
  syntax: ``(?s)`` so that ``.*`` also spans newlines, ``^``/``$`` are the ends of the text without ``(?m)``).
* "At least one of" is written ``not { not { A }; not { B }; };``: a disjunction would return a fact once per
  branch (and once per parent), and the limit would count the duplicates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.ids import new_id
from kg.models import AssertOutcome, AssertStatus, Fact, FactInput, FactQuery, LiveTriple, pattern_parts
from kg.store.typedb.graph_queries import one_of, parse_datetime
from kg.store.typedb.literals import encode_datetime, encode_double, encode_integer, encode_string
from kg.store.typedb.writes import literal

#: The attribute that keeps a record's parents in insertion order (JSON array); proposed for base.tql.
ORDER_ATTRIBUTE = "derived-from-order"
#: Values per disjunction: longer lists are split over several queries.
BATCH = 100
#: Characters with a meaning in Rust ``regex`` syntax (what ``regex::escape`` escapes).
RUST_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~")

FactKey = tuple[str, str, str, str]  # (scope, subject, predicate, object): at most one live fact each

# Fact field -> attribute, in the order every insert, update and fetch lists them.
_FIELDS: tuple[tuple[str, str], ...] = (
    ("uid", "uid"), ("agent_id", "agent-id"), ("scope", "record-scope"), ("subject", "subject-term"),
    ("predicate", "predicate-term"), ("object", "object-value"), ("object_kind", "object-kind"),
    ("confidence", "confidence-score"), ("source", "has-source"), ("valid_from", "valid-from"),
    ("valid_until", "valid-until"), ("created_at", "created-at"), ("updated_at", "updated-at"),
    ("updated_by", "updated-by"), ("retracted_at", "retracted-at"), ("retracted_by", "retracted-by"),
    ("rule_id", "rule-uid"), ("derived_from_order", ORDER_ATTRIBUTE),
)  # fmt: skip
_DATETIME_FIELDS = ("valid_from", "valid_until", "created_at", "updated_at", "retracted_at")
FACT_FETCH = (
    ",\n".join(f'  "{key}": $x.{attr}' for key, attr in _FIELDS) + ',\n  "derived_from": [ $x.derived-from-uid ]'
)
TRIPLE_FETCH = (
    '  "uid": $uid,\n  "created_at": $created,\n  "scope": $scope,\n  "subject": $x.subject-term,\n'
    '  "predicate": $x.predicate-term,\n  "object": $x.object-value,\n  "object_kind": $x.object-kind,\n'
    '  "confidence": $x.confidence-score,\n  "rule_id": $x.rule-uid'
)
_LIVE = "not { $x has retracted-at $retracted; };"


# ------------------------------------------------------------------------------------------ text helpers


def escape_regex(text: str) -> str:
    """``text`` as a Rust regex matching exactly itself (meta characters backslash-escaped)."""
    return "".join("\\" + ch if ch in RUST_REGEX_META else ch for ch in text)


def glob_regex(parts: Sequence[str]) -> str:
    """The anchored regex of a pattern's literal segments (``*`` between them matches any run, newlines too)."""
    return "(?s)^" + ".*".join(escape_regex(part) for part in parts) + "$"


def pattern_lines(attribute: str, variable: str, pattern: str) -> list[str]:
    """Match lines for one subject/predicate/object pattern of ``$x``; none when it matches everything."""
    parts = pattern_parts(pattern)
    if len(parts) == 1:
        return [f"$x has {attribute} {literal(attribute, parts[0])};"] if parts[0] else []
    if not any(parts):
        return []
    return [f"$x has {attribute} {variable};", f"{variable} like {encode_string(glob_regex(parts), 'pattern')};"]


def any_of(patterns: Sequence[str]) -> str:
    """At least one of ``patterns`` holds, without one answer per pattern that holds."""
    return "not { " + " ".join(f"not {{ {p} }};" for p in patterns) + " };"


def _pipeline(match: Sequence[str], stages: Sequence[str] = (), fetch: str | None = FACT_FETCH) -> str:
    text = "match\n" + "".join(f"  {line}\n" for line in match) + "".join(f"{stage}\n" for stage in stages)
    return text + (f"fetch {{\n{fetch}\n}};\n" if fetch is not None else "")


def _valid_at(at: datetime) -> list[str]:
    moment = encode_datetime(at, "valid_at")
    # half-open [valid_from, valid_until): an absent bound is open
    return [f"not {{ $x has valid-from $from; $from > {moment}; }};",
            f"not {{ $x has valid-until $until; $until <= {moment}; }};"]  # fmt: skip


def _derived(derived: bool | None) -> list[str]:
    if derived is None:
        return []
    if derived:
        return [any_of(["$x has rule-uid $some_rule;", "$x has derived-from-uid $some_parent;"])]
    return ["not { $x has rule-uid $rule; };", "not { $x has derived-from-uid $parent; };"]


def _scoped(scopes: Sequence[str]) -> list[str]:
    if not scopes:
        raise InputError("scopes", "at least one scope is needed")
    return ["$x has record-scope $scope;", one_of("$scope", scopes, "scopes")]


def _order(limit: int) -> list[str]:
    return ["sort $created, $uid;", f"limit {encode_integer(limit, 'limit')};"]


# ------------------------------------------------------------------------------------------ read queries


def agents_query(agent_ids: Sequence[str]) -> str:
    """The ids among ``agent_ids`` that name a stored agent."""
    return _pipeline(["$a isa agent, has agent-id $id;", one_of("$id", agent_ids, "agent_id")],
                     fetch='  "agent_id": $id')  # fmt: skip


def live_lookup_query(keys: Sequence[FactKey]) -> str:
    """The live facts with one of these (scope, subject, predicate, object) keys."""
    if not keys:
        raise InputError("facts", "at least one fact is needed")
    tests = [
        f"$x has record-scope {literal('record-scope', scope)}, has subject-term {literal('subject-term', s)}, "
        f"has predicate-term {literal('predicate-term', p)}, has object-value {literal('object-value', o)};"
        for scope, s, p, o in keys
    ]
    match = tests[0] if len(tests) == 1 else " or ".join(f"{{ {t} }}" for t in tests) + ";"
    return _pipeline(["$x isa fact;", _LIVE, match])


def get_many_query(uids: Sequence[str]) -> str:
    """Facts by uid, retracted or not, in any scope."""
    return _pipeline(["$x isa fact, has uid $uid;", one_of("$uid", uids, "uids")])


def fact_query(query: FactQuery) -> str:
    """The facts of a :class:`FactQuery` (``as_of`` aside), ordered by (created_at, uid), at most ``limit``."""
    match = ["$x isa fact, has uid $uid, has created-at $created;", *_scoped(query.scopes)]
    for attribute, variable, pattern in (("subject-term", "$subject", query.subject),
                                         ("predicate-term", "$predicate", query.predicate),
                                         ("object-value", "$object", query.object)):  # fmt: skip
        match += pattern_lines(attribute, variable, pattern)
    if not query.include_retracted:
        match.append(_LIVE)
    if query.min_confidence > 0:
        match += ["$x has confidence-score $confidence;",
                  f"$confidence >= {encode_double(query.min_confidence, 'min_confidence')};"]  # fmt: skip
    if query.valid_at is not None:
        match += _valid_at(query.valid_at)
    if not query.include_derived:
        match += _derived(False)
    if query.only_derived:
        match += _derived(True)
    return _pipeline(match, _order(query.limit))


def live_triples_query(
    scopes: Sequence[str], valid_at: datetime, derived: bool | None, batch: int, after: tuple[datetime, str] | None
) -> str:
    """One page of live facts valid at ``valid_at``, ordered by (created_at, uid), after the cursor ``after``."""
    match = ["$x isa fact, has uid $uid, has created-at $created;", *_scoped(scopes), _LIVE, *_valid_at(valid_at),
             *_derived(derived)]  # fmt: skip
    if after is not None:
        created, uid = encode_datetime(after[0], "after"), literal("uid", after[1])
        match.append(f"{{ $created > {created}; }} or {{ $created == {created}; $uid > {uid}; }};")
    return _pipeline(match, _order(batch), TRIPLE_FETCH)


def search_words(text: str) -> list[str]:
    """The words of a search text: runs of letters and digits (as FTS5's unicode61 tokenizer splits), deduplicated."""
    words, current = [], []
    for ch in text + " ":
        if ch.isalnum():
            current.append(ch)
        elif current:
            words.append("".join(current))
            current = []
    return list(dict.fromkeys(words))


def search_query(words: Sequence[str], scopes: Sequence[str], limit: int) -> str:
    """Live facts in which every word occurs (case-insensitively) in the subject, predicate or object."""
    if not words:
        raise InputError("text", "at least one word is needed")
    match = ["$x isa fact, has uid $uid, has created-at $created, has subject-term $subject, "
             "has predicate-term $predicate, has object-value $object;", *_scoped(scopes), _LIVE]  # fmt: skip
    for word in words:
        regex = encode_string("(?i)" + escape_regex(word), "text")
        match.append(any_of([f"$subject like {regex};", f"$predicate like {regex};", f"$object like {regex};"]))
    return _pipeline(match, _order(limit))


# ------------------------------------------------------------------------------------------ write queries


def fact_attributes(fact: Fact) -> dict[str, Any]:
    """The single-valued attributes of a stored fact (None: absent), in :data:`_FIELDS` order, uid aside."""
    values = fact.model_dump(exclude={"uid", "derived_from"})
    values["object_kind"] = fact.object_kind.value
    values["derived_from_order"] = json.dumps(fact.derived_from) if fact.derived_from else None
    return {attr: values[key] for key, attr in _FIELDS if key != "uid"}


def _has(attribute: str, value: Any) -> str:
    text = encode_string(value, attribute) if attribute == ORDER_ATTRIBUTE else literal(attribute, value)
    return f"has {attribute} {text}"


def _by_uid(uid: str, extra: str = "") -> str:
    return f"match $x isa fact, {_has('uid', uid)}{extra};"


def insert_query(fact: Fact) -> str:
    """The query that stores a new fact with its parents."""
    owned = [_has("uid", fact.uid)]
    owned += [_has(attr, value) for attr, value in fact_attributes(fact).items() if value is not None]
    owned += [_has("derived-from-uid", parent) for parent in fact.derived_from]
    return "insert\n  $x isa fact,\n" + ",\n".join(f"    {item}" for item in owned) + ";\n"


def update_queries(before: Fact, after: Fact) -> list[str]:
    """Queries that turn the stored ``before`` into ``after`` (same uid): set, delete, add parents."""
    old, new = fact_attributes(before), fact_attributes(after)
    changed = [_has(attr, value) for attr, value in new.items() if value is not None and value != old[attr]]
    queries = [f"{_by_uid(after.uid)}\nupdate $x {', '.join(changed)};\n"] if changed else []
    queries += [f"{_by_uid(after.uid, f', has {attr} $old')}\ndelete has $old of $x;\n"
                for attr, value in new.items() if value is None and old[attr] is not None]  # fmt: skip
    added = [_has("derived-from-uid", parent) for parent in after.derived_from if parent not in before.derived_from]
    if added:
        queries.append(f"{_by_uid(after.uid)}\ninsert $x {', '.join(added)};\n")
    return queries


def retract_match(scopes: Sequence[str], uids: Sequence[str], subject: str | None, predicate: str | None) -> list[str]:
    """Match lines of the live facts a retraction takes (``$x``, its ``$uid``)."""
    match = ["$x isa fact, has uid $uid;", *_scoped(scopes)]
    if uids:
        match.append(one_of("$uid", uids, "uids"))
    if subject is not None:
        match.append(f"$x {_has('subject-term', subject)};")
    if predicate is not None:
        match.append(f"$x {_has('predicate-term', predicate)};")
    return [*match, _LIVE]


def retract_find_query(match: Sequence[str]) -> str:
    """The uids a retraction will take."""
    return _pipeline(match, fetch='  "uid": $uid')


def retract_update_query(match: Sequence[str], at: datetime, by: str) -> str:
    """Mark the matched facts retracted (nothing is deleted)."""
    return _pipeline(match, [f"update $x {_has('retracted-at', at)}, {_has('retracted-by', by)};"], fetch=None)


# ------------------------------------------------------------------------------------------ answers -> models


def ordered_parents(parents: Sequence[str], order: str | None) -> list[str]:
    """The parent uids in insertion order as kept by :data:`ORDER_ATTRIBUTE`; parents it does not list, sorted, last."""
    try:
        listed = json.loads(order) if order else []
    except ValueError:  # a damaged order is no reason to lose the parents themselves
        listed = []
    owned = set(parents)
    first = [p for p in dict.fromkeys(listed) if isinstance(p, str) and p in owned]
    return first + sorted(owned - set(first))


def fact_from_doc(doc: Mapping[str, Any]) -> Fact:
    """A fetched fact document (:data:`FACT_FETCH`) as a :class:`Fact`."""
    data = {key: doc.get(key) for key, _ in _FIELDS if key != "derived_from_order"}
    for key in _DATETIME_FIELDS:
        data[key] = parse_datetime(data[key])
    data["confidence"] = float(doc["confidence"])
    data["derived_from"] = ordered_parents(doc.get("derived_from") or [], doc.get("derived_from_order"))
    return Fact.model_validate(data)


def triple_from_doc(doc: Mapping[str, Any]) -> LiveTriple:
    """A fetched :data:`TRIPLE_FETCH` document as a :class:`LiveTriple`."""
    return LiveTriple(doc["uid"], doc["subject"], doc["predicate"], doc["object"], float(doc["confidence"]),
                      doc.get("rule_id"), doc["scope"], doc["object_kind"])  # fmt: skip


# ------------------------------------------------------------------------------------------ upsert plan


def fact_key(fact: FactInput | Fact) -> FactKey:
    """The (scope, subject, predicate, object) of a fact: at most one live fact has it."""
    if fact.scope is None or fact.object_kind is None:  # FactInput fills both; a bare model_construct may not
        raise InputError("fact", "object_kind and scope must be set")
    return (fact.scope, fact.subject, fact.predicate, fact.object)


@dataclass
class AssertPlan:
    """What an assert batch does: one outcome per input, the write queries in order, and the live facts of the
    batch's keys once it is done."""

    outcomes: list[AssertOutcome] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    facts: dict[FactKey, Fact] = field(default_factory=dict)


def _values_changed(current: Fact, fact: FactInput) -> bool:
    """Whether an upsert changes stored values (the SQLite adapter's ``ON CONFLICT ... WHERE``)."""
    return (
        current.confidence != fact.confidence or current.source != fact.source
        or current.valid_from != fact.valid_from or current.valid_until != fact.valid_until
        or current.object_kind != fact.object_kind
        or (fact.rule_id is not None and current.rule_id != fact.rule_id)
        or (bool(fact.rule_id or fact.derived_from) and not current.derived)
    )  # fmt: skip


def _created(fact: FactInput, asserted_by: str, now: datetime) -> Fact:
    return Fact.model_validate({
        "uid": new_id("fact"), "agent_id": fact.agent_id, "scope": fact.scope, "subject": fact.subject,
        "predicate": fact.predicate, "object": fact.object, "object_kind": fact.object_kind,
        "confidence": fact.confidence, "source": fact.source, "valid_from": fact.valid_from,
        "valid_until": fact.valid_until, "created_at": now, "updated_at": now, "updated_by": asserted_by,
        "rule_id": fact.rule_id, "derived_from": list(dict.fromkeys(fact.derived_from)),
    })  # fmt: skip


def plan_asserts(facts: Sequence[FactInput], live: Mapping[FactKey, Fact], *, asserted_by: str,
                 now: datetime) -> AssertPlan:  # fmt: skip
    """Outcomes and writes of asserting ``facts`` one by one over the ``live`` facts of their keys.

    A new key is created (fresh uid, parents deduplicated in order); a live one keeps its uid: changed values
    (confidence, source, validity, object kind, a given rule, becoming derived) are written with
    ``updated_at``/``updated_by``, new parents are appended (without touching ``updated_at``, as SQLite), and the
    outcome is ``updated``; otherwise ``unchanged``. Repeats inside the batch see the earlier ones.
    """
    plan = AssertPlan(facts=dict(live))
    state = plan.facts
    for fact in facts:
        key = fact_key(fact)
        current = state.get(key)
        if current is None:
            state[key] = created = _created(fact, asserted_by, now)
            plan.outcomes.append(AssertOutcome(created.uid, AssertStatus.CREATED))
            plan.queries.append(insert_query(created))
            continue
        changes: dict[str, Any] = {}
        if _values_changed(current, fact):
            changes = {"confidence": fact.confidence, "source": fact.source, "object_kind": fact.object_kind,
                       "valid_from": fact.valid_from, "valid_until": fact.valid_until,
                       "rule_id": fact.rule_id or current.rule_id,
                       "updated_at": now, "updated_by": asserted_by}  # fmt: skip
        added = [p for p in dict.fromkeys(fact.derived_from) if p not in current.derived_from]
        if added:
            changes["derived_from"] = [*current.derived_from, *added]
        status = AssertStatus.UPDATED if changes else AssertStatus.UNCHANGED
        plan.outcomes.append(AssertOutcome(current.uid, status))
        if changes:
            state[key] = updated = current.model_copy(update=changes)
            plan.queries += update_queries(current, updated)
    return plan


__all__ = [
    "BATCH",
    "FACT_FETCH",
    "ORDER_ATTRIBUTE",
    "RUST_REGEX_META",
    "TRIPLE_FETCH",
    "AssertPlan",
    "FactKey",
    "agents_query",
    "any_of",
    "escape_regex",
    "fact_attributes",
    "fact_from_doc",
    "fact_key",
    "fact_query",
    "get_many_query",
    "glob_regex",
    "insert_query",
    "live_lookup_query",
    "live_triples_query",
    "ordered_parents",
    "pattern_lines",
    "plan_asserts",
    "retract_find_query",
    "retract_match",
    "retract_update_query",
    "search_query",
    "search_words",
    "triple_from_doc",
    "update_queries",
]
