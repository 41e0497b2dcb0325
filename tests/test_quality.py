"""The static checks run as tests, so the README's one test command (and CI) enforces them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kg
import kg.errors

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["kg", "reasoning", "sync", "cli"]


def _tool(name: str) -> str:
    """The tool installed next to this interpreter (the project's venv), else on PATH."""
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: install the dev extra (pip install -e '.[dev]')")
    return found


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


def test_ruff_lint_is_clean() -> None:
    result = _run(_tool("ruff"), "check", *PACKAGES, "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run(_tool("ruff"), "format", "--check", *PACKAGES, "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_the_packages() -> None:
    result = _run(_tool("mypy"))  # packages and strictness come from [tool.mypy] in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_layers_hold() -> None:
    result = _run(_tool("lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_public_api_is_small_and_sorted() -> None:
    for module in (kg, kg.errors):
        assert list(module.__all__) == sorted(module.__all__)
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name} is exported but missing"


def _adapter_contract() -> dict[str, object]:
    import tomllib  # noqa: PLC0415

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c.get("source_modules") == ["kg.store"])


def test_the_adapter_contract_names_every_feature_of_kg() -> None:
    """A new child of kg is either part of the shared kernel or forbidden to the adapters: never forgotten."""
    allowed = {"models", "ports", "errors", "ids", "clock", "regex", "text", "faces", "store"}
    children = {p.stem for p in (ROOT / "kg").iterdir() if (p.suffix == ".py" and p.stem != "__init__")
                or (p.is_dir() and (p / "__init__.py").exists())}  # fmt: skip
    forbidden = {m.removeprefix("kg.") for m in _adapter_contract()["forbidden_modules"]}  # type: ignore[attr-defined]
    assert children - allowed == forbidden


def test_the_adapter_contract_fails_when_an_adapter_imports_a_feature(tmp_path: Path) -> None:
    """Break the contract on purpose in a copy of the packages (the source tree is never touched)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    probe = tmp_path / "kg" / "store" / "sqlite" / "contract_probe.py"
    probe.write_text('"""Breaks the contract on purpose."""\n\nimport kg.memory  # noqa: F401\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600, check=False)  # fmt: skip
    assert result.returncode != 0, result.stdout
    assert "Store adapters import only models, ports, errors, ids, clock, regex and text BROKEN" in result.stdout
    assert "kg.store.sqlite.contract_probe -> kg.memory" in result.stdout
