"""The degradation ladder: which rung each part of a workspace stands on now, and why.

mabos keeps answering when parts fail, one rung at a time (``docs/degradation.md``):

1. **TypeDB** (optional, the shared graph): up, down (writes wait in the outbox, reads come from SQLite),
   or off (not configured: SQLite is the store of record).
2. **The embedded store** (SQLite): ok, or unreadable (recall answers from the Markdown files).
3. **The vector index** (and its embedder): ready, behind (recent items are found by BM25 until indexed),
   rebuilding/unusable (the store answers by BM25 alone), or off (no embedder).
4. **The Markdown files**: always there; they answer recall only when the store itself cannot be read.

:func:`ladder` reads each part without changing anything; ``mabos status`` shows it. With TypeDB configured
it asks the server (one request bounded by the configured timeout) unless the write-through circuit breaker
is open, in which case the breaker's last error is the reason.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kg.models import Model
from kg.workspace import STATE_DIR
from sync.breaker import BREAKER_FILE, CircuitBreaker
from sync.shared_graph import status as typedb_status
from sync.shared_graph import typedb_settings

if TYPE_CHECKING:
    from kg.workspace import Workspace

Rung = Literal["up", "ok", "ready", "behind", "rebuilding", "unusable", "down", "off"]


class Part(Model):
    """One part of the ladder: its rung, one sentence why, and what answers in its place when it is not up."""

    rung: Rung
    reason: str
    serves: str


class Ladder(Model):
    """Each part's rung and, in ``recall``, which rung recall answers from right now."""

    typedb: Part
    store: Part
    vector_index: Part
    files: Part
    recall: str


def _typedb(ws: Workspace, override: str | None, probe: bool) -> Part:
    settings = typedb_settings(ws, override)
    pending = ws.ports.outbox.counts()["pending"]
    if settings is None:
        return Part(rung="off", reason="not configured ([typedb] address in mabos.toml, MABOS_TYPEDB_ADDRESS or "
                                       "--typedb): the embedded store is the store of record",
                    serves="every read and write: the embedded store")  # fmt: skip
    where = f"{settings.address} (database {settings.database})"
    waiting = f"{pending} change(s) wait in the outbox" if pending else "the outbox is empty"
    breaker = CircuitBreaker(ws.path / STATE_DIR / BREAKER_FILE)
    if not breaker.allow():
        state = breaker.state()
        until = datetime.fromtimestamp(float(state.get("open_until", 0.0)), tz=UTC).strftime("%H:%M:%SZ")
        return Part(rung="down", reason=f"{where}: failed {state.get('failures', 1)} time(s), not retried before "
                                        f"{until}: {state.get('last_error', 'unknown error')}; {waiting}",
                    serves="shared-graph reads: the embedded store; writes: queued in the outbox")  # fmt: skip
    if not probe:
        return Part(rung="up", reason=f"{where}: configured, not probed (circuit breaker closed); {waiting}",
                    serves="shared-graph reads and write-through")  # fmt: skip
    found = typedb_status(ws, override)
    if not found.get("reachable"):
        return Part(rung="down", reason=f"{where}: {found.get('error', 'unreachable')}; {waiting}",
                    serves="shared-graph reads: the embedded store; writes: queued in the outbox")  # fmt: skip
    return Part(rung="up", reason=f"{where}: {found.get('server_version', 'reachable')}; {waiting}",
                serves="shared-graph reads and write-through")  # fmt: skip


def _vectors(ws: Workspace) -> Part:
    if ws.vectors is None:
        return Part(rung="off", reason=f"no embedder ([recall] embedder = {ws.config.recall.embedder!r} or "
                                       "MABOS_EMBEDDER)", serves="recall: BM25 over the store")  # fmt: skip
    status: dict[str, Any] = ws.vectors.status()
    state, backlog = status.get("state"), int(status.get("backlog") or 0)
    model = status.get("model")
    if state == "missing" and not status.get("items"):
        return Part(rung="ready", reason=f"empty: no memory items to index yet ({model})",
                    serves="recall: hybrid (BM25 + vectors)")  # fmt: skip
    if state == "ready" and backlog == 0:
        return Part(rung="ready", reason=f"{status.get('indexed', 0)} item(s) indexed with {model}",
                    serves="recall: hybrid (BM25 + vectors)")  # fmt: skip
    if state == "ready":
        return Part(rung="behind", reason=f"{backlog} item(s) not indexed yet ('mabos index update' or the idle "
                                          "indexer catches up)",
                    serves="recall: hybrid; the items not indexed yet are found by BM25")  # fmt: skip
    if state == "building":
        return Part(rung="rebuilding", reason=str(status.get("reason")), serves="recall: BM25 over the store")
    why = status.get("reason") or state
    return Part(rung="unusable", reason=f"{why} (rebuilt by 'mabos index update' or the next recall)",
                serves="recall: BM25 over the store")  # fmt: skip


def _files(path: Path) -> int:
    agents = path / "agents"
    return sum(1 for _ in agents.glob("*/**/*.md")) if agents.is_dir() else 0


def ladder(ws: Workspace, *, override: str | None = None, probe: bool = True) -> Ladder:
    """Where each part of the open workspace stands (nothing is changed; see the module docstring)."""
    typedb = _typedb(ws, override, probe)
    stats = ws.ports.stats()
    store = Part(rung="ok", reason=f"{stats['backend']} schema {stats['schema_version']}, readable",
                 serves="every read and write")  # fmt: skip
    vectors = _vectors(ws)
    count = _files(ws.path)
    files = Part(rung="ready", reason=f"{count} Markdown file(s) under agents/; they answer recall only if the "
                                      "store cannot be read", serves="nothing now (the store answers)")  # fmt: skip
    recall = "hybrid: store + vector index" if vectors.rung in ("ready", "behind") else "BM25 over the store"
    return Ladder(typedb=typedb, store=store, vector_index=vectors, files=files, recall=recall)


def ladder_without_store(path: Path, error: str) -> Ladder:
    """The ladder when the workspace's database cannot be opened (``error``): the Markdown files answer."""
    count = _files(path)
    down = Part(rung="down", reason=error, serves="recall: the agents' Markdown files")
    unknown = Part(rung="unusable", reason="the store cannot be read", serves="recall: the agents' Markdown files")
    files = Part(rung="up", reason=f"{count} Markdown file(s) under agents/", serves="recall (fallback: true)")
    typedb = Part(rung="off", reason="not checked: the workspace could not be opened", serves="nothing")
    return Ladder(typedb=typedb, store=down, vector_index=unknown, files=files, recall="the Markdown files")


__all__ = ["Ladder", "Part", "ladder", "ladder_without_store"]
