"""Import the OpenClaw-MABOS layout (``agents/<id>/...``) into a workspace.

Three passes: every file of every chosen agent is read and every record validated (a bad one raises
:class:`~kg.errors.InputError` naming the file, the record and the field, and nothing is written); each
record is compared with the store (created, updated, unchanged, or skipped with a reason); then everything
is written in one transaction.

Records keep their uids, timestamps, confidences and lineage, so they are written the way the outbox replay
writes them (:class:`sync.replay.EmbeddedTarget`): as upserts keyed by uid that never replace a newer state,
each appended to the workspace's outbox for the next ``mabos sync push``. The services would mint new uids
and stamp the time of import instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import InputError, NotFoundError
from kg.models import (
    NODE_MODELS,
    RELATION_SPECS,
    Agent,
    BDINode,
    Case,
    Fact,
    FactQuery,
    MemoryItem,
    Model,
    NodeKind,
    OutboxEvent,
    Relation,
    Rule,
    agent_scope,
    describe_validation_error,
    kind_matches,
)
from reasoning.cbr import situation_key
from reasoning.rules import check_rule
from sync.replay import EmbeddedTarget
from sync.workspace_io import markdown, records
from sync.workspace_io.report import AgentReport, Progress, Skipped, WorkspaceReport

if TYPE_CHECKING:
    from kg.workspace import Workspace

from pydantic import ValidationError

#: Fields never compared: local statistics the format carries but the import does not write.
_IGNORED = frozenset(records.NOT_CARRIED["memory"])


@dataclass
class _Item:
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
class _Agent:
    report: AgentReport
    items: list[_Item] = field(default_factory=list)


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
    try:
        return json.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        raise InputError(rel, "is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(rel, f"is not valid JSON: {exc.msg} at line {exc.lineno}") from None


class _Reader:
    """Reads and validates one agent's directory."""

    def __init__(self, root: Path, agent_id: str, now: datetime) -> None:
        self.root, self.agent_id, self.now = root, agent_id, now
        self.base = f"agents/{agent_id}/"
        self.out = _Agent(report=AgentReport(agent_id=agent_id))

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
        self.out.items.append(_Item(kind, value, where, filled))
        return value

    def read(self) -> _Agent:
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
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise InputError(rel, "is not UTF-8 text") from None
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


# ------------------------------------------------------------------------------------ comparing


def _dump(model: Model, skip: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in model.model_dump(mode="json").items() if k not in skip}


class _Planner:
    """Compares the records read with the store and turns the new and changed ones into replay events."""

    def __init__(self, ws: Workspace, now: datetime) -> None:
        self.ws, self.now = ws, now
        self.events: list[OutboxEvent] = []
        self.incoming: dict[str, str] = {}  # uid -> node kind of every record being imported

    def event(self, aggregate: str, model: Model, payload: dict[str, Any] | None = None, op: str = "upsert") -> None:
        data = payload if payload is not None else model.model_dump(mode="json")
        self.events.append(OutboxEvent(seq=0, aggregate=aggregate, op=op, record_uid=str(data["uid"]),
                                       agent_id=str(data["agent_id"]), scope=str(data["scope"]), payload=data,
                                       created_at=self.now))  # fmt: skip

    def plan(self, agent: _Agent) -> None:
        for item in agent.items:
            self.incoming[item.uid] = _graph_kind(item)
        for item in agent.items:
            status, reason = getattr(self, f"_{_group(item.kind)}")(item)
            agent.report.count(item.kind, status)
            if reason:
                agent.report.skipped.append(Skipped(kind=item.kind, uid=item.uid, where=item.where, reason=reason))

    @staticmethod
    def _same(old: Model, new: _Item) -> bool:
        skip = _IGNORED | new.now_fields
        return _dump(old, skip) == _dump(new.model, skip)

    def _newer(self, old: Any, new: _Item) -> str | None:
        if "updated_at" not in new.now_fields and new.model.updated_at < old.updated_at:  # type: ignore[attr-defined]
            return f"the workspace holds a newer version (updated {old.updated_at:%Y-%m-%dT%H:%M:%SZ}); kept"
        return None

    def _agent(self, item: _Item) -> tuple[str, str | None]:
        new: Agent = item.model  # type: ignore[assignment]
        try:
            old = self.ws.store.agents.get(new.agent_id)
        except NotFoundError:
            self.event("agent", new)
            return "created", None
        if item.where.endswith("/"):  # no agent file: only the id is carried, and the agent exists
            return "unchanged", None
        if old.uid != new.uid or self._same(old, item):
            same = _dump(old, frozenset({"uid", "created_at", "updated_at"})) == _dump(
                new, frozenset({"uid", "created_at", "updated_at"})
            )
            return ("unchanged", None) if same else ("skipped", "the agent exists with another profile; kept")
        if reason := self._newer(old, item):
            return "skipped", reason
        self.event("agent", new)
        return "updated", None

    def _fact(self, item: _Item) -> tuple[str, str | None]:
        new: Fact = item.model  # type: ignore[assignment]
        old = self.ws.store.facts.get_many([new.uid]).get(new.uid)
        if old is None:
            twin = self._live_twin(new)
            if twin is not None and new.retracted_at is None:
                return "skipped", f"the same triple is already stored as {twin}"
            self.event("fact", new)
            return "created", None
        if self._same(old, item):
            return "unchanged", None
        reason = self._newer(old, item)
        if (old.subject, old.predicate, old.object, old.scope) != (new.subject, new.predicate, new.object, new.scope):
            reason = "a stored fact's triple and scope never change; kept"
        elif old.retracted_at is not None:
            reason = "the fact is retracted in the workspace (retraction is final); kept"
        if reason:
            return "skipped", reason
        self.event("fact", new)
        if new.retracted_at is not None:
            payload = {"uid": new.uid, "agent_id": new.agent_id, "scope": new.scope,
                       "retracted_at": new.model_dump(mode="json")["retracted_at"],
                       "retracted_by": new.retracted_by or new.agent_id}  # fmt: skip
            self.event("fact", new, payload, op="retract")
        return "updated", None

    def _live_twin(self, fact: Fact) -> str | None:
        def escape(text: str) -> str:
            return text.replace("\\", "\\\\").replace("*", "\\*")

        query = FactQuery(scopes=[fact.scope], subject=escape(fact.subject), predicate=escape(fact.predicate),
                          object=escape(fact.object), limit=1)  # fmt: skip
        found = self.ws.store.facts.query(query)
        return found[0].uid if found else None

    def _memory(self, item: _Item) -> tuple[str, str | None]:
        new: MemoryItem = item.model  # type: ignore[assignment]
        if new.updated_at is None:  # the store stamps a never-updated item with its creation time
            new = item.model = new.model_copy(update={"updated_at": new.created_at})
        old = self.ws.store.memory.get_many([new.uid]).get(new.uid)
        payload = new.model_dump(mode="json")
        payload["updated_at"] = payload["updated_at"] or payload["created_at"]
        if old is None:
            self.event("memory", new, payload)
            return "created", None
        if self._same(old, item):
            return "unchanged", None
        if old.content != new.content:
            return "skipped", "a stored memory item's text never changes; kept"
        if old.updated_at and new.updated_at and new.updated_at < old.updated_at:
            return "skipped", "the workspace holds a newer version; kept"
        self.event("memory", new, payload)
        return "updated", None

    def _node(self, item: _Item) -> tuple[str, str | None]:
        new: BDINode = item.model  # type: ignore[assignment]
        try:
            old = self.ws.store.bdi.get(new.uid)
        except NotFoundError:
            self.event(new.kind.value, new)
            return "created", None
        if self._same(old, item):
            return "unchanged", None
        if old.kind is not new.kind or old.agent_id != new.agent_id:
            return "skipped", f"the uid names a {old.kind.value} of {old.agent_id} in the workspace"
        if reason := self._newer(old, item):
            return "skipped", reason
        self.event(new.kind.value, new)
        return "updated", None

    def _rule(self, item: _Item) -> tuple[str, str | None]:
        new: Rule = item.model  # type: ignore[assignment]
        old = self.ws.store.rules.get_many([new.uid]).get(new.uid)
        payload = new.model_dump(mode="json")
        if old is None:
            self.event("rule", new, {**payload, "updated_at": payload["created_at"]})
            return "created", None
        if self._same(old, item):
            return "unchanged", None
        self.event("rule", new, {**payload, "updated_at": self.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
        return "updated", None

    def _case(self, item: _Item) -> tuple[str, str | None]:
        new: Case = item.model  # type: ignore[assignment]
        stored = self.ws.store.cases.list(scopes=[new.scope])
        old = next((c for c in stored if c.uid == new.uid), None)
        if old is not None:
            return ("unchanged", None) if self._same(old, item) else ("skipped", "a stored case never changes; kept")
        key = situation_key(new.situation)
        twin = next((c.uid for c in stored if situation_key(c.situation) == key), None)
        if twin is not None:
            return "skipped", f"the same situation is already stored as {twin}"
        self.event("case", new)
        return "created", None

    def _relation(self, item: _Item) -> tuple[str, str | None]:
        new: Relation = item.model  # type: ignore[assignment]
        spec = RELATION_SPECS[new.kind]
        for role, uid, allowed in (("source", new.source_uid, spec.source_kinds),
                                   ("target", new.target_uid, spec.target_kinds)):  # fmt: skip
            info = self.ws.store.relations.node_info(uid)
            kind = self.incoming.get(uid) or (info[0] if info else None)
            if kind is None:
                return "skipped", f"its {role} {uid} is neither imported nor in the workspace"
            if not kind_matches(kind, allowed):
                return "skipped", f"its {role} {uid} is a {kind}, not one of {', '.join(allowed)}"
        existing = self.ws.store.relations.relations(new.source_uid, scopes=[new.scope])
        if any((r.kind, r.source_uid, r.target_uid) == (new.kind, new.source_uid, new.target_uid) for r in existing):
            return "unchanged", None
        self.event("relation", new)
        return "created", None


def _group(kind: str) -> str:
    return "node" if kind in {k.value for k in NodeKind} else kind


def _graph_kind(item: _Item) -> str:
    if isinstance(item.model, MemoryItem):
        return f"memory:{item.model.type.value}"
    return item.kind


# ------------------------------------------------------------------------------------ entry point


def _agent_ids(root: Path, agents: Sequence[str] | None, report: WorkspaceReport) -> list[str]:
    folder = root / "agents"
    if not folder.is_dir():
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


def import_workspace(ws: Workspace, path: Path | str, *, agents: Sequence[str] | None = None,
                     dry_run: bool = False, progress: Progress | None = None) -> WorkspaceReport:  # fmt: skip
    """Read the OpenClaw-MABOS layout at ``path`` into the workspace.

    Args:
        ws: the open workspace.
        path: the directory holding ``agents/<id>/``.
        agents: agent ids to import (default: every agent directory).
        dry_run: compare and report, write nothing.
        progress: called as ``progress(stage, done, total)`` for the stages ``read`` and ``check``.

    Returns:
        Counts per agent and record kind (created, updated, unchanged, skipped) and the skipped records.

    Raises:
        InputError: a file or record is malformed (nothing is written); the message names the file, the
            record and the field.
        NotFoundError: an agent named in ``agents`` has no directory.
    """
    root = Path(path)
    report = WorkspaceReport(direction="import", path=str(root), dry_run=dry_run)
    chosen = _agent_ids(root, agents, report)
    now = ws.clock.now()
    read: list[_Agent] = []
    for done, agent_id in enumerate(chosen, start=1):
        read.append(_Reader(root, agent_id, now).read())
        if progress is not None:
            progress("read", done, len(chosen))
    planner = _Planner(ws, now)
    for done, agent in enumerate(read, start=1):
        planner.plan(agent)
        report.agents.append(agent.report)
        if progress is not None:
            progress("check", done, len(read))
    if planner.events and not dry_run:
        EmbeddedTarget(ws.store).apply(planner.events)
    return report
