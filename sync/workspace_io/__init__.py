"""Workspace import/export in the OpenClaw-MABOS layout (``agents/<id>/memory-store.json``, ``facts.json``,
``rules.json``, ``cases.json``, ``Beliefs.md`` ... ``Plans.md``): how users of the original system migrate.

:func:`export_workspace` writes the layout, :func:`import_workspace` reads it back (or reads files written by
the original system). Export then import into a fresh workspace gives the same records; importing the same
files twice adds nothing the second time. ``docs/workspace-import-export.md`` has the layout and the field
mapping.
"""

from __future__ import annotations

from sync.workspace_io.exporter import MANIFEST, export_workspace
from sync.workspace_io.importer import import_workspace
from sync.workspace_io.report import AgentReport, KindCounts, Progress, Skipped, WorkspaceReport

__all__ = [
    "MANIFEST",
    "AgentReport",
    "KindCounts",
    "Progress",
    "Skipped",
    "WorkspaceReport",
    "export_workspace",
    "import_workspace",
]
