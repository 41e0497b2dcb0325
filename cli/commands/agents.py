"""``mabos agent add|list|show``."""

from __future__ import annotations

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from kg.agents import AgentAddRequest


@click.group("agent")
def agent() -> None:
    """Create and inspect agents.

    Each agent gets a private scope agent:<id> and a directory agents/<id>/.
    """


@agent.command("add")
@request_options(AgentAddRequest, agent_id=Cli(argument=True, metavar="AGENT_ID"))
@mabos_options
def add(out: Session, *, request: AgentAddRequest) -> None:
    """Create an agent.

    Ids are lowercase letters, digits, '-' and '_' (they name directories).

    Example:

    \b
      mabos agent add sales-agent --name "Sales" --role seller
    """
    created = out.workspace().agents.add(request)
    out.emit(created, render.done(f"Created agent {created.agent_id} ({created.name}), scope {created.scope}"))


@agent.command("list")
@mabos_options
def list_(out: Session) -> None:
    """List every agent of the workspace.

    Example:

    \b
      mabos agent list --json
    """
    agents = out.workspace().agents.list()
    out.emit(agents, render.agents_table(agents), render.count(agents, "agent"))


@agent.command("show")
@click.argument("agent_id", metavar="AGENT_ID")
@mabos_options
def show(out: Session, *, agent_id: str) -> None:
    """Show one agent.

    Example:

    \b
      mabos agent show sales-agent
    """
    found = out.workspace().agents.get(agent_id)
    out.emit(found, render.agent_detail(found))
