"""What the demo reports (sections of lines, commands to try) and where it may write: the demo only ever
deletes a directory it made itself (marked by ``.mabos/demo``); anything else at the target is refused."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg.errors import WorkspaceError
from kg.workspace import CONFIG_FILE, STATE_DIR

DEFAULT_DEMO_PATH = "./mabos-demo"
MARKER = Path(STATE_DIR) / "demo"
SALES, FINANCE = "sales-agent", "finance-agent"
PROJECT = "project:q3-launch"


@dataclass
class Section:
    """One heading of the demo and the lines shown under it."""

    title: str
    lines: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        """Add a line."""
        self.lines.append(line)


@dataclass
class DemoReport:
    """What the demo did, for human or JSON output."""

    workspace: Path
    sections: list[Section] = field(default_factory=list)
    try_commands: list[str] = field(default_factory=list)

    def section(self, title: str) -> Section:
        """Start a new section."""
        self.sections.append(Section(title))
        return self.sections[-1]

    def as_json(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "workspace": str(self.workspace),
            "sections": [{"title": s.title, "lines": s.lines} for s in self.sections],
            "try": self.try_commands,
        }


def prepare(path: Path) -> None:
    """Empty a previous demo at ``path``; refuse anything that is not a demo or empty."""
    if not path.exists():
        return
    if not path.is_dir():
        raise WorkspaceError(f"workspace: {path} exists and is not a directory; choose another --workspace")
    if (path / MARKER).is_file():
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        return
    if (path / CONFIG_FILE).exists():
        raise WorkspaceError(f"workspace: {path} is a workspace not made by 'mabos demo'; refusing to overwrite it")
    if any(path.iterdir()):
        raise WorkspaceError(f"workspace: {path} is a non-empty directory; choose an empty or new --workspace")
