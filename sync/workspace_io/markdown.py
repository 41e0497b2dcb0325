"""The cognitive Markdown files of the OpenClaw-MABOS layout: Beliefs.md, Desires.md, Goals.md, Intentions.md,
Plans.md.

Written in the original's shapes (``extensions/mabos/src/tools/bdi-tools.ts`` of kingler/openclaw-mabos):
beliefs as a table ``| ID | Belief | Value | Certainty | Source | Updated |``, the other kinds as
``### <ID>: <text>`` sections with ``- **Field:** value`` bullets, plan steps as ``#### `` sections under
their plan. After each record export adds one line ``<!-- mabos: {...} -->`` holding the whole record as
JSON: invisible when rendered, ignored by the original's tools, and what makes the round trip exact.

Reading: a record with a ``mabos:`` line is taken from it; table rows and sections without one (files
written by the original system, or added by hand) are read from their visible fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kg.errors import InputError
from kg.limits import json_line, one_line, split_lines
from kg.models import BDINode, NodeKind, Relation, RelationKind, format_ts

#: File of each node kind (plan steps live in Plans.md under their plan).
FILES: dict[NodeKind, str] = {
    NodeKind.BELIEF: "Beliefs.md",
    NodeKind.DESIRE: "Desires.md",
    NodeKind.GOAL: "Goals.md",
    NodeKind.INTENTION: "Intentions.md",
    NodeKind.PLAN: "Plans.md",
}
_COMMENT = re.compile(r"^\s*<!-- mabos: (\{.*\}) -->\s*$")
_SECTION = re.compile(r"^(#{2,4})\s+(.*?)\s*$")
_ID_TEXT = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]{0,80}):\s+(.+)$")
_BULLET = re.compile(r"^\s*[-*]\s+\*\*(.+?):?\*\*:?\s*(.*)$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}")
_EMPTY = {"", "\u2014", "-", "\u2013", "n/a", "none", "ongoing", "tbd"}  # em and en dashes too
#: Status words of the original -> "done", "gone" or "busy" (mapped per kind below).
_STATUS = {"executing": "busy", "in progress": "busy", "in_progress": "busy", "complete": "done",
           "completed": "done", "done": "done", "achieved": "done", "abandoned": "gone", "dropped": "gone"}  # fmt: skip
_DONE = {NodeKind.GOAL: "achieved", NodeKind.INTENTION: "completed", NodeKind.PLAN: "completed",
         NodeKind.DESIRE: "satisfied", NodeKind.PLAN_STEP: "done", NodeKind.BELIEF: "active"}  # fmt: skip
_GONE = {NodeKind.GOAL: "abandoned", NodeKind.INTENTION: "dropped", NodeKind.PLAN: "abandoned",
         NodeKind.DESIRE: "dropped", NodeKind.PLAN_STEP: "skipped", NodeKind.BELIEF: "withdrawn"}  # fmt: skip
_TEXT_COLUMNS = ("belief", "desire", "goal", "intention", "plan", "pattern", "name", "description")


# ------------------------------------------------------------------------------------ writing


def _comment(node: BDINode) -> str:
    data = json_line(node.model_dump(mode="json"))  # U+2028 and the like escaped: the line stays one line
    return "<!-- mabos: " + data.replace("-->", "--\\u003e") + " -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _number(value: float | None, percent: bool = False) -> str | None:
    if value is None:
        return None
    return f"{round(value * 100)}%" if percent else repr(float(value))


def _bullets(node: BDINode, links: dict[str, list[str]]) -> list[str]:
    pairs: list[tuple[str, Any]] = [
        ("Level", node.hierarchy_level.value if node.hierarchy_level else None), ("Priority", node.priority),
        ("Certainty", _number(node.certainty)), ("Urgency", _number(node.urgency)), ("Status", node.status),
        ("Progress", _number(node.progress, percent=True)), ("Sequence", node.sequence),
        ("Deadline", format_ts(node.deadline) if node.deadline else None),
        *((name, ", ".join(uids)) for name, uids in links.items()),
        ("Created", format_ts(node.created_at)), ("Updated", format_ts(node.updated_at)),
    ]  # fmt: skip
    return [f"- **{name}:** {value}" for name, value in pairs if value is not None]


def _section(node: BDINode, depth: int, links: dict[str, list[str]]) -> str:
    # lines as the reader splits them (on "\n"); a U+2028, \x85, \r ... inside one shows as a space (the mabos:
    # line holds the exact text), so no text can end a line early and forge a section or a field
    first, *rest = (one_line(line) for line in node.content.strip().split("\n"))
    lines = [f"{'#' * depth} {node.uid}: {first.strip()}", *(f"> {line}" for line in rest)]
    return "\n".join([*lines, *_bullets(node, links), _comment(node)]) + "\n"


def _links(node: BDINode, relations: Sequence[Relation]) -> dict[str, list[str]]:
    """Visible link bullets of a goal: its desires and its parent goal (the original's fields)."""
    if node.kind is not NodeKind.GOAL:
        return {}
    desires = [r.source_uid for r in relations if r.kind is RelationKind.DESIRE_MOTIVATES_GOAL
               and r.target_uid == node.uid]  # fmt: skip
    parents = [r.source_uid for r in relations if r.kind is RelationKind.GOAL_DECOMPOSITION
               and r.target_uid == node.uid]  # fmt: skip
    return {k: v for k, v in (("Desire", desires), ("Parent", parents)) if v}


def _header(title: str, agent_id: str) -> str:
    return (f"# {title} — {agent_id}\n\n<!-- Written by mabos (sync export-workspace). Each 'mabos:' line holds "
            "its record exactly; edit a record in mabos, or delete its 'mabos:' line to make the visible "
            "fields count. -->\n")  # fmt: skip


def render_beliefs(agent_id: str, beliefs: Sequence[BDINode]) -> str:
    """``Beliefs.md``: the original's belief table, then one ``mabos:`` line per belief."""
    rows = ["| ID | Belief | Value | Certainty | Source | Updated |", "|---|---|---|---|---|---|"]
    rows += [f"| {b.uid} | {_cell(b.content)} |  | {_number(b.certainty) or ''} | mabos | {format_ts(b.updated_at)} |"
             for b in beliefs]  # fmt: skip
    comments = [_comment(b) for b in beliefs]
    return (
        _header("Beliefs", agent_id)
        + "\n## Beliefs\n\n"
        + "\n".join(rows)
        + "\n\n"
        + "".join(c + "\n" for c in comments)
    )


def render_nodes(kind: NodeKind, agent_id: str, nodes: Sequence[BDINode], relations: Sequence[Relation]) -> str:
    """``Desires.md``, ``Goals.md`` or ``Intentions.md``: one ``### `` section per record."""
    title = FILES[kind].removesuffix(".md")
    sections = [_section(node, 3, _links(node, relations)) for node in nodes]
    return _header(title, agent_id) + f"\n## {title}\n\n" + "\n".join(sections)


def render_plans(agent_id: str, plans: Sequence[BDINode], steps: Sequence[BDINode],
                 relations: Sequence[Relation]) -> str:  # fmt: skip
    """``Plans.md``: plans as ``### `` sections, each followed by its steps as ``#### `` sections."""
    by_uid = {s.uid: s for s in steps}
    placed: set[str] = set()
    sections = []
    for plan in plans:
        sections.append(_section(plan, 3, {}))
        mine = [by_uid[r.target_uid] for r in relations if r.kind is RelationKind.PLAN_CONTAINS_STEP
                and r.source_uid == plan.uid and r.target_uid in by_uid and r.target_uid not in placed]  # fmt: skip
        for step in sorted(mine, key=lambda s: (s.sequence or 0, s.created_at, s.uid)):
            placed.add(step.uid)
            sections.append(_section(step, 4, {}))
    text = _header("Plans", agent_id) + "\n## Plans\n\n" + "\n".join(sections)
    orphans = [s for s in steps if s.uid not in placed]
    if orphans:
        text += "\n## Steps without a plan\n\n" + "\n".join(_section(s, 4, {}) for s in orphans)
    return text


# ------------------------------------------------------------------------------------ reading


@dataclass
class NativeEntry:
    """A record read from visible Markdown: its source id, text, fields and links to other records."""

    kind: NodeKind
    line: int
    source_id: str | None
    content: str
    fields: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[RelationKind, str, str, str]] = field(default_factory=list)  # kind, src, tgt, src/tgt kinds
    plan: NativeEntry | None = None


@dataclass
class ParsedMarkdown:
    """One cognitive file: exact records (``mabos:`` lines) and entries read from visible fields."""

    path: str
    exact: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    native: list[NativeEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def error(self, line: int, name: str, rule: str) -> InputError:
        """An InputError naming the file, line and field."""
        return InputError(f"{self.path}:{line}: {name}", rule)


def _unit(parsed: ParsedMarkdown, line: int, name: str, value: str) -> float:
    text = value.strip()
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise parsed.error(line, name, f"must be a number or a percentage, got {value[:40]!r}") from None


def _priority(parsed: ParsedMarkdown, line: int, value: str) -> int:
    number = _unit(parsed, line, "priority", value)
    if value.strip().endswith("%") or (number <= 1.0 and "." in value):  # the original's 0.0-1.0 scale
        number *= 10
    return max(1, min(10, round(number)))


def _apply_field(parsed: ParsedMarkdown, entry: NativeEntry, line: int, name: str, value: str) -> None:
    key = name.strip().lower()
    if value.strip().lower() in _EMPTY:
        return
    fields = entry.fields
    if key in ("certainty", "confidence", "urgency", "progress"):
        fields["certainty" if key == "confidence" else key] = _unit(parsed, line, key, value)
    elif key in ("priority", "priority score"):
        fields["priority"] = _priority(parsed, line, value)
    elif key in ("status", "level", "sequence", "deadline"):
        target = {"level": "hierarchy_level"}.get(key, key)
        text = value.strip()
        fields[target] = _status(entry.kind, text) if key == "status" else text.lower() if key == "level" else text
    elif key in ("created", "started", "updated", "last updated"):
        fields["updated_at" if key.endswith("updated") else "created_at"] = value.strip()
    elif key in ("description", "about") and value.strip():
        entry.content = (
            f"{entry.content}\n{value.strip()}" if key == "description" else f"{value.strip()}: " + (entry.content)
        )
    elif key in ("desire", "parent"):
        kind = RelationKind.DESIRE_MOTIVATES_GOAL if key == "desire" else RelationKind.GOAL_DECOMPOSITION
        for ref in (r.strip() for r in value.split(",") if r.strip()):
            entry.links.append((kind, ref, "", "desire" if key == "desire" else "goal"))
    else:
        parsed.warnings.append(f"{parsed.path}:{line}: field {name.strip()!r} is not carried into mabos")


def _status(kind: NodeKind, text: str) -> str:
    word = _STATUS.get(text.strip().lower())
    if word == "done":
        return _DONE[kind]
    if word == "gone":
        return _GONE[kind]
    if word == "busy":
        return "in_progress" if kind is NodeKind.PLAN_STEP else "active"
    return text.strip().lower()


def _heading_status(kind: NodeKind, heading: str) -> str | None:
    lower = heading.lower()
    if "completed" in lower or "achieved" in lower:
        return _DONE[kind]
    if "abandoned" in lower or "dropped" in lower:
        return _GONE[kind]
    return None


def _row(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


class _Reader:
    """Reads the visible part of one file line by line."""

    def __init__(self, parsed: ParsedMarkdown, kind: NodeKind) -> None:
        self.parsed, self.kind = parsed, kind
        self.heading = ""
        self.entry: NativeEntry | None = None
        self.plan: NativeEntry | None = None
        self.columns: list[str] | None = None

    def feed(self, number: int, line: str) -> None:
        if match := _COMMENT.match(line):
            self._exact(number, match[1])
        elif line.lstrip().startswith("<!--"):
            return
        elif match := _SECTION.match(line):
            self._section(number, len(match[1]), match[2])
        elif line.lstrip().startswith("|"):
            self._table(number, line)
        else:
            self.columns = None
            self._line(number, line)

    def _exact(self, number: int, text: str) -> None:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.parsed.error(number, "mabos", f"not valid JSON: {exc.msg}") from None
        if not isinstance(data, dict):
            raise self.parsed.error(number, "mabos", "must hold a JSON object")
        self.parsed.exact.append((number, data))

    def _skipped(self) -> bool:
        lower = self.heading.lower()
        return "log" in lower or "hierarchy" in lower

    def _section(self, number: int, depth: int, text: str) -> None:
        self.columns, self.entry = None, None
        if depth == 2:
            self.heading = text
            return
        if self._skipped():
            return
        kind = NodeKind.PLAN_STEP if (depth == 4 and self.kind is NodeKind.PLAN) else self.kind
        match = _ID_TEXT.match(text)
        source_id, content = (match[1], match[2]) if match else (None, text)
        entry = NativeEntry(kind=kind, line=number, source_id=source_id, content=content.strip())
        if status := _heading_status(kind, self.heading):
            entry.fields["status"] = status
        if kind is NodeKind.INTENTION and (via := re.match(r"^(\S+) via (\S+)$", entry.content)):
            entry.links.append((RelationKind.GOAL_REQUIRES_PLAN, via[1], via[2], "goal/plan"))
        if kind is NodeKind.PLAN_STEP:
            entry.plan = self.plan
        elif kind is NodeKind.PLAN:
            self.plan = entry
        self.parsed.native.append(entry)
        self.entry = entry

    def _line(self, number: int, line: str) -> None:
        if self.entry is None or not line.strip():
            return
        if line.lstrip().startswith(">"):
            self.entry.content += "\n" + line.lstrip()[1:].removeprefix(" ")
        elif bullet := _BULLET.match(line):
            _apply_field(self.parsed, self.entry, number, bullet[1], bullet[2])

    def _table(self, number: int, line: str) -> None:
        cells = _row(line)
        if self.columns is None:
            self.columns = [c.lower() for c in cells]
            return
        if _TABLE_RULE.match(line.strip()) or self._skipped() or "id" not in self.columns:
            return
        text_column = next((c for c in self.columns if c in _TEXT_COLUMNS), None)
        if text_column is None or len(cells) != len(self.columns):
            return
        row = dict(zip(self.columns, cells, strict=True))
        content = row[text_column]
        if row.get("value", "").strip().lower() not in _EMPTY:
            content = f"{content}: {row['value']}"
        if not content.strip():
            return
        entry = NativeEntry(kind=self.kind, line=number, source_id=row["id"] or None, content=content)
        if status := _heading_status(self.kind, self.heading):
            entry.fields["status"] = status
        for name, value in row.items():
            if name not in ("id", "value", "source", text_column, "importance", "completed", "outcome", "reason",
                            "learnings", "frequency", "implications"):  # fmt: skip
                _apply_field(self.parsed, entry, number, name, value)
        self.parsed.native.append(entry)


def parse_markdown(text: str, kind: NodeKind, path: str) -> ParsedMarkdown:
    """Read one cognitive file (``path`` names it in errors and warnings)."""
    parsed = ParsedMarkdown(path=path)
    reader = _Reader(parsed, kind)
    for number, line in enumerate(split_lines(text.removeprefix("\ufeff")), start=1):  # as the writer joins
        reader.feed(number, line.rstrip())
    return parsed


def stamp_or(value: Any, default: datetime) -> Any:
    """A native timestamp field (``2024-05-01``) or ``default`` when absent."""
    return value if value not in (None, "") else default
