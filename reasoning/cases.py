"""Case-based reasoning over a workspace (``cbr_store``, ``cbr_retrieve``).

:class:`CaseService` stores an agent's cases (one per situation and scope: storing an identical situation
again returns the stored case) and prunes the scope past its capacity (default 10,000; failed and old
cases go first, see :func:`reasoning.cbr.prune`). Retrieval ranks the cases the agent can read by
CBR-BDI similarity (:func:`reasoning.cbr.retrieve`), with context similarity through the workspace's
embedder when a context is given.

The reasoning methods' engines (deductive, abductive, case-based, ...) live in
:mod:`reasoning.router.methods`.
"""

from __future__ import annotations

from typing import Any

from kg.clock import Clock
from kg.errors import InputError
from kg.ids import new_id
from kg.models import Case, Model, agent_scope, parse
from kg.models.request import fields_of, requested
from kg.ports import Embedder, GraphStore
from kg.scopes import ScopePolicy
from reasoning.cases_requests import CbrRetrieveRequest, CbrStoreRequest
from reasoning.cbr import DEFAULT_CAPACITY, CaseQuery, RetrievalResult, prune, retrieve, situation_key


class StoredCase(Model):
    """What ``cbr store`` did."""

    case: Case
    created: bool
    pruned: list[str] = []


class CaseService:
    """Cases of the agents, scope-checked."""

    def __init__(self, store: GraphStore, scopes: ScopePolicy, clock: Clock, embedder: Embedder | None,
                 *, capacity: int = DEFAULT_CAPACITY) -> None:  # fmt: skip
        self.store = store
        self.scopes = scopes
        self.clock = clock
        self.embedder = embedder
        self.capacity = capacity

    def store_case(self, agent_id: str, request: CbrStoreRequest | None = None, /, **fields: Any) -> StoredCase:
        """Store a case (a request, or its fields as keywords); an identical situation in the scope is kept once."""
        self.scopes.require_agent(agent_id)
        for own in ("agent_id", "created_at"):
            if own in fields:
                raise InputError(own, "is set by mabos, not by the caller")
        given = requested(CbrStoreRequest, request, fields)
        data = {k: v for k, v in fields_of(given, CbrStoreRequest).items() if v is not None}
        case = parse(Case, {"uid": data.pop("uid", None) or new_id("case"), "agent_id": agent_id,
                            "created_at": self.clock.now(), **data})  # fmt: skip
        self.scopes.check_write(agent_id, case.scope)
        stored, created = self.store.cases.add(case, situation_key=situation_key(case.situation))
        pruned: list[str] = []
        if created and self.store.cases.count(case.scope) > self.capacity:
            everything = self.store.cases.list(scopes=[case.scope])
            pruned = self.store.cases.delete(prune(everything, self.capacity, now=self.clock.now()))
        return StoredCase(case=stored, created=created, pruned=pruned)

    def retrieve(self, agent_id: str, request: CbrRetrieveRequest | None = None, /, **fields: Any) -> RetrievalResult:
        """The ``k`` cases most similar to the situation (a request, or its fields as keywords), among those the
        agent can read."""
        given = requested(CbrRetrieveRequest, request, fields)
        query = parse(CaseQuery, {"beliefs": given.beliefs, "desires": given.desires, "context": given.context})
        cases = self.store.cases.list(scopes=self.scopes.readable(agent_id))
        return retrieve(cases, query, k=given.k, weights=given.weights, embedder=self.embedder,
                        min_score=given.min_score)  # fmt: skip


__all__ = ["CaseService", "StoredCase", "agent_scope"]
