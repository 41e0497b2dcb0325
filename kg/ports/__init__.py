"""Store ports: small interfaces per aggregate, one implementation per backend.

A :class:`GraphStore` bundles the ports of one backend (``store.facts``, ``store.agents`` ...); a
:class:`StoreBackend` is a whole adapter (only ``kg`` holds one), and :class:`StorePorts` is what an open
workspace hands out (``ws.ports``): the ports by role, never the adapter.
Stores do not decide who may see what: callers pass the scopes to read (see :mod:`kg.scopes`).
Every mutation is one transaction that also appends its outbox event(s).

The core never asks which backend it is talking to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg.faces import lazy_names

if TYPE_CHECKING:
    from kg.ports.agents import AgentStore, ScopeStore
    from kg.ports.conversation import (
        ChatMessage,
        ChatModel,
        ConversationStore,
        Summarizer,
        SummaryStore,
        SummaryText,
        TextSearch,
    )
    from kg.ports.embeddings import Embedder, EmbeddingCache, VectorIndex
    from kg.ports.extraction import ExtractionFailedError, Extractor, Marks, Transactions
    from kg.ports.facts import FactStore
    from kg.ports.graph import NODE_LIMIT, PATH_LIMIT, BDIStore, NodeFilter, PathSearch, RelationStore
    from kg.ports.graph_queries import GraphEdgeRow, GraphNodeRow, GraphQueryBackend, LineageRecordRow
    from kg.ports.memory import IndexQueue, MemoryStore, MemoryWrite, MemoryWriteResult, StoreLimits
    from kg.ports.ontology import ProposalStore
    from kg.ports.outbox import CommitNotifier, OutboxStore
    from kg.ports.reasoning import CaseStore, RuleStore
    from kg.ports.replay import ReplayApplier, SituationKey, UnknownAggregateError
    from kg.ports.store import GraphStore, StoreBackend, StorePorts
    from kg.ports.tokens import TokenRecord, TokenStore

#: The exported names by the module that defines them, each imported on first use (:mod:`kg.faces`):
#: ``from kg.ports import FactStore`` imports the fact port only, not the conversation or graph ones.
_SOURCES = {
    "kg.ports.agents": ("AgentStore", "ScopeStore"),
    "kg.ports.conversation": ("ChatMessage", "ChatModel", "ConversationStore", "Summarizer", "SummaryStore",
                              "SummaryText", "TextSearch"),
    "kg.ports.embeddings": ("Embedder", "EmbeddingCache", "VectorIndex"),
    "kg.ports.extraction": ("ExtractionFailedError", "Extractor", "Marks", "Transactions"),
    "kg.ports.facts": ("FactStore",),
    "kg.ports.graph": ("NODE_LIMIT", "PATH_LIMIT", "BDIStore", "NodeFilter", "PathSearch", "RelationStore"),
    "kg.ports.graph_queries": ("GraphEdgeRow", "GraphNodeRow", "GraphQueryBackend", "LineageRecordRow"),
    "kg.ports.memory": ("IndexQueue", "MemoryStore", "MemoryWrite", "MemoryWriteResult", "StoreLimits"),
    "kg.ports.ontology": ("ProposalStore",),
    "kg.ports.outbox": ("CommitNotifier", "OutboxStore"),
    "kg.ports.reasoning": ("CaseStore", "RuleStore"),
    "kg.ports.replay": ("ReplayApplier", "SituationKey", "UnknownAggregateError"),
    "kg.ports.store": ("GraphStore", "StoreBackend", "StorePorts"),
    "kg.ports.tokens": ("TokenRecord", "TokenStore"),
}  # fmt: skip
if not TYPE_CHECKING:  # mypy reads the imports above: a misspelt name stays an error
    __getattr__, __dir__ = lazy_names(__name__, _SOURCES)

__all__ = [
    "NODE_LIMIT",
    "PATH_LIMIT",
    "AgentStore",
    "BDIStore",
    "CaseStore",
    "ChatMessage",
    "ChatModel",
    "CommitNotifier",
    "ConversationStore",
    "Embedder",
    "EmbeddingCache",
    "ExtractionFailedError",
    "Extractor",
    "FactStore",
    "GraphEdgeRow",
    "GraphNodeRow",
    "GraphQueryBackend",
    "GraphStore",
    "IndexQueue",
    "LineageRecordRow",
    "Marks",
    "MemoryStore",
    "MemoryWrite",
    "MemoryWriteResult",
    "NodeFilter",
    "OutboxStore",
    "PathSearch",
    "ProposalStore",
    "RelationStore",
    "ReplayApplier",
    "RuleStore",
    "ScopeStore",
    "SituationKey",
    "StoreBackend",
    "StoreLimits",
    "StorePorts",
    "Summarizer",
    "SummaryStore",
    "SummaryText",
    "TextSearch",
    "TokenRecord",
    "TokenStore",
    "Transactions",
    "UnknownAggregateError",
    "VectorIndex",
]
