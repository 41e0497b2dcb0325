"""SQLite adapter of the ontology proposal port (migration 6): whole proposals as JSON, outbox events."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence
from typing import Any

from kg.errors import ConflictError, NotFoundError
from kg.models import OntologyProposal, ProposalStatus, format_ts
from kg.store.sqlite.db import SqliteAdapter, in_clause, integrity_error

_COLUMNS = "uid, agent_id, scope, domain, node_id, status, body, created_at, updated_at"


class SqliteProposalStore(SqliteAdapter):
    """Ontology proposals with their status history."""

    def add(self, proposal: OntologyProposal) -> OntologyProposal:
        """Store a new proposal (with an outbox event); ConflictError if the uid is taken."""
        with self.db.write() as conn:
            try:
                conn.execute(f"INSERT INTO ontology_proposals({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             _row(proposal))  # fmt: skip
            except sqlite3.IntegrityError as exc:
                raise integrity_error(exc, proposal.agent_id, proposal.uid, "proposal") from exc
            self._event(conn, proposal)
        return proposal

    def get(self, uid: str) -> OntologyProposal:
        """The proposal with this uid, or NotFoundError."""
        rows = self.db.read("SELECT body FROM ontology_proposals WHERE uid = ?", (uid,))
        if not rows:
            raise NotFoundError(f"proposal: no ontology proposal {uid!r}")
        return OntologyProposal.model_validate_json(rows[0][0])

    def list(
        self, *, scopes: Sequence[str] | None = None, status: ProposalStatus | None = None,
        domain: str | None = None,
    ) -> builtins.list[OntologyProposal]:  # fmt: skip
        """Proposals oldest first, optionally only in ``scopes``, of one status or of one domain."""
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        if scopes is not None:
            clause, params = in_clause("scope", scopes)
            where.append(clause)
        for column, value in (("status", status.value if status else None), ("domain", domain)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT body FROM ontology_proposals WHERE {' AND '.join(where)} ORDER BY seq"
        return [OntologyProposal.model_validate_json(r[0]) for r in self.db.read(sql, params)]

    def update(self, proposal: OntologyProposal, *, expected_status: ProposalStatus) -> OntologyProposal:
        """Replace a stored proposal if its status is still ``expected_status`` (with an outbox event).

        Raises:
            NotFoundError: no such proposal.
            ConflictError: its status changed meanwhile, or the change touches its uid, proposer or scope.
        """
        with self.db.write() as conn:
            old = conn.execute(
                "SELECT agent_id, scope, status FROM ontology_proposals WHERE uid = ?", (proposal.uid,)
            ).fetchone()
            if old is None:
                raise NotFoundError(f"proposal: no ontology proposal {proposal.uid!r}")
            if (old[0], old[1]) != (proposal.agent_id, proposal.scope):
                raise ConflictError(f"proposal: {proposal.uid} cannot move to another agent or scope")
            if old[2] != expected_status.value:
                raise ConflictError(f"status: proposal {proposal.uid} is {old[2]} now, not {expected_status.value}")
            uid, _, _, domain, node_id, status, body, _, updated_at = _row(proposal)
            conn.execute(
                "UPDATE ontology_proposals SET domain = ?, node_id = ?, status = ?, body = ?, updated_at = ? "
                "WHERE uid = ?", (domain, node_id, status, body, updated_at, uid),
            )  # fmt: skip
            self._event(conn, proposal)
        return proposal

    def _event(self, conn: sqlite3.Connection, proposal: OntologyProposal) -> None:
        self.db.outbox(
            conn, aggregate="proposal", op="upsert", record_uid=proposal.uid, agent_id=proposal.agent_id,
            scope=proposal.scope, payload=proposal.model_dump(mode="json"),
        )  # fmt: skip


def _row(p: OntologyProposal) -> tuple[Any, ...]:
    return (p.uid, p.agent_id, p.scope, p.domain, p.node_id, p.status.value, p.model_dump_json(),
            format_ts(p.created_at), format_ts(p.updated_at))  # fmt: skip


__all__ = ["SqliteProposalStore"]
