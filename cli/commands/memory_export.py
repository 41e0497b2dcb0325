"""``mabos memory materialize|export|import``: an agent's memory as Markdown files, and back.

:data:`COMMANDS` are attached to the ``memory`` group; each body runs one tool of :mod:`cli.tools.memory_files`
(``memory_materialize``, ``memory_export``, ``memory_import``) through the registry and emits the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Concatenate, ParamSpec, TypeVar

import click
from rich.table import Table
from rich.text import Text

from cli import render
from cli.common import Session, agent_option, mabos_options
from kg.memory.cognitive import CognitiveKind
from kg.memory.cognitive_format import ExportResult, ImportResult
from kg.memory.materialize import FileOutcome, MaterializeResult

P = ParamSpec("P")
R = TypeVar("R")
KIND = click.Choice([*(k.value for k in CognitiveKind), "all"])
kind_option = click.option("--kind", type=KIND, default="all", show_default=True, help="Which cognitive file.")


def cognitive_file_options(func: Callable[Concatenate[Session, P], R]) -> Callable[P, R]:
    """``--agent``, ``--kind`` and :func:`mabos_options`: the commands that write or read an agent's cognitive files."""
    return agent_option(kind_option(mabos_options(func)))


def files_table(files: Sequence[FileOutcome]) -> Table:
    """Files, one per row: path, written or unchanged, how many records."""
    return render.table("Files", ("path", "status", "records"), [(f.path, f.status, f.records) for f in files])


@click.command("materialize")
@agent_option
@mabos_options
def materialize_(out: Session, *, agent: str) -> None:
    """Write the agent's read-only memory files from the store.

    memory/mabos-memory-items.md (archived items marked), mabos-facts.md (retracted facts marked) and
    mabos-beliefs.md, under agents/<agent>/. A file is rewritten only if its content changed.

    Example:

    \b
      mabos memory materialize --agent sales-agent --json
    """
    result = out.run("memory_materialize", {"agent_id": agent}, MaterializeResult)
    out.emit(result, files_table(result.files))


@click.command("export")
@cognitive_file_options
def export(out: Session, *, agent: str, kind: str) -> None:
    """Write the agent's cognitive files (Beliefs.md, Goals.md, Plans.md ...) from the store.

    One '## ' section per record with marker lines (certainty: 0.8, priority: 7, [deadline: ...],
    id: B-...). Edit them and read them back with 'mabos memory import'.

    Example:

    \b
      mabos memory export --agent sales-agent --kind beliefs
    """
    result = out.run("memory_export", {"agent_id": agent, "kind": kind}, ExportResult)
    out.emit(result, files_table(result.files))


@click.command("import")
@cognitive_file_options
def import_(out: Session, *, agent: str, kind: str) -> None:
    """Read the agent's cognitive files back into the store.

    A section with an id updates the fields that differ; one without an id creates a record. Every
    file is validated first: a bad value names the file, line and field, and nothing is written.

    Example:

    \b
      mabos memory import --agent sales-agent --kind beliefs --json
    """
    result = out.run("memory_import", {"agent_id": agent, "kind": kind}, ImportResult)
    summary = (
        f"{len(result.created)} created, {len(result.updated)} updated, {len(result.linked)} steps linked, "
        f"{result.unchanged} unchanged"
    )
    human: list[Text | Table] = [render.done(summary)]
    human += [render.note(f"skipped (no file): {path}") for path in result.missing]
    human += [Text(f"warning: {warning}", style="yellow") for warning in result.warnings]
    if result.files:
        human.append(files_table(result.files))
    out.emit(result, *human)


COMMANDS: list[click.Command] = [materialize_, export, import_]
"""The commands to attach under ``mabos memory``."""
