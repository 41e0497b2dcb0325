"""``mabos ui``: the local web console (cli/ui, docs/console.md)."""

from __future__ import annotations

import os
import threading
import webbrowser

import click

from cli import render
from cli.common import Session, example, mabos_options
from cli.idle_index import idle_seconds, index_when_idle_options, log_to_stderr
from cli.loopback import is_loopback
from cli.server_options import deadline_option
from cli.ui.lanes import DEFAULT_DEADLINE, DEFAULT_LANES
from cli.ui.security import TOKEN_ENV, check_bind
from kg.workspace import open_workspace


@click.command("ui", help=example(
    "Serve the local web console: the agent's graph drawn interactively, facts with their history and "
    "derivations, memory with a recall playground (score bars), ontology proposals to approve or reject, "
    "reasoning, conversations and sync. Read-only except approve/reject (POST with a CSRF token). Binds "
    f"127.0.0.1; any other --host needs a token: --token (or {TOKEN_ENV}), or agents' API tokens (mabos token "
    "create), each of which fixes the acting agent; then every request must carry one. "
    "While no request comes for --index-when-idle seconds (default 30), the vector index backlog is indexed in the "
    "background in resumable checkpoints (a request stops the pass at once; the header shows the progress). "
    "Requests run in --lanes worker processes, one running request per agent, each answered within --deadline "
    "seconds (a request past it is stopped: its worker is killed). Stop with Ctrl-C.",
    "mabos ui --workspace ./w --agent sales-agent --open",
    "MABOS_UI_TOKEN=$(openssl rand -hex 24) mabos ui --host 0.0.0.0 --port 8765",
))  # fmt: skip
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, default=False, help="Open the console in the browser.")
@click.option("--agent", "-a", default=None, metavar="AGENT", help="The agent the console acts as at first.")
@click.option("--token", default=None, help=f"Require this token on every request [env {TOKEN_ENV}].")
@click.option(
    "--lanes",
    type=click.IntRange(1, 32),
    default=DEFAULT_LANES,
    show_default=True,
    help="Worker processes (each with its own workspace handle; killed at the deadline); an agent runs one request "
    "at a time.",
)
@deadline_option(DEFAULT_DEADLINE, "Seconds a request may take (waiting included) before it is answered with a "
                 "deadline error.")  # fmt: skip
@index_when_idle_options
@click.option("--dry-run", is_flag=True, default=False, help="Check the options and the workspace, print, exit.")
@mabos_options
def ui(out: Session, *, host: str, port: int, open_browser: bool, agent: str | None, token: str | None, lanes: int,
       deadline: float, index_when_idle: float, no_index_when_idle: bool, dry_run: bool) -> None:  # fmt: skip
    import uvicorn  # noqa: PLC0415 - the server and the web stack load only when serving

    from cli.ui import create_app  # noqa: PLC0415

    token = token or os.environ.get(TOKEN_ENV) or None
    idle = idle_seconds(index_when_idle, no_index_when_idle)
    with open_workspace(out.path) as ws:  # a missing workspace or unknown agent is refused before listening
        if agent is not None:
            ws.scopes.require_agent(agent)
        check_bind(host, token, ws.tokens.active_count())
    app = create_app(out.path, agent=agent, token=token, require_token=not is_loopback(host), index_when_idle=idle,
                     host=host, lanes=lanes, deadline=deadline)  # fmt: skip
    wildcard = host in ("0.0.0.0", "::")  # noqa: S104 - not bound here: a wildcard bind is reached via loopback
    shown = "127.0.0.1" if wildcard else f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    required = token is not None or not is_loopback(host)
    out.emit({"url": url, "workspace": str(out.path), "agent": agent, "token_required": required,
              "index_when_idle_s": idle, "lanes": lanes, "deadline_s": deadline},
             render.done(f"mabos console on {url}  (Ctrl-C stops it)"))  # fmt: skip
    if dry_run:
        return
    log_to_stderr(idle)
    if open_browser:
        login = f"{url}?token={token}" if token else url
        threading.Timer(0.8, lambda: webbrowser.open(login)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
