"""``mabos memory consolidate``: promote important memories to long-term, merging ones with similar tags.

Attached to the ``memory`` group (:data:`cli.commands.memory.SUBCOMMANDS`), imported when it runs: a recall does not
load consolidation's tool, request and result models.
"""

from __future__ import annotations

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.tools.memory_admin import ConsolidateInput
from kg.memory.consolidation import ConsolidationResult

NO_SUMMARIZE = "Promote every candidate one-to-one (no merging)."


@click.command("consolidate")
@request_options(ConsolidateInput, summarize=Cli(flag="--no-summarize", negated=NO_SUMMARIZE))
@mabos_options
def consolidate(out: Session, *, request: ConsolidateInput) -> None:
    """Promote important memories to long-term, merging ones with similar tags.

    Rewrites MEMORY.md and the materialized files (mabos-memory-items.md, mabos-facts.md, mabos-beliefs.md).

    Example:

    \b
      mabos memory consolidate --agent A --dry-run --json
    """
    result = out.run("memory_consolidate", request, ConsolidationResult)
    verb = "would" if request.dry_run else "did"
    text = render.done(
        f"{result.candidates} candidates: {verb} merge {len(result.groups)} groups "
        f"({len(result.archived)} memories) and promote {len(result.promoted)} as they are"
    )
    for group in result.groups:
        text.append(f"\n  {group.consolidated_uid or '(new)'} <- {', '.join(group.members)}", style="")
    out.emit(result, text)
