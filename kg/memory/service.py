"""Memory service: the seed tools memory_store_item, memory_recall (with recursive search R4) and
memory_status over the three stores.

Stores: working (7 items; overflow demotes the oldest to short-term), short-term (200 items, 2-hour
TTL; overflow archives the lowest importance), long-term (unbounded). Nothing is deleted: archived items stay
recallable with ``include_archived``. An expired short-term item counts as archived from its expiry on; the write
that archives it on disk (with its outbox event) comes with the agent's next memory write, the servers' idle
time (:meth:`MemoryService.prune_all_expired`) or the nightly job - never with a read.

Reads read: a recall computes its answer without writing, then records the access of what it returned in one
write (:mod:`kg.memory.access`) and keeps any vector it had to compute in the embedding cache.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from kg.clock import Clock
from kg.errors import InputError, NotFoundError
from kg.ids import new_id
from kg.memory.access import AccessLog
from kg.memory.daily_log import append_items
from kg.memory.durations import parse_max_age
from kg.memory.file_recall import HasMemory, answer_from_files, asked, recall_or_files, search_agent_files
from kg.memory.files import directory_lock, memory_dir
from kg.memory.hit_selection import new_terms, within_budget
from kg.memory.importance import MANUAL_TAG, formula_weighted, item_importance, recalculated, topic_tags
from kg.memory.recall_search import IMPORTANCE_WEIGHT, HitMode, RecallHit, RecallResult, RecallSearch
from kg.memory.requests import (
    MAX_DEPTH,
    MAX_RECALL_LIMIT,
    MAX_RECALL_TOKENS,
    RECALL_FILTERS,
    ListItemsRequest,
    RecallRequest,
)
from kg.models import (
    MemoryItem,
    MemoryQuery,
    MemoryStoreKind,
    MemoryType,
    Model,
    parse,
)
from kg.models.base import new_list
from kg.models.request import requested
from kg.ports import GraphStore, MemoryWriteResult, StoreLimits
from kg.recall.engine import RecallEngine
from kg.recall.sidecar import IndexUnavailableError
from kg.scopes import ScopePolicy
from kg.text.words import lower_words

if TYPE_CHECKING:  # a recall of memory items loads neither the tier rules nor the Markdown files' search
    from kg.memory.tiers import TierChange, TierPolicy

#: Importance of a new item when the caller gives none (the seed's table; others 0.5).
DEFAULT_IMPORTANCE: dict[MemoryType, float] = {
    MemoryType.IDENTITY: 0.9,
    MemoryType.GOAL: 0.8,
    MemoryType.DECISION: 0.75,
    MemoryType.PREFERENCE: 0.7,
    MemoryType.LESSON: 0.65,
    MemoryType.SKILL: 0.6,
    MemoryType.FACT: 0.5,
    MemoryType.EVENT: 0.4,
}
FALLBACK_IMPORTANCE = 0.5


class StoreResult(Model):
    """A stored item and what the capacity rules did around it."""

    item: MemoryItem
    demoted: builtins.list[str] = Field(default_factory=new_list)
    archived: builtins.list[str] = Field(default_factory=new_list)
    daily_log: str


class StoreManyResult(Model):
    """Items stored together, what the capacity rules did around them, and the daily logs appended to."""

    items: builtins.list[MemoryItem]
    demoted: builtins.list[str] = Field(default_factory=new_list)
    archived: builtins.list[str] = Field(default_factory=new_list)
    daily_logs: builtins.list[str] = Field(default_factory=new_list)


#: The most items one store_many call takes.
MAX_STORE_MANY = 1000


class MemoryService:
    """Memory items of a workspace's agents."""

    def __init__(self, store: GraphStore, policy: ScopePolicy, clock: Clock, workspace: Path | None, *,
                 limits: StoreLimits | None = None, engine: RecallEngine | None = None) -> None:  # fmt: skip
        self.store = store
        self.policy = policy
        self.clock = clock
        self.workspace = workspace
        self.limits = limits or StoreLimits()
        self.engine = engine or RecallEngine(store, None, None)
        self.access = AccessLog(store.memory)

    # ------------------------------------------------------------------ writes

    def store_item(self, agent_id: str, content: str, **fields: Any) -> StoreResult:
        """Store one item (default store short-term; importance from its type when not given)."""
        item = self._new_item(agent_id, content, fields)
        result, logs = self._commit(agent_id, [item])
        return StoreResult(item=item, demoted=list(result.demoted), archived=list(result.archived),
                           daily_log=logs.get(item.uid, ""))  # fmt: skip

    def store_many(self, agent_id: str, entries: Sequence[Mapping[str, Any]]) -> StoreManyResult:
        """Store several items at once: one transaction, and one append + fsync per daily log.

        ``entries`` are the arguments of :meth:`store_item` (``content`` and its fields) for each item. All are
        checked first (an error names the entry: ``entries[3].importance``); nothing is written if one is bad.
        """
        if not 1 <= len(entries) <= MAX_STORE_MANY:
            raise InputError("entries", f"must hold 1 to {MAX_STORE_MANY} items, got {len(entries)}")
        items = []
        for n, entry in enumerate(entries):
            fields = dict(entry)
            try:
                items.append(self._new_item(agent_id, fields.pop("content", None), fields))
            except InputError as exc:
                raise InputError(f"entries[{n}].{exc.field}", exc.rule) from None
        result, logs = self._commit(agent_id, items)
        return StoreManyResult(items=items, demoted=list(result.demoted), archived=list(result.archived),
                               daily_logs=sorted(set(logs.values())))  # fmt: skip

    def _new_item(self, agent_id: str, content: Any, fields: dict[str, Any]) -> MemoryItem:
        fields = {k: v for k, v in fields.items() if v is not None}
        scope = self.policy.check_write(agent_id, fields.pop("scope", None))
        now = self.clock.now()
        data: dict[str, Any] = {"uid": new_id("memory"), "agent_id": agent_id, "scope": scope, "content": content,
                                "created_at": now, "updated_at": now, **fields}  # fmt: skip
        item = parse(MemoryItem, data)
        defaults: dict[str, Any] = {}  # valid by construction: set without re-validating the whole item
        if "importance" not in fields:
            defaults["importance"] = DEFAULT_IMPORTANCE.get(item.type, FALLBACK_IMPORTANCE)
        if item.store is MemoryStoreKind.SHORT_TERM and item.expires_at is None:
            defaults["expires_at"] = now + timedelta(seconds=self.limits.short_term_ttl_seconds)
        elif item.store is not MemoryStoreKind.SHORT_TERM:
            defaults["expires_at"] = None
        return item.model_copy(update=defaults)

    def _commit(self, agent_id: str, items: builtins.list[MemoryItem]) -> tuple[MemoryWriteResult, dict[str, str]]:
        """Insert ``items`` and append their daily-log entries, holding the agent's memory-directory lock across
        both: a catch-up (:mod:`kg.memory.daily_log`) never sees an item between its commit and its append."""
        now = self.clock.now()
        if self.workspace is None:
            result, logs = self.store.memory.add(items, limits=self.limits, now=now), {}
        else:
            with directory_lock(memory_dir(self.workspace, agent_id)):
                result = self.store.memory.add(items, limits=self.limits, now=now)
                written = append_items(self.workspace, agent_id, items)
            logs = {i.uid: str(written[i.created_at.date()]) for i in items}
        self._reweigh_related(agent_id, items)
        return result, logs

    def _reweigh_related(self, agent_id: str, items: builtins.list[MemoryItem]) -> None:
        """A new memory was created: recalculate the importance of the agent's formula-weighted items that share
        a topic tag with one of ``items`` (:mod:`kg.memory.importance`). Nothing is read without a topic tag."""
        new = {i.uid for i in items}
        related: dict[str, MemoryItem] = {}
        for tag in sorted({t for i in items for t in topic_tags(i.tags)}):
            query = self._query(agent_id, owner=agent_id, tags=[tag], limit=1_000_000)
            for item in self.store.memory.list(query):
                if item.uid not in new:
                    related[item.uid] = item
        changes = recalculated(related.values(), self.clock.now())
        self.store.memory.update([(uid, {"importance": v}) for uid, v in changes.items()], now=self.clock.now())

    def prune_expired(self, agent_id: str) -> builtins.list[str]:
        """Archive the agent's expired short-term items on disk (reads already treat them as archived); their
        uids. The nightly job's tiers step and consolidation run it; no read does."""
        self.policy.require_agent(agent_id)
        return self.store.memory.archive_expired(agent_id, now=self.clock.now())

    def prune_all_expired(self) -> dict[str, builtins.list[str]]:
        """:meth:`prune_expired` for every agent (for idle time: costs no write where nothing expired); the uids
        archived, by agent (agents with none left out)."""
        now = self.clock.now()
        done = {a.agent_id: self.store.memory.archive_expired(a.agent_id, now=now) for a in self.store.agents.list()}
        return {agent: uids for agent, uids in done.items() if uids}

    def update(self, agent_id: str, uid: str, **changes: Any) -> MemoryItem:
        """Change an item the agent may write (store, tier, importance, tags, type, archived_at ...)."""
        item = self.get(agent_id, uid)
        self.policy.check_write(agent_id, item.scope)
        merged = parse(MemoryItem, {**item.model_dump(), **changes})
        fields = {k: getattr(merged, k) for k in changes}
        if formula_weighted(item) and "importance" in changes:  # explicit: never recalculated again
            fields["tags"] = [*merged.tags, MANUAL_TAG] if MANUAL_TAG not in merged.tags else merged.tags
        elif formula_weighted(merged) and "tags" in changes:  # a tag change recalculates it
            fields["importance"] = item_importance(merged, self.clock.now())
        self.store.memory.update([(uid, fields)], now=self.clock.now())
        return self.get(agent_id, uid)

    # ------------------------------------------------------------------ reads

    def get(self, agent_id: str, uid: str) -> MemoryItem:
        """One item visible to the agent."""
        scopes = self.policy.readable(agent_id)
        item = self.store.memory.get_many([uid]).get(uid)
        if item is None or item.scope not in scopes:
            raise NotFoundError(f"uid: no memory item {uid!r} visible to {agent_id!r}")
        return item

    def list_items(self, agent_id: str, request: ListItemsRequest | None = None, *, include_archived: bool = True,
                   limit: int | None = None, **filters: Any) -> builtins.list[MemoryItem]:  # fmt: skip
        """The agent's own items (any store), ordered by (created_at, uid): as a :class:`ListItemsRequest` asks, or
        by the store's filters (``stores``, ``types``, ``tags``, ``created_after`` ...) given as keywords."""
        if request is not None:
            requested(ListItemsRequest, request, {"limit": limit, **filters})
            include_archived, limit = request.include_archived, request.limit
            filters = {"stores": [request.store] if request.store else None,
                       "types": [request.type] if request.type else None,
                       "tags": [f"category:{request.category}"] if request.category else None,
                       "created_after": request.since}  # fmt: skip
        query = self._query(agent_id, include_archived=include_archived, limit=limit or 1_000_000,
                            owner=agent_id, **filters)  # fmt: skip
        return self.store.memory.list(query)

    def _query(self, agent_id: str, *, owner: str | None = None, **filters: Any) -> MemoryQuery:
        scopes = self.policy.narrow(agent_id, filters.pop("scope", None))
        max_age = parse_max_age(filters.pop("max_age", None))
        if max_age is not None:
            filters["created_after"] = self.clock.now() - max_age
        data = {"scopes": scopes, "agent_id": owner, **{k: v for k, v in filters.items() if v is not None}}
        return parse(MemoryQuery, data)

    def recall(self, agent_id: str, query: str | RecallRequest = "", *, touch: bool = True,
               **fields: Any) -> RecallResult:  # fmt: skip
        """Items visible to the agent, best first, by the hybrid engine (:mod:`kg.recall.engine`): a
        :class:`~kg.memory.requests.RecallRequest` (its fields and bounds are declared there), or its query and
        fields as keywords, validated into one.

        ``mode`` hybrid|bm25|vector, ``fusion`` weighted|rrf, ``mmr`` for diversity, ``min_score``, and
        ``explain`` for every component of every score. Filters: ``types``, ``stores``, ``tags`` (all must
        be present), ``min_importance``, ``max_age`` (``"7d"``), ``valid_at`` (items that existed and were
        not archived then), ``scope``, ``include_archived``. ``depth`` 1..3 searches again with the most
        frequent new terms of each level's results (R4); hits then carry the depth that found them.
        ``max_tokens`` is the retrieved-memory share of a context budget (``kg.conversation.budget``): hits are
        kept best first while their contents fit (a hit that does not fit is passed over), and
        ``budget_dropped`` counts the rest; ``window`` (a whole context window) makes its retrieved-memory share
        the budget instead. ``source="files"`` searches the agent's Markdown files instead
        (``files`` in the result). If the vector index is unusable and the store too large to search without it,
        the Markdown files answer (``fallback``).

        The answer is computed by reads alone. Then, unless ``touch`` is false, the returned items' access counts
        and times are updated in one write (with their recalculated importances; if the store cannot be written
        now, a note says so and the access is written with the next one), and vectors the search had to compute
        go to the embedding cache.
        """
        request = requested(RecallRequest, query, fields, first="query")
        query, limit, depth, explain, min_score = (request.query, request.limit, request.depth, request.explain,
                                                   request.min_score)  # fmt: skip
        max_tokens = _memory_share(request.window) if request.window is not None else request.max_tokens
        result = asked(agent_id, request)
        if request.source == "files":
            return self._recall_files(result, limit=limit, explain=explain, min_score=min_score)
        filters = {name: getattr(request, name) for name in RECALL_FILTERS}
        base = self._query(agent_id, limit=max(20, 4 * limit), **filters)
        search = RecallSearch(self.store.memory, self.engine, self.clock, result, mode=request.mode,
                              fusion=request.fusion, mmr=request.mmr, explain=explain, min_score=min_score)  # fmt: skip
        try:
            hits = search.run(query, base, limit, depth=0 if depth else None)
            seen = {h.item.uid for h in hits}
            known = set(lower_words(query))
            level = hits
            for d in range(1, depth + 1):
                terms = new_terms(level, known)
                if not terms:
                    break
                known.update(terms)
                # ask for enough to still have `limit` new hits after dropping the ones already found
                found = search.run(" ".join(terms), base, min(limit + len(seen), MAX_RECALL_LIMIT), depth=d)
                level = [h for h in found if h.item.uid not in seen][:limit]
                seen.update(h.item.uid for h in level)
                hits += level
        except IndexUnavailableError as exc:
            return self._fallback(result, limit, str(exc))
        if max_tokens is not None:
            hits, result.budget_dropped = within_budget(hits, max_tokens)
            result.max_tokens = max_tokens
        result.hits = hits
        # the answer is complete: now the writes it leaves behind
        if touch and (problem := self.access.record([h.item.uid for h in hits], self.clock.now())):
            result.notes.append(problem)
        self.engine.remember(search.unsaved)
        return result

    def flush_access(self) -> str | None:
        """Write accesses still waiting (a recall could not write them); None when none is left, else why not."""
        return self.access.flush()

    def _recall_files(self, result: RecallResult, *, limit: int, explain: bool, min_score: float) -> RecallResult:
        if self.workspace is None:
            raise InputError("source", "files need a workspace on disk")
        self.policy.require_agent(result.agent_id)
        return search_agent_files(self.workspace, self.engine, result, now=self.clock.now(), limit=limit,
                                  explain=explain, min_score=min_score)  # fmt: skip

    def _fallback(self, result: RecallResult, limit: int, reason: str) -> RecallResult:
        if self.workspace is None:
            raise IndexUnavailableError(reason)
        return answer_from_files(self.workspace, result, limit=limit, reason=reason)

    def apply_tier_rules(self, agent_id: str, *, policy: TierPolicy | None = None,
                         dry_run: bool = False) -> builtins.list[TierChange]:  # fmt: skip
        """Promote and demote the agent's items between core/working/peripheral (the nightly job's step)."""
        from kg.memory.tiers import TierPolicy, plan_tier_changes  # noqa: PLC0415 - the nightly job's rules

        items = self.list_items(agent_id, include_archived=False)
        changes = plan_tier_changes(items, now=self.clock.now(), policy=policy or TierPolicy())
        if not dry_run:
            self.store.memory.update([(c.uid, {"tier": c.new_tier}) for c in changes], now=self.clock.now())
        return changes

    def status(self, agent_id: str) -> dict[str, Any]:
        """Counts per store (expired items count as archived) and capacities."""
        self.policy.require_agent(agent_id)
        counts = self.store.memory.counts(agent_id)
        return {
            "agent_id": agent_id,
            "stores": counts,
            "capacity": {
                "working": self.limits.working_capacity,
                "short_term": self.limits.short_term_capacity,
                "long_term": None,
            },
            "short_term_ttl_seconds": self.limits.short_term_ttl_seconds,
            "total": sum(c["active"] + c["archived"] for c in counts.values()),
        }


def _memory_share(window: int) -> int:
    """The retrieved-memory share of a context ``window`` (:func:`kg.conversation.budget.allocate`)."""
    from kg.conversation.budget import allocate  # noqa: PLC0415 - the budget's models: a window only

    return allocate(window).memory


__all__ = [
    "DEFAULT_IMPORTANCE", "FALLBACK_IMPORTANCE", "IMPORTANCE_WEIGHT", "MAX_DEPTH", "MAX_RECALL_LIMIT",
    "MAX_RECALL_TOKENS", "MAX_STORE_MANY", "HasMemory", "HitMode", "MemoryService", "RecallHit", "RecallResult",
    "StoreManyResult", "StoreResult", "answer_from_files", "new_terms", "parse_max_age", "recall_or_files",
]  # fmt: skip
