"""``reason_owl_rl``: the OWL 2 RL closure over the workspace ontology and the facts the agent can read.

``mabos reason owl-rl`` runs this tool. The scope rule is :func:`reasoning.owl.run_owl_rl`'s: the input is the
facts the agent may read, and every entailment is written to the agent's own private scope (never wider than the
narrowest of its sources), with ``derived_from`` its support. The input is the service's request
(:mod:`reasoning.owl_requests`) plus ``agent_id``. Extra ontology files (``--ontology``) are an operator option
passed outside the tool input (:class:`OwlCommandContext`): an agent over MCP cannot make the server read a file
of its choosing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from cli.tools.overrides import CommandContext
from cli.tools.registry import ToolContext, ToolInput, tool
from reasoning.owl_requests import MAX_LISTED, OwlRlReport, OwlRlRequest

GROUP = "rules"  # with infer_forward and the other inference tools


class OwlCommandContext(CommandContext):
    """A CLI command's context with extra ontology files for ``reason_owl_rl`` (``mabos reason owl-rl --ontology``)."""

    def __init__(self, *, extra_ontology: list[Path] | None = None, **context: Any) -> None:  # CommandContext's
        super().__init__(**context)
        self.extra_ontology: list[Path] = extra_ontology if extra_ontology is not None else []


class OwlRlInput(OwlRlRequest, ToolInput):
    """Arguments of ``reason_owl_rl``."""


class OwlRlResult(OwlRlReport):
    """What the closure did; ``truncated`` when more entailments were found than listed."""

    truncated: bool = Field(default=False, description="True when entailments lists only the first limit of them.")


_OWL = (
    "Run the OWL 2 RL closure over the shared ontology (classes, subclass and subproperty axioms, domains, ranges, "
    "inverse and transitive properties ...) and the facts the agent can read, and store the new class and property "
    "facts as derived facts in the agent's own scope (source owl-rl; stale ones retracted). A second run changes "
    "nothing. dry_run only reports. Returns counts, inconsistencies and the entailments with their confidence."
)


@tool("reason_owl_rl", group=GROUP, description=_OWL)
def reason_owl_rl(ctx: ToolContext, args: OwlRlInput) -> OwlRlResult:
    """The closure for the acting agent, written to its own scope unless a dry run."""
    from reasoning.owl import run_owl_rl  # noqa: PLC0415 - rdflib loads when the closure runs, not with `mabos reason`

    extra = ctx.extra_ontology if isinstance(ctx, OwlCommandContext) else []
    report = run_owl_rl(ctx.workspace(), ctx.agent_for(args), args, ontology=extra)
    return OwlRlResult(**dict(report), truncated=report.entailed > len(report.entailments))


__all__ = ["MAX_LISTED", "OwlCommandContext", "OwlRlInput", "OwlRlResult"]
