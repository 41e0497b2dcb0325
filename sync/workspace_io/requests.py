"""Requests of workspace import and export (issue 34: a use case's parameters are declared once).

:func:`sync.workspace_io.export_workspace` takes a :class:`WorkspaceExportRequest`; ``mabos sync import-workspace``
and ``export-workspace`` generate their ``PATH``, ``--agent`` and ``--dry-run`` from these models. The directory is
the operator's: these use cases have no tool, so no agent names a path.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from kg.models.request import Request


class WorkspaceFilesRequest(Request):
    """Which directory of the OpenClaw-MABOS layout, and which agents."""

    path: Path = Field(description="The directory holding agents/<id>/.")
    agents: list[str] = Field(default_factory=list, description="Only this agent; default: every agent.")


class WorkspaceExportRequest(WorkspaceFilesRequest):
    """Write the agents' records under ``path`` (created if missing)."""


class WorkspaceImportRequest(WorkspaceFilesRequest):
    """Read the layout under ``path`` into the workspace."""

    dry_run: bool = Field(default=False, description="Compare and report; write nothing.")


__all__ = ["WorkspaceExportRequest", "WorkspaceFilesRequest", "WorkspaceImportRequest"]
