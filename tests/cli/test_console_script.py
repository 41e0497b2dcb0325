"""The installed ``mabos`` console script and ``python -m cli.main`` in a real subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _mabos() -> str:
    found = shutil.which("mabos") or shutil.which("mabos", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("the mabos console script is not installed (pip install -e .)")
    return found


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MABOS_WORKSPACE", "MABOS_DEBUG")}
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=60, check=False)


def test_console_script_help(tmp_path: Path) -> None:
    result = _run(_mabos(), "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: mabos [OPTIONS] COMMAND")
    assert "Example:" in result.stdout


def test_python_dash_m_and_exit_codes(tmp_path: Path) -> None:
    assert _run(sys.executable, "-m", "cli.main", "--help", cwd=tmp_path).returncode == 0
    missing = _run(sys.executable, "-m", "cli.main", "status", "--workspace", str(tmp_path / "none"), cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("error: workspace: ") and "Traceback" not in missing.stderr
    assert _run(sys.executable, "-m", "cli", "bogus", cwd=tmp_path).returncode == 2
