"""A store by its ports: :class:`GraphStore` (the ports features take), :class:`StoreBackend` (an adapter as a
whole: every port and its life cycle) and :class:`StorePorts` (what the workspace hands out: the ports by
role and nothing else, never the adapter)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, cast, overload

if TYPE_CHECKING:  # the port types are annotations only: StorePorts reads each port when it is first asked for
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

P = TypeVar("P")


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


class _Port(Generic[P]):
    """One port of :class:`StorePorts`: the adapter's port of the same name, read when it is first asked for (an
    adapter builds a port, and imports its module, on first use: a fact query never loads the conversation store)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, ports: None, owner: type) -> _Port[P]: ...
    @overload
    def __get__(self, ports: StorePorts, owner: type) -> P: ...
    def __get__(self, ports: StorePorts | None, owner: type) -> _Port[P] | P:
        return self if ports is None else cast(P, getattr(ports._store, self.name))


@dataclass(frozen=True)  # no slots: a frozen slotted class cannot refuse an assignment to a port
class StorePorts:
    """The ports of an open store by role, typed by their protocols: what ``Workspace.ports`` hands out.

    It hands out the ports and nothing else of the adapter it reads them from: no connection and no life cycle
    (the workspace opens and closes the store), so code outside ``kg`` asks for "the fact store", "the outbox"
    or "the commit notifier" and never meets the adapter. It is a :class:`GraphStore`, so a service built on one
    can be built on this.
    """

    _store: StoreBackend = field(repr=False)
    agents: ClassVar[_Port[AgentStore]] = _Port()
    scopes: ClassVar[_Port[ScopeStore]] = _Port()
    facts: ClassVar[_Port[FactStore]] = _Port()
    bdi: ClassVar[_Port[BDIStore]] = _Port()
    relations: ClassVar[_Port[RelationStore]] = _Port()
    memory: ClassVar[_Port[MemoryStore]] = _Port()
    rules: ClassVar[_Port[RuleStore]] = _Port()
    cases: ClassVar[_Port[CaseStore]] = _Port()
    proposals: ClassVar[_Port[ProposalStore]] = _Port()
    embeddings: ClassVar[_Port[EmbeddingCache]] = _Port()
    index_queue: ClassVar[_Port[IndexQueue]] = _Port()
    conversations: ClassVar[_Port[ConversationStore]] = _Port()
    summaries: ClassVar[_Port[SummaryStore]] = _Port()
    outbox: ClassVar[_Port[OutboxStore]] = _Port()
    marks: ClassVar[_Port[Marks]] = _Port()
    transactions: ClassVar[_Port[Transactions]] = _Port()
    replay: ClassVar[_Port[ReplayApplier]] = _Port()
    commits: ClassVar[_Port[CommitNotifier]] = _Port()
    graph_queries: ClassVar[_Port[GraphQueryBackend]] = _Port()
    stats: ClassVar[_Port[Callable[[], dict[str, Any]]]] = _Port()

    @classmethod
    def of(cls, store: StoreBackend) -> StorePorts:
        """The ports of ``store`` (the same objects: a write through one is a write to the store)."""
        return cls(store)
