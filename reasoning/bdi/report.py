"""The conflict report: ``agents/<id>/memory/bdi-conflicts/YYYY-MM-DD.md``.

Written (atomically) when a cycle finds conflicts; a later cycle on the same day replaces it, so the
file always describes the latest cycle of that day. Every member is listed with its uid, score and
scope, so the report is enough to go and fix the records (``mabos belief update ...``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from kg.memory.files import atomic_write, memory_dir
from kg.models import format_ts, to_utc
from reasoning.bdi.models import Conflict, ConflictMember

REPORT_DIR = "bdi-conflicts"


def report_path(workspace: Path, agent_id: str, when: datetime) -> Path:
    """Where the report of a cycle run at ``when`` (UTC date) goes."""
    return memory_dir(workspace, agent_id) / REPORT_DIR / f"{to_utc(when).date().isoformat()}.md"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _validity(member: ConflictMember) -> str:
    start = format_ts(member.valid_from) if member.valid_from else "open"
    end = format_ts(member.valid_until) if member.valid_until else "open"
    return f"valid [{start}, {end})"


def _member_line(conflict: Conflict, member: ConflictMember) -> str:
    score = "-" if member.score is None else f"{member.score:.2f}"
    where = f"scope {member.scope}" + (f", {member.agent_id}'s" if member.agent_id else "")
    if conflict.kind == "belief":
        return f"- {member.uid} (certainty {score}, {where}): {_one_line(member.text)}"
    return f"- {member.uid} (confidence {score}, {_validity(member)}, {where}): {_one_line(member.text)}"


def _section(number: int, conflict: Conflict) -> list[str]:
    noun = "pair" if conflict.pairs == 1 else "pairs"
    if conflict.kind == "belief":
        title = f'## Conflict {number}: beliefs about "{conflict.subject}"'
        rule = "same subject, both certainty > 0.6, different content"
    else:
        title = f"## Conflict {number}: {conflict.subject} {conflict.predicate}"
        rule = f"functional predicate {conflict.predicate}, different objects, both confident, overlapping validity"
    lines = [title, "", f"- Rule: {rule} ({conflict.pairs} conflicting {noun})"]
    return [*lines, *(_member_line(conflict, m) for m in conflict.members), ""]


def render_report(agent_id: str, conflicts: list[Conflict], when: datetime) -> str:
    """The Markdown text of a conflict report."""
    pairs = sum(c.pairs for c in conflicts)
    lines = [
        f"# BDI conflict report — {to_utc(when).date().isoformat()}",
        "",
        f"> {pairs} conflict(s) in {len(conflicts)} group(s) detected for agent {agent_id} "
        f"during the maintenance cycle at {format_ts(when)}.",
        "",
    ]
    for number, conflict in enumerate(conflicts, start=1):
        lines.extend(_section(number, conflict))
    return "\n".join(lines)


def write_report(workspace: Path, agent_id: str, conflicts: list[Conflict], when: datetime) -> Path:
    """Write the report of ``conflicts`` and return its path."""
    path = report_path(workspace, agent_id, when)
    atomic_write(path, render_report(agent_id, conflicts, when))
    return path
