"""``mabos serve --mcp``: the tool registry as an MCP server (stdio, or streamable HTTP with ``--http``)."""

from __future__ import annotations

import socket

import click

from cli import render
from cli.common import Session, mabos_options
from cli.idle_index import idle_seconds, index_when_idle_options, log_to_stderr
from cli.loopback import DEFAULT_HOST, is_loopback
from cli.pool_settings import DEFAULT_DEADLINE, DEFAULT_WORKERS, ENV_MEMORY, PoolSettings
from cli.server_options import deadline_option, worker_count_option
from cli.tools import REGISTRY, ToolContext
from kg.errors import InputError
from kg.tokens import TokenInfo


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
@click.option(
    "--require-token",
    is_flag=True,
    help="With --http on loopback, refuse requests without a token too (off loopback tokens are always required).",
)
@deadline_option(DEFAULT_DEADLINE, "Stop a tool call that runs longer and answer it with an error.", metavar="SECONDS")
@worker_count_option("--workers", "Worker processes: calls of different agents run side by side.",
                     default=DEFAULT_WORKERS, show_default=True)  # fmt: skip
@worker_count_option("--per-agent", "Calls one agent may have running at once [default: 1; every worker for a server "
                     "bound with --agent].", default=None)  # fmt: skip
@index_when_idle_options
@click.option("--dry-run", is_flag=True, help="Open the workspace, print what would be served and exit.")
@mabos_options
def serve(
    out: Session,
    *,
    mcp: bool,
    port: int | None,
    host: str,
    agent: str | None,
    require_token: bool,
    deadline: float,
    workers: int,
    per_agent: int | None,
    index_when_idle: float,
    no_index_when_idle: bool,
    dry_run: bool,
) -> None:
    """Serve every registry tool to an agent over MCP.

    Over stdio (the default) an MCP client starts this command and talks on its stdin/stdout; with --http the
    server listens on http://HOST:PORT/mcp (127.0.0.1 unless --host says otherwise). Without --agent every
    call names its agent in agent_id. Tool errors come back as MCP tool errors; the server keeps serving.

    Over HTTP a caller may send an API token (Authorization: Bearer <secret>, from 'mabos token create'): the
    server then acts as the token's agent only. Off loopback every request needs a live token, and the server
    refuses to start while the workspace has none. Each call runs in a worker process and is stopped after
    --deadline seconds; calls of different agents run side by side. A worker may take 2 GiB of memory beyond its
    size when ready (RLIMIT_AS; MABOS_WORKER_MEMORY sets another size, or off), so that no call can take the
    machine; --dry-run shows the limit. After --index-when-idle seconds without a
    call, items waiting for the vector index are indexed in the background (a call stops that pass at once;
    --no-index-when-idle turns it off).

    Example:

    \b
      mabos serve --mcp --workspace ./w --agent sales-agent
      mabos serve --mcp --http 8765 --workspace ./w
      mabos token create --agent sales-agent --expires 30d --workspace ./w
      mabos serve --mcp --http 8765 --host 0.0.0.0 --workspace ./w
      mabos serve --mcp --dry-run --json
    """
    index_when_idle = idle_seconds(index_when_idle, no_index_when_idle)
    if not mcp:
        raise InputError("--mcp", "required (MCP is the only protocol served)")
    if per_agent is not None and per_agent > workers:
        raise InputError("--per-agent", f"must be at most --workers ({workers})")
    ws = out.workspace()
    if agent is not None:
        ws.agents.get(agent)  # a bound agent must exist
    settings = PoolSettings(workers=workers, deadline=deadline,
                            per_agent=per_agent or (workers if agent is not None else 1))  # fmt: skip
    ctx = ToolContext(workspace_obj=ws, agent=agent)
    # The MCP SDK is most of the CLI's start-up time: loaded once the arguments and the workspace are known good.
    from cli.tools.mcp_server import MCP_PATH, serve_http, serve_stdio  # noqa: PLC0415

    url = f"http://{host}:{port}{MCP_PATH}" if port is not None else None
    transport = "http" if url else "stdio"
    tokens = "required" if port is not None and (require_token or not is_loopback(host)) else "optional"
    if port is None:
        tokens = "none (stdio: the process that starts the server is its caller)"
    plan = {"transport": transport, "url": url, "agent": agent, "workspace": str(out.path), "tools": len(REGISTRY),
            "tokens": tokens, "workers": workers, "per_agent": settings.per_agent, "deadline_s": deadline,
            "worker_memory_bytes": settings.memory, "index_when_idle_s": index_when_idle}  # fmt: skip
    if port is not None and tokens == "required":
        _check_tokens(ws.tokens.list(agent), host, agent, require_token=require_token)
    if dry_run:
        shown = {**plan, "worker_memory_bytes": _memory(settings.memory)}
        out.emit(plan, render.key_values("MCP server (dry run)", shown.items()))
    elif port is None:
        log_to_stderr(index_when_idle)
        serve_stdio(ctx, settings, index_when_idle=index_when_idle)
    else:
        _check_free(host, port)
        click.echo(f"mabos: serving {len(REGISTRY)} tools on {url}, tokens {tokens} (Ctrl-C stops)", err=True)
        log_to_stderr(index_when_idle)
        serve_http(ctx, host, port, settings=settings, verify=ws.tokens.verify, require_token=tokens == "required",
                   index_when_idle=index_when_idle)  # fmt: skip


def _memory(limit: int | None) -> str:
    """The worker memory limit as the dry run shows it."""
    if limit is None:
        return f"no limit ({ENV_MEMORY}=off)"
    size = f"{limit / (1 << 30):g} GiB" if limit >= 1 << 30 else f"{limit / (1 << 20):g} MiB"
    return f"{limit:,} bytes = {size} of address space beyond a worker's size when ready (RLIMIT_AS; {ENV_MEMORY})"


def _check_tokens(tokens: list[TokenInfo], host: str, agent: str | None, *, require_token: bool) -> None:
    """Refuse to listen with tokens required while no token could get in (one line saying how to make one)."""
    if not any(t.status == "active" for t in tokens):
        whose = f" for {agent}" if agent else ""
        field, why = ("--host", f"{host} is not loopback") if not is_loopback(host) else ("--require-token", "asked")
        raise InputError(
            field,
            f"{why}, so every request needs a token, and the workspace has no active token{whose}; "
            f"create one with 'mabos token create --agent {agent or 'AGENT'}'",
        )


def _check_free(host: str, port: int) -> None:
    """Refuse a port that cannot be bound, with one line (uvicorn would log and exit with its own code)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
            probe.bind((host, port))
    except OSError as exc:
        raise InputError("--http", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
