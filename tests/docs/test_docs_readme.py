"""Every shell block of README.md runs as written (issue 35.2; tests/docs/harness.py says how)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.docs.harness import ROOT


def test_the_commands_of_readme_run(run_page: Callable[[Path], None]) -> None:
    run_page(ROOT / "README.md")
