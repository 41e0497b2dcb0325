"""``mabos fact assert|retract``: thin wrappers over the fact tools that write (cli/tools/fact_writes.py).

Attached to the ``fact`` group (:data:`cli.commands.facts.SUBCOMMANDS`), imported when one of them runs: a query
loads neither these commands nor their tools' models.
"""

from __future__ import annotations

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.tools.fact_writes import FactAssertInput, FactAssertResult, FactRetractInput, FactRetractResult

ARGUMENT = Cli(argument=True)


@click.command("assert")
@request_options(FactAssertInput, subject=ARGUMENT, predicate=ARGUMENT, object=ARGUMENT,
                 derived_from=Cli(metavar="F-..."), rule_id=Cli(metavar="R-..."))  # fmt: skip
@mabos_options
def assert_(out: Session, *, request: FactAssertInput) -> None:
    """Assert a fact (an upsert).

    The same subject, predicate and object in the same scope is updated, never duplicated.

    Prints the fact's uid and whether it was created, updated or unchanged.

    Example:

    \b
      mabos fact assert --agent sales-agent acme hasRevenue "$50000" --confidence 0.9 --source cfo-report
    """
    result = out.run("fact_assert", request, FactAssertResult)
    stored = result.fact
    text = render.done(f"{stored.uid} {result.status.value}")
    text.append(f"  {render.fact_text(stored)}  [{stored.scope}]", style="")
    out.emit(result, text)


@click.command("retract")
@request_options(FactRetractInput, fact_ids=Cli(argument=True, metavar="[FACT_ID]..."))
@mabos_options
def retract(out: Session, *, request: FactRetractInput) -> None:
    """Retract facts by id, subject and/or predicate.

    Retraction keeps history: query --as-of still finds the fact.

    Example:

    \b
      mabos fact retract --agent sales-agent --subject acme
      mabos fact retract --agent sales-agent F-01J0000000000000000000000
    """
    result = out.run("fact_retract", request, FactRetractResult)
    lines = [render.done(f"Retracted {result.count} fact{'' if result.count == 1 else 's'}")]
    lines += [render.note(f"  {uid}") for uid in result.retracted]
    out.emit(result, *lines)
