"""Builders for the contract suite: records made through the models, stored through the ports only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kg.clock import FixedClock
from kg.ids import new_id
from kg.models import (
    NODE_MODELS,
    Agent,
    AssertOutcome,
    BDINode,
    Fact,
    FactInput,
    FactQuery,
    Grant,
    NodeKind,
    Relation,
    RelationKind,
    agent_scope,
    parse,
)
from kg.ports import GraphStore

_ID_KIND = {NodeKind.PLAN_STEP: "plan_step"}


class Builder:
    """Makes valid records for one store and clock, and reads the store's whole visible state."""

    def __init__(self, store: GraphStore, clock: FixedClock) -> None:
        self.store = store
        self.clock = clock

    def agent(self, agent_id: str, **fields: Any) -> Agent:
        now = self.clock.now()
        data = {
            "uid": new_id("agent"),
            "agent_id": agent_id,
            "name": agent_id.title(),
            "created_at": now,
            "updated_at": now,
            **fields,
        }
        return self.store.agents.create(parse(Agent, data))

    def grant(self, agent_id: str, scope: str, granted_by: str = "admin") -> Grant:
        grant = parse(
            Grant, {"agent_id": agent_id, "scope": scope, "granted_by": granted_by, "created_at": self.clock.now()}
        )
        return self.store.scopes.grant(grant)

    @staticmethod
    def fact_input(agent_id: str, subject: str, predicate: str, obj: str, **fields: Any) -> FactInput:
        data = {"agent_id": agent_id, "subject": subject, "predicate": predicate, "object": obj, **fields}
        return parse(FactInput, data)

    def assert_facts(
        self, agent_id: str, triples: Sequence[tuple[str, str, str]], **fields: Any
    ) -> list[AssertOutcome]:
        inputs = [self.fact_input(agent_id, s, p, o, **fields) for s, p, o in triples]
        return self.store.facts.assert_many(inputs, asserted_by=agent_id)

    def fact(self, agent_id: str, subject: str, predicate: str, obj: str, **fields: Any) -> Fact:
        """Assert one fact and read it back."""
        outcome = self.assert_facts(agent_id, [(subject, predicate, obj)], **fields)[0]
        return self.store.facts.get_many([outcome.uid])[outcome.uid]

    def query(self, scopes: Sequence[str], **criteria: Any) -> list[Fact]:
        return self.store.facts.query(parse(FactQuery, {"scopes": list(scopes), **criteria}))

    def node(self, kind: NodeKind, agent_id: str, content: str, **fields: Any) -> BDINode:
        now = self.clock.now()
        data = {
            "uid": new_id(_ID_KIND.get(kind, kind.value)),
            "agent_id": agent_id,
            "content": content,
            "created_at": now,
            "updated_at": now,
            **fields,
        }
        return self.store.bdi.add(parse(NODE_MODELS[kind], data))

    def relation(
        self, kind: RelationKind, source_uid: str, target_uid: str, agent_id: str, scope: str | None = None
    ) -> Relation:
        """A relation model (not stored: pass it to ``store.relations.link``)."""
        return parse(
            Relation,
            {
                "uid": new_id("relation"),
                "kind": kind,
                "source_uid": source_uid,
                "target_uid": target_uid,
                "agent_id": agent_id,
                "scope": scope or agent_scope(agent_id),
                "created_at": self.clock.now(),
            },
        )

    def link(self, kind: RelationKind, source_uid: str, target_uid: str, agent_id: str, **kw: Any) -> Relation:
        return self.store.relations.link(self.relation(kind, source_uid, target_uid, agent_id, **kw))

    def state(self, scopes: Sequence[str]) -> dict[str, Any]:
        """Everything the ports show for ``scopes``: for "nothing changed" assertions."""
        agents = self.store.agents.list()
        facts = self.query(scopes, include_retracted=True, limit=100_000)
        nodes = self.store.bdi.list(scopes=scopes, limit=100_000)
        return {
            "agents": [a.model_dump() for a in agents],
            "grants": {a.agent_id: [g.model_dump() for g in self.store.scopes.grants(a.agent_id)] for a in agents},
            "facts": [f.model_dump() for f in facts],
            "nodes": [n.model_dump() for n in nodes],
            "relations": sorted(
                r.model_dump_json() for n in nodes for r in self.store.relations.relations(n.uid, scopes=scopes)
            ),
            "outbox": self.outbox_state(),
        }

    def outbox_state(self) -> Any:
        return self.store.outbox.counts(), [e.model_dump() for e in self.store.outbox.pending(limit=100_000)]


@pytest.fixture
def mk(graph_store: GraphStore, clock: FixedClock) -> Builder:
    """A :class:`Builder` over the backend under test."""
    return Builder(graph_store, clock)


@pytest.fixture
def memory_store(graph_store: GraphStore, clock: FixedClock) -> GraphStore:
    """The backend under test with agents ``a`` and ``b``."""
    builder = Builder(graph_store, clock)
    for agent_id in ("a", "b"):
        builder.agent(agent_id, name=agent_id)
    return graph_store
