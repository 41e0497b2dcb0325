"""Importing cognitive files: every file parsed and validated first, then the changes applied (a section with a
known id updates what differs, one without creates or matches a record)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kg.bdi_requests import BdiAddRequest, BdiUpdateRequest
from kg.errors import InputError, NotFoundError, ScopeError
from kg.ids import PREFIXES, is_id, new_id
from kg.limits import read_text_bounded
from kg.memory.cognitive_export import _STAMP, NODE_KINDS, _load, _State, _write
from kg.memory.cognitive_format import (
    ALIASES,
    LESSON_MARKERS,
    LOWERCASE,
    NODE_MARKERS,
    CognitiveKind,
    ImportResult,
    ParsedFile,
    Section,
    cognitive_kinds,
    normalize_content,
    parse_cognitive,
)
from kg.memory.context import MemoryWorkspace
from kg.memory.files import agent_dir
from kg.models import (
    NODE_MODELS,
    BDINode,
    MemoryItem,
    MemoryStoreKind,
    MemoryType,
    NodeKind,
    RelationKind,
    agent_scope,
    describe_validation_error,
    format_ts,
)


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

    def __init__(self, ws: MemoryWorkspace, agent_id: str, state: _State) -> None:
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
            self._validate(parsed, section, BdiAddRequest, {"kind": kind, **fields})  # the kind's fields, up front
            return _Op(parsed, section, kind, None, fields, parent=parent, link=parent is not None)
        if scope and scope != node.scope:
            raise parsed.error(section.markers["scope"][1], "scope", f"cannot be changed by import ({node.scope})")
        changes = self._changes(parsed, section, node, raw, node.updated_at)
        if changes:  # the kind's fields, checked before anything is written
            self._validate(parsed, section, BdiUpdateRequest, {"uid": node.uid, **changes})
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


def _read(ws: MemoryWorkspace, path: Path, kind: CognitiveKind) -> ParsedFile:
    rel = path.relative_to(ws.path).as_posix()
    text = read_text_bounded(path, rel).removeprefix("\ufeff")  # at most 100 MB; editors on Windows add a BOM
    return parse_cognitive(text, kind, rel)


def import_cognitive(ws: MemoryWorkspace, agent_id: str, kind: CognitiveKind | str = "all") -> ImportResult:
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
