"""Child processes of the servers (the MCP worker pool, the idle-time indexer): started from a ``forkserver``.

A forkserver imports ``preload`` once, so a new child starts in a fraction of a second instead of importing the whole
stack again; it is a fresh process (no threads or locks inherited from the server, unlike a plain fork). Every child
gets the server's environment as it is when the child starts, ignores Ctrl-C (it reaches the whole process group: the
server decides what stops), reads nothing from stdin and writes its stdout to stderr (on the MCP stdio transport the
server's stdout is the protocol). The child talks to the server over one pipe, its first argument.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from cli.tools.tool_table import TOOL_TABLE

#: What a server's forkserver imports once, for both kinds of child: the MCP workers' tool modules (every module of
#: the lazy registry's table) and the idle indexer's workspace. A process has one forkserver and the first child it
#: starts decides its preload, so the MCP pool and the idle indexer of one ``mabos serve`` ask for the same list,
#: whichever starts first.
SERVER_PRELOAD = (
    "cli.tools",
    *sorted({where.split(":", 1)[0] for where in TOOL_TABLE.values()}),
    "cli.tools.mcp_calls",
    "kg.workspace",
)
#: The local embedder's runtime (NumPy forward pass, tokenizers, threadpoolctl; kg/recall/minilm.py): preloaded too
#: when the workspace embeds with the local model, so neither a worker's first recall nor an index pass imports it.
#: The model's weights are memory-mapped by the child that first embeds (a few milliseconds).
EMBEDDING_PRELOAD = ("kg.recall.minilm", "tokenizers", "threadpoolctl")


def server_preload(path: Path) -> list[str]:
    """What the forkserver of a server on the workspace at ``path`` imports: :data:`SERVER_PRELOAD`, and
    :data:`EMBEDDING_PRELOAD` when the workspace embeds locally."""
    from kg.errors import MabosError  # noqa: PLC0415 - the server's own imports; not for every command
    from kg.workspace import ENV_EMBEDDER, read_config  # noqa: PLC0415

    try:
        kind = os.environ.get(ENV_EMBEDDER) or read_config(path).recall.embedder
    except MabosError:  # the child reports the workspace's problem
        return list(SERVER_PRELOAD)
    return preload_for(kind)


def preload_for(embedder: str) -> list[str]:
    """The preload of :func:`server_preload` for a workspace whose embedder is ``embedder``."""
    if embedder != "local":
        return list(SERVER_PRELOAD)
    return [*SERVER_PRELOAD, *EMBEDDING_PRELOAD]


def start(target: Callable[..., None], *args: Any, name: str, preload: Sequence[str]) -> tuple[BaseProcess, Connection]:
    """Start ``target(conn, *args)`` in a daemon child; returns the process and the server's end of the pipe.

    ``target`` must be a module-level function (the forkserver imports it by name).
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(preload))  # used only when this process's forkserver is not running yet
    ours, theirs = context.Pipe()
    process = context.Process(target=_enter, args=(target, theirs, dict(os.environ), *args), daemon=True, name=name)
    process.start()
    theirs.close()
    return process, ours


def _enter(target: Callable[..., None], conn: Connection, env: dict[str, str], *args: Any) -> None:
    """In the child: the server's environment, no Ctrl-C, no stdin, stdout to stderr; then ``target``."""
    os.environ.clear()
    os.environ.update(env)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(os.devnull, "rb") as null:
        os.dup2(null.fileno(), 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    target(conn, *args)


__all__ = ["start"]
