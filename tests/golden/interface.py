"""The public interface of mabos as data: every leaf command's click parameters and every tool's input schema.

``tests/cli/test_interface_golden.py`` compares :func:`commands` and :func:`tools` with the checked-in
``cli_params.json`` and ``tool_inputs.json`` beside this file, so a refactoring of how options and schemas are
declared (issue 34: one request model per use case) cannot change a flag, its help, default or choices, or a
tool schema unnoticed. After a deliberate change, rewrite the files and say why in the commit message::

    .venv/bin/python -m tests.golden.interface --write
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

HERE = Path(__file__).resolve().parent
CLI_FILE = HERE / "cli_params.json"
TOOLS_FILE = HERE / "tool_inputs.json"
#: A fixed help width, so a help record does not depend on the terminal.
WIDTH = 100


def _jsonable(value: Any) -> Any:
    """A default or a type's info as JSON data (tuples as lists, anything else as its text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if getattr(value, "value", None) is not None and type(value).__module__.startswith("enum"):
        return value.value
    return repr(value) if callable(value) else str(value)


def _param(param: click.Parameter, ctx: click.Context) -> dict[str, Any]:
    info = param.to_info_dict()
    info.pop("envvar", None) if info.get("envvar") is None else None
    described: dict[str, Any] = {
        "name": param.name,
        "kind": info.pop("param_type_name"),
        **{key: _jsonable(info[key]) for key in sorted(info) if key not in ("name",)},
    }
    if isinstance(param, click.Option):
        record = param.get_help_record(ctx)
        described["help_record"] = list(record) if record else None
    else:
        described["metavar"] = param.make_metavar(ctx)
    return described


def _leaves(command: click.Command, path: tuple[str, ...], ctx: click.Context) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                with click.Context(sub, info_name=name, parent=ctx, terminal_width=WIDTH) as inner:
                    found.update(_leaves(sub, (*path, name), inner))
        return found
    found[" ".join(path)] = [_param(p, ctx) for p in command.params if p.name != "help"]
    return found


def commands() -> dict[str, Any]:
    """Every leaf command of ``mabos`` by its path (``fact query``) -> its parameters, in declaration order."""
    from cli.main import cli  # noqa: PLC0415 - imported when asked, as the tests do

    with click.Context(cli, info_name="mabos", terminal_width=WIDTH) as ctx:
        return _leaves(cli, (), ctx)


def tools() -> dict[str, Any]:
    """Every registry tool by name -> its group, description and input JSON schema."""
    from cli.tools.registry import REGISTRY  # noqa: PLC0415

    return {
        name: {"group": found.group, "description": found.description, "input_schema": found.input_schema()}
        for name, found in REGISTRY.items()
    }


def dumps(data: Any) -> str:
    """The golden files' text: indented, keys as given, a final newline."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def dumps_commands(data: dict[str, list[dict[str, Any]]]) -> str:
    """The commands' golden text: one line per parameter, so a diff names the parameter that changed."""
    lines = []
    for index, (path, params) in enumerate(data.items()):
        rows = ",\n".join(f"  {json.dumps(p, ensure_ascii=False)}" for p in params)
        comma = "," if index < len(data) - 1 else ""
        lines.append(f" {json.dumps(path)}: [\n{rows}\n ]{comma}" if params else f" {json.dumps(path)}: []{comma}")
    return "{\n" + "\n".join(lines) + "\n}\n"


def main(argv: list[str]) -> int:
    """``--write`` rewrites both golden files from the code as it is now."""
    if argv != ["--write"]:
        print(__doc__)
        return 2
    CLI_FILE.write_text(dumps_commands(commands()), encoding="utf-8")
    TOOLS_FILE.write_text(dumps(tools()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
