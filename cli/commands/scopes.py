"""``mabos scope grant|revoke|list``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from cli import render
from cli.common import Session, mabos_options

F = TypeVar("F", bound=Callable[..., Any])


@click.group("scope")
def scope() -> None:
    """Grant agents access to more scopes.

    Every agent reads and writes global and its own agent:<id>; grants add more.
    """


def grant_arguments(verb: str) -> Callable[[F], F]:
    """AGENT, SCOPE and ``--by`` (who ``verb`` it, recorded for audit): what grant and revoke both take."""

    def decorate(command: F) -> F:
        command = click.option("--by", "by", required=True, help=f"Who {verb} it (recorded for audit).")(command)
        command = click.argument("scope_name", metavar="SCOPE")(command)
        return click.argument("agent_id", metavar="AGENT")(command)

    return decorate


@scope.command("grant")
@grant_arguments("grants")
@mabos_options
def grant(out: Session, *, agent_id: str, scope_name: str, by: str) -> None:
    """Let an agent read and write a scope.

    SCOPE is project:<name>, user:<name>, custom:<name> or agent:<id>.

    Example:

    \b
      mabos scope grant finance-agent project:q3-launch --by sales-agent
    """
    granted = out.workspace().scopes.grant(agent_id, scope_name, granted_by=by)
    out.emit(granted, render.done(f"Granted {granted.scope} to {granted.agent_id} (by {granted.granted_by})"))


@scope.command("revoke")
@grant_arguments("revokes")
@mabos_options
def revoke(out: Session, *, agent_id: str, scope_name: str, by: str) -> None:
    """Withdraw a grant.

    Revoking a grant that does not exist changes nothing (exit code 0).

    Example:

    \b
      mabos scope revoke finance-agent project:q3-launch --by sales-agent
    """
    revoked = out.workspace().scopes.revoke(agent_id, scope_name, revoked_by=by)
    message = f"Revoked {scope_name} from {agent_id}" if revoked else f"{agent_id} held no grant of {scope_name}"
    out.emit({"agent_id": agent_id, "scope": scope_name, "revoked": revoked}, render.done(message))


@scope.command("list")
@click.argument("agent_id", metavar="AGENT")
@mabos_options
def list_(out: Session, *, agent_id: str) -> None:
    """List an agent's grants and readable scopes.

    Example:

    \b
      mabos scope list finance-agent --json
    """
    scopes = out.workspace().scopes
    grants, readable = scopes.grants(agent_id), scopes.readable(agent_id)
    out.emit(
        {"agent_id": agent_id, "grants": grants, "readable": readable},
        render.grants_table(agent_id, grants),
        render.note(f"{agent_id} can read: {', '.join(readable)}"),
    )
