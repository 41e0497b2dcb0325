"""SQLite adapters of the conversation ports: conversations, immutable messages and the summary DAG.

Messages and summaries are only ever inserted (triggers of migration 7 refuse UPDATE and DELETE). Each is
indexed twice: by words (FTS5 ``unicode61``) and by trigrams (FTS5 ``trigram``), the second for text
without spaces between words (Chinese, Japanese, Korean, Thai). Every write appends outbox events in its
transaction (design §3): aggregates ``conversation``, ``message`` and ``summary``, op ``upsert``, the
payload the stored row (a summary's with its ``child_uids``).

Search patterns (``mode``):

* ``full_text``: every word of the pattern must occur (AND; a trailing ``*`` makes a word a prefix).
  Words are what the unicode61 tokenizer sees (letters and digits); the pattern is never passed to FTS5
  as syntax, each word is quoted. A pattern containing CJK or Thai text is matched by substrings instead:
  each whitespace-separated part must occur in the text (trigram index for parts of 3+ characters,
  ``LIKE`` over the conversations' rows for shorter ones), case-insensitively for ASCII.
* ``regex``: a regular expression in Python syntax run by RE2 in linear time (:mod:`kg.regex`: no
  backreferences or lookaround; case-sensitive unless ``(?i)``), evaluated over the given conversations' rows
  only, and no longer once the caller's :func:`kg.regex.deadline` has passed."""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Unpack

from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.models import agent_scope, format_ts
from kg.models.conversation import (
    Conversation,
    Message,
    MessageInput,
    MessageQuery,
    Role,
    TokenEstimator,
    estimate_tokens,
)
from kg.ports import TextSearch
from kg.store.sqlite.conversation_rows import (
    _CONVERSATION_FIELDS,
    _MESSAGE_COLUMNS,
    _MESSAGE_FIELDS,
    _OUTBOX_INSERT,
    _conversation,
    _conversation_event,
    _conversation_row,
    _message,
    _ts,
)
from kg.store.sqlite.conversation_search import (
    _MESSAGE_SEARCH,
    MODES,
    _input_error,
    _search_rows,
    match_plan,
    register_regexp,
)
from kg.store.sqlite.db import Database, marks
from kg.store.sqlite.summaries import SqliteSummaryStore


class SqliteConversationStore:
    """Conversations and their immutable, sequenced messages in the embedded store."""

    def __init__(self, db: Database, *, estimator: TokenEstimator = estimate_tokens) -> None:
        self.db = db
        self.estimator = estimator
        register_regexp(db.conn)

    # ------------------------------------------------------------------ conversations

    def open(self, agent_id: str, session_key: str, *, title: str = "", now: datetime) -> Conversation:
        """The agent's conversation of ``session_key``, created (active) if it does not exist.

        An existing conversation is returned unchanged (``title`` applies only on creation). NotFoundError
        for an unknown agent; InputError for a bad session key or title.
        """
        existing = self.find(agent_id, session_key)
        if existing is not None:
            return existing
        stamp = format_ts(now)
        try:
            candidate = Conversation.model_validate(
                {
                    "uid": new_id("conversation"),
                    "agent_id": agent_id,
                    "scope": agent_scope(agent_id),
                    "session_key": session_key,
                    "title": title,
                    "active": True,
                    "created_at": stamp,
                    "updated_at": stamp,
                }
            )
        except ValueError as exc:
            raise _input_error(exc) from None
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM agents WHERE agent_id = ?", (agent_id,)).fetchone() is None:
                raise NotFoundError(f"agent_id: no agent {agent_id!r}")
            row = conn.execute(
                f"SELECT {', '.join(_CONVERSATION_FIELDS)} FROM conversations WHERE agent_id = ? AND session_key = ?",
                (agent_id, session_key),
            ).fetchone()
            if row is not None:  # opened by another writer since the read above
                return _conversation(row)
            values = candidate.model_dump(mode="json")
            values["active"] = 1
            conn.execute(
                f"INSERT INTO conversations({', '.join(_CONVERSATION_FIELDS)}) VALUES ({marks(_CONVERSATION_FIELDS)})",
                [values[f] for f in _CONVERSATION_FIELDS],
            )
            _conversation_event(conn, _conversation_row(conn, candidate.uid), stamp)
        return candidate

    def get(self, uid: str) -> Conversation:
        """A conversation by uid, or NotFoundError."""
        rows = self.db.read(f"SELECT {', '.join(_CONVERSATION_FIELDS)} FROM conversations WHERE uid = ?", (uid,))
        if not rows:
            raise NotFoundError(f"conversation_uid: no conversation {uid!r}")
        return _conversation(rows[0])

    def find(self, agent_id: str, session_key: str) -> Conversation | None:
        """The agent's conversation of ``session_key``, if any."""
        rows = self.db.read(
            f"SELECT {', '.join(_CONVERSATION_FIELDS)} FROM conversations WHERE agent_id = ? AND session_key = ?",
            (agent_id, session_key),
        )
        return _conversation(rows[0]) if rows else None

    def list(self, agent_id: str, *, active: bool | None = None) -> builtins.list[Conversation]:
        """The agent's conversations, newest activity first (NotFoundError for an unknown agent)."""
        if not self.db.read("SELECT 1 FROM agents WHERE agent_id = ?", (agent_id,)):
            raise NotFoundError(f"agent_id: no agent {agent_id!r}")
        where = "agent_id = ?"
        params: builtins.list[Any] = [agent_id]
        if active is not None:
            where += " AND active = ?"
            params.append(int(active))
        rows = self.db.read(
            f"SELECT {', '.join(_CONVERSATION_FIELDS)} FROM conversations WHERE {where} "
            "ORDER BY updated_at DESC, uid DESC",
            params,
        )
        return [_conversation(r) for r in rows]

    # ------------------------------------------------------------------ messages

    def append(
        self, conversation_uid: str, messages: Sequence[MessageInput], *, now: datetime
    ) -> builtins.list[Message]:
        """Append messages in one transaction with consecutive ``seq`` numbers; return them as stored.

        ``seq`` starts at 0 and has no gaps. ``token_count`` None is estimated by the store's estimator;
        ``created_at`` None is ``now``. The conversation's ``updated_at`` becomes ``now`` (never earlier
        than it was). NotFoundError for an unknown conversation; nothing is written on any error.
        """
        stamp = format_ts(now)
        with self.db.write() as conn:
            conversation = _conversation_row(conn, conversation_uid)
            if not messages:
                return []
            last = conn.execute(
                "SELECT MAX(seq) FROM messages WHERE conversation_uid = ?", (conversation_uid,)
            ).fetchone()[0]
            first = 0 if last is None else int(last) + 1
            rows: builtins.list[dict[str, Any]] = []
            for offset, item in enumerate(messages):
                rows.append({
                    "uid": new_id("message"), "conversation_uid": conversation_uid, "seq": first + offset,
                    "role": Role(item.role).value, "content": item.content,
                    "token_count": self.estimator(item.content) if item.token_count is None else item.token_count,
                    "tool_call_id": item.tool_call_id, "name": item.name, "agent_id": conversation["agent_id"],
                    "scope": conversation["scope"], "created_at": _ts(item.created_at) or stamp,
                })  # fmt: skip
            for row in rows:
                if row["token_count"] < 0:
                    raise InputError("token_count", "the estimator returned a negative count")
            conn.executemany(
                f"INSERT INTO messages({', '.join(_MESSAGE_FIELDS)}) VALUES ({marks(_MESSAGE_FIELDS)})",
                [[r[f] for f in _MESSAGE_FIELDS] for r in rows],
            )
            conn.executemany(
                _OUTBOX_INSERT,
                [("message", r["uid"], r["agent_id"], r["scope"], json.dumps(r), stamp) for r in rows],
            )
            conn.execute(
                "UPDATE conversations SET updated_at = max(updated_at, ?) WHERE uid = ?", (stamp, conversation_uid)
            )
            _conversation_event(conn, _conversation_row(conn, conversation_uid), stamp)
        return [_message(r) for r in rows]

    def messages(self, query: MessageQuery) -> builtins.list[Message]:
        """Messages of one conversation in ``seq`` order (NotFoundError for an unknown conversation).

        ``from_seq``/``to_seq`` are inclusive, ``since`` inclusive and ``before`` exclusive (on
        ``created_at``); ``limit`` keeps the first messages.
        """
        where = ["m.conversation_uid = ?"]
        params: builtins.list[Any] = [query.conversation_uid]
        for clause, value in (
            ("m.seq >= ?", query.from_seq),
            ("m.seq <= ?", query.to_seq),
            ("m.created_at >= ?", _ts(query.since)),
            ("m.created_at < ?", _ts(query.before)),
        ):
            if value is not None:
                where.append(clause)
                params.append(value)
        limit = -1 if query.limit is None else query.limit
        self._require(query.conversation_uid)  # conversations are never deleted: no race with the read below
        rows = self.db.read(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE {' AND '.join(where)} ORDER BY m.seq LIMIT ?",
            [*params, limit],
        )
        return [_message(r) for r in rows]

    def _require(self, conversation_uid: str) -> None:
        if not self.db.read("SELECT 1 FROM conversations WHERE uid = ?", (conversation_uid,)):
            raise NotFoundError(f"conversation_uid: no conversation {conversation_uid!r}")

    def get_messages(self, uids: Iterable[str]) -> dict[str, Message]:
        """Messages by uid (unknown uids are left out)."""
        rows = self.db.read(
            f"SELECT {_MESSAGE_COLUMNS} FROM json_each(?) w CROSS JOIN messages m ON m.uid = w.value",
            (json.dumps(list(dict.fromkeys(uids))),),
        )
        return {r["uid"]: _message(r) for r in rows}

    def search(self, pattern: str, **options: Unpack[TextSearch]) -> builtins.list[Message]:
        """Messages of the given conversations matching ``pattern``, oldest first (``created_at``, then ``seq``).

        See the module docstring for the two modes. ``since`` is inclusive and ``before`` exclusive.
        InputError (field ``pattern``, ``mode`` or ``limit``) for bad input; no conversations, no results.
        """
        rows = _search_rows(self.db, _MESSAGE_SEARCH, pattern, **options)
        return [_message(r) for r in rows]


__all__ = [
    "MODES",
    "SqliteConversationStore",
    "SqliteSummaryStore",
    "match_plan",
    "register_regexp",
]
