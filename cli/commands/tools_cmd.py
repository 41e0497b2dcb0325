"""``mabos tools list|export|docs``: the tool registry itself (what agents can call, and its definitions)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cli import render
from cli.common import Session, mabos_options
from cli.tools import export
from kg.errors import InputError


@click.group("tools")
def tools() -> None:
    """The agent tools: list them, export their definitions, generate their docs.

    The same tools run from the CLI, from Python (cli.tools.call) and over MCP (mabos serve --mcp).
    """


@tools.command("list")
@click.option("--group", "group", default=None, help="Only the tools of this group (e.g. memory).")
@mabos_options
def list_(out: Session, *, group: str | None) -> None:
    """List every tool: name, group and the first sentence of its description.

    Example:

    \b
      mabos tools list --group memory
    """
    rows = [
        {"name": t.name, "group": t.group, "summary": export.summary(t.description)}
        for t in export.tools()
        if group is None or t.group == group
    ]
    table = render.table("Tools", ["name", "group", "summary"], ([r["name"], r["group"], r["summary"]] for r in rows))
    out.emit(rows, table, render.count(rows, "tool"))


@tools.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(export.FORMATS),
    default="mcp",
    show_default=True,
    help="mcp: {name, description, inputSchema, outputSchema}; openai: {type: function, function: {name, "
    "description, parameters}}; openclaw: {name, description, parameters}.",
)
@click.option("--tool", "names", multiple=True, metavar="NAME", help="Only this tool (repeatable).")
@mabos_options
def export_(out: Session, *, fmt: str, names: tuple[str, ...]) -> None:
    """Print the JSON tool definitions for an agent framework (always JSON, a list).

    Every schema is the tool's input model's JSON schema; docs/tools.md describes the same tools.

    Example:

    \b
      mabos tools export --format openai > tools.json
      mabos tools export --format mcp --tool memory_recall
    """
    data = export.definitions(fmt, names or None)
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@tools.command("docs")
@click.option(
    "--out",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs/tools.md"),
    show_default=True,
    help="Where to write the page.",
)
@click.option("--check", is_flag=True, help="Write nothing; fail (exit 1) when the file differs from the registry.")
@mabos_options
def docs(out: Session, *, path: Path, check: bool) -> None:
    """Generate the tools reference (docs/tools.md) from the registry.

    Per group, each tool: its description, a parameter table (types, defaults, limits) and its output fields.

    Example:

    \b
      mabos tools docs --out docs/tools.md
      mabos tools docs --check
    """
    text = export.render_docs()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    changed = current != text
    if check and current is None:
        raise InputError("--out", f"{path} does not exist (run from the repository root, or name the page with --out)")
    if check and changed:
        raise InputError("--out", f"{path} is stale: run 'mabos tools docs --out {path}'")
    if changed and not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    result = {"path": str(path), "tools": sum(map(len, export.groups().values())), "changed": changed}
    out.emit(result, render.done(f"{'Wrote' if changed else 'Up to date'}: {path} ({result['tools']} tools)"))
