"""Import the OpenClaw-MABOS layout (``agents/<id>/...``) into a workspace.

Three passes: every file of every chosen agent is read and every record validated
(:mod:`sync.workspace_io.reader`; a bad one raises :class:`~kg.errors.InputError` naming the file, the record
and the field, and nothing is written); each record is checked and compared with the store (created,
updated, unchanged, skipped or refused, with a reason); then everything is written in one transaction.

**Agents stay apart.** The files under ``agents/<id>/`` are what agent ``<id>`` could write itself, so every
record read there is checked as a write of that agent (the check of :meth:`kg.scopes.ScopePolicy.check_write`):
a record in a scope the agent may not write (another agent's ``agent:`` scope, an ungranted project), a uid
that names another agent's record (of any kind, a case or an edge too, in any scope), and a uid that names a
stored record of the agent in a scope it may no longer write are all *refused*; a relation may only end at
records imported with it or visible to the agent (skipped otherwise, like a missing end). The report lists
each refused and skipped record with its reason, and nothing of them is written.

Records keep their uids, timestamps, confidences and lineage, so they are written the way the outbox replay
writes them (:class:`sync.replay.EmbeddedTarget`): as upserts keyed by uid that never replace a newer state,
each appended to the workspace's outbox for the next ``mabos sync push``. The services would mint new uids
and stamp the time of import instead. The comparing is :class:`sync.workspace_io.planner.Planner`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kg.models.request import requested
from sync.replay import EmbeddedTarget
from sync.workspace_io.planner import Planner
from sync.workspace_io.reader import AgentRecords, Reader, agent_ids
from sync.workspace_io.report import Progress, WorkspaceReport
from sync.workspace_io.requests import WorkspaceImportRequest

if TYPE_CHECKING:
    from kg.workspace import Workspace


def import_workspace(ws: Workspace, request: WorkspaceImportRequest | Path | str, *,
                     agents: Sequence[str] | None = None, dry_run: bool | None = None,
                     progress: Progress | None = None) -> WorkspaceReport:  # fmt: skip
    """Read the OpenClaw-MABOS layout at the request's ``path`` into the workspace.

    Args:
        ws: the open workspace.
        request: what to import: the directory holding ``agents/<id>/``, the agents and ``dry_run``; or the
            directory itself, with ``agents`` and ``dry_run`` as keywords.
        agents: agent ids to import (default: every agent directory).
        dry_run: compare and report, write nothing (default: False).
        progress: called as ``progress(stage, done, total)`` for the stages ``read`` and ``check``.

    Returns:
        Counts per agent and record kind (created, updated, unchanged, skipped, refused) and the skipped and
        refused records with their reasons.

    Raises:
        InputError: a file or record is malformed (nothing is written); the message names the file, the
            record and the field.
        NotFoundError: an agent named in ``agents`` has no directory.
    """
    request = requested(WorkspaceImportRequest, request, {"agents": agents, "dry_run": dry_run}, first="path")
    root, dry_run = request.path, request.dry_run
    report = WorkspaceReport(direction="import", path=str(root), dry_run=dry_run)
    chosen = agent_ids(root, request.agents or None, report)
    now = ws.clock.now()
    read: list[AgentRecords] = []
    for done, agent_id in enumerate(chosen, start=1):
        read.append(Reader(root, agent_id, now).read())
        if progress is not None:
            progress("read", done, len(chosen))
    planner = Planner(ws, now)
    for done, agent in enumerate(read, start=1):
        planner.plan(agent)
        report.agents.append(agent.report)
        if progress is not None:
            progress("check", done, len(read))
    if planner.events and not dry_run:
        EmbeddedTarget(ws.ports).apply(planner.events)
        planner.verify()
    return report
