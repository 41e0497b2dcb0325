"""``mabos serve --mcp``: the tool registry as an MCP server (stdio, or streamable HTTP with ``--http``)."""

from __future__ import annotations

import socket

import click

from cli import render
from cli.common import Session, mabos_options
from cli.tools import REGISTRY, ToolContext
from cli.tools.mcp_server import DEFAULT_HOST, MCP_PATH, serve_http, serve_stdio
from kg.errors import InputError


@click.command("serve")
@click.option("--mcp", "mcp", is_flag=True, help="Serve the tools over the Model Context Protocol (required).")
@click.option(
    "--http",
    "port",
    type=click.IntRange(1, 65535),
    default=None,
    metavar="PORT",
    help="Serve streamable HTTP on PORT (at /mcp) instead of stdio.",
)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to bind with --http.")
@click.option(
    "--agent",
    "-a",
    "agent",
    default=None,
    metavar="AGENT",
    help="Bind the server to one agent: agent_id defaults to it and other agents are refused.",
)
@click.option("--dry-run", is_flag=True, help="Open the workspace, print what would be served and exit.")
@mabos_options
def serve(out: Session, *, mcp: bool, port: int | None, host: str, agent: str | None, dry_run: bool) -> None:
    """Serve every registry tool to an agent over MCP.

    Over stdio (the default) an MCP client starts this command and talks on its stdin/stdout; with --http the
    server listens on http://HOST:PORT/mcp (127.0.0.1 unless --host says otherwise). Without --agent every
    call names its agent in agent_id. Tool errors come back as MCP tool errors; the server keeps serving.

    Example:

    \b
      mabos serve --mcp --workspace ./w --agent sales-agent
      mabos serve --mcp --http 8765 --workspace ./w
      mabos serve --mcp --dry-run --json
    """
    if not mcp:
        raise InputError("--mcp", "required (MCP is the only protocol served)")
    if agent is not None:
        out.workspace().agents.get(agent)  # a bound agent must exist
    ctx = ToolContext(workspace_obj=out.workspace(), agent=agent)
    url = f"http://{host}:{port}{MCP_PATH}" if port is not None else None
    transport = "http" if url else "stdio"
    plan = {"transport": transport, "url": url, "agent": agent, "workspace": str(out.path), "tools": len(REGISTRY)}
    if dry_run:
        out.emit(plan, render.key_values("MCP server (dry run)", plan.items()))
    elif port is None:
        serve_stdio(ctx)
    else:
        _check_free(host, port)
        click.echo(f"mabos: serving {len(REGISTRY)} tools on {url} (Ctrl-C stops)", err=True)
        serve_http(ctx, host, port)


def _check_free(host: str, port: int) -> None:
    """Refuse a port that cannot be bound, with one line (uvicorn would log and exit with its own code)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
            probe.bind((host, port))
    except OSError as exc:
        raise InputError("--http", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
