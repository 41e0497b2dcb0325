"""``mabos fact explain``: a thin wrapper over the fact_explain tool (cli/tools/facts_explain.py).

Attached to the ``fact`` group (:data:`cli.commands.facts.SUBCOMMANDS`), imported when it runs.
"""

from __future__ import annotations

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.tools.facts_explain import FactExplainInput
from kg.facts import Explanation


@click.command("explain")
@request_options(FactExplainInput, fact_id=Cli(argument=True))
@mabos_options
def explain(out: Session, *, request: FactExplainInput) -> None:
    """Explain why a fact holds.

    Shows the rule that derived it and the facts it was derived from, as a tree.

    Example:

    \b
      mabos fact explain --agent sales-agent F-01J0000000000000000000000 --depth 3
    """
    explanation = out.run("fact_explain", request, Explanation)
    out.emit(explanation, render.explanation_tree(explanation))
