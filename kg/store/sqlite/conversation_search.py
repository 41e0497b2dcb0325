"""Searching messages and summaries: full text over the word and trigram indexes (the plan of a pattern), or
user regexes run by RE2 inside SQLite (``mabos_regexp``), within a time window."""

from __future__ import annotations

import builtins
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.models import format_ts
from kg.regex import compile_regex
from kg.store.sqlite.conversation_rows import _MESSAGE_COLUMNS, _SUMMARY_COLUMNS
from kg.store.sqlite.db import Database
from kg.text.words import NO_SPACE_RE, WORD

#: Search modes of :meth:`SqliteConversationStore.search` and :meth:`SqliteSummaryStore.search`.
MODES = ("full_text", "regex")


#: Characters of a search pattern.
MAX_PATTERN = 1_000


#: Rows of one search.
MAX_LIMIT = 10_000


#: The trigram tokenizer indexes runs of three characters: shorter parts are matched with LIKE.
TRIGRAM = 3


REGEXP_FUNCTION = "mabos_regexp"


#: A word (:data:`kg.text.words.WORD`) with an optional ``*``: FTS5's prefix query.
_WORD = re.compile(rf"{WORD}\*?")


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
    if NO_SPACE_RE.search(pattern):
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
    db: Database, target: _SearchTarget, pattern: str, *, conversation_uids: Sequence[str], mode: str = "full_text",
    since: datetime | None = None, before: datetime | None = None, limit: int = 50,
) -> builtins.list[sqlite3.Row]:  # fmt: skip
    """Rows of ``target`` in the conversations that match ``pattern``, within the time bounds, in order.

    The keywords are those of :class:`kg.ports.TextSearch`, with their defaults.
    """
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
