"""Store ports: small interfaces per aggregate, one implementation per backend.

A :class:`GraphStore` bundles the ports of one backend (``store.facts``, ``store.agents`` ...).
Stores do not decide who may see what: callers pass the scopes to read (see :mod:`kg.scopes`).
Every mutation is one transaction that also appends its outbox event(s).

Adapters declare what they can do in :class:`Capabilities`; the core adapts to the flags and never
asks which backend it is talking to.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from kg.models import (
    Agent,
    AssertOutcome,
    BDINode,
    Case,
    Fact,
    FactInput,
    FactQuery,
    Grant,
    GraphPath,
    LiveTriple,
    MemoryItem,
    MemoryQuery,
    NodeKind,
    OntologyProposal,
    OutboxEvent,
    ProposalStatus,
    Relation,
    RelationKind,
    Rule,
    RuleType,
)
from kg.models.conversation import Conversation, Message, MessageInput, MessageQuery, Summary


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


class AgentStore(Protocol):
    """Agents."""

    def create(self, agent: Agent) -> Agent:
        """Store a new agent; :class:`~kg.errors.ConflictError` if the id is taken."""
        ...

    def get(self, agent_id: str) -> Agent:
        """The agent with this id, or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(self) -> builtins.list[Agent]:
        """Every agent, ordered by id."""
        ...

    def exists(self, agent_id: str) -> bool:
        """Whether the agent exists."""
        ...


class ScopeStore(Protocol):
    """Grants of scopes to agents."""

    def grant(self, grant: Grant) -> Grant:
        """Record a grant (idempotent)."""
        ...

    def revoke(self, agent_id: str, scope: str, *, revoked_by: str) -> bool:
        """Remove a grant; whether one existed."""
        ...

    def grants(self, agent_id: str) -> builtins.list[Grant]:
        """Grants held by an agent, ordered by scope."""
        ...


class FactStore(Protocol):
    """Facts with world-time validity, system-time history and lineage."""

    def assert_many(self, facts: Sequence[FactInput], *, asserted_by: str) -> builtins.list[AssertOutcome]:
        """Upsert facts in one transaction: an identical live (scope, s, p, o) is updated."""
        ...

    def retract(
        self,
        *,
        scopes: Sequence[str],
        retracted_by: str,
        uids: Sequence[str] = (),
        subject: str | None = None,
        predicate: str | None = None,
    ) -> builtins.list[str]:
        """Mark matching live facts retracted (never deleted); return their uids."""
        ...

    def query(self, query: FactQuery) -> builtins.list[Fact]:
        """Facts matching a pattern, ordered by (created_at, uid)."""
        ...

    def get_many(self, uids: Iterable[str], *, as_of: datetime | None = None) -> dict[str, Fact]:
        """Facts by uid (any scope; the caller filters), as they were at ``as_of`` when given."""
        ...

    def live_triples(
        self, *, scopes: Sequence[str], valid_at: datetime, derived: bool | None = None, batch: int = 50_000
    ) -> Iterator[LiveTriple]:
        """Live facts of the scopes valid at ``valid_at`` (only asserted or only derived when asked), lightly."""
        ...

    def search(self, text: str, *, scopes: Sequence[str], limit: int = 20) -> builtins.list[Fact]:
        """Full-text search over live facts (FTS5 where available)."""
        ...


class BDIStore(Protocol):
    """Beliefs, desires, goals, intentions, plans and steps."""

    def add(self, node: BDINode) -> BDINode:
        """Store a new node."""
        ...

    def get(self, uid: str) -> BDINode:
        """A node by uid, or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(
        self,
        *,
        scopes: Sequence[str],
        kind: NodeKind | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        limit: int = 1000,
    ) -> builtins.list[BDINode]:
        """Nodes in the given scopes, ordered by (created_at, uid)."""
        ...

    def update(self, uid: str, changes: dict[str, Any], *, updated_by: str) -> BDINode:
        """Change mutable fields of a node; return it as stored."""
        ...


class RelationStore(Protocol):
    """Typed edges and graph traversal."""

    def link(self, relation: Relation) -> Relation:
        """Store an edge after checking both ends exist and play the relation's roles."""
        ...

    def unlink(self, uid: str, *, removed_by: str) -> None:
        """Remove an edge."""
        ...

    def relations(self, uid: str, *, scopes: Sequence[str]) -> builtins.list[Relation]:
        """Edges touching a node, in visible scopes."""
        ...

    def node_info(self, uid: str) -> tuple[str, str] | None:
        """(kind, scope) of any record (kinds: ``goal``, ``fact``, ``memory:skill`` ...), None if unknown."""
        ...

    def paths(
        self,
        kinds: Sequence[str],
        *,
        scopes: Sequence[str],
        start_uid: str | None = None,
        relation: RelationKind | None = None,
        limit: int = 100,
    ) -> builtins.list[GraphPath]:
        """Paths whose nodes have ``kinds`` in order (edges followed in either direction)."""
        ...


class OutboxStore(Protocol):
    """Change events written with each mutation, waiting to be replayed."""

    def pending(self, *, limit: int = 500, after_seq: int = 0) -> builtins.list[OutboxEvent]:
        """Unacknowledged events in order."""
        ...

    def ack(self, seqs: Sequence[int]) -> int:
        """Acknowledge events; return how many were newly acknowledged."""
        ...

    def counts(self) -> dict[str, int]:
        """``{"pending": n, "acked": m}``."""
        ...


@dataclass(frozen=True)
class TokenRecord:
    """One API token as stored (:mod:`kg.tokens`): the secret only as its hash."""

    token_id: str
    agent_id: str
    secret_hash: str
    label: str
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


class TokenStore(Protocol):
    """API tokens (local credentials: never replicated, no outbox event)."""

    def add(self, token: TokenRecord) -> None:
        """Insert a new token; NotFoundError for an unknown agent."""
        ...

    def get(self, token_id: str) -> TokenRecord | None:
        """One token by id, or None."""
        ...

    def list(self, agent_id: str | None = None) -> builtins.list[TokenRecord]:
        """Tokens (of one agent), oldest first."""
        ...

    def revoke(self, token_id: str, *, at: datetime) -> TokenRecord | None:
        """Mark a token revoked (once: a second revoke keeps the first time); None when there is no such token."""
        ...


@dataclass(frozen=True)
class StoreLimits:
    """Capacity rules the memory store applies in the same transaction as an insert."""

    working_capacity: int = 7
    short_term_capacity: int = 200
    short_term_ttl_seconds: int = 7_200


@dataclass(frozen=True)
class MemoryWriteResult:
    """What a memory write did besides inserting: items moved or archived by the capacity rules."""

    demoted: tuple[str, ...] = ()
    archived: tuple[str, ...] = ()


class MemoryStore(Protocol):
    """Memory items in the working, short-term and long-term stores."""

    def add(
        self,
        items: Sequence[MemoryItem],
        *,
        limits: StoreLimits,
        now: datetime,
        updates: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> MemoryWriteResult:
        """Insert items and apply ``updates`` (see :meth:`update`), then in the same transaction, per
        owning agent: archive expired short-term items,
        demote the oldest working items past capacity to short-term (with a fresh TTL), and archive the
        lowest-importance short-term items past capacity (never deleting anything)."""
        ...

    def update(self, changes: Sequence[tuple[str, dict[str, Any]]], *, now: datetime) -> None:
        """Apply field changes (store, tier, importance, expires_at, archived_at ...) in one transaction."""
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, MemoryItem]:
        """Items by uid (any scope; callers filter)."""
        ...

    def list(self, query: MemoryQuery) -> builtins.list[MemoryItem]:
        """Items matching the filters, ordered by (created_at, uid)."""
        ...

    def search(self, text: str, query: MemoryQuery) -> builtins.list[tuple[MemoryItem, float]]:
        """Full-text matches (any term) with their BM25 score (lower is better), best first."""
        ...

    def scan(self, after: int, limit: int) -> builtins.list[tuple[int, MemoryItem]]:
        """Up to ``limit`` items in insertion order after position ``after`` (0: the start), with positions."""
        ...

    def filter_items(self, uids: Iterable[str], query: MemoryQuery) -> dict[str, MemoryItem]:
        """The items of ``uids`` that match ``query``'s filters, by uid (text, order and limit ignored)."""
        ...

    def archive_expired(self, agent_id: str, *, now: datetime) -> builtins.list[str]:
        """Archive the agent's short-term items whose TTL has passed; return their uids."""
        ...

    def touch(self, uids: Sequence[str], *, now: datetime) -> None:
        """Count an access (local usage statistics: not replicated through the outbox)."""
        ...

    def counts(self, agent_id: str) -> dict[str, dict[str, int]]:
        """``{store: {"active": n, "archived": m}}`` for an agent's own items."""
        ...


class IndexQueue(Protocol):
    """Memory items the vector index has not seen yet, filled in the same transaction as each write."""

    def store_id(self) -> str:
        """The store's identity: a vector index built for another store is rebuilt, never used."""
        ...

    def pending(self, after: int, limit: int) -> builtins.list[tuple[int, str]]:
        """The oldest ``limit`` entries after position ``after`` as (position, uid)."""
        ...

    def count(self, after: int = 0) -> int:
        """Distinct uids waiting after position ``after``."""
        ...

    def last(self) -> int:
        """The newest position (0 when empty)."""
        ...

    def done(self, upto: int) -> int:
        """Forget the entries at or before ``upto``; how many."""
        ...


class Embedder(Protocol):
    """Turns texts into unit-length vectors (recall's vector branch)."""

    @property
    def model(self) -> str:
        """Model identity, part of every cache key and index manifest (e.g. ``all-MiniLM-L6-v2``)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str], *, batch: bool = False) -> builtins.list[builtins.list[float]]:
        """One L2-normalised vector per text; ``batch`` for ingestion (several threads, large batches),
        otherwise the single-query path (one thread). Raises BackendUnavailableError if the model
        cannot load: callers fall back to BM25 and say so, never a fake vector."""
        ...


class EmbeddingCache(Protocol):
    """Stored vectors keyed by (model, content hash); implemented by each store adapter."""

    def get_many(self, model: str, hashes: Iterable[str]) -> dict[str, builtins.list[float]]:
        """Cached vectors of ``model`` for those hashes that have one."""
        ...

    def put_many(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store (or replace) vectors by content hash, as float32."""
        ...

    def count(self, model: str | None = None) -> int:
        """How many vectors are cached (for one model, or all)."""
        ...


class VectorIndex(Protocol):
    """Nearest neighbours by inner product over unit vectors, keyed by record uid."""

    def add(self, uids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Insert or replace vectors."""
        ...

    def remove(self, uids: Sequence[str]) -> int:
        """Delete vectors; how many existed."""
        ...

    def search(self, vector: Sequence[float], k: int, *,
               allowed: Callable[[str], bool] | None = None) -> builtins.list[tuple[str, float]]:  # fmt: skip
        """Up to ``k`` (uid, similarity) pairs, best first, only uids ``allowed`` accepts."""
        ...

    def __len__(self) -> int:
        """Number of vectors."""
        ...


class RuleStore(Protocol):
    """Inference, constraint and policy rules (stored whole)."""

    def put(self, rule: Rule, *, now: datetime, by: str | None = None) -> Rule:
        """Insert or replace (by uid, same agent and scope) with an outbox event naming ``by`` (default the
        rule's agent): the agent that made this change."""
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, Rule]:
        """Rules by uid (any scope; the caller filters)."""
        ...

    def list(
        self, *, scopes: Sequence[str], type: RuleType | None = None, enabled: bool | None = None,
        domain: str | None = None,
    ) -> builtins.list[Rule]:  # fmt: skip
        """Rules in the scopes, oldest first, optionally filtered."""
        ...

    def delete(self, uids: Sequence[str], *, by: str | None = None) -> builtins.list[str]:
        """Delete by uid (events name ``by``, default each rule's agent); return the uids deleted."""
        ...


class CaseStore(Protocol):
    """Past cases for case-based reasoning, one per situation and scope."""

    def add(self, case: Case, *, situation_key: str) -> tuple[Case, bool]:
        """Store unless the scope holds the same situation; the stored case and whether it is new."""
        ...

    def list(self, *, scopes: Sequence[str], limit: int | None = None) -> builtins.list[Case]:
        """Cases in the scopes, oldest first."""
        ...

    def count(self, scope: str) -> int:
        """Cases in one scope."""
        ...

    def delete(self, uids: Sequence[str]) -> builtins.list[str]:
        """Delete by uid; return the uids deleted."""
        ...


class ProposalStore(Protocol):
    """Ontology proposals, stored whole with their status history."""

    def add(self, proposal: OntologyProposal) -> OntologyProposal:
        """Store a new proposal with an outbox event."""
        ...

    def get(self, uid: str) -> OntologyProposal:
        """A proposal by uid (any scope), or :class:`~kg.errors.NotFoundError`."""
        ...

    def list(
        self, *, scopes: Sequence[str] | None = None, status: ProposalStatus | None = None,
        domain: str | None = None,
    ) -> builtins.list[OntologyProposal]:  # fmt: skip
        """Proposals oldest first (every scope when ``scopes`` is None), optionally filtered."""
        ...

    def update(self, proposal: OntologyProposal, *, expected_status: ProposalStatus) -> OntologyProposal:
        """Replace a proposal whose stored status is still ``expected_status`` (ConflictError otherwise)."""
        ...


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


# --------------------------------------------------------------------------------------------
# Cross-agent graph queries (``mabos graph query``): what a backend answers. The catalogue in
# reasoning/graph_queries.py does the rest (arithmetic, path enumeration, grouping) in Python, so
# every backend gives identical results for the same data.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphNodeRow:
    """A BDI node as a graph query sees it (fields a kind does not use are None)."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    content: str
    status: str
    certainty: float | None = None
    priority: int | None = None
    progress: float | None = None
    deadline: datetime | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class GraphEdgeRow:
    """One stored relation with both of its ends."""

    uid: str
    kind: str
    scope: str
    source: GraphNodeRow
    target: GraphNodeRow


@dataclass(frozen=True)
class LineageRecordRow:
    """A fact or memory item on a lineage (kind ``fact`` or ``memory:<type>``)."""

    uid: str
    kind: str
    agent_id: str
    scope: str
    label: str
    created_at: datetime
    retracted: bool = False


class GraphQueryBackend(Protocol):
    """Candidate rows for the cross-agent graph queries; ``scopes=None`` means every scope.

    Implementations: ``kg.store.sqlite.graph_queries.SqliteGraphQueries`` (``source`` "local") and
    ``kg.store.typedb.graph_queries.TypeDBGraphQueries`` (``source`` "typedb").
    """

    @property
    def source(self) -> str:
        """Which backend answers: ``local`` (embedded store) or ``typedb``."""
        ...

    def open_goals(self, *, scopes: Sequence[str] | None) -> builtins.list[GraphNodeRow]:
        """Goals with a deadline whose status is pending, active or suspended, ordered by uid."""
        ...

    def active_beliefs(self, *, scopes: Sequence[str] | None) -> builtins.list[GraphNodeRow]:
        """Beliefs whose status is active, ordered by uid."""
        ...

    def edges(
        self, kind: RelationKind, *, scopes: Sequence[str] | None, sources: Sequence[str] | None = None
    ) -> builtins.list[GraphEdgeRow]:
        """Relations of ``kind`` (between BDI nodes) whose edge and ends are in ``scopes``, only those
        leaving ``sources`` when given, ordered by (source uid, target uid)."""
        ...

    def lineage_links(self, uids: Sequence[str], *, direction: str, max_depth: int) -> builtins.list[tuple[str, str]]:
        """(child, parent) links reachable from ``uids`` within ``max_depth`` steps, towards parents
        (``ancestors``) or children (``descendants``): records' ``derived_from`` plus ``derived-from``
        relations, in any scope (the caller filters), sorted."""
        ...

    def lineage_records(self, uids: Sequence[str]) -> builtins.list[LineageRecordRow]:
        """The facts (retracted ones too) and memory items among ``uids``, in any scope, ordered by uid."""
        ...


# ------------------------------------------------------------------------------------ conversations


class ConversationStore(Protocol):
    """Conversations and their immutable, sequenced messages (full-text indexed)."""

    def open(self, agent_id: str, session_key: str, *, title: str = "", now: datetime) -> Conversation:
        """The agent's conversation of ``session_key``, created (active) if it does not exist."""
        ...

    def get(self, uid: str) -> Conversation:
        """A conversation by uid, or :class:`~kg.errors.NotFoundError`."""
        ...

    def find(self, agent_id: str, session_key: str) -> Conversation | None:
        """The agent's conversation of ``session_key``, if any."""
        ...

    def list(self, agent_id: str, *, active: bool | None = None) -> builtins.list[Conversation]:
        """The agent's conversations, newest activity first."""
        ...

    def append(
        self, conversation_uid: str, messages: Sequence[MessageInput], *, now: datetime
    ) -> builtins.list[Message]:
        """Append messages in one transaction with consecutive ``seq`` numbers; return them as stored.

        ``token_count`` None is estimated by the store's estimator; ``created_at`` None is ``now``.
        """
        ...

    def messages(self, query: MessageQuery) -> builtins.list[Message]:
        """Messages of one conversation in ``seq`` order."""
        ...

    def get_messages(self, uids: Iterable[str]) -> dict[str, Message]:
        """Messages by uid."""
        ...

    def search(
        self,
        pattern: str,
        *,
        conversation_uids: Sequence[str],
        mode: str = "full_text",
        since: datetime | None = None,
        before: datetime | None = None,
        limit: int = 50,
    ) -> builtins.list[Message]:
        """Messages matching ``pattern`` (``full_text``: FTS5 words, trigram for CJK; ``regex``), oldest first."""
        ...


class SummaryStore(Protocol):
    """The summary DAG: summaries, their covered children, and which summaries are not yet covered."""

    def add(self, summary: Summary) -> Summary:
        """Store a summary and its child edges in one transaction.

        Every child must exist in the conversation (messages for a leaf, summaries of ``depth - 1`` for a
        condensed one) and must not already be covered by another summary (a DAG level covers each node
        once): otherwise :class:`~kg.errors.ConflictError` and nothing is written.
        """
        ...

    def get_many(self, uids: Iterable[str]) -> dict[str, Summary]:
        """Summaries by uid."""
        ...

    def list(self, conversation_uid: str, *, depth: int | None = None) -> builtins.list[Summary]:
        """Summaries of a conversation in chronological order (by earliest_at, then uid)."""
        ...

    def roots(self, conversation_uid: str) -> builtins.list[Summary]:
        """Summaries no other summary covers, chronological."""
        ...

    def parent_of(self, uid: str) -> str | None:
        """The summary covering a message or summary, if any."""
        ...

    def uncovered_messages(self, conversation_uid: str) -> builtins.list[Message]:
        """Messages no leaf summary covers yet, in ``seq`` order."""
        ...

    def search(
        self,
        pattern: str,
        *,
        conversation_uids: Sequence[str],
        mode: str = "full_text",
        since: datetime | None = None,
        before: datetime | None = None,
        limit: int = 50,
    ) -> builtins.list[Summary]:
        """Summaries matching ``pattern`` (as :meth:`ConversationStore.search`), oldest first."""
        ...


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat request to an LLM."""

    role: str
    content: str


class ChatModel(Protocol):
    """The optional LLM port: any OpenAI-compatible chat endpoint (design.md §5b)."""

    @property
    def model(self) -> str:
        """The model name (recorded on what it writes)."""
        ...

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float = 0.0) -> str:
        """The assistant's reply text; :class:`~kg.errors.BackendUnavailableError` when the endpoint fails."""
        ...


@dataclass(frozen=True)
class SummaryText:
    """What a summariser wrote, and how (``method`` llm or extractive, ``model`` for llm)."""

    content: str
    method: str
    model: str | None = None


class Summarizer(Protocol):
    """Writes one summary of texts (messages for a leaf, summaries for a condensed node)."""

    def summarize(self, texts: Sequence[str], *, target_tokens: int, depth: int) -> SummaryText:
        """A summary of ``texts`` (in order) of about ``target_tokens`` tokens; ``depth`` 0 for a leaf."""
        ...
