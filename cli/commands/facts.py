"""``mabos fact query`` (and ``assert|retract|explain|import``, imported when used): thin wrappers over the fact
tools (cli/tools/facts.py and its siblings)."""

from __future__ import annotations

import click

from cli.commands import LazyGroup
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.tools.facts import FactList, FactQueryInput

#: The subcommands of other modules, imported when one is used: a query imports neither the writes, the
#: explanation nor the RDF import, nor their tools' models (issue 33).
SUBCOMMANDS = {
    "assert": "cli.commands.fact_writes:assert_",
    "explain": "cli.commands.facts_explain:explain",
    "import": "cli.commands.facts_import:import_",
    "retract": "cli.commands.fact_writes:retract",
}


@click.group("fact", cls=LazyGroup, lazy=SUBCOMMANDS)
def fact() -> None:
    """Assert, retract, query and explain facts.

    A fact is a (subject, predicate, object) statement with a confidence and a source.
    """


@fact.command("query")
@request_options(FactQueryInput, include_derived=Cli(flag="--derived"))
@mabos_options
def query(out: Session, *, request: FactQueryInput) -> None:
    """Find facts visible to the agent.

    JSON output is a list of fact objects.

    Example:

    \b
      mabos fact query --agent sales-agent --subject acme --json
      mabos fact query --agent sales-agent --predicate 'has*' --as-of 2024-05-01T12:00:00Z
    """
    found = out.run("fact_query", request, FactList)
    if out.as_json:  # the renderings' module is not imported for JSON (2 M instructions of a cold query)
        out.emit(found.facts)
        return
    from cli import render  # noqa: PLC0415

    out.emit(found.facts, render.facts_table(found.facts), render.count(found.facts, "fact", request.limit))
