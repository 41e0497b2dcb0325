"""kg.config.plain_config: the settings ``mabos init`` writes, made without the model's validator (issue 33).

Every input is also validated by the model: a plain one must give an equal model with the same fields set (and the
same in each section), anything else must be left to the model (None), so its errors stay the model's own.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from kg.config import SECTIONS, WorkspaceConfig, plain_config, read_config, render_config
from kg.errors import WorkspaceError

ROOT = Path(__file__).resolve().parents[2]

PLAIN: list[dict[str, Any]] = [
    {"name": "w", "store": "sqlite", "created_at": "2026-11-29T10:36:34.126172Z", "typedb": {}, "conversation": {}},
    {"name": "a" * 64},
    {"name": "0-_x", "created_at": ""},
    {"name": "w", **{section: {} for section in SECTIONS}},
    {"name": "w", "store": "sqlite", "llm": {}},
]
NOT_PLAIN: list[dict[str, Any]] = [
    {},
    {"store": "sqlite"},
    {"name": ""},
    {"name": "W"},
    {"name": "w\n"},
    {"name": "-w"},
    {"name": "a" * 65},
    {"name": 5},
    {"name": "w", "store": "typedb"},
    {"name": "w", "store": 1},
    {"name": "w", "created_at": 5},
    {"name": "w", "extra": 1},
    {"name": "w", "typedb": {"address": "localhost:1729"}},
    {"name": "w", "recall": {"embedder": "none"}},
    {"name": "w", "typedb": []},
    {"name": "w", "llm": {"model": "m"}, "conversation": {"llm_model": "other"}},
    {"name": "w", "reasoning": {"max_join": 0}},
]


@pytest.mark.parametrize("data", PLAIN)
def test_a_plain_config_is_the_validated_model(data: dict[str, Any]):
    made = plain_config(dict(data))
    validated = WorkspaceConfig.model_validate(data)
    assert made is not None
    assert made == validated
    assert made.model_dump() == validated.model_dump()
    assert made.model_fields_set == validated.model_fields_set
    for section in SECTIONS:
        assert getattr(made, section) == getattr(validated, section)
        assert getattr(made, section).model_fields_set == getattr(validated, section).model_fields_set
    assert type(made.recall) is type(validated.recall)


@pytest.mark.parametrize("data", NOT_PLAIN)
def test_anything_else_is_left_to_the_model(data: dict[str, Any], tmp_path: Path):
    assert plain_config(dict(data)) is None
    (tmp_path / "mabos.toml").write_text(_toml(data), encoding="utf-8")
    try:
        expected: WorkspaceConfig | str = WorkspaceConfig.model_validate(data)
    except ValidationError:
        expected = "refused"
    try:
        got: WorkspaceConfig | str = read_config(tmp_path)
    except WorkspaceError as exc:
        assert str(exc).startswith("mabos.toml: ")
        got = "refused"
    assert got == expected


def test_a_new_workspace_reads_its_settings_without_building_the_model(tmp_path: Path):
    """What ``mabos init`` writes takes the plain path, in a fresh interpreter (no validator built before)."""
    code = (
        "import sys, tomllib\n"
        "from pathlib import Path\n"
        "from kg.config import WorkspaceConfig, read_config, render_config\n"
        "path = Path(sys.argv[1])\n"
        "config = WorkspaceConfig.model_construct(name='my-ws', created_at='2026-11-29T10:36:34.126172Z')\n"
        "(path / 'mabos.toml').write_text(render_config(config), encoding='utf-8')\n"
        "read = read_config(path)\n"
        "print(read.name, read.store, read.recall.embedder, WorkspaceConfig.__pydantic_complete__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          check=True)  # fmt: skip
    assert done.stdout.split() == ["my-ws", "sqlite", "local", "False"]


def test_render_config_output_is_plain():
    config = WorkspaceConfig.model_validate({"name": "w", "created_at": "2026-11-29T10:36:34.126172Z"})
    assert plain_config(tomllib.loads(render_config(config))) == config


def _toml(data: dict[str, Any]) -> str:
    """``data`` as TOML (the few value kinds the cases use)."""

    def value(v: Any) -> str:
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(item) for item in v) + "]"
        return str(v)

    top = [f"{key} = {value(v)}" for key, v in data.items() if not isinstance(v, dict)]
    tables = [f"[{key}]\n" + "".join(f"{k} = {value(x)}\n" for k, x in v.items())
              for key, v in data.items() if isinstance(v, dict)]  # fmt: skip
    return "\n".join(top) + "\n" + "\n".join(tables)
