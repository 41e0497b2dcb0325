"""Outbox events -> TypeQL 3 write queries: how the embedded store's changes land in the shared graph.

:func:`event_queries` turns one outbox event into the write queries that apply it to a TypeDB database
defined with ``schema/typedb/base.tql``, each aggregate's payload mapped to its attributes here and written by the
one-record primitive of :mod:`kg.store.typedb.upsert`. Applying the queries again leaves the database as it was:

* a record is found by ``uid`` (``@key``): ``put $x isa T, has uid ...`` creates it once, then an
  ``update`` sets its single-valued attributes, one ``delete`` per attribute the record no longer has, and
  multi-valued attributes are replaced (delete all, insert the new list);
* every query after the ``put`` carries the guard ``not { $x has updated-at $t; $t > <event time>; }``,
  so an older state never overwrites a newer one (write-through and ``sync push`` may race); two states of
  the same instant are ordered by the record's version, the outbox position (``seq``) of the event that wrote
  it (``record-version``): ``not { $x has updated-at <event time>, has record-version $v; $v > <seq>; }``, so
  a resend of the earlier one never overwrites the later one;
* relations and grants are inserted only when absent (``not { ... }``), deletes of what is gone match
  nothing;
* a retracted fact stays retracted.

Values go through :mod:`kg.store.typedb.literals` and labels are fixed names checked by it: nothing a
caller wrote is ever pasted into query text unencoded. The queries of every aggregate are golden-tested
(``tests/data/typedb/writes/``). The record layout is in ``docs/typedb-schema.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.models import RELATION_SPECS, Grant, NodeKind, OutboxEvent, RelationKind, format_ts
from kg.store.typedb.literals import encode_label
from kg.store.typedb.upsert import (
    ATTRIBUTE_TYPES,
    MULTI_VALUED,
    Attributes,
    EntityWrite,
    delete_record,
    entity_upsert,
    guard,
    has,
    literal,
    parse_ts,
)

#: Memory types stored as a subtype of ``memory-item`` (they play roles in agent-has-skill and
#: decision-resolves-goal).
MEMORY_SUBTYPES = {"skill": "skill", "decision": "decision"}


def node_type(kind: str) -> str:
    """The TypeDB entity type of a BDI node kind (``plan_step`` -> ``plan-step``)."""
    return NodeKind(kind).value.replace("_", "-")


def memory_type(memory_kind: str | None) -> str:
    """The TypeDB entity type of a memory item of type ``memory_kind``."""
    return MEMORY_SUBTYPES.get(memory_kind or "", "memory-item")


def _common(p: Mapping[str, Any]) -> Attributes:
    return {
        "agent-id": p.get("agent_id"),
        "record-scope": p.get("scope"),
        "created-at": p.get("created_at"),
        "updated-at": p.get("updated_at"),
    }


def _stamp(p: Mapping[str, Any], event: OutboxEvent) -> datetime:
    raw = p.get("updated_at")
    return parse_ts(raw) if isinstance(raw, str) else event.created_at


def _version(event: OutboxEvent) -> int | None:
    """The state's version: the event's outbox position (none for a direct write, which has position 0)."""
    return event.seq if event.seq > 0 else None


def _put(
    e: OutboxEvent, entity: str, attributes: Attributes, *, stamp: datetime | None = None, condition: str = ""
) -> list[str]:
    """The queries that store the event's record as ``entity``: at its payload's time (or ``stamp``), ordered by
    the event's outbox position."""
    when = _stamp(e.payload, e) if stamp is None else stamp
    return entity_upsert(EntityWrite(entity, e.record_uid, when, attributes, condition=condition, version=_version(e)))


def _strings(values: Any) -> list[str]:
    return [str(v) for v in values or []]


def _order(parents: Any) -> str | None:
    """The parents' order as a JSON list (attributes are unordered), None when there are none."""
    return json.dumps(_strings(parents)) if parents else None


# ------------------------------------------------------------------------------ aggregates


def _agent(e: OutboxEvent) -> list[str]:
    p = e.payload
    attributes: Attributes = {
        **_common(p),
        "agent-name": p.get("name"),
        "agent-role": p.get("role"),
        "agent-department": p.get("department"),
        "commitment-strategy": p.get("commitment_strategy"),
    }
    return _put(e, "agent", attributes)


def grant_uid(agent_id: str, scope: str) -> str:
    """The key of a grant: ``<agent-id>|<scope>`` (also the outbox record uid of a grant)."""
    return f"{agent_id}|{scope}"


def grant_insert_query(grant: Grant) -> str:
    """Insert the ``scope-grant`` unless it exists (the first grant is kept); nothing for an unknown agent."""
    key = has("uid", grant_uid(grant.agent_id, grant.scope))
    owned = ", ".join((key, has("agent-id", grant.agent_id), has("granted-scope", grant.scope),
                       has("granted-by", grant.granted_by), has("created-at", grant.created_at)))  # fmt: skip
    return (
        f"match\n  $a isa agent, {has('agent-id', grant.agent_id)};\n  not {{ $held isa scope-grant, {key}; }};\n"
        f"insert\n  $g isa scope-grant, links (grantee: $a), {owned};\n"
    )


def grant_delete_query(agent_id: str, scope: str) -> str:
    """Delete the grant of ``scope`` to ``agent_id`` (matches nothing when there is none)."""
    return f"match\n  $g isa scope-grant, {has('uid', grant_uid(agent_id, scope))};\ndelete\n  $g;\n"


def _grant(e: OutboxEvent) -> list[str]:
    p = e.payload
    if e.op == "delete":
        return [grant_delete_query(p["agent_id"], p["scope"])]
    return [grant_insert_query(Grant.model_validate(p))]


def _bdi(e: OutboxEvent) -> list[str]:
    p = e.payload
    attributes: Attributes = {
        **_common(p),
        "has-content": p.get("content"),
        "node-status": p.get("status"),
        "certainty-score": p.get("certainty"),
        "priority": p.get("priority"),
        "urgency-score": p.get("urgency"),
        "progress-score": p.get("progress"),
        "deadline": p.get("deadline"),
        "hierarchy-level": p.get("hierarchy_level"),
        "updated-by": e.agent_id or p.get("agent_id"),
    }
    if e.aggregate == NodeKind.PLAN_STEP.value:
        attributes["sequence-number"] = p.get("sequence")
    return _put(e, node_type(e.aggregate), attributes)


def _fact(e: OutboxEvent) -> list[str]:
    p = e.payload
    live = " not { $x has retracted-at $gone; };"
    if e.op == "retract":
        retracted = f"{has('retracted-at', p['retracted_at'])}, {has('retracted-by', p['retracted_by'])}"
        return [f"match $x isa fact, {has('uid', e.record_uid)};{live}\nupdate $x {retracted};"]
    attributes: Attributes = {
        **_common(p),
        "subject-term": p.get("subject"),
        "predicate-term": p.get("predicate"),
        "object-value": p.get("object"),
        "object-kind": p.get("object_kind"),
        "confidence-score": p.get("confidence"),
        "has-source": p.get("source"),
        "valid-from": p.get("valid_from"),
        "valid-until": p.get("valid_until"),
        "updated-by": p.get("updated_by"),
        "rule-uid": p.get("rule_id"),
        "derived-from-uid": _strings(p.get("derived_from")),
        "derived-from-order": _order(p.get("derived_from")),
    }
    # Every query after the put also skips a retracted fact (retraction is terminal in the source too).
    return _put(e, "fact", attributes, condition=live)


def _memory(e: OutboxEvent) -> list[str]:
    p = e.payload
    entity = memory_type(p.get("type"))
    attributes: Attributes = {
        **_common(p),
        "has-content": p.get("content"),
        "memory-type": p.get("type"),
        "memory-store": p.get("store"),
        "importance-score": p.get("importance"),
        "confidence-score": p.get("confidence"),
        "has-source": p.get("source"),
        "decay-tier": p.get("tier"),
        "expires-at": p.get("expires_at"),
        "archived-at": p.get("archived_at"),
        "memory-tag": _strings(p.get("tags")),
        "derived-from-uid": _strings(p.get("derived_from")),
        "derived-from-order": _order(p.get("derived_from")),
    }
    # A memory whose type moved in or out of skill/decision changes entity type: TypeDB cannot retype an
    # instance, so the old one goes (with its role links) and the new one is created.
    retype = (
        f"match $x isa memory-item, {has('uid', e.record_uid)}; not {{ $x isa! {encode_label(entity)}; }};"
        f"{guard('x', _stamp(p, e), _version(e))}\ndelete $x;"
    )
    return [retype, *_put(e, entity, attributes)]


def _relation(e: OutboxEvent) -> list[str]:
    if e.op == "delete":
        return delete_record(e.record_uid)
    p = e.payload
    kind = RelationKind(p["kind"])
    spec = RELATION_SPECS[kind]
    relation = encode_label(kind.value)
    links = f"links ({encode_label(spec.source_role)}: $s, {encode_label(spec.target_role)}: $t)"
    owned = ", ".join(
        has(a, v)
        for a, v in (("uid", p["uid"]), ("agent-id", p.get("agent_id")), ("record-scope", p.get("scope")),
                     ("created-at", p.get("created_at")))
        if v is not None
    )  # fmt: skip
    return [
        f"match $s isa record, {has('uid', p['source_uid'])}; $t isa record, {has('uid', p['target_uid'])};"
        f" not {{ $r isa {relation}, {has('uid', p['uid'])}; }};\ninsert $r isa {relation}, {links}, {owned};"
    ]


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _rule(e: OutboxEvent) -> list[str]:
    if e.op == "delete":
        return delete_record(e.record_uid)
    p = e.payload
    attributes: Attributes = {
        **_common(p),
        "updated-at": format_ts(_stamp(p, e)),
        "rule-name": p.get("name"),
        "rule-description": p.get("description"),
        "rule-type": p.get("type"),
        "rule-conditions-json": _json(p.get("conditions")),
        "rule-conclusion": _json(p.get("conclusion")),
        "violation-message": p.get("violation_message"),
        "severity": p.get("severity"),
        "rule-action": p.get("action"),
        "escalates": p.get("escalate"),
        "rule-confidence-factor": p.get("confidence_factor"),
        "is-enabled": p.get("enabled"),
        "rule-domain": p.get("domain"),
        "record-json": json.dumps({k: v for k, v in p.items() if k != "updated_at"}, sort_keys=True),
    }
    return _put(e, "rule", attributes)


def _case(e: OutboxEvent) -> list[str]:
    if e.op == "delete":
        return delete_record(e.record_uid)
    p = e.payload
    situation = p.get("situation") or {}
    solution = p.get("solution") or {}
    outcome = p.get("outcome") or {}
    attributes: Attributes = {
        **_common(p),
        "updated-at": p.get("created_at"),
        "situation-belief": _strings(situation.get("beliefs")),
        "situation-desire": _strings(situation.get("desires")),
        "situation-context": _json(situation.get("context")),
        "solution-plan-uid": solution.get("plan_id"),
        "solution-action": _strings(solution.get("actions")),
        "was-successful": outcome.get("success"),
        "teaches-lesson": _strings(outcome.get("lessons")),
        "record-json": json.dumps(p, sort_keys=True),
    }
    return _put(e, "case", attributes, stamp=parse_ts(p["created_at"]))  # a case never changes: stamped at creation


def _proposal(e: OutboxEvent) -> list[str]:
    p = e.payload
    attributes: Attributes = {
        **_common(p),
        # a proposal's payload has no updated_at (a property of the model, not a field): the event's time is the
        # state's time, so the newer-state guard has something to compare
        "updated-at": format_ts(_stamp(p, e)),
        "target-domain": p.get("domain"),
        "proposed-node-type": p.get("node_type"),
        "proposed-node-id": p.get("node_id"),
        "proposed-label": p.get("label"),
        "parent-class": p.get("parent_class"),
        "domain-class": p.get("domain_class"),
        "proposed-range": p.get("range"),
        "proposed-definition": p.get("sbvr_definition"),
        "proposed-synonym": _strings(p.get("sbvr_synonyms")),
        "rationale": p.get("rationale"),
        "proposal-multi-valued": p.get("multi_valued"),
        "proposer-agent-id": p.get("proposed_by"),
        "proposal-status": p.get("status"),
        "record-json": json.dumps(p, sort_keys=True),
    }
    return _put(e, "ontology-proposal", attributes)


def _local_only(e: OutboxEvent) -> list[str]:
    """Conversation memory (conversations, messages, summaries) is an agent's working data: it stays in the
    embedded store, the workspace's one store; TypeDB shares the graph, not the conversations. Nothing to write."""
    return []


WRITERS: dict[str, Callable[[OutboxEvent], list[str]]] = {
    "agent": _agent,
    "grant": _grant,
    "fact": _fact,
    "memory": _memory,
    "relation": _relation,
    "rule": _rule,
    "case": _case,
    "proposal": _proposal,
    "conversation": _local_only,
    "message": _local_only,
    "summary": _local_only,
    **{kind.value: _bdi for kind in NodeKind},
}


def event_queries(event: OutboxEvent) -> list[str]:
    """The TypeQL write queries that apply ``event`` (run them in order, in one transaction)."""
    writer = WRITERS.get(event.aggregate)
    if writer is None:
        raise InputError("aggregate", f"no TypeDB writer for outbox aggregate {event.aggregate!r}")
    try:
        return writer(event)
    except (KeyError, ValueError) as exc:
        raise InputError("payload", f"outbox event {event.seq} ({event.aggregate}) is malformed: {exc}") from exc


def batch_queries(events: Sequence[OutboxEvent]) -> list[str]:
    """The queries of ``events``, in order."""
    return [query for event in events for query in event_queries(event)]


__all__ = [
    "ATTRIBUTE_TYPES",
    "MULTI_VALUED",
    "WRITERS",
    "EntityWrite",
    "batch_queries",
    "delete_record",
    "entity_upsert",
    "event_queries",
    "grant_delete_query",
    "grant_insert_query",
    "grant_uid",
    "literal",
    "memory_type",
    "node_type",
]
