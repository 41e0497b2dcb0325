"""``mabos memory extract`` (conversation -> memories and facts) and ``mabos memory list`` (items, every field)."""

from __future__ import annotations

import click

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, request_options
from cli.progress import reporting
from cli.tools.extraction import ExtractInput, ExtractResult, ListInput, ListResult
from kg.extraction.requests import ADMISSION_PRESETS
from kg.extraction.service import PROGRESS


@click.command("extract", help=example(
    "Extract memories (profile, preferences, entities, events, cases, patterns) and facts from the agent's "
    "conversation messages not yet extracted, through admission control and dedup; lineage to the messages is kept "
    "and a new value of a functional predicate (livesIn ...) closes the old fact. Idempotent: re-running reads "
    "only new messages. --extractor auto uses the configured LLM when there is one, else the deterministic rules. "
    "--markdown prints the report as Markdown.",
    "mabos memory extract --agent sales-agent --json",
    "mabos memory extract --agent sales-agent --session s1 --since 40 --extractor deterministic",
))  # fmt: skip
@request_options(ExtractInput, since=Cli(bounded=True), window=Cli(bounded=True),
                 admission=Cli(choices=(*ADMISSION_PRESETS, "off")))  # fmt: skip
@click.option("--markdown", is_flag=True, help="Print the report as Markdown.")
@mabos_options
def extract(out: Session, *, request: ExtractInput, markdown: bool) -> None:
    with reporting("extracting", PROGRESS):
        result = out.run("memory_extract", request, ExtractResult)
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
@request_options(ListInput, include_archived=Cli(flag="--active", negated="Leave out archived items."),
                 limit=Cli(bounded=True))  # fmt: skip
@mabos_options
def list_(out: Session, *, request: ListInput) -> None:
    result = out.run("memory_list", request, ListResult)
    rows = [(i.uid, i.type.value, i.store.value, f"{i.importance:.2f}", ",".join(i.tags), len(i.derived_from),
             "archived" if i.archived_at else "", i.content.splitlines()[0][:70]) for i in result.items]  # fmt: skip
    header = ["uid", "type", "store", "importance", "tags", "sources", "state", "abstract"]
    out.emit(result, render.table(f"memory items of {request.agent_id} ({result.count})", header, rows))


__all__ = ["extract", "list_"]
