"""``mabos fact assert|retract|query|explain|import``: thin wrappers over the fact tools (cli/tools/facts.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import cast

import click

from cli import render
from cli.common import ISO_DATETIME, Session, agent_option, mabos_options, scope_option
from cli.progress import progress
from cli.tools.facts import FactAssertResult, FactList, FactRetractResult
from cli.tools.registry import run
from kg.errors import InputError
from kg.facts import Explanation
from kg.limits import read_text_bounded
from kg.models import ObjectKind
from reasoning.fact_import import SUFFIX_FORMATS, ImportReport, RdfDocument


@click.group("fact")
def fact() -> None:
    """Assert, retract, query and explain facts.

    A fact is a (subject, predicate, object) statement with a confidence and a source.
    """


@fact.command("assert")
@agent_option
@click.argument("subject")
@click.argument("predicate")
@click.argument("obj", metavar="OBJECT")
@click.option("--confidence", type=float, default=None, help="0..1 (default 1).")
@click.option("--source", default=None, help="Where the fact comes from (default 'agent').")
@scope_option
@click.option("--object-kind", type=click.Choice([k.value for k in ObjectKind]), default=None,
              help="Whether OBJECT names an entity or is a literal (guessed when omitted).")  # fmt: skip
@click.option("--valid-from", type=ISO_DATETIME, default=None, help="World time it starts to hold (ISO-8601).")
@click.option("--valid-until", type=ISO_DATETIME, default=None, help="World time it stops holding (ISO-8601).")
@click.option("--derived-from", "derived_from", multiple=True, metavar="F-...", help="A supporting fact (repeatable).")
@click.option("--rule-id", default=None, metavar="R-...", help="The rule that derived this fact.")
@mabos_options
def assert_(
    out: Session,
    *,
    agent: str,
    subject: str,
    predicate: str,
    obj: str,
    confidence: float | None,
    source: str | None,
    scope: str | None,
    object_kind: str | None,
    valid_from: datetime | None,
    valid_until: datetime | None,
    derived_from: tuple[str, ...],
    rule_id: str | None,
) -> None:
    """Assert a fact (an upsert).

    The same subject, predicate and object in the same scope is updated, never duplicated.

    Prints the fact's uid and whether it was created, updated or unchanged.

    Example:

    \b
      mabos fact assert --agent sales-agent acme hasRevenue "$50000" --confidence 0.9 --source cfo-report
    """
    given = {"confidence": confidence, "source": source, "scope": scope, "object_kind": object_kind,
             "valid_from": valid_from, "valid_until": valid_until, "derived_from": list(derived_from),
             "rule_id": rule_id}  # fmt: skip
    arguments = {"agent_id": agent, "subject": subject, "predicate": predicate, "object": obj,
                 **{k: v for k, v in given.items() if v is not None}}  # fmt: skip
    result = out.run("fact_assert", arguments, FactAssertResult)
    stored = result.fact
    text = render.done(f"{stored.uid} {result.status.value}")
    text.append(f"  {render.fact_text(stored)}  [{stored.scope}]", style="")
    out.emit(result, text)


@fact.command("retract")
@agent_option
@click.argument("fact_ids", nargs=-1, metavar="[FACT_ID]...")
@click.option("--subject", default=None, help="Retract live facts with this subject.")
@click.option("--predicate", default=None, help="Retract live facts with this predicate.")
@scope_option
@mabos_options
def retract(
    out: Session,
    *,
    agent: str,
    fact_ids: tuple[str, ...],
    subject: str | None,
    predicate: str | None,
    scope: str | None,
) -> None:
    """Retract facts by id, subject and/or predicate.

    Retraction keeps history: query --as-of still finds the fact.

    Example:

    \b
      mabos fact retract --agent sales-agent --subject acme
      mabos fact retract --agent sales-agent F-01J0000000000000000000000
    """
    arguments = {"agent_id": agent, "fact_ids": list(fact_ids), "subject": subject, "predicate": predicate,
                 "scope": scope}  # fmt: skip
    result = out.run("fact_retract", arguments, FactRetractResult)
    lines = [render.done(f"Retracted {result.count} fact{'' if result.count == 1 else 's'}")]
    lines += [render.note(f"  {uid}") for uid in result.retracted]
    out.emit(result, *lines)


@fact.command("query")
@agent_option
@click.option("--subject", default=None, help="Subject; '*' is a wildcard (acme*, *corp).")
@click.option("--predicate", default=None, help="Predicate; '*' is a wildcard.")
@click.option("--object", "obj", default=None, help="Object; '*' is a wildcard.")
@click.option("--min-confidence", type=float, default=None, help="Only facts at least this confident (0..1).")
@click.option("--valid-at", type=ISO_DATETIME, default=None, help="Only facts holding at this world time.")
@click.option("--as-of", type=ISO_DATETIME, default=None, help="The store as it stood at this system time.")
@click.option("--derived/--no-derived", "include_derived", default=True, help="Include derived facts (default yes).")
@click.option("--only-derived", is_flag=True, default=False, help="Only derived facts.")
@click.option("--include-retracted", is_flag=True, default=False, help="Include retracted facts.")
@scope_option
@click.option("--limit", type=int, default=100, show_default=True, help="At most this many facts.")
@mabos_options
def query(
    out: Session,
    *,
    agent: str,
    subject: str | None,
    predicate: str | None,
    obj: str | None,
    min_confidence: float | None,
    valid_at: datetime | None,
    as_of: datetime | None,
    include_derived: bool,
    only_derived: bool,
    include_retracted: bool,
    scope: str | None,
    limit: int,
) -> None:
    """Find facts visible to the agent.

    JSON output is a list of fact objects.

    Example:

    \b
      mabos fact query --agent sales-agent --subject acme --json
      mabos fact query --agent sales-agent --predicate 'has*' --as-of 2024-05-01T12:00:00Z
    """
    arguments = {
        "agent_id": agent, "subject": subject, "predicate": predicate, "object": obj, "min_confidence": min_confidence,
        "valid_at": valid_at, "as_of": as_of, "include_derived": include_derived, "only_derived": only_derived,
        "include_retracted": include_retracted, "scope": scope, "limit": limit,
    }  # fmt: skip
    found = out.run("fact_query", arguments, FactList)
    out.emit(found.facts, render.facts_table(found.facts), render.count(found.facts, "fact", limit))


@fact.command("explain")
@agent_option
@click.argument("fact_id", metavar="FACT_ID")
@click.option("--depth", type=int, default=2, show_default=True, help="How many levels of supports to follow (0..10).")
@mabos_options
def explain(out: Session, *, agent: str, fact_id: str, depth: int) -> None:
    """Explain why a fact holds.

    Shows the rule that derived it and the facts it was derived from, as a tree.

    Example:

    \b
      mabos fact explain --agent sales-agent F-01J0000000000000000000000 --depth 3
    """
    arguments = {"agent_id": agent, "fact_id": fact_id, "depth": depth}
    explanation = out.run("fact_explain", arguments, Explanation)
    out.emit(explanation, render.explanation_tree(explanation))


@fact.command("import")
@agent_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["turtle", "nt", "json-ld", "xml", "nquads", "trig"]),
              default=None, help="The RDF syntax (default: from each file's suffix: .ttl .nt .jsonld .owl/.rdf/.xml "
              ".nq .trig; named graphs' triples are imported, their names dropped).")  # fmt: skip
@scope_option
@mabos_options
def import_(out: Session, *, agent: str, files: tuple[Path, ...], fmt: str | None, scope: str | None) -> None:
    """Import RDF files as facts (one fact per triple, in batches of 10,000).

    IRIs stay IRIs (rdf:type becomes 'type'), literals become literal objects; see docs/facts-bulk.md.
    Prints the counts and the parse and store times separately.

    Example:

    \b
      mabos fact import --agent reader data.ttl
      mabos fact import --agent reader /data/lubm1/*.owl --json
    """
    documents = []
    for index, path in enumerate(files):
        syntax = fmt or SUFFIX_FORMATS.get(path.suffix.lower())
        if syntax is None:
            raise InputError(
                f"files[{index}]", f"{path.name}: unknown suffix; give --format turtle|nt|json-ld|xml|nquads|trig"
            )
        content = read_text_bounded(path, f"files[{index}]")  # at most 100 MB, read in chunks
        documents.append(RdfDocument(name=path.name, format=syntax, content=content, base_iri=path.resolve().as_uri()))
    with progress("importing") as update:  # this process is the CLI's own: the bulk path may tune it
        context = replace(out.tools(), counts=update, tune_process=True)
        arguments = {"agent_id": agent, "documents": documents, "scope": scope}
        report = cast(ImportReport, run(context, "fact_import", arguments))
    text = render.done(
        f"Imported {report.triples} triples: {report.created} created, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.skipped} skipped"
    )
    text.append(f"\n  parse {report.parse_seconds:.2f} s, store {report.store_seconds:.2f} s", style="")
    out.emit(report, text)
