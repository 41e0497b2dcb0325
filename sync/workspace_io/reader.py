"""Reading one agent's directory of the OpenClaw-MABOS layout (``agents/<id>/...``) into validated records.

Every JSON file and cognitive Markdown file of the agent is read and every record validated: a bad one raises
:class:`~kg.errors.InputError` naming the file, the record and the field. Nothing here looks at the store:
:mod:`sync.workspace_io.importer` decides what the records may change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kg.errors import InputError, NotFoundError
from kg.limits import load_json, read_text_bounded
from kg.models import (
    NODE_MODELS,
    Agent,
    Case,
    Fact,
    MemoryItem,
    Model,
    NodeKind,
    Relation,
    Rule,
    agent_scope,
    describe_validation_error,
)
from reasoning.rules import check_rule
from sync.workspace_io import markdown, records
from sync.workspace_io.report import AgentReport, WorkspaceReport


@dataclass
class Item:
    """One validated record, where it came from, and which fields were filled with the time of import."""

    kind: str
    model: Model
    where: str
    now_fields: frozenset[str] = frozenset()

    @property
    def uid(self) -> str:
        """The record's uid."""
        return str(getattr(self.model, "uid"))  # noqa: B009  # every record model has one


@dataclass
class AgentRecords:
    """The records read from one agent's directory, and its report."""

    report: AgentReport
    items: list[Item] = field(default_factory=list)


def _validate(model: type[Any], data: dict[str, Any], where: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = describe_validation_error(exc)
        raise InputError(f"{where}.{err.field}", err.rule) from None


def _now_fill(data: dict[str, Any], names: Sequence[str], now: datetime) -> frozenset[str]:
    filled = [name for name in names if data.get(name) in (None, "")]
    for name in filled:
        data[name] = now
    return frozenset(filled)


def _read_json(path: Path, rel: str) -> Any:
    return load_json(read_text_bounded(path, rel).removeprefix("\ufeff"), rel)  # at most 100 MB, read in chunks


class Reader:
    """Reads and validates one agent's directory (:meth:`read`)."""

    def __init__(self, root: Path, agent_id: str, now: datetime) -> None:
        self.root, self.agent_id, self.now = root, agent_id, now
        self.base = f"agents/{agent_id}/"
        self.out = AgentRecords(report=AgentReport(agent_id=agent_id))

    def json(self, name: str) -> tuple[str, Any] | None:
        rel = self.base + name
        path = self.root / rel
        if not path.is_file():
            return None
        self.out.report.files.append(rel)
        return rel, _read_json(path, rel)

    def add(self, kind: str, model: type[Any], data: dict[str, Any], where: str, *, stamps: Sequence[str]) -> Any:
        filled = _now_fill(data, stamps, self.now)
        value = _validate(model, data, where)
        self.out.items.append(Item(kind, value, where, filled))
        return value

    def read(self) -> AgentRecords:
        """Every record of the directory, validated, in file order."""
        self._agent()
        self._json_records()
        self._markdown()
        return self.out

    def _agent(self) -> None:
        found = self.json(records.AGENT_FILE) or self.json("agent.json")
        data = records.agent_fields(found[1] if found else None, self.agent_id)
        self.add("agent", Agent, data, found[0] if found else self.base, stamps=("created_at", "updated_at"))

    def _json_records(self) -> None:
        aid = self.agent_id
        if found := self.json(records.FACTS_FILE):
            for entry in records.fact_entries(*found):
                self.add("fact", Fact, records.fact_fields(entry, aid), f"{entry.file}: {entry.label}",
                         stamps=("created_at", "updated_at"))  # fmt: skip
        if found := self.json(records.MEMORY_FILE):
            for entry, store in records.memory_entries(*found):
                self.add("memory", MemoryItem, records.memory_fields(entry, store, aid),
                         f"{entry.file}: {entry.label}", stamps=("created_at",))  # fmt: skip
        if found := self.json(records.RULES_FILE):
            for entry in records.rule_entries(*found):
                where = f"{entry.file}: {entry.label}"
                rule = self.add("rule", Rule, records.rule_fields(entry, aid), where, stamps=("created_at",))
                try:
                    check_rule(rule)
                except InputError as exc:
                    raise InputError(f"{where}.{exc.field}", exc.rule) from None
        if found := self.json(records.CASES_FILE):
            for entry in records.case_entries(*found):
                self.add("case", Case, records.case_fields(entry, aid), f"{entry.file}: {entry.label}",
                         stamps=("created_at",))  # fmt: skip
        if found := self.json(records.RELATIONS_FILE):
            rel, data = found
            entries = data.get("relations") if isinstance(data, dict) else None
            if not isinstance(entries, list):
                raise InputError(rel, "must be a JSON object with a 'relations' list")
            for i, raw in enumerate(entries):
                entry = records.Entry(rel, f"relations[{i}]", raw)
                self.add("relation", Relation, {**entry.data, "agent_id": aid}, f"{rel}: {entry.label}",
                         stamps=("created_at",))  # fmt: skip

    def _markdown(self) -> None:
        natives: list[tuple[markdown.ParsedMarkdown, markdown.NativeEntry]] = []
        exact_uids: set[str] = set()
        for kind, name in markdown.FILES.items():
            rel = self.base + name
            path = self.root / rel
            if not path.is_file():
                continue
            self.out.report.files.append(rel)
            text = read_text_bounded(path, rel)  # at most 100 MB, read in chunks
            parsed = markdown.parse_markdown(text, kind, rel)
            self.out.report.warnings += parsed.warnings
            for line, data in parsed.exact:
                node_kind = _node_kind(parsed, line, data)
                node = self.add(node_kind.value, NODE_MODELS[node_kind], {**data, "agent_id": self.agent_id},
                                f"{rel}:{line}", stamps=())  # fmt: skip
                exact_uids.add(node.uid)
            natives += [(parsed, entry) for entry in parsed.native]
        uids: dict[int, str] = {}
        for parsed, entry in natives:
            uid = records.import_uid(entry.kind.value, self.agent_id,
                                     entry.source_id or records.content_id(entry.content))  # fmt: skip
            uids[id(entry)] = uid
            if uid in exact_uids:  # the visible twin of a record read exactly
                continue
            data = {"uid": uid, "agent_id": self.agent_id, "content": entry.content, **entry.fields}
            if data.get("updated_at") and not data.get("created_at"):
                data["created_at"] = data["updated_at"]
            if data.get("created_at") and not data.get("updated_at"):
                data["updated_at"] = data["created_at"]
            self.add(entry.kind.value, NODE_MODELS[entry.kind], data, f"{parsed.path}:{entry.line}",
                     stamps=("created_at", "updated_at"))  # fmt: skip
            self._native_links(parsed, entry, uid, uids)

    def _native_links(self, parsed: markdown.ParsedMarkdown, entry: markdown.NativeEntry, uid: str,
                      uids: dict[int, str]) -> None:  # fmt: skip
        links: list[tuple[str, str, str]] = []
        for kind, first, second, _ in entry.links:
            if second:  # "G-1 via P-1": the goal requires the plan
                links.append((kind.value, records.ref_uid("goal", self.agent_id, first),
                              records.ref_uid("plan", self.agent_id, second)))  # fmt: skip
            else:  # Desire: / Parent: of a goal
                source_kind = "desire" if kind.value == "desire-motivates-goal" else "goal"
                links.append((kind.value, records.ref_uid(source_kind, self.agent_id, first), uid))
        if entry.plan is not None and id(entry.plan) in uids:
            links.append(("plan-contains-step", uids[id(entry.plan)], uid))
        for kind_value, source, target in links:
            data = {"uid": records.relation_uid(self.agent_id, kind_value, source, target), "agent_id": self.agent_id,
                    "scope": agent_scope(self.agent_id), "kind": kind_value, "source_uid": source,
                    "target_uid": target}  # fmt: skip
            self.add("relation", Relation, data, f"{parsed.path}:{entry.line}", stamps=("created_at",))


def _node_kind(parsed: markdown.ParsedMarkdown, line: int, data: dict[str, Any]) -> NodeKind:
    try:
        return NodeKind(str(data.get("kind")))
    except ValueError:
        raise parsed.error(line, "mabos.kind", f"must be a BDI node kind, got {data.get('kind')!r}") from None


def agent_ids(root: Path, agents: Sequence[str] | None, report: WorkspaceReport) -> list[str]:
    """The agent directories to read: ``agents`` (each must exist) or every valid one (others are reported)."""
    folder = root / "agents"
    try:
        is_dir = folder.is_dir()
    except OSError as exc:  # a path the file system refuses (too long, no permission)
        raise InputError("path", f"cannot read it: {exc.strerror or exc}") from None
    if not is_dir:
        raise InputError("path", f"{root} has no agents/ directory (not an OpenClaw-MABOS workspace)")
    found = []
    for entry in sorted(folder.iterdir()):
        if not entry.is_dir():
            continue
        if records.valid_agent_dir(entry.name):
            found.append(entry.name)
        else:
            report.ignored.append(f"agents/{entry.name}: not a valid agent id ([a-z0-9][a-z0-9_-]{{0,63}})")
    if agents:
        missing = [a for a in agents if a not in found]
        if missing:
            raise NotFoundError(f"agent: no directory agents/{missing[0]} in {root}")
        return list(dict.fromkeys(agents))
    return found
