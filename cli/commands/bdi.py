"""``mabos belief|desire|goal|intention|plan|step add|list|update``, made by one factory.

Each node kind is described once (:data:`KINDS`: its fields and an example); :func:`node_group`
turns a description into a click group with ``add``, ``list`` and ``update``, which run the ``bdi_add``,
``bdi_list`` and ``bdi_update`` tools (:mod:`cli.tools.bdi`) through the registry. Their parameters are generated
from the requests (:mod:`kg.bdi_requests`): each kind's command offers the fields of its kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

import click

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, request_options
from cli.tools.bdi import BdiAddInput, BdiListInput, BdiNodes, BdiUpdateInput
from kg.bdi_requests import KIND_FIELDS
from kg.ids import PREFIXES
from kg.models import NODE_STATUSES, BDINode, NodeKind


class NodeOptions(TypedDict):
    """How the node fields appear for one kind: the keywords :func:`request_options` takes for them."""

    status: Cli
    certainty: Cli
    priority: Cli
    urgency: Cli
    hierarchy_level: Cli
    progress: Cli
    deadline: Cli
    sequence: Cli
    kind: Cli


@dataclass(frozen=True)
class KindSpec:
    """How one node kind appears on the command line: its group, help and example; its fields are the kind's
    (:data:`kg.bdi_requests.KIND_FIELDS`), and ``add`` offers ``--status`` unless ``initial`` is false (a belief
    or desire starts active)."""

    kind: NodeKind
    group: str
    summary: str
    example: str
    initial: bool = True

    @property
    def statuses(self) -> tuple[str, ...]:
        """Allowed statuses (the first is the default)."""
        return NODE_STATUSES[self.kind]

    def options(self, *, update: bool = False) -> NodeOptions:
        """The kind's fields as options (``--level``, ``--status`` with this kind's statuses), the others not at
        all; ``kind`` is this kind. ``update`` always offers ``--status``."""
        shown = {*KIND_FIELDS[self.kind], *(("status",) if self.initial or update else ())}

        def cli(name: str, option: Cli | None = None) -> Cli:
            return (option or Cli()) if name in shown else Cli(hidden=True)

        return NodeOptions(status=cli("status", Cli(choices=self.statuses)), certainty=cli("certainty"),
                           priority=cli("priority"), urgency=cli("urgency"),
                           hierarchy_level=cli("hierarchy_level", Cli(flag="--level")), progress=cli("progress"),
                           deadline=cli("deadline"), sequence=cli("sequence"),
                           kind=Cli(hidden=True, value=self.kind.value))  # fmt: skip


KINDS = (
    KindSpec(NodeKind.BELIEF, "belief", initial=False,
             summary="Beliefs: what an agent holds true.", example='"Acme is growing fast" --certainty 0.8'),
    KindSpec(NodeKind.DESIRE, "desire", initial=False,
             summary="Desires: what an agent wants.", example='"Lead the SaaS market" --priority 9'),
    KindSpec(NodeKind.GOAL, "goal",
             summary="Goals: strategic, tactical, operational.",
             example='"Grow revenue" --level strategic --priority 8'),
    KindSpec(NodeKind.INTENTION, "intention",
             summary="Intentions: goals an agent committed to.", example='"Close the Acme deal" --priority 7'),
    KindSpec(NodeKind.PLAN, "plan",
             summary="Plans: ways to reach goals.", example='"Outbound campaign" --status active'),
    KindSpec(NodeKind.PLAN_STEP, "step",
             summary="Plan steps, ordered by --sequence.", example='"Draft the email" --sequence 1'),
)  # fmt: skip


def _add(spec: KindSpec) -> click.Command:
    @request_options(BdiAddInput, content=Cli(argument=True, metavar="CONTENT"), **spec.options())
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
    @request_options(BdiUpdateInput, uid=Cli(argument=True, metavar="UID"), **spec.options(update=True))
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
