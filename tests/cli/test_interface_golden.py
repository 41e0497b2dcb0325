"""Every leaf command's click parameters and every tool's input schema, as checked in (tests/golden/).

Issue 34 moves the declaration of a use case's parameters into one request model and generates the click options
and the tool schema from it; this test holds the result to what the hand-written options and models gave: names,
flags, types and choices, defaults, help (and the help line the user reads), the input schemas and descriptions.
A deliberate change rewrites the files (``.venv/bin/python -m tests.golden.interface --write``) with its reason
in the commit message.
"""

from __future__ import annotations

import json
from typing import Any

from tests.golden.interface import CLI_FILE, TOOLS_FILE, commands, tools

REWRITE = "if the change is deliberate: .venv/bin/python -m tests.golden.interface --write"


def _differences(now: dict[str, Any], pinned: dict[str, Any]) -> list[str]:
    """One line per command or tool that appeared, vanished or changed (and which parameter, for commands)."""
    lines = [f"new: {name}" for name in now.keys() - pinned.keys()]
    lines += [f"gone: {name}" for name in pinned.keys() - now.keys()]
    for name in sorted(now.keys() & pinned.keys()):
        if now[name] == pinned[name]:
            continue
        if isinstance(now[name], list):
            was = {p["name"]: p for p in pinned[name]}
            for param in now[name]:
                if was.get(param["name"]) != param:
                    changed = sorted(k for k in param if was.get(param["name"], {}).get(k) != param[k])
                    lines.append(f"{name}: {param['name']}: {', '.join(changed)}")
            if [p["name"] for p in now[name]] != [p["name"] for p in pinned[name]]:
                lines.append(f"{name}: parameters or their order changed")
        else:
            lines.append(f"changed: {name}")
    return lines


def test_every_leaf_command_keeps_its_parameters():
    pinned = json.loads(CLI_FILE.read_text(encoding="utf-8"))
    now = commands()
    assert len(now) > 100  # every leaf of every group was reached
    assert now == pinned, "\n".join([*_differences(now, pinned), REWRITE])


def test_every_tool_keeps_its_input_schema():
    pinned = json.loads(TOOLS_FILE.read_text(encoding="utf-8"))
    now = tools()
    assert len(now) > 60
    assert now == pinned, "\n".join([*_differences(now, pinned), REWRITE])
    order = {name: list(found["input_schema"].get("properties", {})) for name, found in now.items()}
    assert order == {name: list(found["input_schema"].get("properties", {})) for name, found in pinned.items()}


def test_a_changed_option_is_named():
    pinned = {"fact query": [{"name": "limit", "default": 100}], "fact_x": {"input_schema": {}}}
    now = {"fact query": [{"name": "limit", "default": 50}], "fact_y": {"input_schema": {}}}
    assert sorted(_differences(now, pinned)) == ["fact query: limit: default", "gone: fact_x", "new: fact_y"]
