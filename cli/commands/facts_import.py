"""``mabos fact import``: RDF files as facts, over the fact_import tool (cli/tools/facts_import.py).

Attached to the ``fact`` group (:data:`cli.commands.facts.SUBCOMMANDS`), imported when it runs: other fact
commands load neither the importer nor the RDF documents' helpers.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast, get_args

import click

from cli import render
from cli.common import Session, mabos_options
from cli.options import Cli, request_options
from cli.progress import progress
from cli.tools.facts_import import FactImportInput
from cli.tools.registry import run
from kg.errors import InputError
from kg.facts_requests import RdfDocument, RdfFormat
from kg.limits import read_text_bounded
from kg.rdf.documents import SUFFIX_FORMATS
from kg.rdf.importer import ImportReport

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


@click.command("import")
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
        context = out.tools(counts=update, tune_process=True)
        report = cast(ImportReport, run(context, "fact_import", request))
    text = render.done(
        f"Imported {report.triples} triples: {report.created} created, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.skipped} skipped"
    )
    text.append(f"\n  parse {report.parse_seconds:.2f} s, store {report.store_seconds:.2f} s", style="")
    out.emit(report, text)
