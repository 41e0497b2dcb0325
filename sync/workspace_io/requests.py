"""Requests of workspace import and export (issue 34: a use case's parameters are declared once).

:func:`sync.workspace_io.export_workspace` takes a :class:`WorkspaceExportRequest`; ``mabos sync import-workspace``
and ``export-workspace`` generate their ``PATH``, ``--agent`` and ``--dry-run`` from these models. The directory is
the operator's: these use cases have no tool, so no agent names a path.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, field_validator

from kg.models.base import new_list
from kg.models.request import Request

#: What a POSIX file system takes (Linux's NAME_MAX and PATH_MAX): a longer path fails at the first look at it.
NAME_MAX_BYTES = 255
PATH_MAX_BYTES = 4095


class WorkspaceFilesRequest(Request):
    """Which directory of the OpenClaw-MABOS layout, and which agents."""

    path: Path = Field(description="The directory holding agents/<id>/.")
    agents: list[str] = Field(default_factory=new_list, description="Only this agent; default: every agent.")

    @field_validator("path")
    @classmethod
    def _a_path_the_file_system_takes(cls, path: Path) -> Path:
        whole = os.fsencode(path)
        longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
        if len(whole) > PATH_MAX_BYTES or longest > NAME_MAX_BYTES:
            raise ValueError(
                f"a path is at most {PATH_MAX_BYTES} bytes and each name in it {NAME_MAX_BYTES} "
                f"(got {len(whole):,} bytes, the longest name {longest:,})"
            )
        return path


class WorkspaceExportRequest(WorkspaceFilesRequest):
    """Write the agents' records under ``path`` (created if missing)."""


class WorkspaceImportRequest(WorkspaceFilesRequest):
    """Read the layout under ``path`` into the workspace."""

    dry_run: bool = Field(default=False, description="Compare and report; write nothing.")


__all__ = ["WorkspaceExportRequest", "WorkspaceFilesRequest", "WorkspaceImportRequest"]
