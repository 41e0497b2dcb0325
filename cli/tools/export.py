"""The registry seen from outside: tool definitions for other agent frameworks and the docs page.

Formats of :func:`definitions` (``mabos tools export --format ...``):

- ``mcp``: a list of MCP tool objects ``{"name", "description", "inputSchema", "outputSchema"}`` (what
  ``mabos serve --mcp`` answers to ``tools/list``);
- ``openai``: a list of OpenAI function tools ``{"type": "function", "function": {"name", "description",
  "parameters"}}`` (Chat Completions ``tools=``);
- ``openclaw``: a plain list ``{"name", "description", "parameters"}`` (OpenClaw's plugin tool shape, also
  what most agent frameworks accept).

Every schema is the input model's JSON schema (pydantic's, with ``$defs`` for nested models).
:func:`render_docs` builds ``docs/tools.md``; a unit test fails when the checked-in file differs from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from cli.tools.registry import REGISTRY, Tool
from kg.errors import InputError

FORMATS = ("mcp", "openai", "openclaw")

#: Schema keywords shown in the "limits" column of the docs, with how they read.
_LIMITS = (
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("minLength", "length >= {}"),
    ("maxLength", "length <= {}"),
    ("minItems", "items >= {}"),
    ("maxItems", "items <= {}"),
    ("pattern", "matches `{}`"),
)


def tools(names: Iterable[str] | None = None) -> list[Tool[Any, Any]]:
    """Registered tools in registration order (only ``names`` when given; an unknown name is an input error)."""
    if names is None:
        return list(REGISTRY.values())
    chosen = list(names)
    unknown = [name for name in chosen if name not in REGISTRY]
    if unknown:
        raise InputError("tool", f"no tool {unknown[0]!r}")
    return [REGISTRY[name] for name in chosen]


def summary(description: str) -> str:
    """The first sentence of a description."""
    match = re.match(r"(.+?(?<!e\.g)(?<!i\.e)[.!?])(?=\s+[A-Z0-9`'\"(]|$)", description.strip(), re.S)
    return match.group(1) if match else description.strip()


def rooted(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a root ``$ref`` (pydantic's shape for a recursive model) replaced by the model it names.

    MCP and OpenAI want ``"type": "object"`` at the root; the ``$defs`` stay, so recursive references resolve.
    """
    ref = schema.get("$ref")
    defs = schema.get("$defs", {})
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    target = defs.get(ref.removeprefix("#/$defs/"))
    if not isinstance(target, dict):
        return schema
    rest = {key: value for key, value in schema.items() if key != "$ref"}
    return {**target, **rest}


#: (model, mode) -> its rooted JSON schema as text (:func:`_schema_text`).
_SCHEMAS: dict[tuple[type[BaseModel], str], str] = {}


def _schema_text(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> str:
    """A model's rooted JSON schema as text, made once per process: pydantic builds it anew on every call (the MCP
    server asks for a tool's input schema on each call, ``tools/list`` for all of them)."""
    text = _SCHEMAS.get((model, mode))
    if text is None:
        text = _SCHEMAS[model, mode] = json.dumps(rooted(model.model_json_schema(mode=mode)))
    return text


def input_schema(found: Tool[Any, Any]) -> dict[str, Any]:
    """The JSON schema of the tool's arguments (the input model's), an object at the root (a fresh copy: the
    caller may change it)."""
    return json.loads(_schema_text(found.input, "validation"))  # type: ignore[no-any-return]


def output_schema(found: Tool[Any, Any]) -> dict[str, Any]:
    """The JSON schema of what the tool returns, as serialized (``model_dump(mode="json")``), rooted (a fresh
    copy)."""
    return json.loads(_schema_text(found.output, "serialization"))  # type: ignore[no-any-return]


def definition(found: Tool[Any, Any], fmt: str) -> dict[str, Any]:
    """One tool's definition in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "mcp":
        return {
            "name": found.name,
            "description": found.description,
            "inputSchema": input_schema(found),
            "outputSchema": output_schema(found),
        }
    if fmt == "openai":
        function = {"name": found.name, "description": found.description, "parameters": input_schema(found)}
        return {"type": "function", "function": function}
    if fmt == "openclaw":
        return {"name": found.name, "description": found.description, "parameters": input_schema(found)}
    raise InputError("format", f"must be one of {', '.join(FORMATS)} (got {fmt!r})")


def definitions(fmt: str, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every tool's (or the named tools') definition in format ``fmt``."""
    if fmt not in FORMATS:
        raise InputError("format", f"must be one of {', '.join(FORMATS)} (got {fmt!r})")
    return [definition(found, fmt) for found in tools(names)]


def groups() -> dict[str, list[Tool[Any, Any]]]:
    """Tools by group, groups in order of their first tool."""
    grouped: dict[str, list[Tool[Any, Any]]] = {}
    for found in REGISTRY.values():
        grouped.setdefault(found.group, []).append(found)
    return grouped


# --- docs/tools.md ---------------------------------------------------------------------------------------------

_HEADER = """\
# Tools

<!-- Generated from the tool registry (cli/tools) by `mabos tools docs`. Do not edit by hand:
     tests/unit/test_tools_docs.py fails when this file differs from what the registry generates. -->

Every agent-facing operation of mabos is one tool in one registry, with a pydantic input model (its JSON schema
is the tool schema) and an output model. The same tool runs from the CLI (`mabos <group> <command>`), from Python
(`cli.tools.call("memory_recall", workspace="ws", agent_id="sales-agent", query="SSO")`) and over MCP
(`mabos serve --mcp`); `mabos tools export --format mcp|openai|openclaw` prints the definitions.

Every tool also takes `agent_id`, the acting agent: required unless the server or context is bound to one agent
(`mabos serve --mcp --agent A`, `cli.tools.call(..., agent="A")`), in which case it defaults to that agent and any
other value is refused. Bad arguments fail with one error naming the field and the rule, and change nothing.

Over MCP (`mabos serve --mcp`) each call runs in a worker process and is stopped after `--deadline` seconds (default
60) with a one-line error; calls of different agents run side by side. Over HTTP a caller may send an agent's API
token (`Authorization: Bearer <secret>`, from `mabos token create`) and then acts as that agent only; off loopback a
token is required on every request (docs/security.md).

Every `mabos` command that acts for an agent runs its tool here. The operator's commands (`agent`, `scope`, `token`,
`index`, `sync nightly|import-workspace`, `graph sql|render`, `serve`, `ui`, `workspace`, `init`, `status`, `demo`)
are not tools, by design: an agent over MCP must not create agents, grant itself scopes, mint tokens or read every
scope with SQL (docs/decisions/2026-11-26-cli-registry.md).
"""


def render_docs() -> str:
    """The Markdown page documenting every registered tool (``docs/tools.md``)."""
    grouped = groups()
    count = sum(len(members) for members in grouped.values())
    lines = [_HEADER, f"{count} tools in {len(grouped)} groups.", "", "## Contents", ""]
    for group, members in grouped.items():
        lines.append(f"- **{group}**: " + ", ".join(f"[`{t.name}`](#{t.name})" for t in members))
    for group, members in grouped.items():
        lines += ["", f"## {group}"]
        for found in members:
            lines += ["", *_tool_section(found)]
    return "\n".join(lines).rstrip("\n") + "\n"


def _tool_section(found: Tool[Any, Any]) -> list[str]:
    schema = input_schema(found)
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    params = {k: v for k, v in schema.get("properties", {}).items() if k != "agent_id"}
    lines = [f"### `{found.name}`", "", found.description, ""]
    if params:
        lines += ["| parameter | type | required | default | limits | description |", "|---|---|---|---|---|---|"]
        for name, prop in params.items():
            default = _cell(json.dumps(prop["default"], ensure_ascii=False)) if "default" in prop else ""
            cells = (
                f"`{name}`",
                _cell(_type(prop, defs)),
                "yes" if name in required else "no",
                f"`{default}`" if default else "",
                _cell(_limits(prop)),
                _cell(prop.get("description", "")),
            )
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("No parameters besides `agent_id`.")
    lines += ["", *_output_section(found)]
    return lines


def _output_section(found: Tool[Any, Any]) -> list[str]:
    schema = output_schema(found)
    defs = schema.get("$defs", {})
    fields = schema.get("properties", {})
    lines = [f"Returns `{found.output.__name__}`" + (":" if fields else " (no fields).")]
    if fields:
        lines += ["", "| field | type | description |", "|---|---|---|"]
        for name, prop in fields.items():
            lines.append(f"| `{name}` | {_cell(_type(prop, defs))} | {_cell(prop.get('description', ''))} |")
    return lines


def _type(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """A short readable type for one schema node (``string | null``, ``array of Fact``, ``"a" | "b"``)."""
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(name, {})
        return _type(target, defs) if "enum" in target else name
    if "const" in prop or "enum" in prop:
        return " | ".join(json.dumps(value) for value in prop.get("enum", [prop.get("const")]))
    options = prop.get("anyOf") or prop.get("oneOf") or prop.get("allOf")
    if options:
        return " | ".join(dict.fromkeys(_type(option, defs) for option in options))
    return _plain_type(prop, defs)


def _plain_type(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    inner = {"array": prop.get("items"), "object": prop.get("additionalProperties")}.get(str(kind))
    if isinstance(inner, Mapping) and inner:
        return f"{kind} of {_type(inner, defs)}"
    if kind == "string" and "format" in prop:
        return f"string ({prop['format']})"
    return str(kind) if kind else "any"


def _limits(prop: Mapping[str, Any]) -> str:
    found = [template.format(prop[key]) for key, template in _LIMITS if key in prop]
    for option in prop.get("anyOf", []):
        if isinstance(option, Mapping) and "$ref" not in option:
            found += [template.format(option[key]) for key, template in _LIMITS if key in option]
    items = prop.get("items")
    if isinstance(items, Mapping):
        found += [f"each {template.format(items[key])}" for key, template in _LIMITS if key in items]
    return ", ".join(dict.fromkeys(found))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


__all__ = [
    "FORMATS",
    "definition",
    "definitions",
    "groups",
    "input_schema",
    "output_schema",
    "render_docs",
    "rooted",
    "summary",
    "tools",
]
