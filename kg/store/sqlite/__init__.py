"""The embedded SQLite store: the default backend and the local source of truth."""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.clock import Clock
from kg.store.sqlite.db import Database

if TYPE_CHECKING:
    from kg.store.sqlite.agents import SqliteAgentStore, SqliteScopeStore
    from kg.store.sqlite.conversation import SqliteConversationStore, SqliteSummaryStore
    from kg.store.sqlite.embeddings import SqliteEmbeddingCache
    from kg.store.sqlite.facts import SqliteFactStore
    from kg.store.sqlite.graph import SqliteBDIStore, SqliteRelationStore
    from kg.store.sqlite.graph_queries import SqliteGraphQueries
    from kg.store.sqlite.index_queue import SqliteIndexQueue
    from kg.store.sqlite.marks import SqliteMarks
    from kg.store.sqlite.memory import SqliteMemoryStore
    from kg.store.sqlite.ontology import SqliteProposalStore
    from kg.store.sqlite.outbox import SqliteOutboxStore
    from kg.store.sqlite.reasoning import SqliteCaseStore, SqliteRuleStore
    from kg.store.sqlite.replay import SqliteReplayApplier
    from kg.store.sqlite.tokens import SqliteTokenStore
    from kg.store.sqlite.transactions import SqliteCommitNotifier, SqliteTransactions

_COUNTED_TABLES = ("agents", "grants", "bdi_nodes", "relations", "memory_items", "lineage", "rules", "cases",
                   "ontology_proposals")  # fmt: skip

#: Port name -> its adapter (``module:class``, built over the database on first use).
PORTS: dict[str, str] = {
    "agents": "kg.store.sqlite.agents:SqliteAgentStore",
    "scopes": "kg.store.sqlite.agents:SqliteScopeStore",
    "facts": "kg.store.sqlite.facts:SqliteFactStore",
    "bdi": "kg.store.sqlite.graph:SqliteBDIStore",
    "relations": "kg.store.sqlite.graph:SqliteRelationStore",
    "memory": "kg.store.sqlite.memory:SqliteMemoryStore",
    "embeddings": "kg.store.sqlite.embeddings:SqliteEmbeddingCache",
    "index_queue": "kg.store.sqlite.index_queue:SqliteIndexQueue",
    "marks": "kg.store.sqlite.marks:SqliteMarks",
    "transactions": "kg.store.sqlite.transactions:SqliteTransactions",  # several ports in one transaction
    "outbox": "kg.store.sqlite.outbox:SqliteOutboxStore",
    "rules": "kg.store.sqlite.reasoning:SqliteRuleStore",
    "cases": "kg.store.sqlite.reasoning:SqliteCaseStore",
    "proposals": "kg.store.sqlite.ontology:SqliteProposalStore",
    "conversations": "kg.store.sqlite.conversation:SqliteConversationStore",
    "summaries": "kg.store.sqlite.conversation:SqliteSummaryStore",
    "tokens": "kg.store.sqlite.tokens:SqliteTokenStore",  # local credentials (kg/tokens.py): never synced
    "replay": "kg.store.sqlite.replay:SqliteReplayApplier",  # another store's outbox applied as is (sync.replay)
    "commits": "kg.store.sqlite.transactions:SqliteCommitNotifier",  # write-through listens here
    "graph_queries": "kg.store.sqlite.graph_queries:SqliteGraphQueries",  # the cross-agent graph queries
}


class SqliteGraphStore:
    """Every port of the embedded store over one SQLite database.

    A port is built, and its module imported, when it is first asked for (:data:`PORTS`): a fact query loads the
    fact adapter and not the conversation or BDI ones.
    """

    if TYPE_CHECKING:
        agents: SqliteAgentStore
        scopes: SqliteScopeStore
        facts: SqliteFactStore
        bdi: SqliteBDIStore
        relations: SqliteRelationStore
        memory: SqliteMemoryStore
        embeddings: SqliteEmbeddingCache
        index_queue: SqliteIndexQueue
        marks: SqliteMarks
        transactions: SqliteTransactions
        outbox: SqliteOutboxStore
        rules: SqliteRuleStore
        cases: SqliteCaseStore
        proposals: SqliteProposalStore
        conversations: SqliteConversationStore
        summaries: SqliteSummaryStore
        tokens: SqliteTokenStore
        replay: SqliteReplayApplier
        commits: SqliteCommitNotifier
        graph_queries: SqliteGraphQueries

    def __init__(self, path: Path | str, *, clock: Clock | None = None) -> None:
        self._lock = threading.Lock()  # MCP serves threads: each port is built once
        self.db = Database(path, clock=clock)

    if not TYPE_CHECKING:  # mypy reads the annotations above

        def __getattr__(self, name: str) -> Any:
            """Build the port ``name`` on its first use (called only while it is not yet an attribute)."""
            where = PORTS.get(name)
            if where is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            with self._lock:
                if name not in self.__dict__:  # a second thread finds what the first one built
                    module, attribute = where.split(":")
                    self.__dict__[name] = getattr(importlib.import_module(module), attribute)(self.db)
            return self.__dict__[name]

    def stats(self) -> dict[str, Any]:
        """Counts of every aggregate, outbox state and file facts."""
        counts = {t: int(self.db.read(f"SELECT COUNT(*) FROM {t}")[0][0]) for t in _COUNTED_TABLES}
        fact_row = self.db.read(
            "SELECT COUNT(*) AS total, COUNT(retracted_at) AS retracted, "
            "SUM(CASE WHEN retracted_at IS NULL AND derived = 1 THEN 1 ELSE 0 END) AS derived FROM facts"
        )[0]
        kinds = {
            r["kind"]: int(r["n"]) for r in self.db.read("SELECT kind, COUNT(*) AS n FROM bdi_nodes GROUP BY kind")
        }
        size = self.db.path.stat().st_size if self.db.path and self.db.path.exists() else 0
        return {
            "backend": "sqlite",
            "path": str(self.db.path) if self.db.path else ":memory:",
            "schema_version": self.db.schema_version(),
            "size_bytes": size,
            "agents": counts["agents"],
            "grants": counts["grants"],
            "facts": {
                "live": int(fact_row["total"]) - int(fact_row["retracted"]),
                "retracted": int(fact_row["retracted"]),
                "derived": int(fact_row["derived"] or 0),
            },
            "bdi": {k.lower(): kinds.get(k, 0) for k in ("belief", "desire", "goal", "intention", "plan", "plan_step")},
            "relations": counts["relations"],
            "memory_items": counts["memory_items"],
            "rules": counts["rules"],
            "cases": counts["cases"],
            "ontology_proposals": counts["ontology_proposals"],
            "outbox": self.outbox.counts(),
        }

    def close(self) -> None:
        """Close the database."""
        self.db.close()


__all__ = ["Database", "SqliteGraphStore"]
