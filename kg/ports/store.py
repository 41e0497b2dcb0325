"""A store by its ports: :class:`GraphStore` (the ports features take), :class:`StoreBackend` (an adapter as a
whole: every port and its life cycle) and :class:`StorePorts` (what the workspace hands out: the ports by
role and nothing else, never the adapter)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kg.ports.agents import AgentStore, ScopeStore
from kg.ports.conversation import ConversationStore, SummaryStore
from kg.ports.embeddings import EmbeddingCache
from kg.ports.extraction import Marks, Transactions
from kg.ports.facts import FactStore
from kg.ports.graph import BDIStore, RelationStore
from kg.ports.graph_queries import GraphQueryBackend
from kg.ports.memory import IndexQueue, MemoryStore
from kg.ports.ontology import ProposalStore
from kg.ports.outbox import CommitNotifier, OutboxStore
from kg.ports.reasoning import CaseStore, RuleStore
from kg.ports.replay import ReplayApplier
from kg.ports.tokens import TokenStore


class GraphStore(Protocol):
    """The ports of one store by aggregate: what a feature service is built on (:class:`StorePorts` is one)."""

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


class StoreBackend(GraphStore, Protocol):
    """A store adapter as a whole (``kg.backends`` opens one): its ports and life cycle.

    Only ``kg`` holds one: the workspace keeps it private and hands out :class:`StorePorts`.
    """

    @property
    def marks(self) -> Marks:
        """High-water marks (daily logs, extraction)."""
        ...

    @property
    def transactions(self) -> Transactions:
        """One write transaction across ports."""
        ...

    @property
    def tokens(self) -> TokenStore:
        """API tokens of remote callers (local credentials, never replayed)."""
        ...

    @property
    def replay(self) -> ReplayApplier:
        """Another store's outbox events applied as they are."""
        ...

    @property
    def commits(self) -> CommitNotifier:
        """Word after each committed write."""
        ...

    @property
    def graph_queries(self) -> GraphQueryBackend:
        """The cross-agent graph queries on this store."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True, slots=True)
class StorePorts:
    """The ports of an open store by role, typed by their protocols: what ``Workspace.ports`` hands out.

    It holds no connection and no life cycle (the workspace opens and closes the store), so code outside
    ``kg`` asks for "the fact store", "the outbox" or "the commit notifier" and never meets the adapter.
    It is a :class:`GraphStore`, so a service built on one can be built on this.
    """

    agents: AgentStore
    scopes: ScopeStore
    facts: FactStore
    bdi: BDIStore
    relations: RelationStore
    memory: MemoryStore
    rules: RuleStore
    cases: CaseStore
    proposals: ProposalStore
    embeddings: EmbeddingCache
    index_queue: IndexQueue
    conversations: ConversationStore
    summaries: SummaryStore
    outbox: OutboxStore
    marks: Marks
    transactions: Transactions
    replay: ReplayApplier
    commits: CommitNotifier
    graph_queries: GraphQueryBackend
    stats: Callable[[], dict[str, Any]]

    @classmethod
    def of(cls, store: StoreBackend) -> StorePorts:
        """The ports of ``store`` (the same objects: a write through one is a write to the store)."""
        return cls(agents=store.agents, scopes=store.scopes, facts=store.facts, bdi=store.bdi,
                   relations=store.relations, memory=store.memory, rules=store.rules, cases=store.cases,
                   proposals=store.proposals, embeddings=store.embeddings, index_queue=store.index_queue,
                   conversations=store.conversations, summaries=store.summaries, outbox=store.outbox,
                   marks=store.marks, transactions=store.transactions, replay=store.replay, commits=store.commits,
                   graph_queries=store.graph_queries, stats=store.stats)  # fmt: skip
