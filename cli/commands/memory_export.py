"""``mabos memory materialize|export|import``: an agent's memory as Markdown files, and back.

:data:`COMMANDS` are attached to the ``memory`` group; each body runs one tool of :mod:`cli.tools.memory_files`
(``memory_materialize``, ``memory_export``, ``memory_import``) through the registry and emits the result.
"""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.table import Table
from rich.text import Text

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import request_options
from cli.tools.memory_files import CognitiveInput, MaterializeInput
from kg.memory.cognitive_format import ExportResult, ImportResult
from kg.memory.materialize import FileOutcome, MaterializeResult


def files_table(files: Sequence[FileOutcome]) -> Table:
    """Files, one per row: path, written or unchanged, how many records."""
    return render.table("Files", ("path", "status", "records"), [(f.path, f.status, f.records) for f in files])


def _files_command(
    name: str,
    help_text: str,
    tool: str,
    model: type[CognitiveInput | MaterializeInput],
    result_type: type[ExportResult | MaterializeResult],
) -> click.Command:
    """``mabos memory NAME``: run ``tool`` with the request ``model`` and show the files it wrote (the result's
    ``files``): ``materialize`` and ``export`` differ only in these."""

    def write_files(out: Session, *, request: CognitiveInput | MaterializeInput) -> None:
        result = out.run(tool, request, result_type)
        out.emit(result, files_table(result.files))

    return click.command(name, help=help_text)(request_options(model)(mabos_options(write_files)))


materialize_ = _files_command(
    "materialize",
    example(
        "Write the agent's read-only memory files from the store.\n\n"
        "memory/mabos-memory-items.md (archived items marked), mabos-facts.md (retracted facts marked) and\n"
        "mabos-beliefs.md, under agents/<agent>/. A file is rewritten only if its content changed.",
        "mabos memory materialize --agent sales-agent --json",
    ),
    "memory_materialize",
    MaterializeInput,
    MaterializeResult,
)
export = _files_command(
    "export",
    example(
        "Write the agent's cognitive files (Beliefs.md, Goals.md, Plans.md ...) from the store.\n\n"
        "One '## ' section per record with marker lines (certainty: 0.8, priority: 7, [deadline: ...],\n"
        "id: B-...). Edit them and read them back with 'mabos memory import'.",
        "mabos memory export --agent sales-agent --kind beliefs",
    ),
    "memory_export",
    CognitiveInput,
    ExportResult,
)


@click.command("import")
@request_options(CognitiveInput)
@mabos_options
def import_(out: Session, *, request: CognitiveInput) -> None:
    """Read the agent's cognitive files back into the store.

    A section with an id updates the fields that differ; one without an id creates a record. Every
    file is validated first: a bad value names the file, line and field, and nothing is written.

    Example:

    \b
      mabos memory import --agent sales-agent --kind beliefs --json
    """
    result = out.run("memory_import", request, ImportResult)
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
