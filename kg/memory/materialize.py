"""Materialized Markdown views of an agent's store: memory items, facts and beliefs (design §3).

``materialize(ws, agent_id)`` writes three read-only files in the seed's format, so that the
Markdown index (and a human) can read an agent's memory without the database::

    agents/<id>/memory/mabos-memory-items.md   every memory item (archived ones marked)
    agents/<id>/mabos-facts.md                 facts the agent asserted (retracted ones marked)
    agents/<id>/mabos-beliefs.md               the agent's beliefs

Each file is a ``# `` title, a ``> `` summary line, then one ``## `` section per record: a heading,
a blank line, ``- Key: value`` lines, and (memory items and beliefs) a blank line and the record's
text. Records come in creation order (``created_at``, then ``uid``), so new records append at the
end and the files diff well. Nothing in them depends on the time of writing: a file is rewritten
only when its content changed. The format is described in ``docs/markdown-files.md``. The agent's Markdown
index (:mod:`kg.recall.markdown_index`) is brought up to date after the files are written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from kg.memory.context import MemoryWorkspace
from kg.memory.files import agent_dir, atomic_write, memory_dir
from kg.models import BDINode, Fact, MemoryItem, Model, NodeKind, format_ts

MEMORY_ITEMS_FILE = "mabos-memory-items.md"
FACTS_FILE = "mabos-facts.md"
BELIEFS_FILE = "mabos-beliefs.md"
HEADING_CHARS = 120  # a heading shows at most this much of a record's text (the seed's limit)
MAX_RECORDS = 100_000  # facts and beliefs per file (the services' largest page)

_HEADING_LINE = re.compile(r"^(\s*)#")


class FileStatus(StrEnum):
    """What happened to one file."""

    WRITTEN = "written"
    UNCHANGED = "unchanged"


class FileOutcome(Model):
    """One file written (or left alone because its content was already right)."""

    path: str
    status: FileStatus
    records: int


class MaterializeResult(Model):
    """The three materialized files of one agent."""

    agent_id: str
    files: list[FileOutcome]


def write_if_changed(path: Path, text: str) -> FileStatus:
    """Write ``text`` atomically unless ``path`` already holds exactly that."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return FileStatus.UNCHANGED
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    atomic_write(path, text)
    return FileStatus.WRITTEN


def reindex(workspace: Path, agent_id: str) -> None:
    """Bring the agent's Markdown index up to date after its files were written: indexing happens on write (and in
    idle time, and in the nightly job), never in a recall (issue 33). Writes the sidecar only when a file changed."""
    from kg.recall.markdown_index import MarkdownIndex  # noqa: PLC0415 - the chunker: loaded when files are written

    MarkdownIndex(workspace).refresh(agent_id)


def number(value: float) -> str:
    """A float as the shortest text that reads back as the same float (``0.8``, ``1.0``)."""
    return repr(float(value))


def headline(text: str, limit: int = HEADING_CHARS) -> str:
    """One line for a ``## `` heading: whitespace runs (newlines too) become one space, cut at ``limit``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def body(text: str) -> str:
    """A record's text as a section body: lines starting with ``#`` are escaped (``\\#``) so that
    they never open a new section."""
    lines = text.strip("\n").splitlines()
    return "\n".join(_HEADING_LINE.sub(r"\1\\#", line.rstrip()) for line in lines)


def _section(heading: str, pairs: Iterable[tuple[str, str | None]], text: str | None = None) -> str:
    lines = [f"## {heading}", ""]
    lines += [f"- {key}: {value}" for key, value in pairs if value is not None]
    if text is not None and text.strip():
        lines += ["", body(text)]
    return "\n".join(lines) + "\n"


def _document(title: str, summary: str, sections: Sequence[str]) -> str:
    return "\n".join([f"# {title}\n", f"> {summary}\n", *sections])


def _ts(value: datetime | None) -> str | None:
    return format_ts(value) if value is not None else None


def _ids(values: Sequence[str]) -> str | None:
    return ", ".join(values) if values else None


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def render_memory_items(agent_id: str, items: Sequence[MemoryItem]) -> str:
    """``mabos-memory-items.md``: one section per item, archived items marked in heading and lines."""
    items = sorted(items, key=lambda i: (i.created_at, i.uid))
    stores = Counter(i.store.value for i in items)
    archived = sum(1 for i in items if i.archived_at is not None)
    per_store = ", ".join(f"{stores[s]} {s}" for s in ("long_term", "short_term", "working"))
    summary = f"Materialized from the store: {_plural(len(items), 'item')} ({per_store}; {archived} archived)."
    sections = []
    for item in items:
        mark = "[archived] " if item.archived_at is not None else ""
        heading = f"{mark}[{item.store.value}] {item.type.value}: {headline(item.content)}"
        pairs = [
            ("ID", item.uid), ("Store", item.store.value), ("Type", item.type.value),
            ("Importance", number(item.importance)), ("Source", item.source or None),
            ("Tags", ", ".join(item.tags) or None), ("Derived from", _ids(item.derived_from)),
            ("Created", format_ts(item.created_at)), ("Archived", _ts(item.archived_at)),
        ]  # fmt: skip
        sections.append(_section(heading, pairs, item.content))
    return _document(f"MABOS Memory Items — {agent_id}", summary, sections)


def render_facts(agent_id: str, facts: Sequence[Fact]) -> str:
    """``mabos-facts.md``: one section per fact, headed ``subject predicate object``."""
    facts = sorted(facts, key=lambda f: (f.created_at, f.uid))
    derived = sum(1 for f in facts if f.derived)
    retracted = sum(1 for f in facts if f.retracted_at is not None)
    summary = f"Materialized from the store: {_plural(len(facts), 'fact')} ({derived} derived, {retracted} retracted)."
    sections = []
    for fact in facts:
        mark = "[retracted] " if fact.retracted_at is not None else ""
        heading = mark + headline(f"{fact.subject} {fact.predicate} {fact.object}", limit=10 * HEADING_CHARS)
        pairs = [
            ("ID", fact.uid), ("Confidence", number(fact.confidence)), ("Source", fact.source or None),
            ("Scope", fact.scope), ("Valid from", _ts(fact.valid_from)), ("Valid until", _ts(fact.valid_until)),
            ("Derived from", _ids(fact.derived_from)), ("Rule", fact.rule_id),
            ("Created", format_ts(fact.created_at)), ("Retracted", _ts(fact.retracted_at)),
        ]  # fmt: skip
        sections.append(_section(heading, pairs))
    return _document(f"MABOS Facts — {agent_id}", summary, sections)


def render_beliefs(agent_id: str, beliefs: Sequence[BDINode]) -> str:
    """``mabos-beliefs.md``: one section per belief with certainty, status and last update."""
    beliefs = sorted(beliefs, key=lambda b: (b.created_at, b.uid))
    summary = f"Materialized from the store: {_plural(len(beliefs), 'belief')}."
    sections = []
    for belief in beliefs:
        certainty = number(belief.certainty) if belief.certainty is not None else None
        pairs = [("ID", belief.uid), ("Certainty", certainty), ("Status", belief.status),
                 ("Updated", format_ts(belief.updated_at))]  # fmt: skip
        sections.append(_section(headline(belief.content), pairs, belief.content))
    return _document(f"MABOS Beliefs — {agent_id}", summary, sections)


def materialize(ws: MemoryWorkspace, agent_id: str) -> MaterializeResult:
    """Write the agent's three materialized files; each is rewritten only if its content changed.

    Memory items are the agent's own (archived included); facts are those the agent asserted and
    can still see (retracted included); beliefs are the agent's own.
    """
    folder = agent_dir(ws.path, agent_id)  # validates the id before anything is read or written
    items = ws.memory.list_items(agent_id, include_archived=True)
    facts = [f for f in ws.facts.query(agent_id, limit=MAX_RECORDS, include_retracted=True) if f.agent_id == agent_id]
    beliefs = ws.bdi.list(agent_id, NodeKind.BELIEF, owner=agent_id, limit=MAX_RECORDS)
    outputs = [
        (memory_dir(ws.path, agent_id) / MEMORY_ITEMS_FILE, render_memory_items(agent_id, items), len(items)),
        (folder / FACTS_FILE, render_facts(agent_id, facts), len(facts)),
        (folder / BELIEFS_FILE, render_beliefs(agent_id, beliefs), len(beliefs)),
    ]
    files = [
        FileOutcome(path=path.relative_to(ws.path).as_posix(), status=write_if_changed(path, text), records=count)
        for path, text, count in outputs
    ]
    reindex(ws.path, agent_id)  # also covers files written just before (consolidation's MEMORY.md)
    return MaterializeResult(agent_id=agent_id, files=files)
