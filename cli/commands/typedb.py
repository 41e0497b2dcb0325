"""``mabos typedb status|sync-schema|query``: the shared TypeDB graph of a workspace."""

from __future__ import annotations

import json
from typing import Any

import click

from cli import render
from cli.common import Session, example, typedb_options
from cli.options import Cli, request_options
from cli.tools.typedb import SchemaSyncReport, SyncSchemaInput, TypeDBAnswers, TypeDBQueryInput, TypeDBStatus

#: The typedb commands act as the workspace's operator, for no agent.
OPERATOR = Cli(hidden=True)


@click.group("typedb")
def typedb() -> None:
    """The shared TypeDB graph: reachability, schema, raw TypeQL queries."""


@typedb.command("status", help=example(
    "Say whether TypeDB is configured and reachable, the server version, whether the database exists, the "
    "outbox backlog and the last schema sync. Never fails for an unreachable server (it says so).",
    "mabos typedb status --json",
))  # fmt: skip
@typedb_options
def status_(out: Session) -> None:
    found = out.run("typedb_status", {}, TypeDBStatus)
    report = found.model_dump(mode="json", exclude_unset=True)
    pairs = [(k, v) for k, v in report.items() if k not in ("outbox", "schema")]
    pairs += [("outbox pending", report["outbox"]["pending"]), ("outbox acknowledged", report["outbox"]["acked"])]
    if report.get("schema"):
        pairs.append(("schema synced at", report["schema"].get("synced_at")))
    out.emit(report, render.key_values("TypeDB", pairs))


@typedb.command("sync-schema", help=example(
    "Create the database (mabos_<workspace name>) if needed and define the base schema and the workspace's "
    "ontology schema in one schema transaction. --if-changed skips the define when nothing changed since the "
    "last sync.",
    "mabos typedb sync-schema --typedb localhost:1729",
))  # fmt: skip
@request_options(SyncSchemaInput, agent_id=OPERATOR)
@typedb_options
def sync_schema_(out: Session, *, request: SyncSchemaInput) -> None:
    report = out.run("typedb_sync_schema", request, SchemaSyncReport)
    verb = "defined" if report.defined else "unchanged, not redefined"
    out.emit(report, render.done(f"schema {verb} in {report.database} at {report.address}"))


@typedb.command("query", help=example(
    "Run one TypeQL 3 query on the shared graph. Read-only unless --write (write stages are refused first, "
    "and the query runs in a read transaction). Answers are JSON: fetch documents as they are, rows as "
    "{variable: value}; at most --limit answers, with truncated: true when more exist.",
    "mabos typedb query \"match $g isa goal; fetch { 'name': $g.has-content };\" --json",
))  # fmt: skip
@request_options(TypeDBQueryInput, agent_id=OPERATOR, query=Cli(argument=True), limit=Cli(bounded=True))
@typedb_options
def query(out: Session, *, request: TypeDBQueryInput) -> None:
    result = out.run("typedb_query", request, TypeDBAnswers)
    lines: list[Any] = [json.dumps(a, ensure_ascii=False) for a in result.answers]
    lines.append(render.note(f"{result.count} answers" + (" (truncated)" if result.truncated else "")))
    out.emit(result, *lines)


__all__ = ["typedb"]
