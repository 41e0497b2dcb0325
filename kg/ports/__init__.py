"""Store ports: small interfaces per aggregate, one implementation per backend.

A :class:`GraphStore` bundles the ports of one backend (``store.facts``, ``store.agents`` ...); a
:class:`StoreBackend` is a whole adapter (only ``kg`` holds one), and :class:`StorePorts` is what an open
workspace hands out (``ws.ports``): the ports by role, never the adapter.
Stores do not decide who may see what: callers pass the scopes to read (see :mod:`kg.scopes`).
Every mutation is one transaction that also appends its outbox event(s).

The core never asks which backend it is talking to.
"""

from __future__ import annotations

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
