"""TypeDBGraphStore: the shared-graph ports of mabos on a TypeDB 3.x server.

It implements :class:`kg.ports.GraphStore` for the ports the shared graph holds: agents, scope grants, facts,
BDI nodes and relations (with path queries). Memory, rules, cases, proposals, embeddings, the index queue and
the outbox stay in the embedded store (docs/typedb.md): asking this store for them raises
:class:`~kg.errors.BackendError`.

Every adapter reaches the server through one :class:`~kg.store.typedb.client.TypeDBClient`, which uses the
process-wide driver; :meth:`TypeDBGraphStore.close` therefore closes nothing (other stores share it).
A fresh database needs the base schema first: :func:`ensure_schema` (or :meth:`TypeDBGraphStore.open`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, overload

from kg.clock import Clock, SystemClock
from kg.errors import BackendError
from kg.models import NodeKind
from kg.ports import Capabilities
from kg.store.typedb.agents import TypeDBAgentStore, TypeDBScopeStore, count_of, count_query, query, run
from kg.store.typedb.client import TypeDBClient
from kg.store.typedb.facts import TypeDBFactStore
from kg.store.typedb.graph import TypeDBBDIStore, TypeDBRelationStore
from kg.store.typedb.literals import encode_label
from kg.store.typedb.paths import STORED_KINDS
from kg.store.typedb.schema import base_schema
from kg.store.typedb.settings import TypeDBSettings
from kg.store.typedb.writes import node_type

if TYPE_CHECKING:
    from kg.ports import (
        GraphStore,
    )


def ensure_schema(client: TypeDBClient) -> bool:
    """Create the database if it is missing and define the base schema (idempotent); True if it was created."""
    created = client.ensure_database()
    client.define([base_schema()])
    return created


def stats_queries() -> dict[str, str]:
    """The count query of every statistic :meth:`TypeDBGraphStore.stats` reports, by name."""
    live = "not { $x has retracted-at $gone; };"
    queries = {
        "agents": count_query(["$x isa agent;"]),
        "grants": count_query(["$x isa scope-grant;"]),
        "facts.live": count_query(["$x isa fact;", live]),
        "facts.retracted": count_query(["$x isa fact, has retracted-at $gone;"]),
        # one row per derived fact, however many parents it has
        "facts.derived": query(
            ["$x isa fact;", live, "{ $x has rule-uid $rule; } or { $x has derived-from-uid $parent; };"],
            "select $x;\ndistinct;\nreduce $n = count;\n",
        ),
        "memory_items": count_query(["$x isa memory-item;"]),
        "rules": count_query(["$x isa rule;"]),
        "cases": count_query(["$x isa case;"]),
        "ontology_proposals": count_query(["$x isa ontology-proposal;"]),
    }  # fmt: skip
    queries |= {f"bdi.{k.value}": count_query([f"$x isa {encode_label(node_type(k.value))};"]) for k in NodeKind}
    queries |= {f"relations.{k.value}": count_query([f"$x isa {encode_label(k.value)};"]) for k in STORED_KINDS}
    return queries


class _EmbeddedOnly:
    """A port that stays in the embedded store (memory, rules, outbox ...): reading it raises BackendError."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> _EmbeddedOnly: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> NoReturn: ...

    def __get__(self, instance: object, owner: type | None = None) -> _EmbeddedOnly:
        if instance is None:  # on the class: the descriptor itself, as a property would be
            return self
        raise BackendError(f"typedb: {self.name} stays in the embedded store (docs/typedb.md)")


class TypeDBGraphStore:
    """The shared-graph ports (agents, scopes, facts, BDI nodes, relations) over one TypeDB database."""

    capabilities = Capabilities(shared=True, recursive_paths=True, full_text=False, system_time_history=False,
                                outbox=False, memory=False)  # fmt: skip

    def __init__(self, settings: TypeDBSettings, *, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.client = TypeDBClient(settings)
        self.agents = TypeDBAgentStore(self.client, self.clock)
        self.scopes = TypeDBScopeStore(self.client, self.clock)
        self.facts = TypeDBFactStore(self.client, self.clock)
        self.bdi = TypeDBBDIStore(self.client, self.clock)
        self.relations = TypeDBRelationStore(self.client, self.clock)

    @classmethod
    def open(cls, settings: TypeDBSettings, *, clock: Clock | None = None) -> TypeDBGraphStore:
        """A store on a database that is created and given the base schema when missing."""
        store = cls(settings, clock=clock)
        ensure_schema(store.client)
        return store

    # The embedded-only ports: the core learns from the capabilities not to ask (docs/typedb.md).
    memory = _EmbeddedOnly()
    rules = _EmbeddedOnly()
    cases = _EmbeddedOnly()
    proposals = _EmbeddedOnly()
    embeddings = _EmbeddedOnly()
    index_queue = _EmbeddedOnly()
    conversations = _EmbeddedOnly()
    summaries = _EmbeddedOnly()
    outbox = _EmbeddedOnly()

    def stats(self) -> dict[str, Any]:
        """Counts of every record type in the graph (one read transaction) and where the graph is."""
        queries = stats_queries()
        with self.client.transaction("read", "stats") as tx:
            counts = dict(zip(queries, (count_of(rows) for rows in run(tx, list(queries.values()))), strict=True))
        return {
            "backend": "typedb",
            **{k: v for k, v in self.settings.public().items() if k in ("address", "database")},
            "agents": counts["agents"],
            "grants": counts["grants"],
            "facts": {
                "live": counts["facts.live"],
                "retracted": counts["facts.retracted"],
                "derived": counts["facts.derived"],
            },
            "bdi": {k.value: counts[f"bdi.{k.value}"] for k in NodeKind},
            "relations": sum(counts[f"relations.{k.value}"] for k in STORED_KINDS),
            "memory_items": counts["memory_items"],
            "rules": counts["rules"],
            "cases": counts["cases"],
            "ontology_proposals": counts["ontology_proposals"],
        }

    def close(self) -> None:
        """Nothing to release: the driver is shared by the whole process (kg.store.typedb.client)."""


if TYPE_CHECKING:

    def _is_graph_store(store: TypeDBGraphStore) -> GraphStore:
        return store  # mypy checks that TypeDBGraphStore has every port of GraphStore


__all__ = ["TypeDBGraphStore", "ensure_schema", "stats_queries"]
