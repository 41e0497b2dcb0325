"""``mabos fact assert|retract|query|explain|import``: thin wrappers over the fact tools (cli/tools/facts.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import cast, get_args

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.progress import progress
from cli.tools.facts import (
    FactAssertInput,
    FactAssertResult,
    FactExplainInput,
    FactImportInput,
    FactList,
    FactQueryInput,
    FactRetractInput,
    FactRetractResult,
)
from cli.tools.registry import run
from kg.errors import InputError
from kg.facts import Explanation
from kg.facts_requests import RdfDocument, RdfFormat
from kg.limits import read_text_bounded
from kg.rdf.documents import SUFFIX_FORMATS
from kg.rdf.importer import ImportReport

ARGUMENT = Cli(argument=True)


@click.group("fact")
def fact() -> None:
    """Assert, retract, query and explain facts.

    A fact is a (subject, predicate, object) statement with a confidence and a source.
    """


@fact.command("assert")
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


@fact.command("retract")
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
    out.emit(found.facts, render.facts_table(found.facts), render.count(found.facts, "fact", request.limit))


@fact.command("explain")
@request_options(FactExplainInput, fact_id=ARGUMENT)
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


#: The documents come from files the command reads (a path is the operator's, never a tool input:
#: docs/decisions/2026-11-26-cli-registry.md), each in the syntax --format names or its suffix says.
FILES = click.Argument(["files"], nargs=-1, required=True,
                       type=click.Path(exists=True, dir_okay=False, path_type=Path))  # fmt: skip
FORMAT = click.Option(["--format", "fmt"], type=click.Choice(get_args(RdfFormat)), help="The RDF syntax (default: "
                      "from each file's suffix: .ttl .nt .jsonld .owl/.rdf/.xml .nq .trig; named graphs' triples are "
                      "imported, their names dropped).")  # fmt: skip


def read_documents(files: tuple[Path, ...], fmt: str | None) -> list[RdfDocument]:
    """The RDF documents of ``files``, each read whole (at most 100 MB, in chunks); an unknown suffix without
    ``--format`` is an input error naming the file."""
    documents = []
    for index, path in enumerate(files):
        syntax = fmt or SUFFIX_FORMATS.get(path.suffix.lower())
        if syntax is None:
            raise InputError(
                f"files[{index}]", f"{path.name}: unknown suffix; give --format turtle|nt|json-ld|xml|nquads|trig"
            )
        content = read_text_bounded(path, f"files[{index}]")
        documents.append(RdfDocument(name=path.name, format=syntax, content=content, base_iri=path.resolve().as_uri()))
    return documents


@fact.command("import")
@request_options(FactImportInput, documents=Cli(params=(FILES, FORMAT), build=read_documents))
@mabos_options
def import_(out: Session, *, request: FactImportInput) -> None:
    """Import RDF files as facts (one fact per triple, in batches of 10,000).

    IRIs stay IRIs (rdf:type becomes 'type'), literals become literal objects; see docs/facts-bulk.md.
    Prints the counts and the parse and store times separately.

    Example:

    \b
      mabos fact import --agent reader data.ttl
      mabos fact import --agent reader /data/lubm1/*.owl --json
    """
    with progress("importing") as update:  # this process is the CLI's own: the bulk path may tune it
        context = replace(out.tools(), counts=update, tune_process=True)
        report = cast(ImportReport, run(context, "fact_import", request))
    text = render.done(
        f"Imported {report.triples} triples: {report.created} created, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.skipped} skipped"
    )
    text.append(f"\n  parse {report.parse_seconds:.2f} s, store {report.store_seconds:.2f} s", style="")
    out.emit(report, text)
