"""SQLite adapter of the summary port: the summary DAG of each conversation (children checked, never changed)."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Iterable
from typing import Any, Unpack

from kg.errors import ConflictError, InputError, NotFoundError
from kg.models import format_ts
from kg.models.conversation import (
    Message,
    Summary,
    SummaryKind,
)
from kg.ports import TextSearch
from kg.store.sqlite.conversation_rows import (
    _MESSAGE_COLUMNS,
    _OUTBOX_INSERT,
    _SUMMARY_COLUMNS,
    _SUMMARY_FIELDS,
    _conversation_row,
    _message,
    _summary,
)
from kg.store.sqlite.conversation_search import _SUMMARY_SEARCH, _search_rows, register_regexp
from kg.store.sqlite.db import Database, marks


class SqliteSummaryStore:
    """The summary DAG in the embedded store."""

    def __init__(self, db: Database) -> None:
        self.db = db
        register_regexp(db.conn)

    def add(self, summary: Summary) -> Summary:
        """Store a summary and its child edges in one transaction.

        Checked against stored state (nothing is written on any error):

        * NotFoundError: the conversation (``conversation_uid``) or the agent does not exist.
        * InputError: ``agent_id``/``scope`` differ from the conversation's; ``descendant_count``,
          ``earliest_at`` or ``latest_at`` differ from what the children imply (a leaf: the number of its
          messages and their first and last ``created_at``; a condensed summary: the sum of its children's
          counts, the earliest ``earliest_at`` and latest ``latest_at``).
        * ConflictError: the uid is taken; a child is not a message of the conversation (leaf) or not a
          summary of depth ``depth - 1`` of the conversation (condensed); a child is already covered.
        """
        children = json.dumps(summary.child_uids)
        with self.db.write() as conn:
            conversation = _conversation_row(conn, summary.conversation_uid)
            if conn.execute("SELECT 1 FROM agents WHERE agent_id = ?", (summary.agent_id,)).fetchone() is None:
                raise NotFoundError(f"agent_id: no agent {summary.agent_id!r}")
            for field in ("agent_id", "scope"):
                if getattr(summary, field) != conversation[field]:
                    raise InputError(field, f"must be the conversation's ({conversation[field]!r})")
            if conn.execute("SELECT 1 FROM summaries WHERE uid = ?", (summary.uid,)).fetchone():
                raise ConflictError(f"uid: a summary {summary.uid!r} already exists")
            self._check_children(conn, summary, children)
            values = summary.model_dump(mode="json")
            conn.execute(
                f"INSERT INTO summaries({', '.join(_SUMMARY_FIELDS)}) VALUES ({marks(_SUMMARY_FIELDS)})",
                [values[f] for f in _SUMMARY_FIELDS],
            )
            try:
                conn.executemany(
                    "INSERT INTO summary_edges(parent_uid, child_uid, position) VALUES (?, ?, ?)",
                    [(summary.uid, child, i) for i, child in enumerate(summary.child_uids)],
                )
            except sqlite3.IntegrityError as exc:  # checked above: only a race past the checks lands here
                raise ConflictError(f"child_uids: a child is already covered ({exc})") from None
            payload = {f: values[f] for f in _SUMMARY_FIELDS} | {"child_uids": summary.child_uids}
            conn.execute(
                _OUTBOX_INSERT,
                ("summary", summary.uid, summary.agent_id, summary.scope, json.dumps(payload), self.db.now()),
            )
        return summary

    @staticmethod
    def _check_children(conn: sqlite3.Connection, summary: Summary, children: str) -> None:
        leaf = summary.kind is SummaryKind.LEAF
        if leaf:
            sql = (
                "SELECT uid, created_at AS earliest, created_at AS latest, 1 AS count, 0 AS depth FROM messages "
                "WHERE conversation_uid = ? AND uid IN (SELECT value FROM json_each(?))"
            )
        else:
            sql = (
                "SELECT uid, earliest_at AS earliest, latest_at AS latest, descendant_count AS count, depth "
                "FROM summaries WHERE conversation_uid = ? AND uid IN (SELECT value FROM json_each(?))"
            )
        found = {r["uid"]: r for r in conn.execute(sql, (summary.conversation_uid, children))}
        for child in summary.child_uids:
            row = found.get(child)
            if row is None:
                what = "a message" if leaf else f"a summary of depth {summary.depth - 1}"
                raise ConflictError(f"child_uids: {child!r} is not {what} of conversation {summary.conversation_uid!r}")
            if not leaf and row["depth"] != summary.depth - 1:
                raise ConflictError(
                    f"child_uids: {child!r} has depth {row['depth']}; a depth-{summary.depth} summary covers "
                    f"summaries of depth {summary.depth - 1}"
                )
        covered = conn.execute(
            "SELECT child_uid, parent_uid FROM summary_edges WHERE child_uid IN (SELECT value FROM json_each(?)) "
            "ORDER BY child_uid LIMIT 1",
            (children,),
        ).fetchone()
        if covered is not None:
            raise ConflictError(f"child_uids: {covered[0]!r} is already covered by summary {covered[1]!r}")
        rows = found.values()
        implied = {
            "descendant_count": sum(int(r["count"]) for r in rows),
            "earliest_at": min(r["earliest"] for r in rows),
            "latest_at": max(r["latest"] for r in rows),
        }
        given = {
            "descendant_count": summary.descendant_count,
            "earliest_at": format_ts(summary.earliest_at),
            "latest_at": format_ts(summary.latest_at),
        }
        for field, value in implied.items():
            if given[field] != value:
                raise InputError(field, f"must be {value} (implied by the children), got {given[field]}")

    def get_many(self, uids: Iterable[str]) -> dict[str, Summary]:
        """Summaries by uid (unknown uids are left out)."""
        rows = self.db.read(
            f"SELECT {_SUMMARY_COLUMNS} FROM json_each(?) w CROSS JOIN summaries s ON s.uid = w.value",
            (json.dumps(list(dict.fromkeys(uids))),),
        )
        return {r["uid"]: _summary(r) for r in rows}

    def _require(self, conversation_uid: str) -> None:
        if not self.db.read("SELECT 1 FROM conversations WHERE uid = ?", (conversation_uid,)):
            raise NotFoundError(f"conversation_uid: no conversation {conversation_uid!r}")

    def list(self, conversation_uid: str, *, depth: int | None = None) -> builtins.list[Summary]:
        """Summaries of a conversation (of one ``depth`` when given), by ``earliest_at`` then uid."""
        where = "s.conversation_uid = ?"
        params: builtins.list[Any] = [conversation_uid]
        if depth is not None:
            where += " AND s.depth = ?"
            params.append(depth)
        self._require(conversation_uid)
        rows = self.db.read(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries s WHERE {where} ORDER BY s.earliest_at, s.uid", params
        )
        return [_summary(r) for r in rows]

    def roots(self, conversation_uid: str) -> builtins.list[Summary]:
        """Summaries no other summary covers, by ``earliest_at`` then uid."""
        self._require(conversation_uid)
        rows = self.db.read(
            f"SELECT {_SUMMARY_COLUMNS} FROM summaries s WHERE s.conversation_uid = ? "
            "AND NOT EXISTS (SELECT 1 FROM summary_edges e WHERE e.child_uid = s.uid) "
            "ORDER BY s.earliest_at, s.uid",
            (conversation_uid,),
        )
        return [_summary(r) for r in rows]

    def parent_of(self, uid: str) -> str | None:
        """The summary covering a message or summary, if any."""
        rows = self.db.read("SELECT parent_uid FROM summary_edges WHERE child_uid = ?", (uid,))
        return str(rows[0][0]) if rows else None

    def uncovered_messages(self, conversation_uid: str) -> builtins.list[Message]:
        """Messages no leaf summary covers yet, in ``seq`` order."""
        self._require(conversation_uid)
        rows = self.db.read(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.conversation_uid = ? "
            "AND NOT EXISTS (SELECT 1 FROM summary_edges e WHERE e.child_uid = m.uid) ORDER BY m.seq",
            (conversation_uid,),
        )
        return [_message(r) for r in rows]

    def search(self, pattern: str, **options: Unpack[TextSearch]) -> builtins.list[Summary]:
        """Summaries matching ``pattern``, oldest first (``earliest_at``, then uid).

        Modes as :meth:`SqliteConversationStore.search`. A summary passes ``since``/``before`` when the time
        span it covers overlaps them: ``latest_at >= since`` and ``earliest_at < before``.
        """
        rows = _search_rows(self.db, _SUMMARY_SEARCH, pattern, **options)
        return [_summary(r) for r in rows]
