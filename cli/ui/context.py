"""What every console request shares: the open workspace, the acting agent, tool calls and a small view cache.

The console is one more front door over the library (design.md §7): every page's data comes from a registry
tool (:func:`cli.tools.registry.run`) or, where no tool exists, from the same service the CLI command calls
(``ws.bdi``, ``ws.memory``, ``ws.scopes`` ...), always with the acting agent so its scopes apply. The workspace
is opened once per console worker process (:mod:`cli.ui.lanes`), which runs one request at a time, so SQLite sees
one connection user at a time (:class:`Console` is not thread-safe by itself).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from cachetools import LRUCache
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from cli.tools.registry import ToolContext, run
from kg.errors import InputError, ScopeError
from kg.models import AGENT_ID_RE
from kg.workspace import DB_FILE, STATE_DIR, Workspace, open_workspace
from sync.write_through import WriteThrough, attach

T = TypeVar("T")

#: How many computed views (graph pages, counts) are kept, least recently used first out; they are keyed on the
#: store's change stamp.
CACHE_SIZE = 64
_MISSING = object()


@dataclass
class Console:
    """The console's session on one workspace.

    Args:
        path: the workspace directory.
        agent: the agent chosen at start (``--agent``), the default of every page.
        workspace: an already open workspace to use (not closed here), e.g. a CLI command's.
    """

    path: Path
    agent: str | None = None
    workspace: Workspace | None = None
    _tools: ToolContext | None = field(default=None, repr=False)
    _cache: LRUCache[tuple[Any, ...], Any] = field(default_factory=lambda: LRUCache(CACHE_SIZE), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _kept: dict[str, Any] = field(default_factory=dict, repr=False)
    _opened: Workspace | None = field(default=None, repr=False)
    _writer: WriteThrough | None = field(default=None, repr=False)

    @property
    def tools(self) -> ToolContext:
        """A tool context on the workspace; it acts for no fixed agent, so every call names its agent, and it is
        not the operator's (MCP-like): operator-only views are refused.

        A workspace the console opens itself gets write-through as a CLI command's does (with TypeDB configured,
        an approval is pushed right after its commit; otherwise it waits in the outbox)."""
        if self._tools is None:
            if self.workspace is None:
                self._opened = open_workspace(self.path)
                self._writer = attach(self._opened)
            self._tools = ToolContext(path=self.path, workspace_obj=self.workspace or self._opened, operator=False)
        return self._tools

    @property
    def ws(self) -> Workspace:
        """The open workspace."""
        return self.tools.workspace()

    def call(self, name: str, agent: str, arguments: Mapping[str, Any]) -> BaseModel:
        """Run registry tool ``name`` as ``agent`` (the same call the CLI and MCP make)."""
        return run(self.tools, name, {**arguments, "agent_id": agent})

    def agents(self, bound: str | None = None) -> list[str]:
        """Every agent id of the workspace, or only ``bound`` (the agent a per-agent token fixes)."""
        if bound is not None:
            return [bound]
        return [a.agent_id for a in self.ws.agents.list()]

    def acting(self, requested: str | None, bound: str | None = None) -> str | None:
        """The agent a request acts as: ``?agent=``, else the start agent, else the first agent (None: none exist).

        A malformed or unknown id is an :class:`InputError` / ``NotFoundError``; a per-agent token (``bound``)
        allows only its agent (:class:`ScopeError`).
        """
        chosen = (requested or "").strip() or bound or self.agent
        if bound is not None and chosen != bound:
            raise ScopeError(f"agent: this console session acts as {bound!r}; it cannot act as {chosen!r}")
        if chosen is None:
            listed = self.agents()
            return listed[0] if listed else None
        if not AGENT_ID_RE.match(chosen):
            raise InputError("agent", f"must match [a-z0-9][a-z0-9_-]{{0,63}}, got {chosen[:80]!r}")
        self.ws.scopes.require_agent(chosen)
        return chosen

    def stamp(self) -> tuple[int, ...]:
        """A cheap change stamp of the store: the size and modification time of the database and its WAL (every
        committed write changes one of them), so cached views are recomputed after any change."""
        parts: list[int] = []
        for name in (DB_FILE, f"{DB_FILE}-wal"):
            try:
                info = (self.path / STATE_DIR / name).stat()
            except FileNotFoundError:
                parts += [0, 0]
                continue
            parts += [info.st_mtime_ns, info.st_size]
        return tuple(parts)

    def cached(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()``, reused while the store is unchanged (the key includes the change stamp)."""
        full = (*key, self.stamp())
        with self._lock:  # cachetools' caches are not thread-safe by themselves
            found = self._cache.get(full, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            self._cache[full] = value
        return value

    def keep(self, name: str, make: Callable[[], T]) -> T:
        """A service made once for the life of the console (e.g. one that caches parsed files)."""
        if name not in self._kept:
            self._kept[name] = make()
        return self._kept[name]  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the workspace."""
        self._kept.clear()
        self._tools = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._opened is not None:
            self._opened.close()
            self._opened = None


def plain(value: Any) -> Any:
    """Models, datetimes and containers of them as plain JSON data (what ``--json`` prints)."""
    return to_jsonable_python(value)


def plain_dict(value: dict[str, Any]) -> dict[str, Any]:
    """:func:`plain` of a dictionary (a page's data)."""
    converted: dict[str, Any] = to_jsonable_python(value)
    return converted


def int_arg(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within ``low..high``; an :class:`InputError` names it otherwise."""
    raw = params.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(name, f"must be a whole number, got {raw[:40]!r}") from None
    if not low <= value <= high:
        raise InputError(name, f"must be between {low} and {high}")
    return value


def text_arg(params: Mapping[str, str], name: str) -> str | None:
    """A text query parameter, stripped; None when empty."""
    value = params.get(name, "").strip()
    return value or None


__all__ = ["Console", "int_arg", "plain", "plain_dict", "text_arg"]
