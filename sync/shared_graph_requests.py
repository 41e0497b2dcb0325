"""Requests of the shared TypeDB graph's use cases (issue 34: a use case's parameters are declared once).

:mod:`sync.shared_graph` takes them: :func:`~sync.shared_graph.sync_schema` a :class:`SchemaSyncRequest`,
:func:`~sync.shared_graph.run_typeql` a :class:`TypeQLRequest`, :func:`~sync.shared_graph.push_outbox` a
:class:`PushRequest`. The ``typedb_*`` tools' inputs are these plus ``agent_id``, and ``mabos typedb sync-schema|query``
and ``mabos sync push`` generate their options from them. The TypeDB address is the operator's (``--typedb``), never a
field: an agent cannot point a tool at another server. Bounds and defaults are said by the fields' constraints,
which the JSON schema and the command's help both show, not again in the descriptions.
"""

from __future__ import annotations

from pydantic import Field

from kg.models.request import Request

#: Most answers one TypeQL query returns, and most outbox events per push transaction.
MAX_ANSWERS = 100_000
MAX_BATCH = 10_000
#: Longest TypeQL query accepted.
MAX_QUERY = 65_536


class SchemaSyncRequest(Request):
    """Define the base and ontology schema in the workspace's TypeDB database."""

    if_changed: bool = Field(
        default=False, description="Skip the define when the schema is unchanged since the last sync."
    )


class TypeQLRequest(Request):
    """One raw TypeQL query on the workspace's TypeDB database."""

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY,
        description="One TypeQL 3 query, e.g. \"match $g isa goal; fetch { 'goal': $g.has-content };\".",
    )
    write: bool = Field(
        default=False,
        description="Run in a write transaction and commit. Without it, insert/update/delete/put stages and "
        "schema queries are refused before anything runs.",
    )
    limit: int = Field(default=100, ge=1, le=MAX_ANSWERS, description="At most this many answers.")


class PushRequest(Request):
    """Send the outbox's unacknowledged events to TypeDB."""

    batch: int = Field(default=500, ge=1, le=MAX_BATCH, description="Events per TypeDB transaction.")


__all__ = ["MAX_ANSWERS", "MAX_BATCH", "MAX_QUERY", "PushRequest", "SchemaSyncRequest", "TypeQLRequest"]
