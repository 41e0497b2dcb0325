"""Every shell block of docs/cli.md runs as written (issue 35.2; tests/docs/harness.py says how)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.docs.harness import ROOT


def test_the_commands_of_cli_run(run_page: Callable[[Path], None]) -> None:
    run_page(ROOT / "docs/cli.md")
