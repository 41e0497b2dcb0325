"""A workspace: ``mabos.toml``, ``.mabos/kg.sqlite`` and ``agents/<id>/`` on disk.

``init_workspace(path)`` creates one (idempotent); ``open_workspace(path)`` opens an existing one. An open
workspace hands out services (``ws.agents``, ``ws.facts``, ``ws.bdi``, ``ws.scopes``, ``ws.memory``,
``ws.conversations`` ...) and the store's named ports (``ws.ports.facts``, ``ws.ports.outbox``,
``ws.ports.commits`` ...: :class:`kg.ports.StorePorts`, typed by the protocols of :mod:`kg.ports`), never the
store adapter: :mod:`kg.backends` opens the one ``mabos.toml`` names and the workspace keeps it private.

Opening reads the settings, opens the store and runs the open housekeeping; every service is built on first use,
so a command that only reads facts never imports recall, the vector index or numpy.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from pydantic import Field

from kg.backends import SQL_TIMEOUT, open_store, read_only_sql
from kg.clock import Clock, SystemClock
from kg.config import CONFIG_FILE, RecallConfig, WorkspaceConfig, read_config, render_config
from kg.errors import WorkspaceError, logger
from kg.layout import LOCK_FILE, VECTORS_DIR
from kg.memory.daily_log import SETTLE_AFTER, catch_up, settle_with_next_write
from kg.models import Model, format_ts, parse
from kg.models.base import new_list
from kg.ports import StorePorts
from kg.tempfiles import remove_stale

if TYPE_CHECKING:
    from kg.agents import AgentService
    from kg.bdi import BDIService
    from kg.conversation.service import ConversationService
    from kg.facts import FactService
    from kg.memory.service import MemoryService
    from kg.ports import Embedder, EmbeddingCache
    from kg.recall.engine import RecallEngine, RecallSettings
    from kg.recall.sidecar import VectorSidecar
    from kg.scopes import ScopePolicy
    from kg.store.sqlite.readonly import SqlResult
    from kg.tokens import TokenService


STATE_DIR = ".mabos"
DB_FILE = "kg.sqlite"
#: The workspace's own ontologies (copied from the base set at init; ``--ontology-dir`` overrides).
ONTOLOGY_DIR = "ontologies"
DEFAULT_WORKSPACE = "./mabos-workspace"
ENV_WORKSPACE = "MABOS_WORKSPACE"
ENV_EMBEDDER = "MABOS_EMBEDDER"


def embedder_kind(config: RecallConfig) -> str:
    """``local``, ``http`` or ``none`` (``$MABOS_EMBEDDER`` over ``[recall] embedder``), checked: a bad value or an
    http embedder without a URL is a :class:`WorkspaceError` when the workspace opens, before anything loads."""
    kind = os.environ.get(ENV_EMBEDDER) or config.embedder
    if kind not in {"local", "http", "none"}:
        raise WorkspaceError(f"{ENV_EMBEDDER}: must be local, http or none, got {kind!r}")
    if kind == "http" and not config.embedder_url:
        raise WorkspaceError(f"{CONFIG_FILE}: recall.embedder_url: required when the embedder is http")
    return kind


def make_embedder(config: RecallConfig, cache: EmbeddingCache, kind: str | None = None) -> Embedder | None:
    """The configured embedder behind the store's embedding cache (None for ``none``); nothing loads yet. ``kind``:
    what :func:`embedder_kind` said (read now when not given)."""
    from kg.recall.embedder import SentenceTransformerEmbedder  # noqa: PLC0415 - recall loads on first use
    from kg.recall.embedding_cache import CachedEmbedder  # noqa: PLC0415
    from kg.recall.http_embedder import HttpEmbedder  # noqa: PLC0415

    kind = kind or embedder_kind(config)
    if kind == "none":
        return None
    if kind == "http" and config.embedder_url:  # embedder_kind refused an http embedder without a URL
        inner: Embedder = HttpEmbedder(config.embedder_url, model=config.embedder_model,
                                       dimension=config.embedder_dimension,
                                       api_key_env=config.embedder_api_key_env)  # fmt: skip
    else:
        inner = SentenceTransformerEmbedder()  # the packaged all-MiniLM-L6-v2; embedder_model is for http
    return CachedEmbedder(inner, cache)


def recall_settings(config: RecallConfig) -> RecallSettings:
    """The engine's settings from ``[recall]``."""
    from kg.recall.decay import DecaySettings  # noqa: PLC0415 - recall loads on first use
    from kg.recall.engine import RecallSettings  # noqa: PLC0415
    from kg.recall.fusion import DEFAULT_DECAY  # noqa: PLC0415
    from kg.recall.fusion_types import DEFAULT_FUSION, FusionSettings  # noqa: PLC0415

    weights = {"vector_weight": config.vector_weight, "bm25_weight": config.bm25_weight}
    unset = (config.vector_weight, config.bm25_weight) == (DEFAULT_FUSION.vector_weight, DEFAULT_FUSION.bm25_weight)
    fusion = DEFAULT_FUSION if unset else parse(FusionSettings, weights)  # the defaults build no validator
    decay = DEFAULT_DECAY if config.decay else DecaySettings(boost_min=1.0)
    chosen: dict[str, Any] = {"fusion": fusion, "decay": decay}
    if config.inline_index_limit is not None:  # unset: the engine's own default
        chosen["inline_index_limit"] = config.inline_index_limit
    # every value is validated already (two models and a [recall] setting): constructing skips building the engine
    # settings' validator, which a cold recall would pay for at every call (the engine reads the fields only)
    return RecallSettings.model_construct(**chosen)


def default_path() -> Path:
    """``$MABOS_WORKSPACE`` or ``./mabos-workspace``."""
    return Path(os.environ.get(ENV_WORKSPACE) or DEFAULT_WORKSPACE)


def workspace_name(path: Path) -> str:
    """A valid workspace name from a directory name (``My Space`` -> ``my-space``)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", path.resolve().name.lower()).strip("-_") or "workspace"
    return name[:64]


T = TypeVar("T")


class _Service(Generic[T]):
    """A workspace attribute built on first use, once (under the workspace's lock: MCP serves threads)."""

    def __init__(self, build: Callable[[Workspace], T]) -> None:
        self.build = build
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, ws: None, owner: type) -> _Service[T]: ...
    @overload
    def __get__(self, ws: Workspace, owner: type) -> T: ...
    def __get__(self, ws: Workspace | None, owner: type) -> _Service[T] | T:
        if ws is None:
            return self
        with ws._lock:
            if self.name not in ws.__dict__:  # a second thread finds what the first one built
                ws.__dict__[self.name] = self.build(ws)
        return ws.__dict__[self.name]  # type: ignore[no-any-return]


class Workspace:
    """An open workspace: its settings, clock, the store's ports and the services built on them.

    Attributes:
        path: The workspace folder.
        config: ``mabos.toml``.
        clock: Every timestamp comes from it.
        ports: The store's ports by role (:class:`kg.ports.StorePorts`); the adapter itself stays private.
        opened: What the open housekeeping repaired.
    """

    def __init__(self, path: Path, config: WorkspaceConfig, *, clock: Clock | None = None) -> None:
        self.path = path
        self.config = config
        self.clock: Clock = clock or SystemClock()
        self._embedder_kind = embedder_kind(config.recall)  # read at open: a bad setting fails the open, as before
        self._lock = threading.RLock()
        self._store = open_store(config.store, path / STATE_DIR / DB_FILE, clock=self.clock)
        self.ports = StorePorts.of(self._store)
        self.opened = open_housekeeping(self)

    @_Service
    def scopes(self) -> ScopePolicy:
        """Who may read and write which scopes."""
        from kg.scopes import ScopePolicy  # noqa: PLC0415 - services load on first use

        return ScopePolicy(self.ports, self.clock)

    @_Service
    def agents(self) -> AgentService:
        """Agents and their folders."""
        from kg.agents import AgentService  # noqa: PLC0415

        return AgentService(self.ports, self.clock, self.path / "agents")

    @_Service
    def facts(self) -> FactService:
        """Facts, scoped."""
        from kg.facts import FactService  # noqa: PLC0415

        return FactService(self.ports, self.scopes)

    @_Service
    def bdi(self) -> BDIService:
        """Beliefs, desires, goals, intentions and plans."""
        from kg.bdi import BDIService  # noqa: PLC0415

        return BDIService(self.ports, self.scopes, self.clock)

    @_Service
    def embedder(self) -> Embedder | None:
        """The configured embedder behind the embedding cache (None for ``none``; the model loads on first use)."""
        return make_embedder(self.config.recall, self.ports.embeddings, self._embedder_kind)

    @_Service
    def vectors(self) -> VectorSidecar | None:
        """The vector index beside the store (None without an embedder)."""
        from kg.recall.sidecar import VectorSidecar  # noqa: PLC0415

        embedder = self.embedder
        return VectorSidecar(self.path / VECTORS_DIR, self.ports, embedder) if embedder is not None else None

    @_Service
    def recall_engine(self) -> RecallEngine:
        """Hybrid recall over the store, the embedder and the vector index."""
        from kg.recall.engine import RecallEngine  # noqa: PLC0415

        return RecallEngine(self.ports, self.embedder, self.vectors, recall_settings(self.config.recall))

    @_Service
    def memory(self) -> MemoryService:
        """Memory items and recall."""
        from kg.memory.service import MemoryService  # noqa: PLC0415

        return MemoryService(self.ports, self.scopes, self.clock, self.path, engine=self.recall_engine)

    @_Service
    def tokens(self) -> TokenService:
        """API tokens of remote callers (MCP over HTTP); the token store is not among the ports."""
        from kg.tokens import TokenService  # noqa: PLC0415

        return TokenService(self._store.tokens, self.clock)

    @_Service
    def conversations(self) -> ConversationService:
        """Conversation memory (the LLM, when configured, is checked when this is first built)."""
        from kg.conversation.extractive import ExtractiveSummarizer  # noqa: PLC0415
        from kg.conversation.llm import configured_chat  # noqa: PLC0415
        from kg.conversation.service import ConversationService  # noqa: PLC0415
        from kg.conversation.summarize import make_summarizer  # noqa: PLC0415

        chat = configured_chat(self.config)  # the one chat model: [llm]/[conversation], MABOS_LLM_* for a run
        summarizer = make_summarizer(chat)  # extractive by BM25 salience: offline and fast (no model load)
        fallback = ExtractiveSummarizer() if chat is not None else None
        return ConversationService(self.ports, self.scopes, self.clock, summarizer=summarizer, fallback=fallback,
                                   checkpoints=self.path, embedder=self.embedder)  # fmt: skip

    def status(self) -> dict[str, Any]:
        """Workspace facts and store statistics."""
        return {"workspace": str(self.path), "name": self.config.name, "store": self.ports.stats()}

    def read_sql(self, sql: str, *, limit: int = 1000, timeout: float = SQL_TIMEOUT) -> SqlResult:
        """One read-only SQL statement on the store, on a connection of its own (``mabos graph sql``; every
        scope: the workspace owner's window, never an agent's). See :func:`kg.backends.read_only_sql`."""
        return read_only_sql(self.config.store, self.path / STATE_DIR / DB_FILE, sql, limit=limit, timeout=timeout)

    def close(self) -> None:
        """Write recall accesses still waiting (a recall could not write them), save what the vector index gained
        in this session (when it was opened), then close the store."""
        memory = self.__dict__.get("memory")
        if memory is not None:
            why = memory.flush_access()
            if why is not None:  # the store refused the write (read-only, locked): counts only, never an answer
                logger().warning("recall accesses not recorded on close: %s", why)
        vectors = self.__dict__.get("vectors")
        if vectors is not None:
            try:
                vectors.save()
            except Exception as exc:  # derived data: the queue still has it, the next pass redoes it
                logger().warning("vector index not saved on close: %s", exc)
        self._store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Housekeeping(Model):
    """What opening the workspace repaired: leftover temp files removed, daily-log entries appended."""

    removed_temp_files: list[str] = Field(default_factory=new_list)
    daily_log_entries_appended: list[str] = Field(default_factory=new_list)
    errors: list[str] = Field(default_factory=new_list)


def open_housekeeping(ws: Workspace) -> Housekeeping:
    """Remove the temp files interrupted writes left (:mod:`kg.tempfiles`) and complete the daily logs from the
    store (:mod:`kg.memory.daily_log`). Neither ever keeps the workspace from opening: a failure is logged,
    reported in ``errors`` and tried again at the next open. When there is nothing to repair the store is not
    written (a workspace opened for a refused call stays byte-for-byte as it was): the daily-log mark moves with
    the process's first write instead (:func:`kg.memory.daily_log.settle_with_next_write`)."""
    removed: list[str] = []
    appended: list[str] = []
    errors: list[str] = []
    try:
        removed = [str(p) for p in remove_stale(ws.path, vectors=ws.path / VECTORS_DIR, vector_lock=LOCK_FILE)]
    except OSError as exc:
        errors.append(f"temp files: {exc}")
    try:
        report = catch_up(ws.path, ws.ports, settle_after=SETTLE_AFTER)
        appended = list(report.appended)
        settle_with_next_write(ws.ports, report)  # the mark moves with the process's first write, if any
    except Exception as exc:  # derived data: a store that cannot be read now is caught up at a later open
        errors.append(f"daily logs: {exc}")
    for error in errors:
        logger().warning("workspace open: %s", error)
    # lists of str made here: nothing to validate, and validating would build the model's validator at every open
    # (a cold command pays for each model it builds: docs/decisions/2026-11-29-lazy-startup.md)
    return Housekeeping.model_construct(removed_temp_files=removed, daily_log_entries_appended=appended, errors=errors)


def init_workspace(path: Path | str | None = None, *, name: str | None = None, clock: Clock | None = None) -> Workspace:
    """Create (or reuse) a workspace at ``path`` and open it; an existing one is left as it is."""
    root = Path(path) if path is not None else default_path()
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"workspace: {root} exists and is not a directory")
    if not (root / CONFIG_FILE).exists():
        created = format_ts((clock or SystemClock()).now())
        config = parse(WorkspaceConfig, {"name": name or workspace_name(root), "created_at": created})
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".{CONFIG_FILE}.tmp"
        tmp.write_text(render_config(config), encoding="utf-8")
        tmp.replace(root / CONFIG_FILE)
    (root / STATE_DIR).mkdir(exist_ok=True)
    (root / "agents").mkdir(exist_ok=True)
    copy_base_ontologies(root / ONTOLOGY_DIR)
    return open_workspace(root, clock=clock)


def base_ontologies_dir() -> Path | None:
    """The shipped ontologies (``ontologies/`` of a source checkout, or ``<prefix>/share/mabos/ontologies``)."""
    for candidate in (
        Path(__file__).resolve().parents[1] / ONTOLOGY_DIR,
        Path(sys.prefix) / "share" / "mabos" / ONTOLOGY_DIR,
    ):
        if candidate.is_dir() and any(candidate.glob("*.jsonld")):
            return candidate
    return None


def copy_base_ontologies(target: Path) -> list[Path]:
    """Copy the base ontologies and templates into a workspace's ontology folder, once (each workspace then
    evolves its own); nothing is copied when the folder exists. Returns the files copied."""
    source = base_ontologies_dir()
    if source is None or target.exists():
        return []
    import shutil  # noqa: PLC0415 - here only: an open copies nothing, and shutil imports bz2, lzma, fnmatch ...

    staging = target.with_name(f".{target.name}.tmp")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    copied = []
    for path in sorted([*source.glob("*.jsonld"), *source.glob("templates/*.jsonld")]):
        destination = staging / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        copied.append(target / path.relative_to(source))
    staging.replace(target)  # all or nothing
    return copied


def open_workspace(path: Path | str | None = None, *, clock: Clock | None = None) -> Workspace:
    """Open the workspace at ``path`` (default ``$MABOS_WORKSPACE`` or ``./mabos-workspace``)."""
    root = Path(path) if path is not None else default_path()
    config = read_config(root)
    (root / STATE_DIR).mkdir(exist_ok=True)
    return Workspace(root, config, clock=clock)


__all__ = [
    "CONFIG_FILE",
    "DB_FILE",
    "DEFAULT_WORKSPACE",
    "ENV_EMBEDDER",
    "ENV_WORKSPACE",
    "ONTOLOGY_DIR",
    "STATE_DIR",
    "Housekeeping",
    "Workspace",
    "WorkspaceConfig",
    "base_ontologies_dir",
    "copy_base_ontologies",
    "default_path",
    "embedder_kind",
    "init_workspace",
    "make_embedder",
    "open_housekeeping",
    "open_workspace",
    "read_config",
    "recall_settings",
    "workspace_name",
]
