"""``mabos bdi cycle --agent A | --all``: the BDI maintenance cycle (R5)."""

from __future__ import annotations

from collections.abc import Sequence

import click
from rich.console import RenderableType

from cli import render
from cli.common import Session, example, mabos_options
from cli.options import Cli, request_options
from cli.tools.graph import BdiCycleInput, BdiCycleResults
from reasoning.bdi import CycleResult

#: The cycle's agent is optional (``--all`` instead), with its own help: the command's own option.
AGENT = click.Option(["--agent", "-a", "agent"], default=None, metavar="AGENT", help="Run the cycle for this agent.")


@click.group("bdi")
def bdi() -> None:
    """BDI maintenance: conflicts, stale intentions, desire priorities (R5)."""


def _summary(results: Sequence[CycleResult]) -> RenderableType:
    rows = [(r.agent_id, r.details.commitment_strategy, r.stale_intentions_pruned, r.desires_prioritized,
             r.conflicts_detected, r.chunks_processed) for r in results]  # fmt: skip
    columns = ("agent", "commitment", "intentions dropped", "desires re-prioritised", "conflicts", "chunks")
    return render.table("BDI cycle", columns, rows)


def _details(result: CycleResult) -> list[RenderableType]:
    lines: list[RenderableType] = []
    for pruned in result.details.pruned_intentions:
        lines.append(render.note(f"{result.agent_id}: dropped {pruned.uid} ({pruned.reason}): {pruned.content}"))
    for change in result.details.desire_changes:
        lines.append(render.note(f"{result.agent_id}: desire {change.uid} priority "
                                 f"{change.old_priority} -> {change.new_priority}"))  # fmt: skip
    for conflict in result.details.conflicts:
        about = f'"{conflict.subject}"' if conflict.kind == "belief" else f"{conflict.subject} {conflict.predicate}"
        uids = ", ".join(m.uid for m in conflict.members)
        lines.append(render.note(f"{result.agent_id}: {conflict.kind} conflict about {about}: {uids}"))
    if result.details.report_path:
        lines.append(render.note(f"{result.agent_id}: conflict report {result.details.report_path}"))
    if result.details.hierarchy_built:
        lines.append(render.note(f"{result.agent_id}: Sunday: {len(result.details.weekly_summaries)} weekly "
                                 "summaries written"))  # fmt: skip
    return lines


def _render(results: Sequence[CycleResult]) -> list[RenderableType]:
    return [_summary(results), *(line for r in results for line in _details(r))]


@bdi.command(
    "cycle",
    help=example(
        "Run the BDI maintenance cycle for one agent or for every agent.\n\n"
        "Detects conflicting beliefs and facts (report in agents/<id>/memory/bdi-conflicts/), drops stale "
        "intentions by deadline and commitment strategy, recomputes desire priorities and, on Sundays, "
        "builds the weekly summaries.",
        "mabos bdi cycle --agent sales-agent",
        "mabos bdi cycle --all --json",
    ),
)
@request_options(BdiCycleInput, agent_id=Cli(params=(AGENT,), build=lambda agent: agent),
                 all_agents=Cli(flag="--all"))  # fmt: skip
@mabos_options
def cycle(out: Session, /, *, request: BdiCycleInput) -> None:
    """Run the R5 cycle; JSON is one result (``--agent``) or a list of results (``--all``)."""
    if (request.agent_id is None) == (not request.all_agents):
        raise click.UsageError("give either --agent AGENT or --all")
    results = out.run("bdi_cycle", request, BdiCycleResults).results
    out.emit(results if request.all_agents else results[0], *_render(results))
