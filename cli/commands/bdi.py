"""``mabos belief|desire|goal|intention|plan|step add|list|update``, made by one factory.

Each node kind is described once (:data:`KINDS`: its fields and an example); :func:`node_group`
turns a description into a click group with ``add``, ``list`` and ``update``, which run the ``bdi_add``,
``bdi_list`` and ``bdi_update`` tools (:mod:`cli.tools.bdi`) through the registry. Their parameters are generated
from the requests (:mod:`kg.bdi_requests`): each kind's command offers the fields of its kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, request_options
from cli.tools.bdi import BdiAddInput, BdiListInput, BdiNodes, BdiUpdateInput
from kg.ids import PREFIXES
from kg.models import NODE_STATUSES, BDINode, NodeKind

#: The node fields a kind may leave out (each kind's command offers only its own: :data:`KindSpec.fields`).
NODE_FIELDS = ("status", "certainty", "priority", "urgency", "hierarchy_level", "progress", "deadline", "sequence")


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

    def options(self, fields: tuple[str, ...]) -> dict[str, Any]:
        """How the node fields appear for this kind: ``fields`` as options (``--level``, ``--status`` with this
        kind's statuses), the others not at all; ``kind`` is this kind (:class:`Cli` by field name, typed ``Any`` as
        keywords of :func:`request_options`, which also takes ``instead``)."""
        shown = {"hierarchy_level": Cli(flag="--level"), "status": Cli(choices=self.statuses)}
        cli = {name: shown.get(name, Cli()) if name in fields else Cli(hidden=True) for name in NODE_FIELDS}
        return {**cli, "kind": Cli(hidden=True, value=self.kind.value)}


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


def _add(spec: KindSpec) -> click.Command:
    @request_options(BdiAddInput, content=Cli(argument=True, metavar="CONTENT"), **spec.options(spec.fields))
    @mabos_options
    def add(out: Session, /, *, request: BdiAddInput) -> None:
        node = out.run("bdi_add", request, BDINode)
        out.emit(node, render.node_line("Created", node))

    helptext = example(f"Add a {spec.group}.", f"mabos {spec.group} add --agent sales-agent {spec.example}")
    return click.command("add", help=helptext)(add)


def _list(spec: KindSpec) -> click.Command:
    @request_options(BdiListInput, kind=Cli(hidden=True, value=spec.kind.value), status=Cli(choices=spec.statuses))
    @mabos_options
    def list_(out: Session, /, *, request: BdiListInput) -> None:
        nodes = out.run("bdi_list", request, BdiNodes).nodes
        out.emit(nodes, render.nodes_table(f"{spec.group.capitalize()}s", nodes), render.count(nodes, spec.group))

    helptext = example(f"List {spec.group}s visible to the agent.", f"mabos {spec.group} list --agent sales-agent")
    return click.command("list", help=helptext)(list_)


def _update(spec: KindSpec) -> click.Command:
    fields = spec.fields if "status" in spec.fields else (*spec.fields, "status")

    @request_options(BdiUpdateInput, uid=Cli(argument=True, metavar="UID"), **spec.options(fields))
    @mabos_options
    def update(out: Session, /, *, request: BdiUpdateInput) -> None:
        node = out.run("bdi_update", request, BDINode)
        out.emit(node, render.node_line("Updated", node))

    uid = f"{PREFIXES[spec.kind.value]}-01J..."
    usage = f"mabos {spec.group} update --agent sales-agent {uid} --status {spec.statuses[1]}"
    helptext = example(f"Change fields of a {spec.group}.", usage)
    return click.command("update", help=helptext)(update)


def node_group(spec: KindSpec) -> click.Group:
    """The ``add``/``list``/``update`` group of one node kind."""
    group = click.Group(spec.group, help=spec.summary)
    for make in (_add, _list, _update):
        group.add_command(make(spec))
    return group


GROUPS = [node_group(spec) for spec in KINDS]
