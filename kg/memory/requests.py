"""The memory use cases' requests: what store, recall, listing and the cognitive files take, each declared once
(admission's is in :mod:`kg.memory.admission_requests`; consolidation's, a checkpoint's and the time hierarchy's in
:mod:`kg.memory.admin_requests`, which a recall does not import).

:class:`kg.memory.service.MemoryService` and the memory functions accept these models; the ``memory_*`` tools
(cli/tools/memory*.py) are these models plus ``agent_id``, and ``mabos memory ...`` generates its options from them
(docs/decisions/2026-11-28-request-models.md). Nothing here imports a numeric stack: a recall's request costs
pydantic and the models only.
"""

from typing import Literal

from pydantic import Field

from kg.conversation.window import MAX_WINDOW, token_count
from kg.limits import MAX_QUERY_TEXT
from kg.models import MemoryStoreKind, MemoryType, UtcDatetime
from kg.models.request import Request
from kg.recall.fusion_types import FusionMethod
from kg.recall.modes import RecallMode

MAX_RECALL_LIMIT = 100
MAX_DEPTH = 3
#: The largest token budget a recall accepts.
MAX_RECALL_TOKENS = 10_000_000

#: Which cognitive file(s) an export or import reads or writes.
Kind = Literal["beliefs", "desires", "goals", "intentions", "plans", "learnings", "all"]


class StoreRequest(Request):
    """One memory item to store."""

    content: str = Field(description="The text to remember, one self-contained statement.")
    type: MemoryType | None = Field(
        default=None, description="What kind of memory this is (default observation); sets the default importance."
    )
    importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="0..1; default by type (e.g. decision 0.75, observation 0.5)."
    )
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="0..1 (default 1).")
    tags: list[str] | None = Field(
        default=None, description="Short labels without spaces or commas, e.g. auth and jwt."
    )
    store: MemoryStoreKind | None = Field(
        default=None,
        description="working (7 items), short_term (default: 200 items for 2 hours, then archived) or long_term.",
    )
    source: str | None = Field(default=None, description="Where the memory comes from (default 'agent').")
    scope: str | None = Field(
        default=None, description="Scope such as global, agent:<id> or project:<name>; default: the agent's own scope."
    )


class RecallRequest(Request):
    """What to recall, how to search and rank, which items qualify, and how much to return."""

    query: str = Field(
        default="",
        max_length=MAX_QUERY_TEXT,
        description="What to look for; empty lists the most important memories (at most 100,000 characters).",
    )
    limit: int = Field(
        default=20,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description=f"At most this many hits per depth level (1..{MAX_RECALL_LIMIT}).",
    )
    depth: int = Field(
        default=0,
        ge=0,
        le=MAX_DEPTH,
        description=f"Recursive search 0..{MAX_DEPTH}: each level searches again with the most frequent new terms of "
        "the previous level's hits (each hit says which depth found it).",
    )
    mode: RecallMode = Field(
        default="hybrid",
        description="hybrid (BM25 + vectors), bm25 or vector; bm25 is used when no embedder can load.",
    )
    fusion: FusionMethod = Field(
        default="weighted",
        description="weighted (0.4 vector / 0.6 BM25 with a keyword floor) or rrf (reciprocal rank fusion).",
    )
    mmr: bool = Field(default=False, description="Re-rank for diversity (maximal marginal relevance, lambda 0.7).")
    explain: bool = Field(default=False, description="Show every component of every score.")
    min_score: float = Field(
        default=0.0,
        allow_inf_nan=False,
        description="Drop hits scoring below this (with mmr a redundant hit's score can fall below 0).",
    )
    source: Literal["items", "files"] = Field(
        default="items", description="Search memory items, or the agent's Markdown files (cited by file and lines)."
    )
    types: list[MemoryType] | None = Field(default=None, description="Only these memory types.")
    stores: list[MemoryStoreKind] | None = Field(default=None, description="Only these stores.")
    tags: list[str] | None = Field(default=None, description="Tags that must all be present.")
    min_importance: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Only items at least this important (0..1)."
    )
    max_age: str | None = Field(default=None, description="Only items newer than this: 90m, 36h, 7d or 2w.")
    valid_at: UtcDatetime | None = Field(
        default=None, description="Only items that existed then and were not yet archived (ISO-8601; naive = UTC)."
    )
    include_archived: bool = Field(default=False, description="Also recall archived items.")
    max_tokens: int | None = token_count(
        MAX_RECALL_TOKENS, "Keep the best hits whose contents fit in this many tokens."
    )
    window: int | None = token_count(
        MAX_WINDOW,
        "The model's whole context window: the token budget becomes its retrieved-memory share (20%); overrides "
        "max_tokens.",
    )
    scope: str | None = Field(default=None, description="Only this readable scope (default: all the agent may read).")


#: The fields of a :class:`RecallRequest` that choose which items qualify (the store's ``MemoryQuery`` filters); the
#: others say what to look for, how to search and rank, and how much to return.
RECALL_FILTERS = ("types", "stores", "tags", "min_importance", "max_age", "valid_at", "include_archived", "scope")


#: The categories extraction tags its items with (``category:<name>``).
EXTRACTION_CATEGORIES = ("profile", "preferences", "entities", "events", "cases", "patterns")
Category = Literal["profile", "preferences", "entities", "events", "cases", "patterns"]


class ListItemsRequest(Request):
    """Which of the agent's own items to list, every field shown."""

    store: MemoryStoreKind | None = Field(default=None, description="Only this store.")
    type: MemoryType | None = Field(default=None, description="Only this memory type.")
    category: Category | None = Field(default=None, description="Only extracted items of this category.")
    since: UtcDatetime | None = Field(default=None, description="Only items created at or after this time.")
    include_archived: bool = Field(default=True, description="Archived (merged, superseded ...) items too.")
    limit: int = Field(default=1_000, ge=1, le=100_000, description="At most this many items (oldest first).")


class CognitiveRequest(Request):
    """Which of the agent's cognitive files to export or import."""

    kind: Kind = Field(
        default="all",
        description="Which cognitive file: beliefs, desires, goals, intentions, plans, learnings, or all of them.",
    )


__all__ = [
    "MAX_DEPTH",
    "MAX_RECALL_LIMIT",
    "MAX_RECALL_TOKENS",
    "RECALL_FILTERS",
    "CognitiveRequest",
    "Kind",
    "RecallRequest",
    "StoreRequest",
]
