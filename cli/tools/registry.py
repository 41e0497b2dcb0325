"""The tool registry: every agent-facing operation once, with a pydantic input and output model and a handler.

The CLI commands, the Python API (:func:`cli.tools.call`) and the MCP server all run tools through
:func:`run`, so there is one implementation of each. A tool is declared with :func:`tool`::

    class RecallInput(ToolInput):
        query: str = Field(description="What to look for.")
        limit: int = Field(20, ge=1, le=100)

    @tool("memory_recall", group="memory",
          description="Find the agent's memories about a topic. Use before answering from memory ...")
    def memory_recall(ctx: ToolContext, args: RecallInput) -> RecallResult:
        return ctx.workspace().memory.recall(ctx.agent_for(args), args.query, limit=args.limit)

The handler's annotations are the tool's input and output models (said once, where mypy checks the body).

Agent identity: every input has ``agent_id``. A context may fix the agent (``mabos serve --mcp --agent A``):
then ``agent_id`` defaults to it and any other value is refused (:class:`~kg.errors.ScopeError`), so one
agent's server can never act as another. Bad arguments raise :class:`~kg.errors.InputError` naming the
field and the rule, before the handler runs.
"""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cli.tools.tool_table import INFRASTRUCTURE, TOOL_PACKAGE, TOOL_TABLE, ToolRegistry
from kg.errors import InputError, ScopeError
from kg.models import describe_validation_error

if TYPE_CHECKING:
    from kg.workspace import Workspace

I = TypeVar("I", bound="ToolInput")  # noqa: E741 - the conventional name of an input type variable
O = TypeVar("O", bound=BaseModel)  # noqa: E741


#: The tool names of the original system (issue 9): the registry keeps every one of them.
SEED_TOOL_NAMES: tuple[str, ...] = (
    "memory_store_item",
    "memory_recall",
    "memory_consolidate",
    "memory_checkpoint",
    "memory_build_hierarchy",
    "memory_hierarchy_search",
    "memory_status",
    "fact_assert",
    "fact_retract",
    "fact_query",
    "fact_explain",
    "rule_create",
    "rule_list",
    "rule_toggle",
    "constraint_check",
    "policy_eval",
    "infer_forward",
    "infer_backward",
    "infer_abductive",
    "knowledge_explain",
    "cbr_retrieve",
    "cbr_store",
    "ontology_propose_concept",
    "ontology_validate_proposal",
    "ontology_merge_approved",
    "ontology_list_proposals",
    "ontology_scaffold_domain",
    "reason",
    "bdi_cycle",
    "graph_query",
    "typedb_status",
    "typedb_sync_schema",
    "typedb_query",
    "typedb_sync_agent_data",
    "lcm_grep",
    "lcm_describe",
    "lcm_expand",
    "context_assemble",
)


class ToolOutput(BaseModel):
    """Base of every model a tool answers with (and of their parts): its validator and serializer are built when it
    is first used, not when its module is imported, so a command pays only for the models of the tool it runs (a
    module declares every tool of its group). pydantic builds a deferred model under a lock: threads meeting it
    first are safe."""

    model_config = ConfigDict(defer_build=True)


class ToolInput(BaseModel):
    """Base of every tool input: unknown fields refused; ``agent_id`` is the acting agent. Built on first use, as
    every input deriving from it (as :class:`ToolOutput`)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    agent_id: str | None = Field(
        default=None,
        description="The acting agent's id. Optional when the server is bound to one agent; otherwise required.",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_lone_surrogates(cls, data: Any) -> Any:
        # pydantic passes a str with a lone surrogate through unless the field has constraints; SQLite and UTF-8 files
        # then fail with UnicodeEncodeError, so refuse it here, for every field of every tool, naming the field.
        if isinstance(data, dict):
            for key, value in data.items():
                bad = _surrogate(value)
                if bad is not None:
                    name = key if isinstance(key, str) and key.isidentifier() else "arguments"
                    raise ValueError(
                        f"{name}: must be valid Unicode text; it holds the lone surrogate U+{ord(bad):04X}"
                    )
            # pydantic reads a number given for a date as seconds since 1970 (``since: 0`` became 1970-01-01);
            # the schema says ISO 8601 text, so a number is the wrong type, as it is for every other text field.
            for key, kind in _time_fields(cls).items():
                value = data.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    raise ValueError(f"{key}: must be an ISO 8601 {kind} as text, not a number")
            # an integer field's value reaches SQLite (a mark, a limit, an offset), whose integers are 64-bit: a
            # bigger one raised OverflowError deep in a query (slow bad-input fuzzing: memory_extract since=2**63).
            for key in _int_fields(cls):
                value = data.get(key)
                values = value if isinstance(value, list) else [value]
                if any(isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX
                       for v in values):  # fmt: skip
                    raise ValueError(f"{key}: must be a 64-bit integer, between -2**63 and 2**63-1")
        return data


#: The range of a SQLite integer (and of every integer field of a tool input).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@functools.cache
def _int_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of ``model`` that take an integer (alone, optional, or in a list)."""
    return tuple(name for name, info in model.model_fields.items() if int in _types_in(info.annotation))


@functools.cache
def _time_fields(model: type[BaseModel]) -> dict[str, str]:
    """The fields of ``model`` that hold a date or a date-time, and which of the two."""
    found: dict[str, str] = {}
    for name, info in model.model_fields.items():
        kinds = _types_in(info.annotation)
        if datetime in kinds:
            found[name] = "date-time"
        elif date in kinds:
            found[name] = "date"
    return found


def _types_in(annotation: Any) -> set[Any]:
    """Every type named in ``annotation``, through unions, ``Annotated`` and containers."""
    return {annotation, *(inner for arg in typing.get_args(annotation) for inner in _types_in(arg))}


def _surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string, or in the strings, keys and values of a list or dict; else None."""
    if isinstance(value, str):
        if value.isascii():  # constant time in CPython (the string knows): a 10 MB text skips the scan
            return None
        found = _lone_surrogate().search(value)
        return found.group() if found else None
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else value if isinstance(value, list) else []
    return next((bad for bad in map(_surrogate, items) if bad is not None), None)


@functools.cache
def _lone_surrogate() -> re.Pattern[str]:
    """The pattern of a lone surrogate, compiled when first needed (about 2 M instructions): ASCII text, almost
    every call, never needs it."""
    return re.compile("[\ud800-\udfff]")


class ToolContext:
    """Where tools run: the workspace (opened on first use, closed by :meth:`close`) and the bound agent.

    Args:
        path: the workspace directory (default ``$MABOS_WORKSPACE`` or ``./mabos-workspace``).
        agent: the agent this context acts as (a server bound with ``--agent``), or None.
        workspace_obj: an already open workspace to use instead of opening ``path`` (not closed by us).
        operator: whether the caller is the workspace's operator (the CLI, Python code), who may act as no agent
            and see every scope in the operator tools; an MCP server's callers are not (``False``): they always
            act as an agent.

    A plain class, not a dataclass (as :class:`cli.tools.overrides.CommandContext`): every command defines both, and
    their generated methods cost a cold command about 5 M instructions (issue 33).
    """

    def __init__(self, path: Path | str | None = None, agent: str | None = None, workspace_obj: Workspace | None = None,
                 operator: bool = True) -> None:  # fmt: skip
        # Python callers pass anything: refuse what is not an agent id or a path here, as an InputError naming the
        # argument, rather than as a TypeError from deep inside the scope checks or pathlib.
        if agent is not None and not isinstance(agent, str):
            raise InputError("agent", f"must be an agent id (a string), got {type(agent).__name__}")
        if path is not None and not isinstance(path, str | Path):
            raise InputError("workspace", f"must be a path (a string), got {type(path).__name__}")
        self.path: Path | None = Path(path) if path is not None else None
        self.agent = agent
        self.workspace_obj = workspace_obj
        self.operator = operator
        self._opened: Workspace | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(path={self.path!r}, agent={self.agent!r}, operator={self.operator!r})"

    def workspace(self) -> Workspace:
        """The open workspace."""
        if self.workspace_obj is not None:
            return self.workspace_obj
        if self._opened is None:
            from kg.workspace import default_path, open_workspace  # noqa: PLC0415 - not imported to list tools

            self._opened = open_workspace(self.path or default_path())
        return self._opened

    def agent_for(self, args: ToolInput) -> str:
        """The acting agent: ``args.agent_id``, or the bound agent; a different agent than the bound one is
        refused, and none at all is an input error."""
        if self.agent is not None and args.agent_id not in (None, self.agent):
            raise ScopeError(f"agent_id: this server acts as {self.agent!r}; it cannot act as {args.agent_id!r}")
        chosen = args.agent_id or self.agent
        if chosen is None:
            raise InputError("agent_id", "required (the acting agent's id)")
        return chosen

    def require_operator(self, field_name: str, what: str) -> None:
        """Refuse (:class:`ScopeError`) an operation that reads or changes every agent's data unless the caller is
        the operator and acts as no particular agent."""
        if self.agent is not None:
            raise ScopeError(f"{field_name}: {what}; this server acts as {self.agent!r} only")
        if not self.operator:
            raise ScopeError(f"{field_name}: {what}; only the workspace's operator may (CLI or Python, not MCP)")

    def close(self) -> None:
        """Close the workspace this context opened."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None


class Tool(NamedTuple, Generic[I, O]):
    """One tool: its name, group, description for an LLM, input and output models, and handler (a named tuple: a
    frozen dataclass's generated methods cost every command about 4 M instructions to define; issue 33)."""

    name: str
    group: str
    description: str
    input: type[I]
    output: type[O]
    handler: Callable[[ToolContext, I], O]

    def input_schema(self) -> dict[str, Any]:
        """The input's JSON schema (the tool schema of MCP and OpenAI)."""
        return self.input.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        """The output's JSON schema."""
        return self.output.model_json_schema()

    def parse(self, arguments: Mapping[str, Any]) -> I:
        """Validate raw arguments; an :class:`InputError` names the first bad field and its rule."""
        try:
            return self.input.model_validate(dict(arguments))
        except ValidationError as exc:
            error = describe_validation_error(exc)
            raise InputError(error.field, error.rule) from None


#: Every tool by name, in the order of :data:`~cli.tools.tool_table.TOOL_TABLE` (then any other registered tool,
#: in registration order); each tool's module is imported when the tool is first needed.
REGISTRY: ToolRegistry[Tool[Any, Any]] = ToolRegistry(TOOL_TABLE)


class Registrar(Protocol):
    """What :func:`tool` returns: a decorator that registers a handler and returns it unchanged."""

    def __call__(self, handler: Callable[[ToolContext, I], O], /) -> Callable[[ToolContext, I], O]: ...


def tool(
    name: str,
    *,
    group: str,
    description: str,
    input: type[ToolInput] | None = None,
    output: type[BaseModel] | None = None,
) -> Registrar:
    """Register the decorated handler as tool ``name`` (names are unique; descriptions are for an LLM).

    The input and output models are the handler's annotations (its second parameter's and its return's); pass
    ``input`` and ``output`` only for a handler whose annotations cannot be resolved from its module (one defined
    inside a function).
    """

    def register(handler: Callable[[ToolContext, I], O]) -> Callable[[ToolContext, I], O]:
        if REGISTRY.registered(name):
            raise ValueError(f"tool {name!r} is registered twice")
        models = (input, output) if input is not None and output is not None else _annotated_models(handler)
        REGISTRY[name] = Tool(name, group, " ".join(description.split()), *models, handler)
        return handler

    return register


def _annotated_models(handler: Callable[..., Any]) -> tuple[type[ToolInput], type[BaseModel]]:
    """The input and output models a handler ``(ctx, args: SomeInput) -> SomeOutput`` is annotated with."""
    hints = get_type_hints(handler)
    _, args = inspect.signature(handler).parameters
    found, returned = hints.get(args), hints.get("return")
    if not (isinstance(found, type) and issubclass(found, ToolInput)):
        raise TypeError(f"tool handler {handler.__qualname__}: annotate {args!r} with a ToolInput subclass")
    if not (isinstance(returned, type) and issubclass(returned, BaseModel)):
        raise TypeError(f"tool handler {handler.__qualname__}: annotate its return with a pydantic model")
    return found, returned


def get(name: str) -> Tool[Any, Any]:
    """A tool by name, or an :class:`InputError` listing the close names."""
    if not isinstance(name, str):
        raise InputError("tool", f"must be a tool name (a string), got {type(name).__name__}")
    found = REGISTRY.get(name)
    if found is None:
        import difflib  # noqa: PLC0415 - for a name that is no tool's only

        names = sorted(REGISTRY)
        prefix = name.split("_", maxsplit=1)[0]  # a tool's group (memory, fact ...): "" for "__class__" or ""
        close = difflib.get_close_matches(name[:100], names, n=5) or [n for n in names if prefix and prefix in n][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError("tool", f"no tool {name!r}{hint}")
    return found


def run(ctx: ToolContext, name: str, arguments: Mapping[str, Any] | BaseModel) -> BaseModel:
    """Validate ``arguments`` for tool ``name`` and run it in ``ctx``; the tool's output model."""
    found = get(name)
    if not isinstance(arguments, Mapping | BaseModel):
        raise InputError("arguments", f"must be an object of named arguments, got {type(arguments).__name__}")
    args = arguments if isinstance(arguments, found.input) else found.parse(_plain(arguments))
    return found.handler(ctx, args)  # type: ignore[no-any-return]


def _plain(arguments: Mapping[str, Any] | BaseModel) -> Mapping[str, Any]:
    return arguments.model_dump(exclude_unset=True) if isinstance(arguments, BaseModel) else arguments


@contextmanager
def context(path: Path | str | None = None, *, agent: str | None = None) -> Iterator[ToolContext]:
    """A tool context on the workspace at ``path``, closed afterwards."""
    ctx = ToolContext(path=path, agent=agent)  # checked (and made a Path) on creation
    try:
        yield ctx
    finally:
        ctx.close()


__all__ = [
    "INFRASTRUCTURE",
    "REGISTRY",
    "SEED_TOOL_NAMES",
    "TOOL_PACKAGE",
    "TOOL_TABLE",
    "Registrar",
    "Tool",
    "ToolContext",
    "ToolInput",
    "ToolOutput",
    "ToolRegistry",
    "context",
    "get",
    "run",
    "tool",
]
