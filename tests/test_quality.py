"""The static checks run as tests, so the README's one test command (and CI) enforces them."""

from __future__ import annotations

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
