"""``mabos token create|list|revoke``: the API tokens remote callers present (MCP over HTTP; the console later).

Operator commands only: no MCP tool creates or lists tokens (a caller must not mint its own credentials).
"""

from __future__ import annotations

import click
from rich.text import Text

from cli import render
from cli.common import Session, mabos_options
from kg.tokens import TokenInfo, parse_lifetime


def _when(info: TokenInfo) -> str:
    return info.expires_at.strftime("%Y-%m-%d %H:%M UTC") if info.expires_at else "never"


@click.group("token")
def token() -> None:
    """API tokens: a remote caller that presents one acts as its agent.

    The MCP server over HTTP needs one off loopback (mabos serve --mcp --http PORT --host 0.0.0.0) and accepts
    one on loopback; the caller sends it as 'Authorization: Bearer <secret>'. Only a hash is stored.
    """


@token.command("create")
@click.option("--agent", "-a", "agent", required=True, metavar="AGENT", help="The agent the token acts as.")
@click.option("--expires", default=None, metavar="DURATION", help="Lifetime: 30d, 12h, 90m or 2w [default: never].")
@click.option("--label", default="", help="A note to recognise the token by (e.g. where it is used).")
@mabos_options
def create(out: Session, *, agent: str, expires: str | None, label: str) -> None:
    """Create a token for an agent and print its secret (shown once: store it now).

    Example:

    \b
      mabos token create --agent sales-agent --expires 30d --label laptop
      mabos token create --agent sales-agent --json
    """
    lifetime = parse_lifetime(expires, "expires") if expires is not None else None
    created = out.workspace().tokens.create(agent, lifetime=lifetime, label=label)
    info = created.token
    out.emit(
        created,
        render.done(f"Created token {info.token_id} for {info.agent_id} (expires: {_when(info)})"),
        Text(created.secret),
        render.note(f"This secret is shown once; only its hash is stored. Revoke: mabos token revoke {info.token_id}"),
    )


@token.command("list")
@click.option("--agent", "-a", "agent", default=None, metavar="AGENT", help="Only this agent's tokens.")
@mabos_options
def list_(out: Session, *, agent: str | None) -> None:
    """List tokens (never their secrets), oldest first, with their status: active, revoked or expired.

    Example:

    \b
      mabos token list --agent sales-agent --json
    """
    found = out.workspace().tokens.list(agent)
    rows = [(t.token_id, t.agent_id, t.status, t.label, t.created_at.strftime("%Y-%m-%d"), _when(t)) for t in found]
    out.emit(
        {"tokens": found},
        render.table("Tokens", ["ID", "Agent", "Status", "Label", "Created", "Expires"], rows),
        render.count(found, "token"),
    )


@token.command("revoke")
@click.argument("token_id", metavar="ID")
@mabos_options
def revoke(out: Session, *, token_id: str) -> None:
    """Revoke a token at once: the next request that presents it gets 401.

    Example:

    \b
      mabos token revoke 3f9a1c0b7d2e
    """
    info = out.workspace().tokens.revoke(token_id)
    out.emit(info, render.done(f"Revoked token {info.token_id} of {info.agent_id}"))
