"""``mabos memory extract`` (conversation -> memories and facts) and ``mabos memory list`` (items, every field)."""

from __future__ import annotations

from datetime import datetime

import click

from cli import render
from cli.common import ISO_DATETIME, Session, agent_option, example, mabos_options
from cli.progress import reporting
from cli.tools.extraction import CATEGORIES, ExtractResult, ListResult
from kg.extraction import WINDOW
from kg.extraction.service import PROGRESS
from kg.memory.admission import PRESETS
from kg.models import MemoryStoreKind, MemoryType


@click.command("extract", help=example(
    "Extract memories (profile, preferences, entities, events, cases, patterns) and facts from the agent's "
    "conversation messages not yet extracted, through admission control and dedup; lineage to the messages is kept "
    "and a new value of a functional predicate (livesIn ...) closes the old fact. Idempotent: re-running reads "
    "only new messages. --extractor auto uses the configured LLM when there is one, else the deterministic rules. "
    "--markdown prints the report as Markdown.",
    "mabos memory extract --agent sales-agent --json",
    "mabos memory extract --agent sales-agent --session s1 --since 40 --extractor deterministic",
))  # fmt: skip
@agent_option
@click.option("--session", default=None, help="One conversation (session key or uid); default all of them.")
@click.option("--since", type=click.IntRange(min=0), default=None, help="Start at this message seq (if past the mark).")
@click.option("--extractor", type=click.Choice(["auto", "deterministic", "llm"]), default="auto", show_default=True)
@click.option("--admission", type=click.Choice([*sorted(PRESETS), "off"]), default="balanced", show_default=True)
@click.option("--window", type=click.IntRange(1, 200), default=WINDOW, show_default=True, help="Messages per window.")
@click.option("--markdown", is_flag=True, help="Print the report as Markdown.")
@mabos_options
def extract(out: Session, *, agent: str, session: str | None, since: int | None, extractor: str, admission: str,
            window: int, markdown: bool) -> None:  # fmt: skip
    with reporting("extracting", PROGRESS):
        arguments = {"agent_id": agent, "session": session, "since": since, "extractor": extractor,
                     "admission": admission, "window": window}  # fmt: skip
        result = out.run("memory_extract", arguments, ExtractResult)
    if markdown and not out.as_json:
        click.echo(result.markdown, nl=False)
        return
    t = result.totals
    decisions = ", ".join(f"{k} {v}" for k, v in t["decisions"].items()) or "none"
    text = render.done(
        f"{t['windows_done']} of {t['windows']} windows extracted ({result.report.messages} messages): "
        f"{t['items_written']} items written, {t['facts_asserted']} facts asserted, "
        f"{t['facts_invalidated']} invalidated; decisions: {decisions}"
    )
    for failure in t["failures"]:
        text.append(f"\n  failed (left for the next run): {failure}", style="")
    for w in result.report.windows:
        if w.status == "skipped" and w.error and w.error.startswith("unusable"):
            text.append(f"\n  skipped (passed over): {w.conversation_uid} {w.from_seq}-{w.to_seq}: {w.error}", style="")
    out.emit(result, text)


@click.command("list", help=example(
    "List the agent's own memory items with every field (derived_from lineage included), oldest first.",
    "mabos memory list --agent sales-agent --category preferences --json",
    "mabos memory list --agent sales-agent --store long_term --type event --since 2026-11-01",
))  # fmt: skip
@agent_option
@click.option("--store", "store_", type=click.Choice([s.value for s in MemoryStoreKind]), default=None)
@click.option("--type", "type_", type=click.Choice([t.value for t in MemoryType]), default=None)
@click.option("--category", type=click.Choice(CATEGORIES), default=None, help="Extraction category.")
@click.option("--since", type=ISO_DATETIME, default=None, help="Created at or after (ISO time).")
@click.option("--active", is_flag=True, help="Leave out archived items.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=1_000, show_default=True)
@mabos_options
def list_(out: Session, *, agent: str, store_: str | None, type_: str | None, category: str | None,
          since: datetime | None, active: bool, limit: int) -> None:  # fmt: skip
    arguments = {"agent_id": agent, "store": store_, "type": type_, "category": category, "since": since,
                 "include_archived": not active, "limit": limit}  # fmt: skip
    result = out.run("memory_list", arguments, ListResult)
    rows = [(i.uid, i.type.value, i.store.value, f"{i.importance:.2f}", ",".join(i.tags), len(i.derived_from),
             "archived" if i.archived_at else "", i.content.splitlines()[0][:70]) for i in result.items]  # fmt: skip
    header = ["uid", "type", "store", "importance", "tags", "sources", "state", "abstract"]
    out.emit(result, render.table(f"memory items of {agent} ({result.count})", header, rows))


__all__ = ["extract", "list_"]
