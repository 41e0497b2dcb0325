"""SQLite adapters of the agent and scope ports."""

from __future__ import annotations

import sqlite3

from kg.errors import ConflictError, NotFoundError
from kg.models import Agent, Grant, format_ts
from kg.store.sqlite.db import SqliteAdapter


class SqliteAgentStore(SqliteAdapter):
    """Agents in the embedded store."""

    def create(self, agent: Agent) -> Agent:
        """Insert a new agent (and its outbox event)."""
        with self.db.write() as conn:
            self.db.insert_record(
                conn,
                "INSERT INTO agents(uid, agent_id, scope, name, role, department, commitment_strategy, "
                "created_at, updated_at) VALUES (:uid, :agent_id, :scope, :name, :role, :department, "
                ":commitment_strategy, :created_at, :updated_at)",
                agent,
                aggregate="agent",
                error=lambda _: ConflictError(f"agent_id: agent {agent.agent_id!r} already exists"),
            )
        return agent

    def get(self, agent_id: str) -> Agent:
        """One agent by id."""
        rows = self.db.read("SELECT * FROM agents WHERE agent_id = ?", (agent_id,))
        if not rows:
            raise NotFoundError(f"agent: no agent {agent_id!r} (create it with 'mabos agent add {agent_id}')")
        return Agent.model_validate(dict(rows[0]))

    def list(self) -> list[Agent]:
        """Every agent by id."""
        return [Agent.model_validate(dict(r)) for r in self.db.read("SELECT * FROM agents ORDER BY agent_id")]

    def exists(self, agent_id: str) -> bool:
        """Whether an agent with this id exists."""
        return bool(self.db.read("SELECT 1 FROM agents WHERE agent_id = ?", (agent_id,)))


class SqliteScopeStore(SqliteAdapter):
    """Scope grants in the embedded store."""

    def grant(self, grant: Grant) -> Grant:
        """Record a grant; granting twice keeps the first."""
        data = grant.model_dump(mode="json")
        with self.db.write() as conn:
            try:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO grants(agent_id, scope, granted_by, created_at) "
                    "VALUES (:agent_id, :scope, :granted_by, :created_at)",
                    data,
                )
            except sqlite3.IntegrityError as exc:  # OR IGNORE does not cover the agent foreign key
                raise NotFoundError(f"agent_id: no agent {grant.agent_id!r}") from exc
            if cur.rowcount:
                self.db.outbox(
                    conn, aggregate="grant", op="upsert", record_uid=f"{grant.agent_id}|{grant.scope}",
                    agent_id=grant.agent_id, scope=grant.scope, payload=data,
                )  # fmt: skip
        return grant

    def revoke(self, agent_id: str, scope: str, *, revoked_by: str) -> bool:
        """Delete a grant (a grant is a permission, not knowledge: it is not kept)."""
        with self.db.write() as conn:
            cur = conn.execute("DELETE FROM grants WHERE agent_id = ? AND scope = ?", (agent_id, scope))
            if cur.rowcount:
                self.db.outbox(
                    conn, aggregate="grant", op="delete", record_uid=f"{agent_id}|{scope}", agent_id=agent_id,
                    scope=scope, payload={"agent_id": agent_id, "scope": scope, "revoked_by": revoked_by,
                                          "revoked_at": format_ts(self.db.clock.now())},
                )  # fmt: skip
            return bool(cur.rowcount)

    def grants(self, agent_id: str) -> list[Grant]:
        """Grants held by an agent."""
        rows = self.db.read("SELECT * FROM grants WHERE agent_id = ? ORDER BY scope", (agent_id,))
        return [Grant.model_validate(dict(r)) for r in rows]
