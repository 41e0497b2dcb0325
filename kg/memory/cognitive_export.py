"""Exporting cognitive files: an agent's BDI nodes and lessons loaded in its scopes and written as Markdown
(one file per kind, unchanged files left alone)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import TypeAdapter

from kg.memory.cognitive_format import (
    MAX_RECORDS,
    CognitiveKind,
    ExportResult,
    _document,
    cognitive_kinds,
    lesson_section,
    node_section,
)
from kg.memory.context import MemoryWorkspace
from kg.memory.files import agent_dir
from kg.memory.materialize import FileOutcome, reindex, write_if_changed
from kg.models import (
    BDINode,
    MemoryItem,
    MemoryType,
    NodeKind,
    RelationKind,
    UtcDatetime,
)

#: Node kind of each file's ``## `` sections (Plans.md: ``### `` sections are plan steps).
NODE_KINDS: dict[CognitiveKind, NodeKind] = {
    CognitiveKind.BELIEFS: NodeKind.BELIEF,
    CognitiveKind.DESIRES: NodeKind.DESIRE,
    CognitiveKind.GOALS: NodeKind.GOAL,
    CognitiveKind.INTENTIONS: NodeKind.INTENTION,
    CognitiveKind.PLANS: NodeKind.PLAN,
}


_STAMP: TypeAdapter[datetime] = TypeAdapter(UtcDatetime)


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


def _load(ws: MemoryWorkspace, agent_id: str, kinds: Sequence[CognitiveKind]) -> _State:
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


def _write(ws: MemoryWorkspace, agent_id: str, kinds: Sequence[CognitiveKind], state: _State) -> list[FileOutcome]:
    folder = agent_dir(ws.path, agent_id)
    files = []
    for kind in kinds:
        path, text = folder / kind.filename, _render(kind, state)
        records = sum(len(state.records(k)) for k in _record_kinds(kind))
        status = write_if_changed(path, text)
        files.append(FileOutcome(path=path.relative_to(ws.path).as_posix(), status=status, records=records))
    return files


def export_cognitive(ws: MemoryWorkspace, agent_id: str, kind: CognitiveKind | str = "all") -> ExportResult:
    """Write the agent's cognitive files from the store (each only if its content changed); then the agent's Markdown
    index is brought up to date."""
    agent_dir(ws.path, agent_id)  # validate the id before reading anything
    kinds = cognitive_kinds(kind)
    files = _write(ws, agent_id, kinds, _load(ws, agent_id, kinds))
    reindex(ws.path, agent_id)
    return ExportResult(agent_id=agent_id, files=files)
