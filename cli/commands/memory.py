"""``mabos memory store|recall|consolidate|status`` (and the file commands attached in __init__)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

import click

from cli import render
from cli.commands.memory_admit import admit
from cli.commands.memory_export import COMMANDS as EXPORT_COMMANDS
from cli.commands.memory_extract import extract, list_
from cli.commands.memory_files import checkpoint, hierarchy
from cli.common import ISO_DATETIME, Session, agent_option, mabos_options, scope_option
from cli.recall_view import recall_view
from cli.tools import memory as memory_tools
from cli.tools.registry import get, run
from kg.errors import BackendUnavailableError, CorruptStoreError
from kg.memory.consolidation import ConsolidationResult
from kg.memory.service import MAX_DEPTH, RecallResult, StoreResult
from kg.models import MemoryStoreKind, MemoryType
from kg.recall.engine import RECALL_MODES
from kg.recall.fusion import FUSION_METHODS

_TYPES = click.Choice([t.value for t in MemoryType])
_STORES = click.Choice([s.value for s in MemoryStoreKind])


def _tags(value: str | None) -> list[str] | None:
    return [t.strip() for t in value.split(",") if t.strip()] if value else None


@click.group("memory")
def memory() -> None:
    """Store, recall and consolidate an agent's memories (working, short-term, long-term)."""


@memory.command("store")
@agent_option
@click.argument("content")
@click.option("--type", "type_", type=_TYPES, default=None, help="Memory type (default observation).")
@click.option("--importance", type=float, default=None, help="0..1 (default: by type, e.g. decision 0.75).")
@click.option("--confidence", type=float, default=None, help="0..1 (default 1).")
@click.option("--tags", default=None, help="Comma-separated tags, e.g. auth,jwt.")
@click.option("--store", "store_", type=_STORES, default=None, help="Which store (default short_term).")
@click.option("--source", default=None, help="Where it comes from (default 'agent').")
@scope_option
@mabos_options
def store(out: Session, *, agent: str, content: str, type_: str | None, importance: float | None,
          confidence: float | None, tags: str | None, store_: str | None, source: str | None,
          scope: str | None) -> None:  # fmt: skip
    """Store a memory item and append it to today's daily log.

    Working memory keeps 7 items (the oldest moves to short-term); short-term keeps 200 for 2 hours
    (then they are archived, never deleted).

    Example:

    \b
      mabos memory store --agent A "JWT uses RS256" --type decision --importance 0.8 --tags auth,jwt
    """
    arguments = {"agent_id": agent, "content": content, "type": type_, "importance": importance,
                 "confidence": confidence, "tags": _tags(tags), "store": store_, "source": source,
                 "scope": scope}  # fmt: skip
    result = out.run("memory_store_item", arguments, StoreResult)
    item = result.item
    text = render.done(f"{item.uid} stored in {item.store.value} ({item.type.value}, importance {item.importance:.2f})")
    for uid in result.demoted:
        text.append(f"\n  moved to short-term: {uid}", style="")
    for uid in result.archived:
        text.append(f"\n  archived: {uid}", style="")
    out.emit(result, text)


@memory.command("recall")
@agent_option
@click.argument("query", default="")
@click.option(
    "--mode",
    type=click.Choice(RECALL_MODES),
    default="hybrid",
    show_default=True,
    help="hybrid (BM25 + vectors), bm25 or vector; bm25 is used when no embedder can load.",
)
@click.option(
    "--fusion",
    type=click.Choice(FUSION_METHODS),
    default="weighted",
    show_default=True,
    help="weighted (0.4 vector / 0.6 BM25 with a keyword floor) or rrf (reciprocal rank fusion).",
)
@click.option("--mmr", is_flag=True, help="Re-rank for diversity (maximal marginal relevance, lambda 0.7).")
@click.option("--explain", is_flag=True, help="Show every component of every score.")
@click.option("--min-score", type=float, default=0.0, show_default=True, help="Drop results scoring below this.")
@click.option(
    "--source",
    type=click.Choice(["items", "files"]),
    default="items",
    show_default=True,
    help="Search memory items, or the agent's Markdown files (cited by file and lines).",
)
@click.option("--depth", type=click.IntRange(0, None), default=0, help=f"Recursive search depth 0..{MAX_DEPTH}.")
@click.option("--type", "types", type=_TYPES, multiple=True, help="Only this type (repeatable).")
@click.option("--store", "stores", type=_STORES, multiple=True, help="Only this store (repeatable).")
@click.option("--tags", default=None, help="Comma-separated tags that must all be present.")
@click.option("--min-importance", type=float, default=None, help="0..1.")
@click.option("--max-age", default=None, help="Only items newer than this: 90m, 36h, 7d, 2w.")
@click.option(
    "--valid-at",
    type=ISO_DATETIME,
    default=None,
    help="Only items that existed then and were not yet archived (ISO-8601).",
)
@click.option("--include-archived", is_flag=True, help="Also recall archived items.")
@click.option("--limit", type=int, default=20, show_default=True, help="At most this many per level (1..100).")
@click.option(
    "--max-tokens",
    type=click.IntRange(1, None),
    default=None,
    help="Keep the best hits whose contents fit in this many tokens.",
)
@click.option(
    "--window",
    type=click.IntRange(1, None),
    default=None,
    help="A whole context window: --max-tokens becomes its retrieved-memory share (20%).",
)
@scope_option
@mabos_options
def recall(out: Session, *, agent: str, query: str, mode: str, fusion: str, mmr: bool, explain: bool,
           min_score: float, source: str, depth: int, types: tuple[str, ...], stores: tuple[str, ...],
           tags: str | None, min_importance: float | None, max_age: str | None, valid_at: datetime | None,
           include_archived: bool, limit: int, max_tokens: int | None, window: int | None,
           scope: str | None) -> None:  # fmt: skip
    """Recall memories, best first: BM25 and vector similarity fused, blended with importance and decay.

    With --depth N the search is repeated with the most frequent new terms of the results; each hit
    then says which depth found it. If the database or the vector index cannot be used, the agent's
    Markdown files answer instead and the result says "fallback": true and why.

    Example:

    \b
      mabos memory recall --agent A "how do we sign tokens" --explain --limit 5
      mabos memory recall --agent A "authentication" --mode bm25 --fusion rrf --depth 2 --json
    """
    args = get("memory_recall").parse({
        "agent_id": agent, "query": query, "limit": limit, "depth": depth, "mode": mode, "fusion": fusion, "mmr": mmr,
        "explain": explain, "min_score": min_score, "source": source, "types": list(types) or None,
        "stores": list(stores) or None, "tags": _tags(tags), "min_importance": min_importance, "max_age": max_age,
        "valid_at": valid_at, "include_archived": include_archived, "scope": scope, "max_tokens": max_tokens,
        "window": window,
    })  # fmt: skip
    try:
        tools = out.tools()
    except (CorruptStoreError, BackendUnavailableError) as exc:
        result = memory_tools.recall_from_files(out.path, agent, args, reason=str(exc))
    else:
        result = cast(RecallResult, run(tools, "memory_recall", args))
    out.emit(result, *recall_view(result, explain=explain))


@memory.command("consolidate")
@agent_option
@click.option("--dry-run", is_flag=True, help="Only show what would happen.")
@click.option("--no-summarize", is_flag=True, help="Promote every candidate one-to-one (no merging).")
@click.option("--min-importance", type=float, default=None, help="Candidate threshold (default 0.6).")
@click.option("--min-access-count", type=int, default=None, help="Short-term access threshold (default 2).")
@mabos_options
def consolidate(out: Session, *, agent: str, dry_run: bool, no_summarize: bool, min_importance: float | None,
                min_access_count: int | None) -> None:  # fmt: skip
    """Promote important memories to long-term, merging ones with similar tags.

    Rewrites MEMORY.md and the materialized files (mabos-memory-items.md, mabos-facts.md, mabos-beliefs.md).

    Example:

    \b
      mabos memory consolidate --agent A --dry-run --json
    """
    arguments = {"agent_id": agent, "dry_run": dry_run, "summarize": not no_summarize,
                 "min_importance": min_importance, "min_access_count": min_access_count}  # fmt: skip
    result = out.run("memory_consolidate", arguments, ConsolidationResult)
    verb = "would" if dry_run else "did"
    text = render.done(
        f"{result.candidates} candidates: {verb} merge {len(result.groups)} groups "
        f"({len(result.archived)} memories) and promote {len(result.promoted)} as they are"
    )
    for group in result.groups:
        text.append(f"\n  {group.consolidated_uid or '(new)'} <- {', '.join(group.members)}", style="")
    out.emit(result, text)


@memory.command("status")
@agent_option
@mabos_options
def status(out: Session, *, agent: str) -> None:
    """Counts per store (active and archived) and the capacities.

    Example:

    \b
      mabos memory status --agent A --json
    """
    data = out.run("memory_status", {"agent_id": agent}, memory_tools.MemoryStatus)
    rows = [(name, c.active, c.archived, data.capacity[name] or "unbounded") for name, c in data.stores.items()]
    out.emit(data, render.table(f"memory of {agent}", ["store", "active", "archived", "capacity"], rows))


memory.add_command(checkpoint)
memory.add_command(hierarchy)
memory.add_command(admit)
memory.add_command(extract)
memory.add_command(list_)
for _command in EXPORT_COMMANDS:
    memory.add_command(_command)
