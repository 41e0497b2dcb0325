"""Rows of ``memory_items`` as records: the columns a read takes, a :class:`~kg.models.MemoryQuery` as SQL
conditions, and the row -> :class:`~kg.models.MemoryItem` mapper of :class:`kg.store.sqlite.memory.SqliteMemoryStore`.

Expiry is read here: a short-term item past its ``expires_at`` at the store clock's time (:data:`EXPIRED`) counts as
archived as of its expiry (:data:`ARCHIVED_AT`) in every condition, whether or not a write has archived it yet.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from kg.models import MemoryItem, MemoryQuery, MemoryStoreKind, MemoryType, Tier, format_ts
from kg.store.sqlite.db import marks, ordered_ids
from kg.store.sqlite.trusted import trusted

#: The columns of an item's own row, in insert order.
FIELDS = (
    "uid", "agent_id", "scope", "content", "type", "store", "importance", "confidence", "source", "tags", "tier",
    "access_count", "accessed_at", "expires_at", "archived_at", "created_at", "updated_at",
)  # fmt: skip
# Every read also takes the item's lineage (one index probe per row, ordered by position).
LINEAGE = f"CASE WHEN m.derived THEN {ordered_ids('parent_uid', 'lineage', 'child_uid', 'm.uid')} ELSE '[]' END"
#: A short-term item whose TTL has passed at ``?`` (now) and that no write has archived yet.
EXPIRED = "(m.archived_at IS NULL AND m.store = 'short_term' AND m.expires_at IS NOT NULL AND m.expires_at <= ?)"
#: When an item counts as archived (one ``?``: now): as stored, or its expiry once that has passed.
ARCHIVED_AT = f"CASE WHEN m.archived_at IS NOT NULL THEN m.archived_at WHEN {EXPIRED} THEN m.expires_at END"
COLUMNS = ", ".join(f"m.{f}" for f in FIELDS) + f", {LINEAGE} AS derived_from"


def where_clause(query: MemoryQuery, now: str) -> tuple[list[str], list[Any]]:
    """The conditions of ``query`` and their parameters; an item expired at ``now`` counts as archived."""
    where = [f"m.scope IN ({marks(query.scopes)})"]
    params: list[Any] = list(query.scopes)
    if query.agent_id is not None:
        where.append("m.agent_id = ?")
        params.append(query.agent_id)
    for column, values in (("type", query.types), ("store", query.stores)):
        if values:
            where.append(f"m.{column} IN ({marks(values)})")
            params.extend(v.value for v in values)
    for tag in query.tags:  # every given tag must be present
        where.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
        params.append(tag)
    if query.min_importance > 0:
        where.append("m.importance >= ?")
        params.append(query.min_importance)
    if query.created_after is not None:
        where.append("m.created_at >= ?")
        params.append(format_ts(query.created_after))
    if query.valid_at is not None:
        stamp = format_ts(query.valid_at)
        where.append(f"m.created_at <= ? AND IFNULL(({ARCHIVED_AT}) > ?, 1)")
        params.extend((stamp, now, stamp))
    if query.only_archived:
        where.append(f"(m.archived_at IS NOT NULL OR {EXPIRED})")
        params.append(now)
    elif not query.include_archived and query.valid_at is None:
        where.append(f"m.archived_at IS NULL AND NOT {EXPIRED}")
        params.append(now)
    return where, params


def to_items(rows: list[sqlite3.Row]) -> list[MemoryItem]:
    """Items from rows that hold :data:`COLUMNS` (their lineage included)."""
    return [_item(row, [] if row["derived_from"] == "[]" else json.loads(row["derived_from"])) for row in rows]


_TYPES = {t.value: t for t in MemoryType}
_STORES = {s.value: s for s in MemoryStoreKind}
_TIERS = {t.value: t for t in Tier}


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _item(row: sqlite3.Row, derived_from: list[str]) -> MemoryItem:
    """Build an item from its own row without re-validating it (:mod:`kg.store.sqlite.trusted` says why)."""
    values = {
        "uid": row["uid"], "agent_id": row["agent_id"], "scope": row["scope"], "created_at":
        datetime.fromisoformat(row["created_at"]), "content": row["content"], "type": _TYPES[row["type"]],
        "store": _STORES[row["store"]], "importance": row["importance"], "confidence": row["confidence"],
        "source": row["source"], "tags": [] if row["tags"] == "[]" else json.loads(row["tags"]),
        "accessed_at": _dt(row["accessed_at"]), "access_count": row["access_count"], "derived_from": derived_from,
        "tier": _TIERS[row["tier"]],
        "expires_at": _dt(row["expires_at"]), "archived_at": _dt(row["archived_at"]),
        "updated_at": _dt(row["updated_at"]),
    }  # fmt: skip
    return trusted(MemoryItem, values)


__all__ = ["ARCHIVED_AT", "COLUMNS", "EXPIRED", "FIELDS", "LINEAGE", "to_items", "where_clause"]
