"""Consolidation (R1, the seed tool memory_consolidate): promote what matters to long-term memory.

Candidates are short-term items with importance >= 0.6 or access count >= 2, plus working items with
importance >= 0.6. They are split by scope first (:func:`kg.scopes.same_scope_groups`: items of different
scopes are never merged, so a merged item is never wider than any of its sources; ``global`` + ``agent:a``
would publish a private item, ``project:x`` + ``agent:a`` would keep x's content past a revoked grant), then
grouped within each scope greedily by tag similarity (Jaccard > 0.3): in order of importance
(then age), each ungrouped item opens a group and takes every later ungrouped item whose tags are
similar enough to its own. Only items that share a tag can pass the threshold, so the partners are
found through an inverted tag index instead of comparing all pairs (:func:`group_naive` is the all-pairs
version, kept to check equivalence and to benchmark against).

A group of two or more becomes one long-term item in the group's scope ("[Consolidated from n memories] a |
b | ...", the type of its most important member, the highest importance, the union of tags, lineage to every member,
source "consolidation"); the members are archived, never deleted. Singletons move to long-term as they
are. ``summarize=False`` moves every candidate one-to-one; ``dry_run`` only reports the plan.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import Field

from kg.errors import InputError
from kg.ids import new_id
from kg.memory.context import MemoryWorkspace
from kg.memory.files import agent_dir, atomic_write
from kg.memory.service import MemoryService
from kg.models import MAX_CONTENT, MemoryItem, MemoryStoreKind, Model, Unit, parse
from kg.models.base import new_list
from kg.scopes import narrowest_scope, same_scope_groups

JACCARD_THRESHOLD = 0.3
SEPARATOR = " | "


class ConsolidationGroup(Model):
    """Members of one planned group and, unless dry-run, the item that replaced them."""

    members: list[str]
    consolidated_uid: str | None = None
    content: str
    tags: list[str]


class ConsolidationResult(Model):
    """What consolidation did (or would do, with ``dry_run``)."""

    agent_id: str
    dry_run: bool
    summarize: bool
    candidates: int
    groups: list[ConsolidationGroup] = Field(default_factory=new_list)
    promoted: list[str] = Field(default_factory=new_list)
    archived: list[str] = Field(default_factory=new_list)
    memory_file: str | None = None
    materialized: list[str] = Field(default_factory=new_list)


class ConsolidationOptions(Model):
    """Thresholds of candidate selection."""

    min_importance: Unit = 0.6
    min_access_count: int = Field(default=2, ge=0)
    threshold: Unit = JACCARD_THRESHOLD


def similar(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """``jaccard(a, b) > threshold`` without building the union or dividing."""
    shared = len(a & b)
    return shared > threshold * (len(a) + len(b) - shared) and shared > 0


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Size of the intersection over size of the union (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _ordered(items: Sequence[MemoryItem]) -> list[MemoryItem]:
    return sorted(items, key=lambda i: (-i.importance, i.created_at, i.uid))


def group_by_tags(items: Sequence[MemoryItem], threshold: float = JACCARD_THRESHOLD) -> list[list[MemoryItem]]:
    """Greedy tag grouping through an inverted tag index (same groups as :func:`group_naive`)."""
    ordered = _ordered(items)
    tags = [frozenset(t.lower() for t in item.tags) for item in ordered]
    index: dict[str, list[int]] = defaultdict(list)
    for position, item_tags in enumerate(tags):
        for tag in item_tags:
            index[tag].append(position)
    grouped = [False] * len(ordered)
    checked = [-1] * len(ordered)  # the seed that last examined each item: each pair is scored once
    groups = []
    for seed, seed_tags in enumerate(tags):
        if grouped[seed]:
            continue
        grouped[seed] = True
        members = [seed]
        # Whether a partner joins depends only on the seed's tags and on earlier seeds, not on the order
        # partners are examined in, so buckets are scanned as they come (past the seed) and members sorted.
        for tag in seed_tags:
            bucket = index[tag]
            for p in islice(bucket, bisect_right(bucket, seed), None):
                if grouped[p] or checked[p] == seed:
                    continue
                checked[p] = seed
                if similar(seed_tags, tags[p], threshold):
                    grouped[p] = True
                    members.append(p)
        groups.append([ordered[m] for m in sorted(members)])
    return groups


def group_in_scopes(items: Sequence[MemoryItem], threshold: float = JACCARD_THRESHOLD) -> list[list[MemoryItem]]:
    """:func:`group_by_tags` inside each scope (items of different scopes never share a group), groups in order of
    their most important member."""
    groups = [g for part in same_scope_groups(items, lambda i: i.scope) for g in group_by_tags(part, threshold)]
    return sorted(groups, key=lambda g: (-g[0].importance, g[0].created_at, g[0].uid))


def group_naive(items: Sequence[MemoryItem], threshold: float = JACCARD_THRESHOLD) -> list[list[MemoryItem]]:
    """All-pairs greedy grouping with the textbook Jaccard per pair (the baseline for tests and the benchmark)."""
    ordered = _ordered(items)
    tags = [frozenset(t.lower() for t in item.tags) for item in ordered]
    grouped = [False] * len(ordered)
    groups = []
    for seed in range(len(ordered)):
        if grouped[seed]:
            continue
        grouped[seed] = True
        members = [seed]
        for other in range(seed + 1, len(ordered)):
            if not grouped[other] and jaccard(tags[seed], tags[other]) > threshold:
                grouped[other] = True
                members.append(other)
        groups.append([ordered[m] for m in members])
    return groups


def merged_content(members: Sequence[MemoryItem]) -> str:
    """``[Consolidated from n memories] a | b | ...`` cut to the content limit (lineage keeps the rest)."""
    text = f"[Consolidated from {len(members)} memories] " + SEPARATOR.join(m.content.strip() for m in members)
    return text if len(text) <= MAX_CONTENT else text[: MAX_CONTENT - 1] + "…"


class Consolidator:
    """Runs R1 for one agent over a :class:`MemoryService`."""

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def candidates(self, agent_id: str, options: ConsolidationOptions) -> list[MemoryItem]:
        """Short-term items important or used enough, and important working items (not archived)."""
        items = self.memory.list_items(agent_id, include_archived=False,
                                       stores=[MemoryStoreKind.SHORT_TERM, MemoryStoreKind.WORKING])  # fmt: skip
        return [
            i
            for i in items
            if i.importance >= options.min_importance
            or (i.store is MemoryStoreKind.SHORT_TERM and i.access_count >= options.min_access_count)
        ]

    def run(
        self, agent_id: str, *, dry_run: bool = False, summarize: bool = True, **options: Any
    ) -> ConsolidationResult:
        """Plan and (unless ``dry_run``) apply consolidation for ``agent_id``."""
        opts = parse(ConsolidationOptions, {k: v for k, v in options.items() if v is not None})
        self.memory.prune_expired(agent_id)
        found = self.candidates(agent_id, opts)
        groups = group_in_scopes(found, opts.threshold) if summarize else [[i] for i in _ordered(found)]
        new_items: list[MemoryItem] = []
        updates: list[tuple[str, dict[str, Any]]] = []
        planned: list[ConsolidationGroup] = []
        promoted: list[str] = []
        archived: list[str] = []  # with dry_run: what would be archived
        now = self.memory.clock.now()
        for members in groups:
            if len(members) == 1:
                promoted.append(members[0].uid)
                updates.append((members[0].uid, {"store": MemoryStoreKind.LONG_TERM, "expires_at": None}))
                continue
            merged = self._merge(agent_id, members, now)
            archived += (m.uid for m in members)
            group = ConsolidationGroup(members=[m.uid for m in members], content=merged.content, tags=merged.tags)
            planned.append(group if dry_run else group.model_copy(update={"consolidated_uid": merged.uid}))
            if not dry_run:
                new_items.append(merged)
                updates += [(m.uid, {"archived_at": now}) for m in members]
        memory_file = None
        if not dry_run:
            self.memory.store.memory.add(new_items, limits=self.memory.limits, now=now, updates=updates)
            memory_file = self.write_memory_file(agent_id)
        return ConsolidationResult(
            agent_id=agent_id, dry_run=dry_run, summarize=summarize, candidates=len(found), groups=planned,
            promoted=promoted, archived=archived, memory_file=memory_file,
        )  # fmt: skip

    @staticmethod
    def _merge(agent_id: str, members: Sequence[MemoryItem], now: Any) -> MemoryItem:
        lead = members[0]  # groups are in importance order: the first member is the most important
        tags = list(dict.fromkeys(t for m in members for t in m.tags))
        if len(tags) > 64:
            raise InputError("tags", f"a consolidated group would carry {len(tags)} tags (at most 64)")
        scope = narrowest_scope(m.scope for m in members)
        if scope is None:  # group_in_scopes never mixes scopes; a caller's own grouping that does is refused
            raise InputError("scope", "a consolidated group mixes non-global scopes; merge only within one scope")
        return MemoryItem(
            uid=new_id("memory"), agent_id=agent_id, scope=scope, content=merged_content(members), type=lead.type,
            store=MemoryStoreKind.LONG_TERM, importance=max(m.importance for m in members),
            confidence=min(m.confidence for m in members), source="consolidation", tags=tags,
            derived_from=[m.uid for m in members], tier=lead.tier, created_at=now, updated_at=now,
        )  # fmt: skip

    def write_memory_file(self, agent_id: str) -> str | None:
        """Rewrite ``agents/<id>/MEMORY.md``: the agent's long-term memory by type, most important first."""
        workspace = self.memory.workspace
        if workspace is None:
            return None
        items = self.memory.list_items(agent_id, include_archived=False, stores=[MemoryStoreKind.LONG_TERM])
        path = memory_file_path(workspace, agent_id)
        atomic_write(path, render_memory_file(agent_id, items))
        return str(path)


def consolidate(ws: MemoryWorkspace, agent_id: str, *, dry_run: bool = False, summarize: bool = True,
                **options: Any) -> ConsolidationResult:  # fmt: skip
    """The tool memory_consolidate: run R1, then (unless ``dry_run``) rewrite MEMORY.md and the
    materialized files (``mabos-memory-items.md``, ``mabos-facts.md``, ``mabos-beliefs.md``)."""
    result = Consolidator(ws.memory).run(agent_id, dry_run=dry_run, summarize=summarize, **options)
    if dry_run:
        return result
    from kg.memory.materialize import materialize  # noqa: PLC0415 - the BDI and fact renderings: loaded when used

    files = [f.path for f in materialize(ws, agent_id).files]
    return result.model_copy(update={"materialized": files})


def render_memory_file(agent_id: str, items: Sequence[MemoryItem]) -> str:
    """MEMORY.md: one section per memory type, one bullet per long-term item."""
    lines = [f"# Long-term memory of {agent_id}", "", f"{len(items)} items.", ""]
    by_type: dict[str, list[MemoryItem]] = defaultdict(list)
    for item in items:
        by_type[item.type.value].append(item)
    for type_name in sorted(by_type):
        lines += [f"## {type_name}", ""]
        for item in _ordered(by_type[type_name]):
            first = item.content.strip().splitlines()[0] if item.content.strip() else ""
            tags = f" [{', '.join(item.tags)}]" if item.tags else ""
            lines.append(f"- {first} (importance {item.importance:.2f}, {item.uid}){tags}")
        lines.append("")
    return "\n".join(lines)


def memory_file_path(workspace: Path, agent_id: str) -> Path:
    """``agents/<id>/MEMORY.md``."""
    return agent_dir(workspace, agent_id) / "MEMORY.md"
