"""``mabos belief|desire|goal|intention|plan|step add|list|update``, made by one factory.

Each node kind is described once (:data:`KINDS`: its fields and an example); :func:`node_group`
turns a description into a click group with ``add``, ``list`` and ``update``, which run the ``bdi_add``,
``bdi_list`` and ``bdi_update`` tools (:mod:`cli.tools.bdi`) through the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from cli import render
from cli.common import ISO_DATETIME, Session, agent_option, example, mabos_options, scope_option
from cli.tools.bdi import BdiNodes
from kg.ids import PREFIXES
from kg.models import NODE_STATUSES, BDINode, HierarchyLevel, NodeKind

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

#: Options for node fields, by service field name.
FIELD_OPTIONS: dict[str, Decorator] = {
    "certainty": click.option("--certainty", type=float, default=None, help="How sure, 0..1."),
    "priority": click.option("--priority", type=int, default=None, help="1 (low) to 10 (high)."),
    "urgency": click.option("--urgency", type=float, default=None, help="0..1."),
    "hierarchy_level": click.option(
        "--level",
        "hierarchy_level",
        type=click.Choice([h.value for h in HierarchyLevel]),
        default=None,
        help="Place in the goal hierarchy.",
    ),
    "progress": click.option("--progress", type=float, default=None, help="0..1."),
    "deadline": click.option("--deadline", type=ISO_DATETIME, default=None, help="ISO-8601; a naive time is UTC."),
    "sequence": click.option("--sequence", type=int, default=None, help="Position in the plan (0, 1, 2 ...)."),
}


@dataclass(frozen=True)
class KindSpec:
    """How one node kind appears on the command line."""

    kind: NodeKind
    group: str
    fields: tuple[str, ...]
    summary: str
    example: str

    @property
    def statuses(self) -> tuple[str, ...]:
        """Allowed statuses (the first is the default)."""
        return NODE_STATUSES[self.kind]

    def status_option(self, help_text: str) -> Decorator:
        """``--status`` limited to this kind's statuses."""
        return click.option("--status", type=click.Choice(self.statuses), default=None, help=help_text)


KINDS = (
    KindSpec(NodeKind.BELIEF, "belief", fields=("certainty",),
             summary="Beliefs: what an agent holds true.", example='"Acme is growing fast" --certainty 0.8'),
    KindSpec(NodeKind.DESIRE, "desire", fields=("priority", "urgency"),
             summary="Desires: what an agent wants.", example='"Lead the SaaS market" --priority 9'),
    KindSpec(NodeKind.GOAL, "goal", fields=("hierarchy_level", "priority", "status", "progress", "deadline", "urgency"),
             summary="Goals: strategic, tactical, operational.",
             example='"Grow revenue" --level strategic --priority 8'),
    KindSpec(NodeKind.INTENTION, "intention", fields=("priority", "status", "deadline"),
             summary="Intentions: goals an agent committed to.", example='"Close the Acme deal" --priority 7'),
    KindSpec(NodeKind.PLAN, "plan", fields=("status", "hierarchy_level"),
             summary="Plans: ways to reach goals.", example='"Outbound campaign" --status active'),
    KindSpec(NodeKind.PLAN_STEP, "step", fields=("sequence", "status"),
             summary="Plan steps, ordered by --sequence.", example='"Draft the email" --sequence 1'),
)  # fmt: skip


def _with_fields(spec: KindSpec, fields: tuple[str, ...], status_help: str) -> Decorator:
    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for name in reversed(fields):
            func = spec.status_option(status_help)(func) if name == "status" else FIELD_OPTIONS[name](func)
        return func

    return apply


def _add(spec: KindSpec) -> click.Command:
    @mabos_options
    def add(out: Session, /, *, agent: str, content: str, scope: str | None, **fields: Any) -> None:
        arguments = {"agent_id": agent, "kind": spec.kind.value, "content": content, "scope": scope, **fields}
        node = out.run("bdi_add", arguments, BDINode)
        out.emit(node, render.node_line("Created", node))

    command = _with_fields(spec, spec.fields, f"Initial status (default {spec.statuses[0]}).")(scope_option(add))
    command = agent_option(click.argument("content", metavar="CONTENT")(command))
    helptext = example(f"Add a {spec.group}.", f"mabos {spec.group} add --agent sales-agent {spec.example}")
    return click.command("add", help=helptext)(command)


def _list(spec: KindSpec) -> click.Command:
    @mabos_options
    def list_(out: Session, /, *, agent: str, **filters: Any) -> None:
        found = out.run("bdi_list", {"agent_id": agent, "kind": spec.kind.value, **filters}, BdiNodes)
        nodes = found.nodes
        out.emit(nodes, render.nodes_table(f"{spec.group.capitalize()}s", nodes), render.count(nodes, spec.group))

    command = spec.status_option("Only nodes with this status.")(list_)
    command = click.option("--owner", default=None, help="Only nodes owned by this agent.")(command)
    command = click.option("--limit", type=int, default=100, show_default=True, help="At most this many.")(command)
    command = agent_option(scope_option(command))
    helptext = example(f"List {spec.group}s visible to the agent.", f"mabos {spec.group} list --agent sales-agent")
    return click.command("list", help=helptext)(command)


def _update(spec: KindSpec) -> click.Command:
    @mabos_options
    def update(out: Session, /, *, agent: str, uid: str, **changes: Any) -> None:
        arguments = {"agent_id": agent, "uid": uid, "kind": spec.kind.value, **changes}
        node = out.run("bdi_update", arguments, BDINode)
        out.emit(node, render.node_line("Updated", node))

    fields = spec.fields if "status" in spec.fields else (*spec.fields, "status")
    command = _with_fields(spec, fields, "New status.")(update)
    command = click.option("--content", default=None, help="New text.")(command)
    command = agent_option(click.argument("uid", metavar="UID")(command))
    uid = f"{PREFIXES[spec.kind.value]}-01J..."
    usage = f"mabos {spec.group} update --agent sales-agent {uid} --status {spec.statuses[1]}"
    helptext = example(f"Change fields of a {spec.group}.", usage)
    return click.command("update", help=helptext)(command)


def node_group(spec: KindSpec) -> click.Group:
    """The ``add``/``list``/``update`` group of one node kind."""
    group = click.Group(spec.group, help=spec.summary)
    for make in (_add, _list, _update):
        group.add_command(make(spec))
    return group


GROUPS = [node_group(spec) for spec in KINDS]
