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
  only, and no longer once the caller's :func:`kg.regex.deadline` has passed.
"""

from __future__ import annotations

import builtins
import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.errors import ConflictError, InputError, NotFoundError
from kg.ids import new_id
from kg.models import agent_scope, format_ts
from kg.models.conversation import (
    Conversation,
    Message,
    MessageInput,
    MessageQuery,
    Role,
    Summary,
    SummaryKind,
    SummaryMethod,
    TokenEstimator,
    estimate_tokens,
)
from kg.regex import compile_regex
from kg.store.sqlite.db import Database, marks

#: Search modes of :meth:`SqliteConversationStore.search` and :meth:`SqliteSummaryStore.search`.
MODES = ("full_text", "regex")
#: Characters of a search pattern.
MAX_PATTERN = 1_000
#: Rows of one search.
MAX_LIMIT = 10_000
#: The trigram tokenizer indexes runs of three characters: shorter parts are matched with LIKE.
TRIGRAM = 3
REGEXP_FUNCTION = "mabos_regexp"

# Scripts written without spaces between words: searched by substring through the trigram index.
_NO_SPACES = re.compile(
    "[\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3100-\u312f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]"
)
_WORD = re.compile(r"[^\W_]+\*?")

_MESSAGE_FIELDS = (
    "uid", "conversation_uid", "seq", "role", "content", "token_count", "tool_call_id", "name", "agent_id",
    "scope", "created_at",
)  # fmt: skip
_MESSAGE_COLUMNS = ", ".join(f"m.{f}" for f in _MESSAGE_FIELDS)
_SUMMARY_FIELDS = (
    "uid", "conversation_uid", "kind", "depth", "content", "token_count", "source_token_count", "method", "model",
    "earliest_at", "latest_at", "descendant_count", "agent_id", "scope", "created_at",
)  # fmt: skip
_CHILDREN = (
    "(SELECT json_group_array(child_uid) FROM (SELECT child_uid FROM summary_edges "
    "WHERE parent_uid = s.uid ORDER BY position))"
)
_SUMMARY_COLUMNS = ", ".join(f"s.{f}" for f in _SUMMARY_FIELDS) + f", {_CHILDREN} AS child_uids"
_CONVERSATION_FIELDS = ("uid", "agent_id", "scope", "session_key", "title", "active", "created_at", "updated_at")
_OUTBOX_INSERT = (
    "INSERT INTO outbox(aggregate, op, record_uid, agent_id, scope, payload, created_at) "
    "VALUES (?, 'upsert', ?, ?, ?, ?, ?)"
)


def _regexp(pattern: str, text: str | None) -> int:
    return int(text is not None and compile_regex(pattern).matches(text))


def register_regexp(conn: sqlite3.Connection) -> None:
    """Register ``mabos_regexp(pattern, text)``: 1 when the pattern occurs (RE2, linear time: :mod:`kg.regex`).

    Not ``deterministic``: once the caller's :func:`kg.regex.deadline` passes it answers 0.
    """
    conn.create_function(REGEXP_FUNCTION, 2, _regexp)


def _check_regex(pattern: str) -> None:
    compile_regex(pattern)


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_plan(pattern: str) -> tuple[str, str | None, builtins.list[str]]:
    """How to run a full-text ``pattern``: (index, FTS5 MATCH expression or None, LIKE patterns).

    ``index`` is ``fts`` (words, unicode61) or ``trigram`` (substrings, for CJK and Thai text). Every term
    is quoted, so nothing in the pattern is read as FTS5 syntax. InputError when there is nothing to find.
    """
    if _NO_SPACES.search(pattern):
        parts = list(dict.fromkeys(pattern.split()))
        long = [p for p in parts if len(p) >= TRIGRAM]
        short = [_like(p) for p in parts if len(p) < TRIGRAM]
        return "trigram", (" ".join(_quote(p) for p in long) or None), short
    words = list(dict.fromkeys(_WORD.findall(pattern)))
    if not words:
        raise InputError("pattern", "has no words to search for (letters or digits); use mode regex for symbols")
    expression = " ".join(_quote(w[:-1]) + "*" if w.endswith("*") else _quote(w) for w in words)
    return "fts", expression, []


def _check_search(pattern: str, mode: str, limit: int) -> None:
    if mode not in MODES:
        raise InputError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    if not pattern.strip():
        raise InputError("pattern", "must not be empty")
    if len(pattern) > MAX_PATTERN:
        raise InputError("pattern", f"must be at most {MAX_PATTERN} characters")
    if "\x00" in pattern:
        raise InputError("pattern", "must not contain NUL characters")
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"must be between 1 and {MAX_LIMIT}")
    if mode == "regex":
        _check_regex(pattern)


def _search_where(table: str, alias: str, pattern: str, mode: str) -> tuple[builtins.list[str], builtins.list[Any]]:
    """WHERE conditions (and parameters) selecting ``alias`` rows of ``table`` that match ``pattern``."""
    if mode == "regex":
        return [f"{REGEXP_FUNCTION}(?, {alias}.content)"], [pattern]
    index, expression, likes = match_plan(pattern)
    where: builtins.list[str] = []
    params: builtins.list[Any] = []
    if expression is not None:
        fts = f"{table}_{index}"
        where.append(f"{alias}.id IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?)")
        params.append(expression)
    for like in likes:
        where.append(f"{alias}.content LIKE ? ESCAPE '\\'")
        params.append(like)
    return where, params


def _ts(value: datetime | None) -> str | None:
    return format_ts(value) if value is not None else None


def _dt(value: str) -> datetime:
    return datetime.fromisoformat(value)


_ROLES = {r.value: r for r in Role}
_MESSAGE_MODEL_FIELDS = frozenset(Message.model_fields)


def _message(row: sqlite3.Row | dict[str, Any]) -> Message:
    """Build a message from its stored row without re-validating it (it was validated when written).

    The instance is set up as pydantic's ``model_construct`` does it (see ``kg.store.sqlite.memory._item``);
    reading a 5,000-message conversation stays cheap.
    """
    values = {
        "uid": row["uid"], "agent_id": row["agent_id"], "scope": row["scope"],
        "created_at": _dt(row["created_at"]), "conversation_uid": row["conversation_uid"], "seq": row["seq"],
        "role": _ROLES[row["role"]], "content": row["content"], "token_count": row["token_count"],
        "tool_call_id": row["tool_call_id"], "name": row["name"],
    }  # fmt: skip
    message = object.__new__(Message)
    object.__setattr__(message, "__dict__", values)
    object.__setattr__(message, "__pydantic_fields_set__", set(_MESSAGE_MODEL_FIELDS))
    object.__setattr__(message, "__pydantic_extra__", None)
    object.__setattr__(message, "__pydantic_private__", None)
    return message


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation.model_validate({**dict(row), "active": bool(row["active"])})


_KINDS = {k.value: k for k in SummaryKind}
_METHODS = {m.value: m for m in SummaryMethod}
_SUMMARY_MODEL_FIELDS = frozenset(Summary.model_fields)


def _summary(row: sqlite3.Row) -> Summary:
    """Build a summary from its stored row and edges without re-validating it (as :func:`_message`)."""
    values = {
        "uid": row["uid"], "agent_id": row["agent_id"], "scope": row["scope"],
        "created_at": _dt(row["created_at"]), "conversation_uid": row["conversation_uid"],
        "kind": _KINDS[row["kind"]], "depth": row["depth"], "content": row["content"],
        "token_count": row["token_count"], "source_token_count": row["source_token_count"],
        "method": _METHODS[row["method"]], "model": row["model"], "child_uids": json.loads(row["child_uids"]),
        "earliest_at": _dt(row["earliest_at"]), "latest_at": _dt(row["latest_at"]),
        "descendant_count": row["descendant_count"],
    }  # fmt: skip
    summary = object.__new__(Summary)
    object.__setattr__(summary, "__dict__", values)
    object.__setattr__(summary, "__pydantic_fields_set__", set(_SUMMARY_MODEL_FIELDS))
    object.__setattr__(summary, "__pydantic_extra__", None)
    object.__setattr__(summary, "__pydantic_private__", None)
    return summary


def _conversation_row(conn: sqlite3.Connection, uid: str) -> sqlite3.Row:
    row = conn.execute(f"SELECT {', '.join(_CONVERSATION_FIELDS)} FROM conversations WHERE uid = ?", (uid,)).fetchone()
    if row is None:
        raise NotFoundError(f"conversation_uid: no conversation {uid!r}")
    return row  # type: ignore[no-any-return]


def _conversation_event(conn: sqlite3.Connection, row: sqlite3.Row, stamp: str) -> None:
    payload = {**dict(row), "active": bool(row["active"])}
    conn.execute(
        _OUTBOX_INSERT, ("conversation", row["uid"], row["agent_id"], row["scope"], json.dumps(payload), stamp)
    )


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
        """Messages of the given conversations matching ``pattern``, oldest first (``created_at``, then ``seq``).

        See the module docstring for the two modes. ``since`` is inclusive and ``before`` exclusive.
        InputError (field ``pattern``, ``mode`` or ``limit``) for bad input; no conversations, no results.
        """
        rows = _search_rows(self.db, _MESSAGE_SEARCH, pattern, mode=mode, conversation_uids=conversation_uids,
                            since=since, before=before, limit=limit)  # fmt: skip
        return [_message(r) for r in rows]


@dataclass(frozen=True)
class _SearchTarget:
    """What a search reads: the table and alias, the selected columns, the columns ``since`` and ``before``
    compare (``since`` inclusive, ``before`` exclusive) and the order of the results."""

    table: str
    alias: str
    columns: str
    since_column: str
    before_column: str
    order: str


#: Messages: the window compares their time; oldest first. Summaries: a summary passes when the span it
#: covers overlaps the window (``latest_at >= since``, ``earliest_at < before``); by earliest time.
_MESSAGE_SEARCH = _SearchTarget(
    "messages", "m", _MESSAGE_COLUMNS, "created_at", "created_at", "m.created_at, m.seq, m.uid"
)
_SUMMARY_SEARCH = _SearchTarget("summaries", "s", _SUMMARY_COLUMNS, "latest_at", "earliest_at", "s.earliest_at, s.uid")


def _search_rows(
    db: Database, target: _SearchTarget, pattern: str, *, mode: str, conversation_uids: Sequence[str],
    since: datetime | None, before: datetime | None, limit: int,
) -> builtins.list[sqlite3.Row]:  # fmt: skip
    """Rows of ``target`` in the conversations that match ``pattern``, within the time bounds, in order."""
    _check_search(pattern, mode, limit)
    if not conversation_uids:
        return []
    a = target.alias
    where, params = _search_where(target.table, a, pattern, mode)
    where.append(f"{a}.conversation_uid IN (SELECT value FROM json_each(?))")
    params.append(json.dumps(list(dict.fromkeys(conversation_uids))))
    if since is not None:
        where.append(f"{a}.{target.since_column} >= ?")
        params.append(format_ts(since))
    if before is not None:
        where.append(f"{a}.{target.before_column} < ?")
        params.append(format_ts(before))
    sql = f"SELECT {target.columns} FROM {target.table} {a} WHERE {' AND '.join(where)} ORDER BY {target.order} LIMIT ?"
    return _run_search(db, sql, [*params, limit])


def _run_search(db: Database, sql: str, params: builtins.list[Any]) -> builtins.list[sqlite3.Row]:
    try:
        return db.read(sql, params)
    except sqlite3.OperationalError as exc:  # a quoted FTS5 expression should never fail: say so plainly
        if "fts5" in str(exc).lower():
            raise InputError("pattern", f"cannot be searched ({exc})") from None
        raise


def _input_error(exc: ValueError) -> InputError:
    """The first problem of a pydantic ValidationError (or any ValueError) as an InputError."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "value"
        return InputError(field, str(first.get("msg", exc)))
    return InputError("value", str(exc))


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
        """Summaries matching ``pattern``, oldest first (``earliest_at``, then uid).

        Modes as :meth:`SqliteConversationStore.search`. A summary passes ``since``/``before`` when the time
        span it covers overlaps them: ``latest_at >= since`` and ``earliest_at < before``.
        """
        rows = _search_rows(self.db, _SUMMARY_SEARCH, pattern, mode=mode, conversation_uids=conversation_uids,
                            since=since, before=before, limit=limit)  # fmt: skip
        return [_summary(r) for r in rows]


__all__ = ["MODES", "SqliteConversationStore", "SqliteSummaryStore", "match_plan", "register_regexp"]
