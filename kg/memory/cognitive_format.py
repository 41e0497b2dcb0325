"""The cognitive files' Markdown format: kinds and field markers, how a record is written as a ``## `` section,
and how a file is parsed back into sections (see :mod:`kg.memory.cognitive` for the whole format)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import Field

from kg.errors import InputError
from kg.memory.materialize import FileOutcome, number
from kg.models import (
    BDINode,
    MemoryItem,
    Model,
    agent_scope,
    format_ts,
)
from kg.models.base import new_list

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


class ExportResult(Model):
    """Files written by an export."""

    agent_id: str
    files: list[FileOutcome]


class ImportResult(Model):
    """What an import did: records created and updated, step links added, lines it ignored."""

    agent_id: str
    kinds: list[CognitiveKind]
    created: list[str] = Field(default_factory=new_list)
    updated: list[str] = Field(default_factory=new_list)
    linked: list[str] = Field(default_factory=new_list)
    unchanged: int = 0
    missing: list[str] = Field(default_factory=new_list)
    warnings: list[str] = Field(default_factory=new_list)
    files: list[FileOutcome] = Field(default_factory=new_list)


def cognitive_kinds(kind: CognitiveKind | str = "all") -> list[CognitiveKind]:
    """``all`` -> every kind; else the one kind named (``InputError`` for an unknown name)."""
    if kind == "all":
        return list(CognitiveKind)
    try:
        return [CognitiveKind(kind)]
    except ValueError:
        known = ", ".join([*(k.value for k in CognitiveKind), "all"])
        raise InputError("kind", f"must be one of {known}, got {str(kind)[:40]!r}") from None


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
