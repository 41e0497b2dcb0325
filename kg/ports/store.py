"""A backend as a whole: the ports it bundles, its capabilities and life cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kg.ports.agents import AgentStore, ScopeStore
from kg.ports.conversation import ConversationStore, SummaryStore
from kg.ports.embeddings import EmbeddingCache
from kg.ports.facts import FactStore
from kg.ports.graph import BDIStore, RelationStore
from kg.ports.memory import IndexQueue, MemoryStore
from kg.ports.ontology import ProposalStore
from kg.ports.outbox import OutboxStore
from kg.ports.reasoning import CaseStore, RuleStore


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports."""

    full_text: bool = False
    recursive_paths: bool = False
    system_time_history: bool = False
    outbox: bool = False
    shared: bool = False  # several machines read and write the same graph
    # memory items, rules, cases, ontology proposals, embeddings and the index queue (an agent's own working
    # data); a backend without them raises BackendError from those ports and the core uses the local store
    memory: bool = True


class GraphStore(Protocol):
    """One backend: its ports plus life cycle and statistics."""

    @property
    def capabilities(self) -> Capabilities:
        """What this backend supports."""
        ...

    @property
    def agents(self) -> AgentStore:
        """Agents."""
        ...

    @property
    def scopes(self) -> ScopeStore:
        """Scope grants."""
        ...

    @property
    def facts(self) -> FactStore:
        """Facts."""
        ...

    @property
    def bdi(self) -> BDIStore:
        """BDI nodes."""
        ...

    @property
    def relations(self) -> RelationStore:
        """Typed edges and traversals."""
        ...

    @property
    def memory(self) -> MemoryStore:
        """Memory items."""
        ...

    @property
    def rules(self) -> RuleStore:
        """Rules."""
        ...

    @property
    def cases(self) -> CaseStore:
        """Cases."""
        ...

    @property
    def proposals(self) -> ProposalStore:
        """Ontology proposals."""
        ...

    @property
    def embeddings(self) -> EmbeddingCache:
        """Cached embedding vectors."""
        ...

    @property
    def index_queue(self) -> IndexQueue:
        """What the vector index still lacks."""
        ...

    @property
    def conversations(self) -> ConversationStore:
        """Conversations and their messages."""
        ...

    @property
    def summaries(self) -> SummaryStore:
        """The summary DAG over conversations."""
        ...

    @property
    def outbox(self) -> OutboxStore:
        """Outbox events."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counts and backend facts for ``mabos status``."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
