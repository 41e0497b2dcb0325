"""``mabos conversation ingest|compact|assemble`` and ``mabos lcm grep|describe|expand``: conversation memory.

``ingest`` and ``compact`` run the tools of :mod:`cli.tools.conversation_admin`, ``assemble`` and the ``lcm``
commands those of :mod:`cli.tools.conversation`.
"""

from __future__ import annotations

from typing import Any

import click
from rich.text import Text

from cli import render
from cli.common import Session, example, mabos_options, read_source
from cli.options import Cli, request_options
from cli.tools.conversation import AssembleInput, DescribeInput, ExpandInput, GrepInput
from cli.tools.conversation_admin import Compacted, ConversationCompactInput, ConversationIngestInput, Ingested
from kg.conversation.assemble import AssembledContext
from kg.conversation.assemble_models import ContextItem
from kg.conversation.tools import ExpandResult, GrepResult, SummaryDescription
from kg.conversation.tools_models import ExpandItem

SESSION = Cli(flag="--session", short="-s", metavar="KEY")
SUMMARY = Cli(argument=True, metavar="SUMMARY_UID")
#: The ranges click always checked on these options (a usage error), now the model's.
BOUNDED = Cli(bounded=True)
#: The messages come from a file the operator names ('-': standard input), never a tool input.
FILE = click.Option(["--file", "source"], required=True, type=click.Path(dir_okay=False, allow_dash=True),
                    help="JSONL file.")  # fmt: skip


def _preview(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


#: The columns of a message or summary in ``conversation assemble`` and ``lcm expand``.
ITEM_COLUMNS = ("kind", "uid", "role/depth", "tokens", "content")


def _item_row(item: ContextItem | ExpandItem) -> tuple[Any, ...]:
    """A message or summary as a row of :data:`ITEM_COLUMNS`: a message's role, a summary's depth."""
    role = item.role or (f"depth {item.depth}" if item.depth is not None else "")
    return item.kind, item.uid, role, item.tokens, _preview(item.content)


@click.group("conversation")
def conversation() -> None:
    """Conversation memory: a lossless message log, a summary DAG over it, context within a token budget."""


@conversation.command("ingest", help=example(
    "Append messages to an agent's session (created on first use) from a JSONL file, one object a line: role "
    "(system, user, assistant, tool), content, created_at (ISO-8601, default now), optionally name, tool_call_id "
    "(pairs a tool result with its call) and token_count. Every line is validated first: a bad line is reported as "
    "'line N: field: rule' and nothing is written. Messages are immutable once stored. '-' reads standard input.",
    "mabos conversation ingest --agent sales-agent --session s1 --file messages.jsonl",
))  # fmt: skip
@request_options(ConversationIngestInput, session_key=SESSION, messages=Cli(hidden=True),
                 jsonl=Cli(params=(FILE,), build=read_source))  # fmt: skip
@mabos_options
def ingest(out: Session, *, request: ConversationIngestInput) -> None:
    result = out.run("conversation_ingest", request, Ingested)
    verb = "created" if result.created else "appended to"
    done = render.done(f"{result.appended} messages ({result.tokens} tokens) {verb} {request.session_key} "
                       f"(seq {result.first_seq}-{result.last_seq})")  # fmt: skip
    out.emit(result.model_dump(mode="json", exclude={"extraction"}), done, *_extracted(result.extraction))


def _extracted(t: dict[str, Any] | None) -> list[Any]:
    """A note on an automatic extraction run (docs/extraction.md), if one ran (``t``: its totals)."""
    if t is None:
        return []
    return [render.note(f"extraction: {t['items_written']} memory items, {t['facts_asserted']} facts "
                        f"({t['windows_done']} of {t['windows']} windows); "
                        "report in .mabos/extraction-reports/")]  # fmt: skip


@conversation.command("compact", help=example(
    "Summarise the session's older messages into the summary DAG: leaf summaries over chunks of up to 20,000 tokens "
    "outside the 64-message fresh tail, then condensed summaries over 8 (then 4) of them. An R3 checkpoint is "
    "written first. Without --budget it always runs; with --budget only when the context is over 75% of it or the "
    "R3 flush rule fires. Summaries not 35% smaller than their sources, or over 3x target, are never stored.",
    "mabos conversation compact --agent sales-agent --session s1 --budget 128000 --json",
))  # fmt: skip
@request_options(ConversationCompactInput, session_key=SESSION, budget=BOUNDED)
@mabos_options
def compact(out: Session, *, request: ConversationCompactInput) -> None:
    report = out.run("conversation_compact", request, Compacted)
    data = report.model_dump(mode="json", exclude={"extraction"})
    pairs = [(k, v) for k, v in data.items() if not isinstance(v, list | dict)]
    out.emit(data, render.key_values("Compaction", pairs), *_extracted(report.extraction))


@conversation.command("assemble", help=example(
    "The session's context within --budget tokens (or the history share of a whole --window), oldest first: the "
    "fresh tail always (tool calls with their results), then root summaries and older messages newest-first or, "
    "with --prompt, by relevance. When summaries are included, system_prompt_addition says to expand them before "
    "asserting details.",
    "mabos conversation assemble --agent sales-agent --session s1 --budget 32000 --json",
))  # fmt: skip
@request_options(AssembleInput, session_key=SESSION, budget=BOUNDED, window=BOUNDED)
@mabos_options
def assemble(out: Session, *, request: AssembleInput) -> None:
    context = out.run("context_assemble", request, AssembledContext)
    summary = f"{len(context.items)} items, {context.total_tokens} of {context.budget_tokens} tokens"
    rows = [_item_row(i) for i in context.items]
    out.emit(context, render.table("Context", ITEM_COLUMNS, rows), render.note(summary))


@click.group("lcm")
def lcm() -> None:
    """Recall tools over conversation memory: grep, describe and expand summaries back to their messages."""


@lcm.command("grep", help=example(
    "Search the agent's messages and/or summaries: a regex (Python syntax run by RE2 in linear time: no "
    "backreferences or lookaround; (?i) for any case) or full text (every word; trigram matching for CJK text). "
    "Oldest first, snippets cite ids; results are capped at 40,000 characters, a regex search stops after 10 s, "
    "and the result says truncated (and why) when cut.",
    'mabos lcm grep --agent sales-agent "SSO|single sign-on" --json',
))  # fmt: skip
@request_options(GrepInput, pattern=Cli(argument=True), session_key=Cli(flag="--session", metavar="KEY"),
                 limit=BOUNDED)  # fmt: skip
@mabos_options
def grep(out: Session, *, request: GrepInput) -> None:
    result = out.run("lcm_grep", request, GrepResult)
    rows = [(h.kind, h.uid, h.at, h.matches, _preview(h.snippet, 90)) for h in result.hits]
    table = render.table("Matches", ("kind", "uid", "at", "n", "snippet"), rows)
    out.emit(result, table, _truncated(result, "narrow the pattern or the time"))


@lcm.command("describe", help=example(
    "A summary of the agent's: its content, kind, depth, token counts and compression, method (llm or "
    "extractive), time span, messages beneath it, and its place in the DAG (parents up to the root, children). "
    "An extracted memory item (M-...): its type, category, abstract, tokens and the messages it came from.",
    "mabos lcm describe --agent sales-agent SUM-01J...",
))  # fmt: skip
@request_options(DescribeInput, summary_uid=SUMMARY)
@mabos_options
def describe(out: Session, *, request: DescribeInput) -> None:
    found = out.run("lcm_describe", request, SummaryDescription)
    data = found.model_dump(mode="json")
    pairs = [(k, _listed(v) if isinstance(v, list) else v) for k, v in data.items() if k != "content"]
    out.emit(found, render.key_values(request.summary_uid, pairs), found.content)


def _truncated(result: GrepResult | ExpandResult, advice: str) -> Text | None:
    """The note of a result a cap cut (which caps, and what to change), or None when it is whole."""
    return render.note(f"truncated ({', '.join(result.truncated_by)}): {advice}") if result.truncated else None


def _listed(values: list[Any], shown: int = 3) -> str:
    more = f" ... ({len(values)} in all)" if len(values) > shown else ""
    return ", ".join(map(str, values[:shown])) + more


@lcm.command("expand", help=example(
    "Walk the DAG down from a summary: its children level by level (--max-depth), down to the source messages "
    "with --include-messages, at most --max-tokens in all; truncated says when a cap cut the walk.",
    "mabos lcm expand --agent sales-agent SUM-01J... --max-depth 3 --include-messages --json",
))  # fmt: skip
@request_options(ExpandInput, summary_uid=SUMMARY, max_depth=BOUNDED, max_tokens=BOUNDED)
@mabos_options
def expand(out: Session, *, request: ExpandInput) -> None:
    result = out.run("lcm_expand", request, ExpandResult)
    rows = [(i.level, *_item_row(i)) for i in result.items]
    table = render.table("Expanded", ("level", *ITEM_COLUMNS), rows)
    out.emit(result, table, _truncated(result, "raise --max-depth or --max-tokens"))


GROUPS = [conversation, lcm]

__all__ = ["GROUPS"]
