"""TypeDB adapters of the agent and scope ports, and the query helpers every TypeDB port adapter shares.

Records are written exactly as the outbox replay writes them: :func:`record_writes` builds the outbox event
the embedded store would write for the same change and turns it into queries with
:func:`kg.store.typedb.writes.event_queries`, so a record created here reads back the same as one replayed.

Grants are ``scope-grant`` relations (schema/typedb/base.tql): one per agent and scope, keyed by ``uid``
``<agent-id>|<scope>`` (the outbox record uid of a grant), whose one role player is the agent, owning who
granted it and when. Their queries live in :mod:`kg.store.typedb.writes`, shared with the replay writer.

Every check and its write run in one write transaction (snapshot isolation): a failed check raises before
anything is written, and leaving the transaction uncommitted rolls it back. Values enter query text only
through :mod:`kg.store.typedb.literals`; every template is golden-tested (``tests/data/typedb/store/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kg.clock import Clock
from kg.errors import ConflictError, InputError, NotFoundError
from kg.models import Agent, Grant, OutboxEvent
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.graph_queries import one_of, parse_datetime
from kg.store.typedb.literals import encode_label, encode_string
from kg.store.typedb.writes import event_queries, grant_delete_query, grant_insert_query, grant_uid

#: Fetch keys of an agent -> its attributes.
AGENT_FIELDS = (
    ("uid", "uid"), ("agent_id", "agent-id"), ("scope", "record-scope"), ("name", "agent-name"),
    ("role", "agent-role"), ("department", "agent-department"), ("commitment_strategy", "commitment-strategy"),
    ("created_at", "created-at"), ("updated_at", "updated-at"),
)  # fmt: skip
#: Fetch keys of a grant -> the attributes of its ``scope-grant`` relation.
GRANT_FIELDS = (
    ("agent_id", "agent-id"), ("scope", "granted-scope"), ("granted_by", "granted-by"), ("created_at", "created-at"),
)  # fmt: skip


# ------------------------------------------------------------------------------ shared helpers


def fetch_body(variable: str, fields: Sequence[tuple[str, str]], indent: str = "  ") -> str:
    """``fetch { "key": $x.attribute, ... };`` for card <= 1 attributes (absent ones come back null)."""
    lines = ",\n".join(f'{indent}"{key}": {variable}.{encode_label(attr)}' for key, attr in fields)
    return f"fetch {{\n{lines}\n}};\n"


def query(match: Sequence[str], tail: str) -> str:
    """``match`` with one statement per line, then the rest of the pipeline."""
    return "match\n" + "".join(f"  {line}\n" for line in match) + tail


def count_query(match: Sequence[str]) -> str:
    """How many answers ``match`` has (one row ``{"n": count}``)."""
    return query(match, "reduce $n = count;\n")


def count_of(rows: Sequence[Any]) -> int:
    """The count of a :func:`count_query` answer."""
    return int(rows[0]["n"]) if rows else 0


def uid_count_query(uid: str) -> str:
    """Records (entities) holding ``uid``: it is their ``@key``, so 0 or 1."""
    return count_query([f"$x isa record, has uid {encode_string(uid, 'uid')};"])


def agent_count_query(agent_id: str) -> str:
    """Agents with ``agent_id`` (0 or 1)."""
    return count_query([f"$x isa agent, has agent-id {encode_string(agent_id, 'agent_id')};"])


def scope_filter(variable: str, scopes: Sequence[str]) -> list[str]:
    """``$v`` equals one of ``scopes``; InputError when none is given (as the embedded store)."""
    if not scopes:
        raise InputError("scopes", "at least one scope is needed")
    return [one_of(variable, scopes, "scopes")]


def record_writes(aggregate: str, payload: dict[str, Any], *, agent_id: str | None, now: datetime) -> list[str]:
    """The write queries of the outbox event the embedded store writes for this change (one layout)."""
    event = OutboxEvent(seq=0, aggregate=aggregate, op="upsert", record_uid=payload["uid"], agent_id=agent_id,
                        scope=payload.get("scope"), payload=payload, created_at=now)  # fmt: skip
    return event_queries(event)


def run(tx: Any, queries: Sequence[str]) -> list[list[Any]]:
    """Run ``queries`` in order in the open transaction, each one's answers collected before the next."""
    return [TypeDBClient.answers(tx, q) for q in queries]


def apply(tx: Any, queries: Sequence[str]) -> None:
    """Run write queries in order in the open write transaction (each resolved, as ``TypeDBClient.write``)."""
    for text in queries:
        tx.query(text).resolve()


def values(doc: dict[str, Any], datetimes: Sequence[str], *, keep_null: bool = False) -> dict[str, Any]:
    """A fetched document with its datetime keys parsed to aware UTC; absent (null) keys dropped, so the
    model's defaults apply, unless ``keep_null`` (a stored record's None stays None)."""
    parsed = {k: parse_datetime(v) if k in datetimes else v for k, v in doc.items()}
    return parsed if keep_null else {k: v for k, v in parsed.items() if v is not None}


# ------------------------------------------------------------------------------ agents


def agent_query(agent_id: str | None) -> str:
    """The agent with ``agent_id``, or every agent."""
    match = "$x isa agent" + ("" if agent_id is None else f", has agent-id {encode_string(agent_id, 'agent_id')}")
    return query([match + ";"], fetch_body("$x", AGENT_FIELDS))


def agent_from_doc(doc: dict[str, Any]) -> Agent:
    """An agent from its fetched document (absent role, department, strategy take the model defaults)."""
    return Agent.model_validate(values(doc, ("created_at", "updated_at")))


class TypeDBAgentStore:
    """Agents in the shared TypeDB graph."""

    def __init__(self, client: TypeDBClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def create(self, agent: Agent) -> Agent:
        """Store a new agent; ConflictError if its id (or uid) is taken."""
        writes = record_writes("agent", agent.model_dump(mode="json"), agent_id=agent.agent_id, now=self.clock.now())
        with self.client.transaction("write", "create agent") as tx:
            taken = run(tx, [agent_count_query(agent.agent_id), uid_count_query(agent.uid)])
            if any(count_of(rows) for rows in taken):
                raise ConflictError(f"agent_id: agent {agent.agent_id!r} already exists")
            apply(tx, writes)
            tx.commit()
        return agent

    def get(self, agent_id: str) -> Agent:
        """One agent by id, or NotFoundError."""
        docs = self.client.read(agent_query(agent_id))
        if not docs:
            raise NotFoundError(f"agent: no agent {agent_id!r} (create it with 'mabos agent add {agent_id}')")
        return agent_from_doc(docs[0])

    def list(self) -> list[Agent]:
        """Every agent, ordered by id."""
        return sorted((agent_from_doc(d) for d in self.client.read(agent_query(None))), key=lambda a: a.agent_id)

    def exists(self, agent_id: str) -> bool:
        """Whether an agent with this id exists."""
        return count_of(self.client.read(agent_count_query(agent_id))) > 0


# ------------------------------------------------------------------------------ scope grants


def _grant_key(agent_id: str, scope: str) -> str:
    return f"has uid {encode_string(grant_uid(agent_id, scope), 'uid')}"


def grant_count_query(agent_id: str, scope: str) -> str:
    """Grants of ``scope`` to ``agent_id`` (0 or 1)."""
    return count_query([f"$g isa scope-grant, {_grant_key(agent_id, scope)};"])


def grants_query(agent_id: str) -> str:
    """Every grant held by ``agent_id``."""
    match = [f"$g isa scope-grant, has agent-id {encode_string(agent_id, 'agent_id')};"]
    return query(match, fetch_body("$g", GRANT_FIELDS))


def grant_from_doc(doc: dict[str, Any]) -> Grant:
    """A grant from its fetched document."""
    return Grant.model_validate(values(doc, ("created_at",)))


class TypeDBScopeStore:
    """Scope grants in the shared TypeDB graph (``scope-grant`` relations)."""

    def __init__(self, client: TypeDBClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock

    def grant(self, grant: Grant) -> Grant:
        """Record a grant; granting twice keeps the first. NotFoundError for an unknown agent."""
        with self.client.transaction("write", "grant scope") as tx:
            agents, existing = run(tx, [agent_count_query(grant.agent_id),
                                        grant_count_query(grant.agent_id, grant.scope)])  # fmt: skip
            if not count_of(agents):
                raise NotFoundError(f"agent_id: no agent {grant.agent_id!r}")
            if not count_of(existing):
                apply(tx, [grant_insert_query(grant)])
                tx.commit()
        return grant

    def revoke(self, agent_id: str, scope: str, *, revoked_by: str) -> bool:
        """Delete a grant (a permission, not knowledge: it is not kept); whether one existed."""
        with self.client.transaction("write", "revoke scope") as tx:
            if not count_of(run(tx, [grant_count_query(agent_id, scope)])[0]):
                return False
            apply(tx, [grant_delete_query(agent_id, scope)])
            tx.commit()
        return True

    def grants(self, agent_id: str) -> list[Grant]:
        """Grants held by an agent, ordered by scope."""
        return sorted((grant_from_doc(d) for d in self.client.read(grants_query(agent_id))), key=lambda g: g.scope)


__all__ = [
    "TypeDBAgentStore",
    "TypeDBScopeStore",
    "agent_count_query",
    "agent_from_doc",
    "agent_query",
    "apply",
    "count_of",
    "count_query",
    "fetch_body",
    "grant_count_query",
    "grant_delete_query",
    "grant_from_doc",
    "grant_insert_query",
    "grant_uid",
    "grants_query",
    "query",
    "record_writes",
    "run",
    "scope_filter",
    "uid_count_query",
    "values",
]
