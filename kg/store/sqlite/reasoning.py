"""SQLite adapters of the rule and case ports (migration 5): whole records as JSON, outbox events."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime

from kg.errors import ConflictError
from kg.models import Case, Rule, RuleType, format_ts
from kg.store.sqlite.db import SqliteAdapter, in_clause, integrity_error, marks


class SqliteRuleStore(SqliteAdapter):
    """Inference, constraint and policy rules."""

    def put(self, rule: Rule, *, now: datetime, by: str | None = None) -> Rule:
        """Insert ``rule`` or replace the stored one with the same uid (same agent and scope), with an event."""
        body = rule.model_dump_json()
        stamp = format_ts(now)
        with self.db.write() as conn:
            old = conn.execute("SELECT agent_id, scope FROM rules WHERE uid = ?", (rule.uid,)).fetchone()
            if old is not None and (old[0], old[1]) != (rule.agent_id, rule.scope):
                raise ConflictError(f"uid: rule {rule.uid!r} belongs to another agent or scope")
            try:
                conn.execute(
                    "INSERT INTO rules(uid, agent_id, scope, name, type, enabled, domain, body, created_at, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(uid) DO UPDATE SET "
                    "name = excluded.name, type = excluded.type, enabled = excluded.enabled, "
                    "domain = excluded.domain, body = excluded.body, updated_at = excluded.updated_at",
                    (rule.uid, rule.agent_id, rule.scope, rule.name, rule.type.value, int(rule.enabled), rule.domain,
                     body, format_ts(rule.created_at), stamp),
                )  # fmt: skip
            except sqlite3.IntegrityError as exc:
                raise integrity_error(exc, rule.agent_id, rule.uid) from exc
            self.db.outbox(
                conn, aggregate="rule", op="upsert", record_uid=rule.uid, agent_id=by or rule.agent_id,
                scope=rule.scope, payload=rule.model_dump(mode="json"),
            )  # fmt: skip
        return rule

    def get_many(self, uids: Iterable[str]) -> dict[str, Rule]:
        """Rules by uid (any scope: the caller filters)."""
        wanted = list(dict.fromkeys(uids))
        if not wanted:
            return {}
        rows = self.db.read(f"SELECT body FROM rules WHERE uid IN ({marks(wanted)})", wanted)
        return {rule.uid: rule for rule in (Rule.model_validate_json(r[0]) for r in rows)}

    def list(
        self, *, scopes: Sequence[str], type: RuleType | None = None, enabled: bool | None = None,
        domain: str | None = None,
    ) -> builtins.list[Rule]:  # fmt: skip
        """Rules in ``scopes``, oldest first, optionally of one type, enabled state or domain."""
        clause, params = in_clause("scope", scopes)
        where = [clause]
        for column, value in (("type", type.value if type else None), ("domain", domain)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if enabled is not None:
            where.append("enabled = ?")
            params.append(int(enabled))
        rows = self.db.read(f"SELECT body FROM rules WHERE {' AND '.join(where)} ORDER BY seq", params)
        return [Rule.model_validate_json(r[0]) for r in rows]

    def delete(self, uids: Sequence[str], *, by: str | None = None) -> builtins.list[str]:
        """Delete rules by uid; return those deleted (each with a delete event naming ``by``, default the rule's
        agent)."""
        if not uids:
            return []
        with self.db.write() as conn:
            rows = conn.execute(
                f"DELETE FROM rules WHERE uid IN ({marks(uids)}) RETURNING uid, agent_id, scope", list(uids)
            ).fetchall()
            for uid, agent_id, scope in rows:
                self.db.outbox(conn, aggregate="rule", op="delete", record_uid=uid, agent_id=by or agent_id,
                               scope=scope, payload={"uid": uid})  # fmt: skip
        return sorted(r[0] for r in rows)


class SqliteCaseStore(SqliteAdapter):
    """Past cases for case-based reasoning, one per situation and scope."""

    def add(self, case: Case, *, situation_key: str) -> tuple[Case, bool]:
        """Store ``case`` unless the scope already holds one with the same situation key.

        Returns the stored case and whether it is new (the existing one otherwise: identical situations
        are stored once).
        """
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT body FROM cases WHERE scope = ? AND situation_key = ?", (case.scope, situation_key)
            ).fetchone()
            if row is not None:
                return Case.model_validate_json(row[0]), False
            self.db.insert_record(
                conn,
                "INSERT INTO cases(uid, agent_id, scope, situation_key, success, body, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                case,
                aggregate="case",
                params=(case.uid, case.agent_id, case.scope, situation_key, int(case.outcome.success),
                        case.model_dump_json(), format_ts(case.created_at)),
            )  # fmt: skip
        return case, True

    def list(self, *, scopes: Sequence[str], limit: int | None = None) -> builtins.list[Case]:
        """Cases in ``scopes``, oldest first."""
        clause, params = in_clause("scope", scopes)
        sql = f"SELECT body FROM cases WHERE {clause} ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [Case.model_validate_json(r[0]) for r in self.db.read(sql, params)]

    def count(self, scope: str) -> int:
        """Cases stored in one scope."""
        return int(self.db.read("SELECT COUNT(*) FROM cases WHERE scope = ?", (scope,))[0][0])

    def delete(self, uids: Sequence[str]) -> builtins.list[str]:
        """Delete cases by uid; return those deleted (each with a delete event)."""
        if not uids:
            return []
        deleted: list[str] = []
        with self.db.write() as conn:
            for start in range(0, len(uids), 500):
                chunk = list(uids[start : start + 500])
                rows = conn.execute(
                    f"DELETE FROM cases WHERE uid IN ({marks(chunk)}) RETURNING uid, agent_id, scope", chunk
                ).fetchall()
                for uid, agent_id, scope in rows:
                    self.db.outbox(conn, aggregate="case", op="delete", record_uid=uid, agent_id=agent_id,
                                   scope=scope, payload={"uid": uid})  # fmt: skip
                    deleted.append(uid)
        return sorted(deleted)


__all__ = ["SqliteCaseStore", "SqliteRuleStore"]
