"""The embedded SQLite store: the default backend and the local source of truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg.clock import Clock
from kg.store.sqlite.agents import SqliteAgentStore, SqliteScopeStore
from kg.store.sqlite.conversation import SqliteConversationStore, SqliteSummaryStore
from kg.store.sqlite.db import Database
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


class SqliteGraphStore:
    """Every port of the embedded store over one SQLite database."""

    def __init__(self, path: Path | str, *, clock: Clock | None = None) -> None:
        self.db = Database(path, clock=clock)
        self.agents = SqliteAgentStore(self.db)
        self.scopes = SqliteScopeStore(self.db)
        self.facts = SqliteFactStore(self.db)
        self.bdi = SqliteBDIStore(self.db)
        self.relations = SqliteRelationStore(self.db)
        self.memory = SqliteMemoryStore(self.db)
        self.embeddings = SqliteEmbeddingCache(self.db)
        self.index_queue = SqliteIndexQueue(self.db)
        self.marks = SqliteMarks(self.db)
        self.transactions = SqliteTransactions(self.db)  # several ports in one transaction (extraction)
        self.outbox = SqliteOutboxStore(self.db)
        self.rules = SqliteRuleStore(self.db)
        self.cases = SqliteCaseStore(self.db)
        self.proposals = SqliteProposalStore(self.db)
        self.conversations = SqliteConversationStore(self.db)
        self.summaries = SqliteSummaryStore(self.db)
        self.tokens = SqliteTokenStore(self.db)  # local credentials (kg/tokens.py): SQLite only, never synced
        self.replay = SqliteReplayApplier(self.db)  # another store's outbox applied as is (sync.replay)
        self.commits = SqliteCommitNotifier(self.db)  # write-through listens here
        self.graph_queries = SqliteGraphQueries(self.db)  # the cross-agent graph queries (sync.reads)

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
