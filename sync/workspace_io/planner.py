"""Comparing the records read from the OpenClaw-MABOS layout with the store (:mod:`sync.workspace_io.importer`).

:class:`Planner` decides every record of one agent's directory: refused when the agent may not write its scope or
its uid names a stored record that is not the agent's to write, else created, updated, unchanged or skipped (with
the reason), and turns the new and changed ones into replay events (:class:`sync.replay.EmbeddedTarget` writes
them); after the write, :meth:`Planner.verify` reports as refused a created case or edge the store did not take.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from kg.errors import NotFoundError
from kg.models import (
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
    kind_matches,
)
from reasoning.cbr import situation_key
from sync.workspace_io import records
from sync.workspace_io.reader import AgentRecords, Item
from sync.workspace_io.report import AgentReport, Skipped

if TYPE_CHECKING:
    from kg.workspace import Workspace

#: Fields never compared: local statistics the format carries but the import does not write.
_IGNORED = frozenset(records.NOT_CARRIED["memory"])
#: How the report names the records checked after the write.
_NAMES = {"case": "case", "relation": "edge"}


def _dump(model: Model, skip: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in model.model_dump(mode="json").items() if k not in skip}


class Planner:
    """Compares the records read with the store and turns the new and changed ones into replay events."""

    def __init__(self, ws: Workspace, now: datetime) -> None:
        self.ws, self.now = ws, now
        self.events: list[OutboxEvent] = []
        self.agent_id = ""  # the agent whose directory is being planned
        self.incoming: dict[str, str] = {}  # uid -> node kind of every record of that agent being imported
        self.refusals: dict[tuple[str, str], str | None] = {}
        self.triples: dict[tuple[str, str, str, str], str] = {}  # live facts planned: (scope, s, p, o) -> uid
        self.scopes: list[str] | None = None  # every scope a record can be in (for uid checks across agents)
        self.cases: dict[str, Case] | None = None  # every stored case by uid
        #: created cases and edges, checked after the write (the store ignores a uid it already holds)
        self.created: list[tuple[AgentReport, Item]] = []

    def event(self, aggregate: str, model: Model, payload: dict[str, Any] | None = None, op: str = "upsert") -> None:
        data = payload if payload is not None else model.model_dump(mode="json")
        self.events.append(OutboxEvent(seq=0, aggregate=aggregate, op=op, record_uid=str(data["uid"]),
                                       agent_id=str(data["agent_id"]), scope=str(data["scope"]), payload=data,
                                       created_at=self.now))  # fmt: skip

    def plan(self, agent: AgentRecords) -> None:
        """Decide every record of one agent: refused by its scope first, then created, updated, unchanged,
        skipped, or refused because its uid names a stored record the agent may not write."""
        report = agent.report
        self.agent_id = report.agent_id
        accepted = self._accepted(agent)
        self.incoming = {}
        # relations last: their ends are the records of this directory that are written or already stored
        for item in sorted(accepted, key=lambda i: i.kind == "relation"):
            status, reason = getattr(self, f"_{_group(item.kind)}")(item)
            report.count(item.kind, status)
            if status == "created" and item.kind in ("case", "relation"):
                self.created.append((report, item))
            if reason:
                rows = report.refused if status == "refused" else report.skipped
                rows.append(Skipped(kind=item.kind, uid=item.uid, where=item.where, reason=reason))
            elif item.kind != "relation":
                self.incoming[item.uid] = _graph_kind(item)

    def _accepted(self, agent: AgentRecords) -> list[Item]:
        """The records in scopes the agent may write; the others are refused (all of them when the agent's own
        record is refused and the agent does not exist yet)."""
        accepted: list[Item] = []
        orphan: str | None = None
        for item in agent.items:
            reason = orphan or self._refusal(item)
            if reason is None:
                accepted.append(item)
                continue
            if item.kind == "agent" and not self.ws.ports.agents.exists(self.agent_id):
                orphan = f"the record of agent {self.agent_id!r} was refused and the agent does not exist"
            agent.report.count(item.kind, "refused")
            agent.report.refused.append(Skipped(kind=item.kind, uid=item.uid, where=item.where, reason=reason))
        return accepted

    def _refusal(self, item: Item) -> str | None:
        scope = str(item.model.scope)  # type: ignore[attr-defined]  # every record model has one
        if item.kind == "agent" and scope != agent_scope(self.agent_id):
            return f"an agent's record is in its own scope {agent_scope(self.agent_id)!r}, not {scope!r}"
        return self._may_not_write(scope)

    def _may_not_write(self, scope: str) -> str | None:
        """Why the agent may not write ``scope`` (the check of every write), cached per agent and scope."""
        key = (self.agent_id, scope)
        if key not in self.refusals:
            self.refusals[key] = self.ws.scopes.write_refusal(self.agent_id, scope)
        return self.refusals[key]

    def _foreign(self, old: Any, kind: str) -> str | None:
        """Why a stored record with the imported record's uid is not the agent's to write (the import is refused):
        another agent's, or in a scope the agent may no longer write."""
        if old.agent_id != self.agent_id:
            return f"the uid names a {kind} of another agent ({old.agent_id}) in the workspace; kept"
        if (refusal := self._may_not_write(old.scope)) is not None:
            return f"the stored {kind} is in a scope the agent may no longer write ({refusal}); kept"
        return None

    @staticmethod
    def _same(old: Model, new: Item) -> bool:
        skip = _IGNORED | new.now_fields
        return _dump(old, skip) == _dump(new.model, skip)

    def _newer(self, old: Any, new: Item) -> str | None:
        if "updated_at" not in new.now_fields and new.model.updated_at < old.updated_at:  # type: ignore[attr-defined]
            return f"the workspace holds a newer version (updated {old.updated_at:%Y-%m-%dT%H:%M:%SZ}); kept"
        return None

    def _agent(self, item: Item) -> tuple[str, str | None]:
        new: Agent = item.model  # type: ignore[assignment]
        try:
            old = self.ws.ports.agents.get(new.agent_id)
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

    def _fact(self, item: Item) -> tuple[str, str | None]:
        new: Fact = item.model  # type: ignore[assignment]
        old = self.ws.ports.facts.get_many([new.uid]).get(new.uid)
        if old is None:
            return self._new_fact(new)
        if foreign := self._foreign(old, "fact"):
            return "refused", foreign
        if self._same(old, item):
            return "unchanged", None
        if reason := _fact_fixed(old, new) or self._newer(old, item):
            return "skipped", reason
        self.event("fact", new)
        if new.retracted_at is not None:
            payload = {"uid": new.uid, "agent_id": new.agent_id, "scope": new.scope,
                       "retracted_at": new.model_dump(mode="json")["retracted_at"],
                       "retracted_by": new.retracted_by or new.agent_id}  # fmt: skip
            self.event("fact", new, payload, op="retract")
        return "updated", None

    def _new_fact(self, new: Fact) -> tuple[str, str | None]:
        """A fact of a new uid, unless its live triple is already stored or imported under another uid."""
        if new.retracted_at is None:
            if twin := self._live_twin(new):
                return "skipped", f"the same triple is already stored as {twin}"
            planned = self.triples.setdefault((new.scope, new.subject, new.predicate, new.object), new.uid)
            if planned != new.uid:
                return "skipped", f"the same triple is imported as {planned}"
        self.event("fact", new)
        return "created", None

    def _live_twin(self, fact: Fact) -> str | None:
        def escape(text: str) -> str:
            return text.replace("\\", "\\\\").replace("*", "\\*")

        query = FactQuery(scopes=[fact.scope], subject=escape(fact.subject), predicate=escape(fact.predicate),
                          object=escape(fact.object), limit=1)  # fmt: skip
        found = self.ws.ports.facts.query(query)
        return found[0].uid if found else None

    def _memory(self, item: Item) -> tuple[str, str | None]:
        new: MemoryItem = item.model  # type: ignore[assignment]
        if new.updated_at is None:  # the store stamps a never-updated item with its creation time
            new = item.model = new.model_copy(update={"updated_at": new.created_at})
        old = self.ws.ports.memory.get_many([new.uid]).get(new.uid)
        payload = new.model_dump(mode="json")
        payload["updated_at"] = payload["updated_at"] or payload["created_at"]
        if old is None:
            self.event("memory", new, payload)
            return "created", None
        if foreign := self._foreign(old, "memory item"):
            return "refused", foreign
        if self._same(old, item):
            return "unchanged", None
        if old.content != new.content:
            return "skipped", "a stored memory item's text never changes; kept"
        if old.updated_at and new.updated_at and new.updated_at < old.updated_at:
            return "skipped", "the workspace holds a newer version; kept"
        self.event("memory", new, payload)
        return "updated", None

    def _node(self, item: Item) -> tuple[str, str | None]:
        new: BDINode = item.model  # type: ignore[assignment]
        try:
            old = self.ws.ports.bdi.get(new.uid)
        except NotFoundError:
            self.event(new.kind.value, new)
            return "created", None
        if foreign := self._foreign(old, old.kind.value):
            return "refused", foreign
        if self._same(old, item):
            return "unchanged", None
        if old.kind is not new.kind:
            return "skipped", f"the uid names a {old.kind.value} in the workspace"
        if reason := self._newer(old, item):
            return "skipped", reason
        self.event(new.kind.value, new)
        return "updated", None

    def _rule(self, item: Item) -> tuple[str, str | None]:
        new: Rule = item.model  # type: ignore[assignment]
        old = self.ws.ports.rules.get_many([new.uid]).get(new.uid)
        payload = new.model_dump(mode="json")
        if old is None:
            self.event("rule", new, {**payload, "updated_at": payload["created_at"]})
            return "created", None
        if foreign := self._foreign(old, "rule"):
            return "refused", foreign
        if self._same(old, item):
            return "unchanged", None
        self.event("rule", new, {**payload, "updated_at": self.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
        return "updated", None

    def _all_scopes(self) -> list[str]:
        """Every scope a record can be in: ``global``, each agent's own and each granted one (read once)."""
        if self.scopes is None:
            agents = [a.agent_id for a in self.ws.ports.agents.list()]
            found = {"global", *(agent_scope(a) for a in agents)}
            found.update(g.scope for a in agents for g in self.ws.ports.scopes.grants(a))
            self.scopes = sorted(found)
        return self.scopes

    def _case(self, item: Item) -> tuple[str, str | None]:
        new: Case = item.model  # type: ignore[assignment]
        if self.cases is None:  # the uid may name a case in any scope: another agent's is never touched
            self.cases = {c.uid: c for c in self.ws.ports.cases.list(scopes=sorted({*self._all_scopes(), new.scope}))}
        old = self.cases.get(new.uid)
        if old is not None:
            if foreign := self._foreign(old, "case"):
                return "refused", foreign
            return ("unchanged", None) if self._same(old, item) else ("skipped", "a stored case never changes; kept")
        key = situation_key(new.situation)
        twin = next((c.uid for c in self.cases.values() if c.scope == new.scope
                     and situation_key(c.situation) == key), None)  # fmt: skip
        if twin is not None:
            return "skipped", f"the same situation is already stored as {twin}"
        self.cases[new.uid] = new  # a second case of the same uid or situation in this import is skipped
        self.event("case", new)
        return "created", None

    def _visible_kind(self, uid: str) -> str | None:
        """The kind of a stored record the agent may see (None for one it may not: same answer as no record)."""
        info = self.ws.ports.relations.node_info(uid)
        return info[0] if info is not None and self._may_not_write(info[1]) is None else None

    def _relation(self, item: Item) -> tuple[str, str | None]:
        new: Relation = item.model  # type: ignore[assignment]
        spec = RELATION_SPECS[new.kind]
        for role, uid, allowed in (("source", new.source_uid, spec.source_kinds),
                                   ("target", new.target_uid, spec.target_kinds)):  # fmt: skip
            kind = self.incoming.get(uid) or self._visible_kind(uid)
            if kind is None:
                return "skipped", f"its {role} {uid} is neither imported nor visible to {self.agent_id}"
            if not kind_matches(kind, allowed):
                return "skipped", f"its {role} {uid} is a {kind}, not one of {', '.join(allowed)}"
        ends = (new.kind, new.source_uid, new.target_uid)
        for end in (new.source_uid, new.target_uid):  # the uid first: another agent's edge is refused, even a twin
            for old in self.ws.ports.relations.relations(end, scopes=self._all_scopes()):
                if old.uid == new.uid:
                    if foreign := self._foreign(old, "edge"):
                        return "refused", foreign
                    same = (old.kind, old.source_uid, old.target_uid, old.scope) == (*ends, new.scope)
                    return ("unchanged", None) if same else ("skipped", "the uid names another edge; kept")
        existing = self.ws.ports.relations.relations(new.source_uid, scopes=[new.scope])
        if any((r.kind, r.source_uid, r.target_uid) == ends for r in existing):
            return "unchanged", None
        self.event("relation", new)
        return "created", None

    def verify(self) -> None:
        """After the write: a created case or edge the store does not hold as written had a uid the store
        already held (in a scope or at ends this import could not see, so not the agent's to write); the report
        says refused, not created."""
        for report, item in self.created:
            model: Any = item.model
            stored = self.ws.ports
            found: list[Case] | list[Relation] = (
                stored.cases.list(scopes=[model.scope])
                if item.kind == "case"
                else stored.relations.relations(model.source_uid, scopes=[model.scope])
            )
            if not any(r.uid == model.uid and r.agent_id == model.agent_id for r in found):
                counts = report.counts[item.kind]
                counts.created -= 1
                counts.refused += 1
                reason = f"the uid names a stored {_NAMES[item.kind]} this import could not see or change; kept"
                report.refused.append(Skipped(kind=item.kind, uid=item.uid, where=item.where, reason=reason))


def _fact_fixed(old: Fact, new: Fact) -> str | None:
    """Why a stored fact cannot take the imported version: its triple or scope changed, or it is retracted."""
    if (old.subject, old.predicate, old.object, old.scope) != (new.subject, new.predicate, new.object, new.scope):
        return "a stored fact's triple and scope never change; kept"
    if old.retracted_at is not None:
        return "the fact is retracted in the workspace (retraction is final); kept"
    return None


def _group(kind: str) -> str:
    return "node" if kind in {k.value for k in NodeKind} else kind


def _graph_kind(item: Item) -> str:
    if isinstance(item.model, MemoryItem):
        return f"memory:{item.model.type.value}"
    return item.kind


__all__ = ["Planner"]
