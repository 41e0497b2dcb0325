"""``mabos memory admit``: candidate memories through admission control, dedup decisions and a write.

The command reads and checks the JSONL file (errors name the line), then runs the ``memory_admit`` tool
(:mod:`cli.tools.memory_admit`) through the registry."""

from __future__ import annotations

import click
from pydantic import ValidationError

from cli import render
from cli.common import Session, example, mabos_options, read_source
from cli.options import Cli, request_options
from cli.tools.memory_admit import AdmitResult, MemoryAdmitInput
from kg.errors import InputError
from kg.limits import jsonl_lines, load_json
from kg.memory.admission import MemoryCandidate
from kg.memory.write_policy import CandidateOutcome
from kg.models import describe_validation_error


def read_candidates(text: str) -> list[MemoryCandidate]:
    """JSONL candidates, each line validated first; an error names the line and the field."""
    candidates: list[MemoryCandidate] = []
    for number, line in jsonl_lines(text):  # split on "\n" only: JSON strings may hold U+2028 unescaped
        try:
            candidates.append(MemoryCandidate.model_validate(load_json(line, f"line {number}")))
        except ValidationError as exc:
            error = describe_validation_error(exc)
            raise InputError(f"line {number}: {error.field}", error.rule) from None
    if not candidates:
        raise InputError("file", "no candidates (one JSON object a line)")
    return candidates


#: The candidates come from a JSONL file the command reads and checks (a bad line is named): the file is the
#: operator's, never a tool input (docs/decisions/2026-11-26-cli-registry.md).
FILE = click.Option(["--file", "source"], required=True, type=click.Path(dir_okay=False, allow_dash=True),
                    help="JSONL file.")  # fmt: skip


@click.command("admit", help=example(
    "Offer candidate memories (JSONL: content, type, importance, tags, store, evidence = the conversation text "
    "they came from, key) to admission control (--preset balanced, conservative or high-recall; off admits all), "
    "then dedup against the agent's memories (merge, support, contextualize, skip or create; by the configured "
    "LLM, else similarity rules; history is kept) and write them. --dry-run only scores them.",
    "mabos memory admit --agent sales-agent --file candidates.jsonl --preset balanced --json",
))  # fmt: skip
@request_options(
    MemoryAdmitInput, candidates=Cli(params=(FILE,), build=lambda source: read_candidates(read_source(source)))
)
@mabos_options
def admit(out: Session, *, request: MemoryAdmitInput) -> None:
    result = out.run("memory_admit", request, AdmitResult)
    if result.report is None:
        results = result.admission or []
        rows = [(r.index, r.decision, f"{r.score:.3f}", r.reason) for r in results]
        out.emit({"dry_run": True, "admission": results},
                 render.table("Admission", ("#", "decision", "score", "reason"), rows))  # fmt: skip
        return
    outcome_rows = [_outcome_row(o) for o in result.report.outcomes]
    out.emit(result.report, render.table("Outcomes", ("#", "stage", "action", "reason"), outcome_rows))


def _outcome_row(outcome: CandidateOutcome) -> tuple[int, str, str, str]:
    """What was done and why: a decision carried out otherwise (a merge across scopes stored as a new item)
    shows the action done and the note."""
    applied = outcome.applied
    if applied is None or applied.action == outcome.action:
        return outcome.ticket, outcome.stage, outcome.action, outcome.reason
    return outcome.ticket, outcome.stage, applied.action, "; ".join([outcome.reason, *applied.notes])


__all__ = ["admit", "read_candidates"]
