"""Rows of the conversation tables as records: the columns read, the row -> model mappers, the outbox event of a
conversation."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from kg.errors import NotFoundError
from kg.models import format_ts
from kg.models.conversation import (
    Conversation,
    Message,
    Role,
    Summary,
    SummaryKind,
    SummaryMethod,
)
from kg.store.sqlite.db import ordered_ids
from kg.store.sqlite.trusted import trusted

_MESSAGE_FIELDS = (
    "uid", "conversation_uid", "seq", "role", "content", "token_count", "tool_call_id", "name", "agent_id",
    "scope", "created_at",
)  # fmt: skip


_MESSAGE_COLUMNS = ", ".join(f"m.{f}" for f in _MESSAGE_FIELDS)


_SUMMARY_FIELDS = (
    "uid", "conversation_uid", "kind", "depth", "content", "token_count", "source_token_count", "method", "model",
    "earliest_at", "latest_at", "descendant_count", "agent_id", "scope", "created_at",
)  # fmt: skip


_CHILDREN = ordered_ids("child_uid", "summary_edges", "parent_uid", "s.uid")


_SUMMARY_COLUMNS = ", ".join(f"s.{f}" for f in _SUMMARY_FIELDS) + f", {_CHILDREN} AS child_uids"


_CONVERSATION_FIELDS = ("uid", "agent_id", "scope", "session_key", "title", "active", "created_at", "updated_at")


_OUTBOX_INSERT = (
    "INSERT INTO outbox(aggregate, op, record_uid, agent_id, scope, payload, created_at) "
    "VALUES (?, 'upsert', ?, ?, ?, ?, ?)"
)


def _ts(value: datetime | None) -> str | None:
    return format_ts(value) if value is not None else None


def _dt(value: str) -> datetime:
    return datetime.fromisoformat(value)


_ROLES = {r.value: r for r in Role}


def _message(row: sqlite3.Row | dict[str, Any]) -> Message:
    """Build a message from its stored row without re-validating it (it was validated when written).

    The instance is set up as pydantic's ``model_construct`` does it (:mod:`kg.store.sqlite.trusted`);
    reading a 5,000-message conversation stays cheap.
    """
    values = {
        "uid": row["uid"], "agent_id": row["agent_id"], "scope": row["scope"],
        "created_at": _dt(row["created_at"]), "conversation_uid": row["conversation_uid"], "seq": row["seq"],
        "role": _ROLES[row["role"]], "content": row["content"], "token_count": row["token_count"],
        "tool_call_id": row["tool_call_id"], "name": row["name"],
    }  # fmt: skip
    return trusted(Message, values)


def _conversation(row: sqlite3.Row) -> Conversation:
    return Conversation.model_validate({**dict(row), "active": bool(row["active"])})


_KINDS = {k.value: k for k in SummaryKind}


_METHODS = {m.value: m for m in SummaryMethod}


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
    return trusted(Summary, values)


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
