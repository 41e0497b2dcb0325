"""The graph an agent can see, as nodes and edges for drawing (``/graph``, ``/api/graph``, ``mabos graph render``).

Nodes: the agent's visible BDI nodes (belief, desire, goal, intention, plan, plan_step), the entities and literals
of its visible facts (``entity``, ``literal``) and, when asked, its memory items (``memory``). Edges: the typed BDI
relations between drawn nodes and one edge per fact (labelled with its predicate). Everything comes through the
agent's scopes (the fact tool, ``ws.bdi``, ``ws.memory``), so a view never holds another agent's private record.

A view is capped (never 100k nodes in a browser): at most ``limit`` facts and ``limit`` BDI nodes are drawn, and
the result says how many there were (``total``) so the page can say "showing N of M".
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, Field

from cli.tools.facts import FactList
from cli.ui.context import Console
from kg.errors import InputError, NotFoundError
from kg.models import BDINode, Fact, MemoryItem, NodeKind
from kg.models.base import new_list

BDI_KINDS = tuple(k.value for k in NodeKind)
FACT_KINDS = ("entity", "literal")
KINDS = (*BDI_KINDS, *FACT_KINDS, "memory")
DEFAULT_KINDS = (*BDI_KINDS, *FACT_KINDS)
DEFAULT_LIMIT = 150
MAX_LIMIT = 2000
#: The facts one count reads at most (the "of M" of a capped view says "more than" beyond it).
COUNT_CEILING = 100_000


class GraphNode(BaseModel):
    """One drawn node: ``id`` is the record uid (BDI, memory) or ``entity:<name>`` / ``literal:<value>``."""

    id: str
    kind: str
    label: str
    scope: str | None = None
    owner: str | None = None


class GraphEdge(BaseModel):
    """One drawn edge: a BDI relation (``kind`` is its type) or a fact (``kind`` ``fact``, label its predicate)."""

    id: str
    source: str
    target: str
    kind: str
    label: str
    scope: str | None = None


class GraphView(BaseModel):
    """What ``/api/graph`` returns."""

    agent_id: str
    nodes: list[GraphNode] = Field(default_factory=new_list)
    edges: list[GraphEdge] = Field(default_factory=new_list)
    kinds: list[str]
    scope: str | None = None
    limit: int
    shown: dict[str, int] = Field(default_factory=dict, description="facts, bdi and memory records drawn")
    total: dict[str, int] = Field(default_factory=dict, description="how many there are (capped views)")
    capped: bool = False


def entity_id(name: str) -> str:
    """The node id of an entity."""
    return f"entity:{name}"


def _short(text: str, width: int = 48) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def parse_kinds(raw: str | None) -> list[str]:
    """``belief,goal,entity`` -> the kinds; empty -> the default kinds; an unknown kind is an InputError."""
    if raw is None or not raw.strip():
        return list(DEFAULT_KINDS)
    kinds = [k.strip() for k in raw.split(",") if k.strip()]
    for kind in kinds:
        if kind not in KINDS:
            raise InputError("types", f"unknown node type {kind[:40]!r}; known: {', '.join(KINDS)}")
    return kinds


def page_data(console: Console, agent: str, params: Mapping[str, str]) -> dict[str, Any]:
    """The graph page itself (the drawing comes from ``/api/graph``): its filters, checked here so a bad one is
    reported in the page."""
    kinds = parse_kinds(params.get("types"))
    limit = params.get("limit", "").strip()
    if limit and not (limit.isdigit() and 1 <= int(limit) <= MAX_LIMIT):
        raise InputError("limit", f"must be a whole number between 1 and {MAX_LIMIT}")
    return {"agent_id": agent, "kinds": KINDS, "types": kinds}


def bdi_node(node: BDINode) -> GraphNode:
    """A BDI record as a node."""
    return GraphNode(id=node.uid, kind=node.kind.value, label=_short(node.content), scope=node.scope,
                     owner=node.agent_id)  # fmt: skip


def fact_nodes_edge(fact: Fact) -> tuple[list[GraphNode], GraphEdge]:
    """The subject and object nodes of a fact and the edge between them."""
    subject = GraphNode(id=entity_id(fact.subject), kind="entity", label=_short(fact.subject))
    if fact.object_kind.value == "entity":
        obj = GraphNode(id=entity_id(fact.object), kind="entity", label=_short(fact.object))
    else:
        obj = GraphNode(id=f"literal:{fact.object}", kind="literal", label=_short(fact.object, 32))
    edge = GraphEdge(id=fact.uid, source=subject.id, target=obj.id, kind="fact", label=fact.predicate,
                     scope=fact.scope)  # fmt: skip
    return [subject, obj], edge


def memory_node(item: MemoryItem) -> GraphNode:
    """A memory item as a node."""
    return GraphNode(id=item.uid, kind="memory", label=_short(item.content), scope=item.scope, owner=item.agent_id)


class _Builder:
    """Collects nodes (once each) and edges."""

    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}
        self.edges: dict[str, GraphEdge] = {}

    def add_node(self, node: GraphNode) -> None:
        self.nodes.setdefault(node.id, node)

    def add_fact(self, fact: Fact) -> None:
        ends, edge = fact_nodes_edge(fact)
        for node in ends:
            self.add_node(node)
        self.edges[edge.id] = edge


def build_view(console: Console, agent: str, *, kinds: list[str], scope: str | None, limit: int) -> GraphView:
    """The agent's graph, capped at ``limit`` facts, BDI nodes and memory items (cached until the store changes)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"must be between 1 and {MAX_LIMIT}")
    key = ("graph", agent, tuple(kinds), scope, limit)
    return console.cached(key, lambda: _build(console, agent, kinds=kinds, scope=scope, limit=limit))


def _build(console: Console, agent: str, *, kinds: list[str], scope: str | None, limit: int) -> GraphView:
    ws = console.ws
    view = GraphView(agent_id=agent, kinds=kinds, scope=scope, limit=limit)
    built = _Builder()
    wanted_bdi = [k for k in kinds if k in BDI_KINDS]
    if wanted_bdi:
        nodes = [n for kind in wanted_bdi for n in ws.bdi.list(agent, kind, scope=scope, limit=limit + 1)]
        view.total["bdi"] = len(nodes)
        nodes = sorted(nodes, key=lambda n: (n.created_at, n.uid))[:limit]
        for node in nodes:
            built.add_node(bdi_node(node))
        for node in nodes:
            for relation in ws.bdi.relations(agent, node.uid):
                if relation.source_uid in built.nodes and relation.target_uid in built.nodes:
                    built.edges[relation.uid] = GraphEdge(
                        id=relation.uid, source=relation.source_uid, target=relation.target_uid,
                        kind=relation.kind.value, label=relation.kind.value, scope=relation.scope,
                    )  # fmt: skip
        view.shown["bdi"] = len(nodes)
    if "entity" in kinds or "literal" in kinds:
        facts = _facts(console, agent, scope=scope, limit=limit)
        for fact in facts:
            if "literal" in kinds or fact.object_kind.value == "entity":
                built.add_fact(fact)
        view.shown["facts"] = len(facts)
        view.total["facts"] = fact_total(console, agent, scope) if len(facts) >= limit else len(facts)
    if "memory" in kinds:
        items = ws.memory.list_items(agent, include_archived=False, limit=limit + 1, scope=scope)
        view.total["memory"] = len(items)
        for item in items[:limit]:
            built.add_node(memory_node(item))
        view.shown["memory"] = min(len(items), limit)
    view.nodes = list(built.nodes.values())
    view.edges = list(built.edges.values())
    view.capped = any(view.total.get(k, 0) > view.shown.get(k, 0) for k in view.total)
    return view


def _facts(console: Console, agent: str, *, scope: str | None, limit: int) -> list[Fact]:
    arguments: dict[str, Any] = {"limit": limit, "scope": scope}
    return cast(FactList, console.call("fact_query", agent, arguments)).facts


def fact_total(console: Console, agent: str, scope: str | None) -> int:
    """How many live facts the agent can see (in ``scope``), counted once per store state."""
    return fact_stats(console, agent, scope)[0]


def fact_stats(console: Console, agent: str, scope: str | None, recent: int = 12) -> tuple[int, list[str]]:
    """How many live facts the agent can see (in ``scope``) and the uids of the newest ``recent``, newest first;
    read as light tuples once per store state."""

    def count() -> tuple[int, list[str]]:
        scopes = console.ws.scopes.narrow(agent, scope)
        last: deque[str] = deque(maxlen=recent)
        total = 0
        for row in console.ws.ports.facts.live_triples(scopes=scopes, valid_at=console.ws.clock.now()):
            total += 1
            last.append(row.uid)
        return total, list(reversed(last))

    return console.cached(("fact-stats", agent, scope, recent), count)


class NodeDetail(BaseModel):
    """A node's record, its history (for entities: every fact about it, retracted ones too, oldest first) and its
    neighbours (nodes and edges to add to the drawing)."""

    node: GraphNode
    record: dict[str, Any] = Field(default_factory=dict)
    history: list[dict[str, Any]] = Field(default_factory=new_list)
    nodes: list[GraphNode] = Field(default_factory=new_list)
    edges: list[GraphEdge] = Field(default_factory=new_list)


def node_detail(console: Console, agent: str, node_id: str, *, limit: int = DEFAULT_LIMIT) -> NodeDetail:
    """What clicking a node shows, and its neighbours for "expand"; a node the agent cannot see is not found."""
    if node_id.startswith(("entity:", "literal:")):
        return _entity_detail(console, agent, node_id, limit)
    ws = console.ws
    built = _Builder()
    if node_id.startswith("M-"):
        item = ws.memory.get(agent, node_id)
        node = memory_node(item)
        for parent in item.derived_from:
            try:
                built.add_node(memory_node(ws.memory.get(agent, parent)))
            except NotFoundError:
                continue
            built.edges[f"{node_id}>{parent}"] = GraphEdge(id=f"{node_id}>{parent}", source=node_id, target=parent,
                                                           kind="derived-from", label="derived-from")  # fmt: skip
        return NodeDetail(node=node, record=item.model_dump(mode="json"), nodes=list(built.nodes.values()),
                          edges=list(built.edges.values()))  # fmt: skip
    record = ws.bdi.get(agent, node_id)
    node = bdi_node(record)
    history = [{"at": record.created_at.isoformat(), "what": "created"}]
    if record.updated_at != record.created_at:
        history.append({"at": record.updated_at.isoformat(), "what": "last updated"})
    for relation in ws.bdi.relations(agent, node_id)[:limit]:
        other = relation.target_uid if relation.source_uid == node_id else relation.source_uid
        try:
            built.add_node(bdi_node(ws.bdi.get(agent, other)))
        except NotFoundError:
            continue
        built.edges[relation.uid] = GraphEdge(id=relation.uid, source=relation.source_uid, target=relation.target_uid,
                                              kind=relation.kind.value, label=relation.kind.value,
                                              scope=relation.scope)  # fmt: skip
        history.append({"at": relation.created_at.isoformat(), "what": f"{relation.kind.value} {other}"})
    history.sort(key=lambda h: str(h["at"]))
    return NodeDetail(node=node, record=record.model_dump(mode="json"), history=history,
                      nodes=list(built.nodes.values()), edges=list(built.edges.values()))  # fmt: skip


def _entity_detail(console: Console, agent: str, node_id: str, limit: int) -> NodeDetail:
    kind, _, name = node_id.partition(":")
    if not name:
        raise InputError("id", "give a node id such as entity:acme")
    escaped = name.replace("\\", "\\\\").replace("*", "\\*")
    built = _Builder()
    live: list[Fact] = []
    fields = ("subject", "object") if kind == "entity" else ("object",)
    for role in fields:
        found = cast(FactList, console.call("fact_query", agent, {role: escaped, "limit": limit})).facts
        live += [f for f in found if role == "subject" or f.object_kind.value == kind]
    history_facts = cast(
        FactList, console.call("fact_query", agent, {"subject": escaped, "limit": limit, "include_retracted": True})
    ).facts
    if not live and not history_facts:
        raise NotFoundError(f"id: no node {node_id!r} visible to {agent!r}")
    for fact in live:
        built.add_fact(fact)
    node = built.nodes.get(node_id) or GraphNode(id=node_id, kind=kind, label=_short(name))
    history = sorted((_fact_event(f) for f in history_facts), key=lambda h: str(h["at"]))
    record = {"name": name, "kind": kind, "facts": [f.model_dump(mode="json") for f in live]}
    return NodeDetail(node=node, record=record, history=history, nodes=list(built.nodes.values()),
                      edges=list(built.edges.values()))  # fmt: skip


def _fact_event(fact: Fact) -> dict[str, Any]:
    state = "retracted" if fact.retracted_at else "live"
    return {"at": fact.created_at.isoformat(), "uid": fact.uid, "what": f"{fact.predicate} {fact.object}",
            "state": state, "retracted_at": fact.retracted_at.isoformat() if fact.retracted_at else None,
            "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
            "valid_until": fact.valid_until.isoformat() if fact.valid_until else None}  # fmt: skip


__all__ = [
    "DEFAULT_KINDS",
    "DEFAULT_LIMIT",
    "KINDS",
    "MAX_LIMIT",
    "GraphEdge",
    "GraphNode",
    "GraphView",
    "NodeDetail",
    "build_view",
    "node_detail",
    "parse_kinds",
]
