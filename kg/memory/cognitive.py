"""Cognitive files: an agent's BDI state and lessons as editable Markdown, exported and imported back.

Files under ``agents/<id>/``: ``Beliefs.md``, ``Desires.md``, ``Goals.md``, ``Intentions.md``,
``Plans.md`` (plan steps as ``### `` sections under their plan) and ``Learnings.md`` (memory items
of type lesson). One ``## `` section per record::

    # Goals

    ## Grow revenue
    > a second line of the goal's text
    priority: 8
    status: active
    progress: 0.25
    level: strategic
    [deadline: 2024-06-01T00:00:00.000000Z]
    [updated: 2024-05-01T12:00:00.000000Z]
    id: G-01J...

The heading is the first line of the text, ``> `` lines continue it. :func:`import_cognitive`
reads the files back: a section with a known ``id:`` updates only the fields that differ, a
section without one creates a record (or, when a record of that kind with the same text and scope
exists, updates that one), text before the first section (bullets or paragraphs, the seed's
header-less files) becomes new records. Every file is parsed and validated before anything is
written; a bad value raises :class:`~kg.errors.InputError` naming the file, line and field.
Export then import changes nothing. ``docs/markdown-files.md`` has the full rules.

The writer and the reader of the format live in this one module on purpose (it is longer than most):
a change to one side is a change to the other, and the round-trip tests hold them together.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, TypeAdapter, ValidationError

from kg.errors import InputError, NotFoundError, ScopeError
from kg.ids import PREFIXES, is_id, new_id
from kg.memory.files import agent_dir
from kg.memory.materialize import FileOutcome, number, write_if_changed
from kg.models import (
    NODE_MODELS,
    BDINode,
    MemoryItem,
    MemoryStoreKind,
    MemoryType,
    Model,
    NodeKind,
    RelationKind,
    UtcDatetime,
    agent_scope,
    describe_validation_error,
    format_ts,
)

if TYPE_CHECKING:
    from kg.workspace import Workspace

MAX_RECORDS = 100_000  # records of one kind per file (the services' largest page)


class CognitiveKind(StrEnum):
    """The cognitive files."""

    BELIEFS = "beliefs"
    DESIRES = "desires"
    GOALS = "goals"
    INTENTIONS = "intentions"
    PLANS = "plans"
    LEARNINGS = "learnings"

    @property
    def heading(self) -> str:
        """The file's title: ``Beliefs`` ..."""
        return self.value.capitalize()

    @property
    def filename(self) -> str:
        """``Beliefs.md`` ..."""
        return f"{self.heading}.md"


#: Node kind of each file's ``## `` sections (Plans.md: ``### `` sections are plan steps).
NODE_KINDS: dict[CognitiveKind, NodeKind] = {
    CognitiveKind.BELIEFS: NodeKind.BELIEF,
    CognitiveKind.DESIRES: NodeKind.DESIRE,
    CognitiveKind.GOALS: NodeKind.GOAL,
    CognitiveKind.INTENTIONS: NodeKind.INTENTION,
    CognitiveKind.PLANS: NodeKind.PLAN,
}
#: Marker name -> node field, in the order export writes them.
NODE_MARKERS = {"certainty": "certainty", "priority": "priority", "urgency": "urgency", "status": "status",
                "progress": "progress", "level": "hierarchy_level", "sequence": "sequence",
                "deadline": "deadline"}  # fmt: skip
LESSON_MARKERS = {"importance": "importance", "confidence": "confidence", "store": "store", "tags": "tags"}
READ_ONLY = ("id", "scope", "updated", "created")
#: Other spellings of marker names (also: model field name -> marker name, for error messages).
ALIASES = {"hierarchy_level": "level", "updated_at": "updated", "created_at": "created", "uid": "id"}
LOWERCASE = frozenset({"status", "level", "store"})

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9 _-]{0,40}$")
_STAMP: TypeAdapter[datetime] = TypeAdapter(UtcDatetime)


class ExportResult(Model):
    """Files written by an export."""

    agent_id: str
    files: list[FileOutcome]


class ImportResult(Model):
    """What an import did: records created and updated, step links added, lines it ignored."""

    agent_id: str
    kinds: list[CognitiveKind]
    created: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    linked: list[str] = Field(default_factory=list)
    unchanged: int = 0
    missing: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    files: list[FileOutcome] = Field(default_factory=list)


def cognitive_kinds(kind: CognitiveKind | str = "all") -> list[CognitiveKind]:
    """``all`` -> every kind; else the one kind named (``InputError`` for an unknown name)."""
    if kind == "all":
        return list(CognitiveKind)
    try:
        return [CognitiveKind(kind)]
    except ValueError:
        known = ", ".join([*(k.value for k in CognitiveKind), "all"])
        raise InputError("kind", f"must be one of {known}, got {str(kind)[:40]!r}") from None


# --------------------------------------------------------------------------------------------
# Text of a record
# --------------------------------------------------------------------------------------------


def normalize_content(text: str) -> str:
    """The text as the files hold it: line ends unified, trailing blanks and edge blank lines dropped.

    Two texts with the same normal form are the same for an import (no update is made).
    """
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if lines:
        lines[0] = lines[0].lstrip()
    return "\n".join(lines)


def content_lines(depth: int, text: str) -> list[str]:
    """``## first line`` then one ``> `` line per further line (``>`` alone for an empty one)."""
    first, *rest = normalize_content(text).split("\n")
    return [f"{'#' * depth} {first}", *(f"> {line}" if line else ">" for line in rest)]


# --------------------------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------------------------


def _value(value: Any) -> str:
    if isinstance(value, float):
        return number(value)
    return str(getattr(value, "value", value))


def node_section(node: BDINode, depth: int = 2) -> str:
    """One node as a section (``depth`` 3 for plan steps)."""
    lines = content_lines(depth, node.content)
    lines += [f"{marker}: {_value(getattr(node, name))}" for marker, name in NODE_MARKERS.items()
              if name != "deadline" and getattr(node, name) is not None]  # fmt: skip
    if node.scope != agent_scope(node.agent_id):
        lines.append(f"scope: {node.scope}")
    if node.deadline is not None:
        lines.append(f"[deadline: {format_ts(node.deadline)}]")
    lines += [f"[updated: {format_ts(node.updated_at)}]", f"id: {node.uid}"]
    return "\n".join(lines) + "\n"


def lesson_section(item: MemoryItem) -> str:
    """One lesson (memory item) as a section."""
    lines = content_lines(2, item.content)
    lines += [f"importance: {number(item.importance)}", f"confidence: {number(item.confidence)}",
              f"store: {item.store.value}"]  # fmt: skip
    if item.tags:
        lines.append(f"tags: {', '.join(item.tags)}")
    if item.scope != agent_scope(item.agent_id):
        lines.append(f"scope: {item.scope}")
    lines.append(f"[created: {format_ts(item.created_at)}]")
    if item.updated_at is not None:
        lines.append(f"[updated: {format_ts(item.updated_at)}]")
    lines.append(f"id: {item.uid}")
    return "\n".join(lines) + "\n"


def _document(kind: CognitiveKind, sections: Sequence[str]) -> str:
    return f"# {kind.heading}\n" + "".join("\n" + section for section in sections)


def _step_key(step: BDINode) -> tuple[int, datetime, str]:
    return (step.sequence or 0, step.created_at, step.uid)


@dataclass
class _State:
    """What the store holds for one agent: its nodes by kind, plan -> step uids, its lessons."""

    nodes: dict[NodeKind, list[BDINode]] = field(default_factory=dict)
    steps_of: dict[str, list[str]] = field(default_factory=dict)
    lessons: list[MemoryItem] = field(default_factory=list)

    def records(self, kind: NodeKind | None) -> list[BDINode] | list[MemoryItem]:
        """The nodes of ``kind``, or the lessons for ``None``."""
        return self.lessons if kind is None else self.nodes.get(kind, [])


def _record_kinds(kind: CognitiveKind) -> list[NodeKind | None]:
    """What a file holds: its node kind (plans: and steps), ``None`` for lessons."""
    if kind is CognitiveKind.LEARNINGS:
        return [None]
    return [NODE_KINDS[kind], *([NodeKind.PLAN_STEP] if kind is CognitiveKind.PLANS else [])]


def _load(ws: Workspace, agent_id: str, kinds: Sequence[CognitiveKind]) -> _State:
    state = _State()
    for node_kind in (k for kind in kinds for k in _record_kinds(kind)):
        if node_kind is None:
            state.lessons = ws.memory.list_items(agent_id, include_archived=False, types=[MemoryType.LESSON])
        else:
            state.nodes[node_kind] = ws.bdi.list(agent_id, node_kind, owner=agent_id, limit=MAX_RECORDS)
    for plan in state.nodes.get(NodeKind.PLAN, []):
        relations = ws.bdi.relations(agent_id, plan.uid)
        contains = [r for r in relations if r.kind is RelationKind.PLAN_CONTAINS_STEP and r.source_uid == plan.uid]
        state.steps_of[plan.uid] = [r.target_uid for r in contains]
    return state


def _render_plans(state: _State) -> str:
    steps = {s.uid: s for s in state.nodes[NodeKind.PLAN_STEP]}
    placed: set[str] = set()
    groups = []
    for plan in state.nodes[NodeKind.PLAN]:  # a step in several plans is shown under the first one
        mine = sorted((steps[u] for u in dict.fromkeys(state.steps_of[plan.uid]) if u in steps and u not in placed),
                      key=_step_key)  # fmt: skip
        placed.update(s.uid for s in mine)
        groups.append((plan, mine))
    orphans = sorted((s for s in steps.values() if s.uid not in placed), key=_step_key)
    sections = ["<!-- steps that belong to no plan -->\n"] if orphans else []
    sections += [node_section(step, 3) for step in orphans]
    for plan, mine in groups:
        sections += [node_section(plan), *(node_section(step, 3) for step in mine)]
    return _document(CognitiveKind.PLANS, sections)


def _render(kind: CognitiveKind, state: _State) -> str:
    """The text of one cognitive file."""
    if kind is CognitiveKind.PLANS:
        return _render_plans(state)
    if kind is CognitiveKind.LEARNINGS:
        return _document(kind, [lesson_section(item) for item in state.lessons])
    return _document(kind, [node_section(node) for node in state.nodes[NODE_KINDS[kind]]])


def _write(ws: Workspace, agent_id: str, kinds: Sequence[CognitiveKind], state: _State) -> list[FileOutcome]:
    folder = agent_dir(ws.path, agent_id)
    files = []
    for kind in kinds:
        path, text = folder / kind.filename, _render(kind, state)
        records = sum(len(state.records(k)) for k in _record_kinds(kind))
        status = write_if_changed(path, text)
        files.append(FileOutcome(path=path.relative_to(ws.path).as_posix(), status=status, records=records))
    return files


def export_cognitive(ws: Workspace, agent_id: str, kind: CognitiveKind | str = "all") -> ExportResult:
    """Write the agent's cognitive files from the store (each only if its content changed)."""
    agent_dir(ws.path, agent_id)  # validate the id before reading anything
    kinds = cognitive_kinds(kind)
    return ExportResult(agent_id=agent_id, files=_write(ws, agent_id, kinds, _load(ws, agent_id, kinds)))


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@dataclass
class Section:
    """One record read from a file: its text lines and ``marker -> (value, line)``."""

    line: int
    depth: int
    lines: list[str]
    markers: dict[str, tuple[str, int]] = field(default_factory=dict)
    parent: Section | None = None

    @property
    def content(self) -> str:
        """The record's text."""
        return normalize_content("\n".join(self.lines))


@dataclass
class ParsedFile:
    """The sections of one file and the warnings about lines it ignored."""

    path: str
    kind: CognitiveKind
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def warn(self, line: int, message: str) -> None:
        """Record that ``line`` was ignored and why."""
        self.warnings.append(f"{self.path}:{line}: {message}")

    def error(self, line: int, name: str, rule: str) -> InputError:
        """An :class:`InputError` naming the file, the line and the field."""
        return InputError(f"{self.path}:{line}: {name}", rule)

    @property
    def known(self) -> frozenset[str]:
        """Marker names this file reads."""
        names = LESSON_MARKERS if self.kind is CognitiveKind.LEARNINGS else NODE_MARKERS
        return frozenset((*names, *READ_ONLY))


def split_marker(line: str) -> tuple[str, str] | None:
    """``certainty: 0.8``, ``- Certainty: 0.8``, ``[deadline: ...]``, ``**Status:** active`` -> (name, value)."""
    text = re.sub(r"^[-*+]\s+", "", line.strip())
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    key, sep, value = text.partition(":")
    bold = key.startswith(("**", "__"))
    key = key.strip().strip("*_").strip()
    if not sep or not _KEY.match(key):
        return None
    value = value.strip()
    if bold:
        value = value.removeprefix("**").removeprefix("__").strip()
    name = key.lower().replace(" ", "_").replace("-", "_")
    return ALIASES.get(name, name), value


class _Parser:
    """Reads one file line by line into :class:`ParsedFile`."""

    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.section: Section | None = None
        self.plan: Section | None = None
        self.ignoring = False
        self.titled = False
        self.loose_open = False

    def feed(self, number: int, line: str) -> None:
        if not line.strip():
            self.loose_open = False
        elif _COMMENT.match(line):
            return
        elif heading := _HEADING.match(line):
            self.heading(number, len(heading[1]), heading[2] or "")
        elif self.ignoring:
            return
        elif self.section is not None:
            self.section_line(number, line)
        else:
            self.loose_line(number, line)

    def heading(self, number: int, level: int, text: str) -> None:
        self.loose_open = False
        plans = self.parsed.kind is CognitiveKind.PLANS
        if level == 1 and not self.titled and not self.parsed.sections:
            self.titled = True
        elif level == 2 or (level == 3 and plans):
            section = Section(line=number, depth=level, lines=[text], parent=self.plan if level == 3 else None)
            self.parsed.sections.append(section)
            self.section, self.ignoring = section, False
            if level == 2:
                self.plan = section
        else:
            where = "## records and ### plan steps" if plans else "## records"
            self.parsed.warn(number, f"heading {text[:60]!r} and the lines under it ignored (only {where} are read)")
            self.section, self.ignoring = None, True

    def section_line(self, number: int, line: str) -> None:
        assert self.section is not None  # noqa: S101  # feed() checked it
        stripped = line.strip()
        if stripped.startswith(">"):
            rest = stripped[1:]
            self.section.lines.append(rest[1:] if rest.startswith(" ") else rest)
            return
        marker = split_marker(line)
        if marker is None:
            self.parsed.warn(number, "line ignored: not a marker such as 'certainty: 0.8' (continue text with '> ')")
        elif marker[0] not in self.parsed.known:
            self.parsed.warn(number, f"unknown marker {marker[0]!r} ignored")
        elif marker[0] in self.section.markers:
            first = self.section.markers[marker[0]][1]
            raise self.parsed.error(number, marker[0], f"given twice in one section (first on line {first})")
        else:
            self.section.markers[marker[0]] = (marker[1], number)

    def loose_line(self, number: int, line: str) -> None:
        """Text before the first section: each bullet or paragraph is a new record."""
        bullet = _BULLET.match(line)
        text = bullet[1].strip() if bullet else line.strip()
        if not bullet and self.loose_open:
            last = self.parsed.sections[-1]
            last.lines[0] = f"{last.lines[0]} {text}"
            return
        marker = split_marker(text)
        if marker is not None and marker[0] in self.parsed.known:
            self.parsed.warn(number, f"marker {marker[0]!r} outside a ## section ignored")
            self.loose_open = False
            return
        self.parsed.sections.append(Section(line=number, depth=2, lines=[text]))
        self.loose_open = True


def parse_cognitive(text: str, kind: CognitiveKind, path: str) -> ParsedFile:
    """Parse one cognitive file (``path`` names it in warnings and errors)."""
    parsed = ParsedFile(path=path, kind=kind)
    parser = _Parser(parsed)
    for line_no, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        parser.feed(line_no, line.rstrip())
    return parsed


# --------------------------------------------------------------------------------------------
# Import: validate everything, then apply
# --------------------------------------------------------------------------------------------


@dataclass
class _Op:
    """One section's effect: create (``uid`` None) or update ``fields``; maybe link a step to its plan."""

    parsed: ParsedFile
    section: Section
    kind: NodeKind | None  # None: a lesson (memory item)
    uid: str | None
    fields: dict[str, Any]
    parent: _Op | None = None
    link: bool = False


class _Importer:
    """Validates every section of every file into :class:`_Op` values, then applies them."""

    def __init__(self, ws: Workspace, agent_id: str, state: _State) -> None:
        self.ws, self.agent_id, self.state = ws, agent_id, state
        self.claimed: dict[str, str] = {}  # uid -> where it was named (or matched)
        records: list[BDINode | MemoryItem] = [*state.lessons, *chain.from_iterable(state.nodes.values())]
        self.by_uid = {record.uid: record for record in records}
        self.index: dict[NodeKind | None, dict[tuple[str, str], list[BDINode | MemoryItem]]] = {}
        self.warnings: list[str] = []
        self.now = ws.clock.now()

    # ---------------------------------------------------------------- validation

    def plan(self, files: Sequence[ParsedFile]) -> list[_Op]:
        for parsed in files:
            self._claim_ids(parsed)
        ops: list[_Op] = []
        for parsed in files:
            self.warnings += parsed.warnings
            by_section: dict[int, _Op] = {}
            for section in parsed.sections:
                parent = by_section.get(id(section.parent)) if section.parent is not None else None
                op = self._op(parsed, section, parent)
                by_section[id(section)] = op
                ops.append(op)
        return ops

    def _claim_ids(self, parsed: ParsedFile) -> None:
        for section in parsed.sections:
            if "id" not in section.markers:
                continue
            uid, line = section.markers["id"]
            prefix = PREFIXES["memory" if parsed.kind is CognitiveKind.LEARNINGS else self._kind(parsed, section)]
            if not is_id(uid) or not uid.startswith(prefix + "-"):
                raise parsed.error(line, "id", f"must be an id such as {prefix}-01J..., got {uid[:40]!r}")
            if uid in self.claimed:
                raise parsed.error(line, "id", f"{uid} is given twice (also at {self.claimed[uid]})")
            self.claimed[uid] = f"{parsed.path}:{line}"

    @staticmethod
    def _kind(parsed: ParsedFile, section: Section) -> NodeKind:
        return NodeKind.PLAN_STEP if section.depth == 3 else NODE_KINDS[parsed.kind]

    def _op(self, parsed: ParsedFile, section: Section, parent: _Op | None) -> _Op:
        if parsed.kind is CognitiveKind.LEARNINGS:
            return self._lesson_op(parsed, section)
        kind = self._kind(parsed, section)
        raw = {NODE_MARKERS[m]: self._raw(m, v) for m, (v, _) in section.markers.items() if m in NODE_MARKERS}
        scope = self._scope(parsed, section)
        node = self._existing_node(parsed, section, kind, scope, parent)
        if node is None:
            data = {"uid": new_id(kind.value), "agent_id": self.agent_id, "scope": scope or agent_scope(self.agent_id),
                    "created_at": self.now, "updated_at": self.now, "content": section.content, **raw}  # fmt: skip
            model = self._validate(parsed, section, NODE_MODELS[kind], data)
            fields = {k: getattr(model, k) for k in ("content", *raw)} | ({"scope": scope} if scope else {})
            return _Op(parsed, section, kind, None, fields, parent=parent, link=parent is not None)
        if scope and scope != node.scope:
            raise parsed.error(section.markers["scope"][1], "scope", f"cannot be changed by import ({node.scope})")
        changes = self._changes(parsed, section, node, raw, node.updated_at)
        link = self._needs_link(section, node, parent)
        return _Op(parsed, section, kind, node.uid, changes, parent=parent, link=link)

    def _lesson_op(self, parsed: ParsedFile, section: Section) -> _Op:
        raw: dict[str, Any] = {LESSON_MARKERS[m]: self._raw(m, v) for m, (v, _) in section.markers.items()
                               if m in LESSON_MARKERS}  # fmt: skip
        if "tags" in raw:
            raw["tags"] = [tag.strip() for tag in raw["tags"].split(",") if tag.strip()]
        scope = self._scope(parsed, section)
        item = self._existing_lesson(parsed, section, scope)
        if item is None:
            raw.setdefault("store", MemoryStoreKind.LONG_TERM.value)
            data = {"uid": new_id("memory"), "agent_id": self.agent_id, "scope": scope or agent_scope(self.agent_id),
                    "created_at": self.now, "content": section.content, "type": MemoryType.LESSON, **raw}  # fmt: skip
            model = self._validate(parsed, section, MemoryItem, data)
            fields = {k: getattr(model, k) for k in ("content", "type", *raw)} | ({"scope": scope} if scope else {})
            return _Op(parsed, section, None, None, fields)
        if normalize_content(item.content) != section.content:
            raise parsed.error(section.line, "content", "a lesson's text cannot be edited; add a new section instead")
        if scope and scope != item.scope:
            raise parsed.error(section.markers["scope"][1], "scope", f"cannot be changed by import ({item.scope})")
        if "store" in raw and raw.pop("store") != item.store.value:
            self.warnings.append(f"{parsed.path}:{section.markers['store'][1]}: store is kept by the memory rules "
                                 f"({item.store.value}); the marker was ignored")  # fmt: skip
        return _Op(parsed, section, None, item.uid, self._changes(parsed, section, item, raw, item.updated_at))

    @staticmethod
    def _raw(marker: str, value: str) -> str:
        return value.lower() if marker in LOWERCASE else value

    def _scope(self, parsed: ParsedFile, section: Section) -> str | None:
        if "scope" not in section.markers:
            return None
        value, line = section.markers["scope"]
        try:
            return self.ws.scopes.check_write(self.agent_id, value)
        except InputError as exc:
            raise parsed.error(line, "scope", exc.rule) from None
        except ScopeError as exc:
            raise ScopeError(f"{parsed.path}:{line}: {exc}") from None

    def _changes(self, parsed: ParsedFile, section: Section, record: BDINode | MemoryItem, raw: dict[str, Any],
                 updated_at: datetime | None) -> dict[str, Any]:  # fmt: skip
        """The fields whose validated file value differs from the stored one (checked for staleness)."""
        wanted = dict(raw)
        if normalize_content(record.content) != section.content:
            wanted["content"] = section.content
        model = self._validate(parsed, section, type(record), {**record.model_dump(), **wanted})
        changes = {k: getattr(model, k) for k in wanted if getattr(model, k) != getattr(record, k)}
        if changes and "updated" in section.markers:
            value, line = section.markers["updated"]
            stamp = self._stamp(parsed, line, value)
            if stamp != updated_at:
                shown = format_ts(updated_at) if updated_at else "never"
                raise parsed.error(line, "updated", f"the record changed in the store ({shown}) after this file was "
                                   "written; export again and redo the edit")  # fmt: skip
        if changes:
            self._check_write(parsed, section, record.scope)
        return changes

    def _check_write(self, parsed: ParsedFile, section: Section, scope: str) -> None:
        try:
            self.ws.scopes.check_write(self.agent_id, scope)
        except ScopeError as exc:
            raise ScopeError(f"{parsed.path}:{section.line}: {exc}") from None

    @staticmethod
    def _stamp(parsed: ParsedFile, line: int, value: str) -> datetime:
        try:
            return _STAMP.validate_python(value)
        except ValidationError as exc:
            raise parsed.error(line, "updated", describe_validation_error(exc).rule) from None

    @staticmethod
    def _validate(parsed: ParsedFile, section: Section, model: type[Any], data: dict[str, Any]) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            err = describe_validation_error(exc)
            name = ALIASES.get(err.field, err.field)
            line = section.markers.get(name, ("", section.line))[1]
            raise parsed.error(line, name, err.rule) from None

    def _existing_node(self, parsed: ParsedFile, section: Section, kind: NodeKind, scope: str | None,
                       parent: _Op | None) -> BDINode | None:  # fmt: skip
        if "id" in section.markers:
            uid, line = section.markers["id"]
            node = self.by_uid.get(uid) or self._visible(lambda: self.ws.bdi.get(self.agent_id, uid))
            if not isinstance(node, BDINode) or node.kind is not kind:
                raise parsed.error(line, "id", f"no {kind.value.replace('_', ' ')} {uid} visible to {self.agent_id!r}")
            return node
        inside = None
        if kind is NodeKind.PLAN_STEP and parent is not None:  # a step is matched only inside its plan
            inside = set(self.state.steps_of.get(parent.uid, [])) if parent.uid else set()
        found = self._match(parsed, section, kind, scope, inside)
        return found if isinstance(found, BDINode) else None

    def _existing_lesson(self, parsed: ParsedFile, section: Section, scope: str | None) -> MemoryItem | None:
        if "id" not in section.markers:
            found = self._match(parsed, section, None, scope, None)
            return found if isinstance(found, MemoryItem) else None
        uid, line = section.markers["id"]
        item = self.by_uid.get(uid) or self._visible(lambda: self.ws.memory.get(self.agent_id, uid))
        if not isinstance(item, MemoryItem) or item.type is not MemoryType.LESSON:
            raise parsed.error(line, "id", f"no lesson {uid} visible to {self.agent_id!r}")
        return item

    @staticmethod
    def _visible(get: Callable[[], Any]) -> Any:
        try:
            return get()
        except NotFoundError:
            return None

    def _match(self, parsed: ParsedFile, section: Section, kind: NodeKind | None, scope: str | None,
               inside: set[str] | None) -> BDINode | MemoryItem | None:  # fmt: skip
        """A record with the same text and scope not named elsewhere in the files: the section is that record."""
        if kind not in self.index:
            index: dict[tuple[str, str], list[BDINode | MemoryItem]] = {}
            for record in self.state.records(kind):
                index.setdefault((normalize_content(record.content), record.scope), []).append(record)
            self.index[kind] = index
        for record in self.index[kind].get((section.content, scope or agent_scope(self.agent_id)), []):
            if record.uid not in self.claimed and (inside is None or record.uid in inside):
                self.claimed[record.uid] = f"{parsed.path}:{section.line}"
                return record
        return None

    def _needs_link(self, section: Section, node: BDINode, parent: _Op | None) -> bool:
        """Link a step put under a plan unless it is already there; a step of another plan is not moved."""
        if parent is None or (parent.uid and node.uid in self.state.steps_of.get(parent.uid, [])):
            return False
        plans = [r.source_uid for r in self.ws.bdi.relations(self.agent_id, node.uid)
                 if r.kind is RelationKind.PLAN_CONTAINS_STEP and r.target_uid == node.uid]  # fmt: skip
        if plans:
            self.warnings.append(f"{parent.parsed.path}:{section.line}: step {node.uid} belongs to plan {plans[0]}; "
                                 "import does not move steps between plans")  # fmt: skip
        return not plans

    # ---------------------------------------------------------------- apply

    def apply(self, ops: Sequence[_Op], result: ImportResult) -> None:
        for op in ops:
            if op.uid is None:
                op.uid = self._create(op)
                result.created.append(op.uid)
            elif op.fields:
                self._update(op)
                result.updated.append(op.uid)
            elif not op.link:
                result.unchanged += 1
            if op.link and op.parent is not None and op.parent.uid is not None:
                self.ws.bdi.link(self.agent_id, RelationKind.PLAN_CONTAINS_STEP, op.parent.uid, op.uid)
                result.linked.append(op.uid)

    def _create(self, op: _Op) -> str:
        fields = dict(op.fields)
        content = fields.pop("content")
        if op.kind is None:
            return self.ws.memory.store_item(self.agent_id, content, **fields).item.uid
        return self.ws.bdi.add(op.kind, self.agent_id, content, **fields).uid

    def _update(self, op: _Op) -> None:
        assert op.uid is not None  # noqa: S101  # only called for existing records
        if op.kind is None:
            self.ws.memory.update(self.agent_id, op.uid, **op.fields)
        else:
            self.ws.bdi.update(self.agent_id, op.uid, **op.fields)


def _read(ws: Workspace, path: Path, kind: CognitiveKind) -> ParsedFile:
    rel = path.relative_to(ws.path).as_posix()
    try:
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")  # editors on Windows add a BOM
    except UnicodeDecodeError:
        raise InputError(rel, "is not UTF-8 text") from None
    return parse_cognitive(text, kind, rel)


def import_cognitive(ws: Workspace, agent_id: str, kind: CognitiveKind | str = "all") -> ImportResult:
    """Read the agent's cognitive files back into the store.

    Every file is parsed and every section validated first; if any is bad, nothing is written. Files of
    kinds where something was created or updated are then exported again (so new sections get their
    ``id:`` and edited ones their new ``[updated: ...]``). A missing file is an error when ``kind`` names
    it, and skipped (listed in ``missing``) for ``all``.
    """
    folder = agent_dir(ws.path, agent_id)
    kinds = cognitive_kinds(kind)
    result = ImportResult(agent_id=agent_id, kinds=kinds)
    files = []
    for each in kinds:
        path = folder / each.filename
        if path.is_file():
            files.append(_read(ws, path, each))
        elif len(kinds) == 1:
            raise NotFoundError(f"{path.relative_to(ws.path).as_posix()}: no such file; write it with "
                                f"'mabos memory export --agent {agent_id} --kind {each.value}' first")  # fmt: skip
        else:
            result.missing.append(path.relative_to(ws.path).as_posix())
    state = _load(ws, agent_id, [f.kind for f in files])
    importer = _Importer(ws, agent_id, state)
    ops = importer.plan(files)
    importer.apply(ops, result)
    result.warnings = importer.warnings
    touched = [f.kind for f in files if any(op.parsed is f and (op.fields or op.link) for op in ops)]
    if touched:
        result.files = _write(ws, agent_id, touched, _load(ws, agent_id, touched))
    return result
