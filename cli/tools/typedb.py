"""TypeDB tools: status, schema sync, raw TypeQL queries and pushing the outbox to the shared graph.

Each runs the :mod:`sync.shared_graph` function ``mabos typedb ...`` / ``mabos sync push`` runs. TypeDB is
optional: not configured is a :class:`~kg.errors.WorkspaceError`, an unreachable server a
:class:`~kg.errors.BackendUnavailableError` (a tool error over MCP, exit code 3 on the CLI), and neither changes
anything locally. The address comes from ``MABOS_TYPEDB_ADDRESS`` or ``mabos.toml`` (a CLI command may pass
``--typedb``: :class:`cli.tools.overrides.CommandContext`), never from an agent.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from cli.tools.overrides import optional_agent, push_progress, typedb_address
from cli.tools.registry import ToolContext, ToolInput, ToolOutput, tool
from sync.shared_graph import client_for, push_outbox, run_typeql, status, sync_schema
from sync.shared_graph_requests import PushRequest, SchemaSyncRequest, TypeQLRequest

GROUP = "typedb"
OPERATOR_AGENT = "Optional: these tools act on the whole workspace, not for one agent."


class OperatorInput(ToolInput):
    """Base of the TypeDB tools' inputs: workspace-wide operations, ``agent_id`` only checked."""

    agent_id: str | None = Field(default=None, description=OPERATOR_AGENT)


# ------------------------------------------------------------------------------------------ status


class TypeDBStatusInput(OperatorInput):
    """Input of ``typedb_status`` (nothing but the optional acting agent)."""


class TypeDBStatus(ToolOutput):
    """Whether TypeDB is configured and reachable, the database, the outbox backlog and the last schema sync.

    Fields that do not apply are absent from the CLI's JSON (e.g. ``reachable`` when not configured).
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)

    configured: bool = Field(description="Whether a TypeDB address is configured.")
    outbox: dict[str, int] = Field(description="Outbox events pending (not yet in TypeDB) and acked.")
    message: str | None = Field(default=None, description="How to configure TypeDB, when it is not.")
    address: str | None = Field(default=None, description="The server's host:port.")
    database: str | None = Field(default=None, description="The workspace's database.")
    username: str | None = None
    tls: bool | None = None
    configured_by: str | None = Field(default=None, description="Where the address came from.")
    reachable: bool | None = Field(default=None, description="Whether the server answered.")
    server_version: str | None = None
    database_exists: bool | None = None
    error: str | None = Field(default=None, description="Why the server could not be reached.")
    schema_sync: dict[str, Any] | None = Field(
        default=None, alias="schema", description="The last schema sync (address, database, fingerprint, synced_at)."
    )
    circuit_breaker: dict[str, Any] | None = Field(
        default=None, description="The write-through circuit breaker when it tripped (open_until, failures)."
    )


@tool(
    "typedb_status",
    group=GROUP,
    description="""Say whether the shared TypeDB graph is configured and reachable, its server version, whether
    the workspace's database exists, how many changes wait in the outbox and when the schema was last synced.
    Use it before the other typedb_* tools or when shared-graph answers come from the local store. Never fails
    for an unreachable server: it says so.""",
)
def typedb_status(ctx: ToolContext, args: TypeDBStatusInput) -> TypeDBStatus:
    """Report on TypeDB."""
    optional_agent(ctx, args)
    return TypeDBStatus.model_validate(status(ctx.workspace(), typedb_address(ctx)))


# ------------------------------------------------------------------------------------------ sync schema


class SyncSchemaInput(SchemaSyncRequest, OperatorInput):
    """Input of ``typedb_sync_schema``."""


class ServerReport(ToolOutput):
    """Base of the reports of what a tool did on a TypeDB server: which server and database it did it on."""

    address: str
    database: str


class SchemaSyncReport(ServerReport):
    """What a schema sync did."""

    created: bool = Field(description="The database was created.")
    changed: bool = Field(description="The schema differs from the one last synced.")
    fingerprint: str = Field(description="SHA-256 of the schema queries.")
    defined: bool = Field(description="The schema was defined (false when skipped by if_changed).")
    queries: int = Field(description="Schema queries run.")


@tool(
    "typedb_sync_schema",
    group=GROUP,
    description="""Create the workspace's TypeDB database if needed and define the base schema plus the TypeQL of
    the workspace's ontologies in one schema transaction. Use it after merging ontology changes. Fails when TypeDB
    is not configured or unreachable. Returns whether the database was created and the schema defined.""",
)
def typedb_sync_schema(ctx: ToolContext, args: SyncSchemaInput) -> SchemaSyncReport:
    """Define the schema."""
    optional_agent(ctx, args)
    report = sync_schema(ctx.workspace(), args, override=typedb_address(ctx))
    return SchemaSyncReport.model_validate(report)


# ------------------------------------------------------------------------------------------ query


class TypeDBQueryInput(TypeQLRequest, OperatorInput):
    """Input of ``typedb_query``."""


class TypeDBAnswers(ToolOutput):
    """A TypeQL query's answers as JSON: fetch documents as they are, rows as ``{variable: value}``."""

    database: str
    count: int
    truncated: bool = Field(description="True when more answers existed than the limit.")
    answers: list[Any]


@tool(
    "typedb_query",
    group=GROUP,
    description="""Run one raw TypeQL 3 query on the workspace's shared TypeDB graph, for questions the other
    tools cannot ask. Read-only unless write is true. Raw TypeQL sees every agent's records, so only the
    workspace's operator may run it: an MCP server refuses it (use graph_query there). Fails when TypeDB is not
    configured or unreachable. Returns at most limit answers and whether more existed.""",
)
def typedb_query(ctx: ToolContext, args: TypeDBQueryInput) -> TypeDBAnswers:
    """Run a TypeQL query."""
    ctx.require_operator("query", "raw TypeQL reads every agent's scope")
    database, answers, truncated = run_typeql(ctx.workspace(), args, override=typedb_address(ctx))
    return TypeDBAnswers(database=database, count=len(answers), truncated=truncated, answers=answers)


# ------------------------------------------------------------------------------------------ push


class SyncAgentDataInput(PushRequest, OperatorInput):
    """Input of ``typedb_sync_agent_data``."""


class PushResult(ServerReport):
    """What one push of the outbox did."""

    sent: int = Field(description="Events applied to TypeDB.")
    batches: int = Field(description="Transactions committed.")
    acknowledged: int = Field(description="Events newly acknowledged in the outbox.")
    pending_left: int = Field(description="Events still waiting.")
    by_aggregate: dict[str, int] = Field(description="Events sent per kind of record (fact, memory, belief ...).")


@tool(
    "typedb_sync_agent_data",
    group=GROUP,
    description="""Push the workspace's pending changes (the outbox: every agent's facts, memories, BDI records)
    to the shared TypeDB graph, oldest first, in batches, each acknowledged after it committed; safe to repeat.
    Syncs the schema first if it changed. Use it when typedb_status shows pending events. Fails when TypeDB is
    not configured or unreachable (nothing is lost: the events wait). Returns how many events were sent.""",
)
def typedb_sync_agent_data(ctx: ToolContext, args: SyncAgentDataInput) -> PushResult:
    """Push the outbox."""
    optional_agent(ctx, args)
    ws = ctx.workspace()
    override = typedb_address(ctx)
    client = client_for(ws, override)  # not configured: say so before anything else
    report = push_outbox(ws, args, progress=push_progress(ctx), override=override)
    return PushResult(address=client.settings.address, database=client.settings.database, **vars(report))


__all__ = [
    "PushResult",
    "SchemaSyncReport",
    "SyncAgentDataInput",
    "SyncSchemaInput",
    "TypeDBAnswers",
    "TypeDBQueryInput",
    "TypeDBStatus",
    "TypeDBStatusInput",
]
