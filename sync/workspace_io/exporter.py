"""Export a workspace's agents to the OpenClaw-MABOS layout (``agents/<id>/...``).

Every file is written atomically (temporary file, then rename) and only when its content changed. Export
owns the files it lists in ``mabos-export.json`` at the top of the target: a file of the layout that
already exists and is not listed there (written by the original system, or by hand) is never overwritten:
the export stops before writing anything and names it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import InputError, NotFoundError
from kg.memory.files import atomic_write
from kg.models import BDINode, FactQuery, MemoryQuery, NodeKind, Relation, format_ts
from kg.models.request import requested
from sync.workspace_io import markdown, records
from sync.workspace_io.report import AgentReport, Progress, WorkspaceReport
from sync.workspace_io.requests import WorkspaceExportRequest

if TYPE_CHECKING:
    from kg.workspace import Workspace

MANIFEST = "mabos-export.json"
FORMAT = "openclaw-mabos-workspace"
MAX_RECORDS = 1_000_000


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _owned(root: Path) -> set[str]:
    """Files a previous export wrote (listed in the manifest)."""
    try:
        data = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(MANIFEST, f"is not valid JSON ({exc}); remove it or export elsewhere") from None
    files = data.get("files") if isinstance(data, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def _relations(ws: Workspace, agent_id: str, uids: Sequence[str], scopes: list[str]) -> list[Relation]:
    found: dict[str, Relation] = {}
    for uid in uids:
        for relation in ws.ports.relations.relations(uid, scopes=scopes):
            if relation.agent_id == agent_id:
                found[relation.uid] = relation
    return sorted(found.values(), key=lambda r: (r.created_at, r.uid))


def agent_files(ws: Workspace, agent_id: str, report: AgentReport) -> dict[str, str]:
    """The text of each file of one agent, by path relative to the target."""
    scopes = ws.scopes.readable(agent_id)
    own = agent_id
    facts = [f for f in ws.ports.facts.query(FactQuery(scopes=scopes, include_retracted=True, limit=100_000))
             if f.agent_id == own]  # fmt: skip
    items = ws.ports.memory.list(MemoryQuery(scopes=scopes, agent_id=own, include_archived=True, limit=MAX_RECORDS))
    nodes = ws.ports.bdi.list(scopes=scopes, agent_id=own, limit=MAX_RECORDS)
    rules = [r for r in ws.ports.rules.list(scopes=scopes) if r.agent_id == own]
    cases = [c for c in ws.ports.cases.list(scopes=scopes) if c.agent_id == own]
    uids = [*(n.uid for n in nodes), *(f.uid for f in facts), *(i.uid for i in items), *(c.uid for c in cases)]
    relations = _relations(ws, own, uids, scopes)
    by_kind: dict[NodeKind, list[BDINode]] = {kind: [] for kind in NodeKind}
    for node in nodes:
        by_kind[node.kind].append(node)
    base = f"agents/{agent_id}/"
    files = {
        base + records.AGENT_FILE: _dump(records.agent_to_json(ws.ports.agents.get(agent_id))),
        base + records.MEMORY_FILE: _dump(records.memory_to_json(items)),
        base + records.FACTS_FILE: _dump(records.facts_to_json(facts)),
        base + records.RULES_FILE: _dump(records.rules_to_json(rules)),
        base + records.CASES_FILE: _dump(records.cases_to_json(cases)),
        base + records.RELATIONS_FILE: _dump(records.relations_to_json(relations)),
        base + "Beliefs.md": markdown.render_beliefs(agent_id, by_kind[NodeKind.BELIEF]),
        base + "Plans.md": markdown.render_plans(
            agent_id, by_kind[NodeKind.PLAN], by_kind[NodeKind.PLAN_STEP], relations
        ),
    }
    for kind in (NodeKind.DESIRE, NodeKind.GOAL, NodeKind.INTENTION):
        files[base + markdown.FILES[kind]] = markdown.render_nodes(kind, agent_id, by_kind[kind], relations)
    sizes = {"agent": 1, "fact": len(facts), "memory": len(items), "rule": len(rules), "case": len(cases),
             "relation": len(relations), **{k.value: len(v) for k, v in by_kind.items()}}  # fmt: skip
    for name, n in sizes.items():
        if n:
            report.count(name, "exported", n)
    return files


def _write_file(root: Path, rel: str, text: str) -> None:
    path = root / rel
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    atomic_write(path, text)


def export_workspace(
    ws: Workspace,
    request: WorkspaceExportRequest | Path | str,
    *,
    agents: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> WorkspaceReport:
    """Write the agents' records under the request's ``path`` in the OpenClaw-MABOS layout.

    Args:
        ws: the open workspace.
        request: what to export: the target directory (created if missing) and the agents; or the directory
            itself, with ``agents`` as a keyword.
        agents: agent ids to export (default: every agent).
        progress: called as ``progress("export", done, total)`` after each agent.

    Returns:
        The files and record counts per agent.

    Raises:
        NotFoundError: an agent named in ``agents`` does not exist.
        InputError: the target is a file, or holds a layout file that mabos did not write.
    """
    request = requested(WorkspaceExportRequest, request, {"agents": agents}, first="path")
    root = request.path
    if root.exists() and not root.is_dir():
        raise InputError("path", f"{root} exists and is not a directory")
    known = {a.agent_id for a in ws.agents.list()}
    chosen = list(dict.fromkeys(request.agents)) if request.agents else sorted(known)
    for agent_id in chosen:
        if agent_id not in known:
            raise NotFoundError(f"agent: no agent {agent_id!r}")
    report = WorkspaceReport(direction="export", path=str(root))
    planned: dict[str, str] = {}
    for done, agent_id in enumerate(chosen, start=1):
        agent_report = AgentReport(agent_id=agent_id)
        files = agent_files(ws, agent_id, agent_report)
        agent_report.files = sorted(files)
        planned.update(files)
        report.agents.append(agent_report)
        if progress is not None:
            progress("read", done, len(chosen))
    owned = _owned(root)
    for rel in sorted(planned):
        if (root / rel).exists() and rel not in owned:
            raise InputError(rel, f"exists in {root} and was not written by mabos; export into an empty directory "
                             "or move the file away (nothing was written)")  # fmt: skip
    for done, (rel, text) in enumerate(sorted(planned.items()), start=1):
        _write_file(root, rel, text)
        if progress is not None:
            progress("write", done, len(planned))
    manifest = {"format": FORMAT, "version": 1, "exported_at": format_ts(ws.clock.now()),
                "workspace": ws.config.name, "files": sorted(owned | planned.keys())}  # fmt: skip
    atomic_write(root / MANIFEST, _dump(manifest))
    return report
