"""Human renderings of mabos records: rich tables, trees and one-line summaries.

User text is always wrapped in :class:`rich.text.Text`, never parsed as markup.

Every rendering is made when it is first used (:class:`Deferred`): a command builds its human output before
:meth:`cli.common.Session.emit` knows whether it is wanted, and ``--json`` prints none of it, so JSON output never
imports rich (tests/unit/test_startup_imports.py). What a command gets stands in for the rich object: rich prints
it (``__rich__``) and a command may change it (``text.append(...)``), which makes it at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

from kg.models import format_ts

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text
    from rich.tree import Tree

    from kg.facts import Explanation
    from kg.models import Agent, BDINode, Fact, Grant, GraphPath, Relation

NODE_COLUMNS = ("certainty", "priority", "urgency", "progress", "hierarchy_level", "sequence", "deadline")

P = ParamSpec("P")
R = TypeVar("R")


class Deferred(Generic[R]):
    """A rich renderable made on first use: when rich prints it (``__rich__``) or an attribute is read
    (``text.append``, ``table.caption``), which is then the made object's."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], R]) -> None:
        self._make: Callable[[], R] | None = make
        self._made: R | None = None

    @property
    def made(self) -> R:
        """The rich object, made now if it was not yet."""
        if self._make is not None:
            self._made, self._make = self._make(), None
        return cast(R, self._made)

    def __rich__(self) -> R:
        """What rich prints (rich's cast protocol)."""
        return self.made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made, name)

    def __str__(self) -> str:
        return str(self.made)


class DeferredText(Deferred["Text"]):
    """A deferred :class:`rich.text.Text` whose ``append`` waits too: ``fact import --json`` appends to its summary
    line, which it never prints."""

    __slots__ = ()

    def append(self, text: Any, style: Any = None) -> DeferredText:
        """``Text.append(text, style)``, done when the text is made (now if it was)."""
        make = self._make
        if make is None:
            self.made.append(text, style)
        else:
            self._make = lambda: make().append(text, style)
        return self


def deferred(make: Callable[P, R]) -> Callable[P, R]:
    """``make`` returning a :class:`Deferred` of its result: it stands in for the rich object (see the module)."""

    @functools.wraps(make)
    def later(*args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, Deferred(functools.partial(make, *args, **kwargs)))

    return later


def deferred_text(make: Callable[P, Text]) -> Callable[P, Text]:
    """:func:`deferred` for a :class:`rich.text.Text`: a :class:`DeferredText`."""

    @functools.wraps(make)
    def later(*args: P.args, **kwargs: P.kwargs) -> Text:
        return cast("Text", DeferredText(functools.partial(make, *args, **kwargs)))

    return later


def _text(text: str = "", style: str = "") -> Text:
    from rich.text import Text  # noqa: PLC0415 - human output only

    return Text(text, style=style)


def cell(value: Any) -> Text:
    """A table cell: ``-`` for missing values, timestamps in ISO-8601, enums by value."""
    if value is None or value == "":
        return _text("-", style="dim")
    if hasattr(value, "isoformat"):
        return _text(format_ts(value))
    return _text(str(getattr(value, "value", value)))


def _table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
    from rich import box  # noqa: PLC0415 - human output only
    from rich.table import Table  # noqa: PLC0415

    result = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                   header_style="bold")  # fmt: skip
    for i, name in enumerate(columns):
        result.add_column(name, no_wrap=i == 0)
    for row in rows:
        result.add_row(*(cell(value) for value in row))
    return result


@deferred
def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
    """A table whose ``uid``-like first column never wraps."""
    return _table(title, columns, rows)


@deferred_text
def note(text: str) -> Text:
    """A dim remark (counts, hints)."""
    return _text(text, style="dim")


@deferred_text
def done(text: str) -> Text:
    """A success line."""
    return _text(text, style="green")


@deferred_text
def count(items: Sequence[Any], noun: str, limit: int | None = None) -> Text:
    """``3 facts`` (and a hint when a limit cut the list)."""
    text = f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"
    if limit is not None and len(items) >= limit:
        text += f" (limit {limit} reached; raise --limit to see more)"
    return _text(text, style="dim")


def _key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> Table:
    from rich.table import Table  # noqa: PLC0415 - human output only

    result = Table(title=title, title_justify="left", show_header=False, show_edge=False, box=None)
    result.add_column(style="bold")
    result.add_column()
    for key, value in pairs:
        result.add_row(_text(key), cell(value))
    return result


@deferred
def key_values(title: str, pairs: Iterable[tuple[str, Any]]) -> Table:
    """A two-column key/value table."""
    return _key_values(title, pairs)


# ------------------------------------------------------------------------------------- agents


@deferred
def agents_table(agents: Sequence[Agent]) -> Table:
    """Agents, one per row."""
    rows = [(a.agent_id, a.name, a.role, a.department, a.commitment_strategy) for a in agents]
    return _table("Agents", ("agent", "name", "role", "department", "commitment"), rows)


@deferred
def agent_detail(agent: Agent) -> Table:
    """Every field of one agent."""
    fields = ("agent_id", "name", "role", "department", "commitment_strategy", "scope", "uid", "created_at")
    return _key_values(f"Agent {agent.agent_id}", ((f, getattr(agent, f)) for f in fields))


# ------------------------------------------------------------------------------------- facts


def fact_text(fact: Fact) -> str:
    """``acme hasRevenue "$50000"`` (literal objects quoted)."""
    obj = fact.object if fact.object_kind.value == "entity" else f'"{fact.object}"'
    return f"{fact.subject} {fact.predicate} {obj}"


@deferred
def facts_table(facts: Sequence[Fact]) -> Table:
    """Facts, one per row."""
    rows = [(f.uid, f.subject, f.predicate, f.object, f"{f.confidence:g}", f.source, f.scope, fact_state(f))
            for f in facts]  # fmt: skip
    return _table("Facts", ("uid", "subject", "predicate", "object", "conf", "source", "scope", "state"), rows)


def fact_state(fact: Fact) -> str:
    """``asserted`` or ``derived``, with ``, retracted`` when it no longer holds."""
    state = "derived" if fact.derived else "asserted"
    return f"{state}, retracted" if fact.retracted_at else state


def _explanation_label(node: Explanation) -> Text:
    if not node.visible:
        return _text(f"{node.uid} (not visible to this agent)", style="dim")
    label = _text(node.uid, style="bold")
    if node.fact is not None:
        details = [f"confidence {node.fact.confidence:g}", f"source {node.fact.source}"]
        if node.rule_name:
            details.append(f"rule {node.rule_name} {node.rule_id}, confidence factor {node.confidence_factor:g}")
        elif node.rule_id:
            details.append(f"rule {node.rule_id}")
        if node.fact.retracted_at:
            details.append(f"retracted {format_ts(node.fact.retracted_at)}")
        label.append(f"  {fact_text(node.fact)}  ({', '.join(details)})", style="")
    if node.cycle:
        label.append("  (cycle: already on this branch)", style="yellow")
    if node.truncated:
        label.append("  (more supports below; raise --depth)", style="dim")
    return label


@deferred
def explanation_tree(root: Explanation) -> Tree:
    """Why a fact holds, as an indented tree of its supports."""
    from rich.tree import Tree  # noqa: PLC0415 - human output only

    tree = Tree(_explanation_label(root), guide_style="dim")
    pending = [(tree, root)]
    while pending:
        branch, node = pending.pop()
        for support in node.supports:
            pending.append((branch.add(_explanation_label(support)), support))
    return tree


# ------------------------------------------------------------------------------------- BDI graph


@deferred
def nodes_table(title: str, nodes: Sequence[BDINode]) -> Table:
    """Nodes, one per row, with the optional columns some node has a value for."""
    extra = [c for c in NODE_COLUMNS if any(getattr(n, c) is not None for n in nodes)]
    rows = [(n.uid, n.content, n.status, *(getattr(n, c) for c in extra), n.scope) for n in nodes]
    headers = ("uid", "content", "status", *(c.replace("hierarchy_level", "level") for c in extra), "scope")
    return _table(title, headers, rows)


@deferred_text
def node_line(verb: str, node: BDINode) -> Text:
    """``Created goal G-... "Grow revenue" (strategic, priority 8)``."""
    details = [f"{c.replace('hierarchy_level', 'level')} {cell(getattr(node, c))}" for c in NODE_COLUMNS
               if getattr(node, c) is not None]  # fmt: skip
    kind = node.kind.value.replace("plan_step", "step")
    text = _text(f"{verb} {kind} {node.uid}", style="green")
    text.append(f' "{node.content}" [{node.status}{", " if details else ""}{", ".join(details)}]', style="")
    return text


@deferred
def relations_table(relations: Sequence[Relation]) -> Table:
    """Edges, one per row."""
    rows = [(r.uid, r.source_uid, r.kind, r.target_uid, r.scope) for r in relations]
    return _table("Relations", ("uid", "source", "relation", "target", "scope"), rows)


@deferred_text
def path_text(path: GraphPath) -> Text:
    """``label (kind) -[rel]-> label (kind) ...``."""
    text = _text(f"{path.labels[0]} ({path.kinds[0]})")
    for relation, label, kind in zip(path.relations, path.labels[1:], path.kinds[1:], strict=True):
        text.append(f" -[{relation}]-> ", style="cyan")
        text.append(f"{label} ({kind})")
    return text


# ------------------------------------------------------------------------------------- scopes, status


@deferred
def grants_table(agent_id: str, grants: Sequence[Grant]) -> Table:
    """Grants held by one agent."""
    rows = [(g.scope, g.granted_by, g.created_at) for g in grants]
    return _table(f"Grants of {agent_id}", ("scope", "granted by", "granted at"), rows)


@deferred
def status_table(status: dict[str, Any]) -> Table:
    """Counts of a workspace."""
    store = status["store"]
    facts, bdi, outbox = store["facts"], store["bdi"], store["outbox"]
    pairs = [
        ("workspace", status["workspace"]),
        ("name", status["name"]),
        ("store", f"{store['backend']} (schema {store['schema_version']}, {store['size_bytes']} bytes)"),
        ("agents", store["agents"]),
        ("grants", store["grants"]),
        ("facts", f"{facts['live']} live, {facts['retracted']} retracted, {facts['derived']} derived"),
        ("bdi nodes", ", ".join(f"{n} {k.replace('plan_step', 'step')}" for k, n in bdi.items())),
        ("relations", store["relations"]),
        ("memory items", store["memory_items"]),
        ("outbox", f"{outbox['pending']} pending, {outbox['acked']} acked"),
    ]
    return _key_values("Workspace status", pairs)


@deferred
def ladder_table(found: Any) -> Table:
    """The degradation ladder (:class:`sync.ladder.Ladder`): one row a part."""
    parts = [("typedb", found.typedb), ("store", found.store), ("vector index", found.vector_index),
             ("files", found.files)]  # fmt: skip
    rows = [(name, part.rung, part.reason, part.serves) for name, part in parts]
    result = _table("Degradation ladder", ["part", "rung", "why", "what answers"], rows)
    result.caption = f"recall answers from: {found.recall}"
    return result


# ------------------------------------------------------------------------------------- graph queries


def _goals_behind(items: Sequence[Any]) -> Table:
    rows = [(g.uid, g.agent_id, g.content, g.status, f"{g.progress:g}", f"{g.expected_progress:g}", f"{g.gap:g}",
             g.deadline, "yes" if g.overdue else "") for g in items]  # fmt: skip
    headers = ("uid", "agent", "goal", "status", "progress", "expected", "gap", "deadline", "overdue")
    return _table("Goals behind schedule", headers, rows)


def _query_path(path: Any) -> Text:
    text = _text(f"{path.nodes[0].content} ({path.nodes[0].kind}, {path.nodes[0].agent_id})")
    for relation, node in zip(path.relations, path.nodes[1:], strict=True):
        text.append(f" -[{relation}]-> ", style="cyan")
        text.append(f"{node.content} ({node.kind})")
    return text


def _belief_conflicts(items: Sequence[Any]) -> Table:
    rows = [(c.subject, c.pairs, b.uid, b.agent_id, b.content, b.certainty,
             ", ".join(g.uid for g in c.goals if b.uid in g.supported_by))
            for c in items for b in c.beliefs]  # fmt: skip
    return _table("Belief conflicts", ("subject", "pairs", "belief", "agent", "content", "certainty", "goals"), rows)


def _lineage(items: Sequence[Any]) -> Table:
    rows = [(n.uid, n.relation, n.depth, n.kind, n.label, n.agent_id, ", ".join(n.parents)) for n in items]
    return _table("Lineage", ("uid", "relation", "depth", "kind", "label", "agent", "parents"), rows)


def _belief_holders(items: Sequence[Any]) -> Table:
    rows = [(h.agent_id, b.uid, b.content, b.certainty, b.scope) for h in items for b in h.beliefs]
    return _table("Belief holders", ("agent", "belief", "content", "certainty", "scope"), rows)


def _blocked_steps(items: Sequence[Any]) -> Table:
    rows = [(s.uid, s.agent_id, s.content, s.status, ", ".join(w.uid for w in s.waiting_on),
             ", ".join(s.root_blockers), "yes" if s.in_cycle else "") for s in items]  # fmt: skip
    return _table("Blocked steps", ("uid", "agent", "step", "status", "waiting on", "root blockers", "cycle"), rows)


_GRAPH_QUERY_TABLES: dict[str, Callable[[Sequence[Any]], Table]] = {
    "goals-behind": _goals_behind, "belief-conflicts": _belief_conflicts, "lineage": _lineage,
    "belief-holders": _belief_holders, "blocked-steps": _blocked_steps,
}  # fmt: skip


def graph_query(result: Any) -> list[Any]:
    """A graph-query result (``reasoning.graph_query_models.GraphQueryResult``): its rows and a footer."""
    body: list[Deferred[Any]]
    if result.query == "paths":  # one line a path
        body = [DeferredText(functools.partial(_query_path, path)) for path in result.results]
    else:
        body = [Deferred(functools.partial(_GRAPH_QUERY_TABLES[result.query], result.results))]
    who = f"as seen by {result.agent}" if result.agent else "all agents"
    footer = note(f"{result.count} result{'' if result.count == 1 else 's'} ({who}; source {result.source})"
                  + (" - truncated: raise --limit" if result.truncated else ""))  # fmt: skip
    return [*body, footer]
