"""The fact use cases' requests: what ``assert``, ``retract``, ``query``, ``explain`` and ``import`` take, each
declared once.

:class:`kg.facts.FactService` accepts these models (and :func:`kg.rdf.importer.import_documents` the import's);
the tools ``fact_assert`` ... ``fact_import`` (cli/tools/fact*.py) are these models plus ``agent_id``, and ``mabos
fact ...`` generates its options from them (docs/decisions/2026-11-28-request-models.md). The limits are the
store's: confidence 0..1, query limit 1..100,000 (100 by default), explain depth 0..10, a document 100 MB.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kg.limits import MAX_DOCUMENT_BYTES
from kg.models import MAX_LIST, ObjectKind, ObjectText, RecordId, Term, Unit, UtcDatetime
from kg.models.base import MAX_OBJECT, MAX_TERM, new_list
from kg.models.request import Request

MAX_EXPLAIN_DEPTH = 10
MAX_QUERY_LIMIT = 100_000  # the store's own ceiling (kg.models.FactQuery.limit)
DEFAULT_QUERY_LIMIT = 100
MAX_DOCUMENT = MAX_DOCUMENT_BYTES

RdfFormat = Literal["turtle", "nt", "json-ld", "xml", "nquads", "trig"]

_WRITE_SCOPE = (
    "The scope: 'global', 'agent:<id>' (private to that agent, the default is the acting agent's own), "
    "'project:<name>', 'user:<name>' or 'custom:<name>'; the agent must be allowed to write it."
)


class FactAssertRequest(Request):
    """One fact to assert (an upsert: the same subject, predicate and object in the same scope is updated)."""

    subject: Term = Field(description="The entity the fact is about, e.g. 'acme'.")
    predicate: Term = Field(description="The relation or attribute, e.g. 'hasRevenue' (camelCase by convention).")
    object: ObjectText = Field(description="The value or the other entity, e.g. '$50000' or 'globex'.")
    confidence: Unit = Field(1.0, description="How sure the agent is, 0..1.")
    source: str = Field("agent", max_length=256, description="Where the fact comes from, e.g. 'cfo-report'.")
    scope: str | None = Field(None, description=_WRITE_SCOPE)
    object_kind: ObjectKind | None = Field(
        None, description="Whether the object names an entity or is a literal (guessed from the object when omitted)."
    )
    valid_from: UtcDatetime | None = Field(None, description="World time the fact starts to hold (ISO-8601).")
    valid_until: UtcDatetime | None = Field(
        None, description="World time the fact stops holding (ISO-8601); later than the time it starts to hold."
    )
    derived_from: list[RecordId] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="Uids (F-...) of facts this one was derived from."
    )
    rule_id: RecordId | None = Field(None, description="The uid (R-...) of the rule that derived this fact.")


class FactRetractRequest(Request):
    """Which facts to retract: ids and/or a subject and/or a predicate (at least one; several narrow each other)."""

    fact_ids: list[RecordId] = Field(
        default_factory=new_list, max_length=MAX_LIST, description="Uids (F-...) of the facts to retract (up to 1000)."
    )
    subject: str | None = Field(None, max_length=MAX_TERM, description="Retract the live facts with this subject.")
    predicate: str | None = Field(None, max_length=MAX_TERM, description="Retract the live facts with this predicate.")
    scope: str | None = Field(None, description="Only retract in this one scope (default: every writable scope).")


class FactQueryRequest(Request):
    """A fact pattern and filters: ``*`` in subject, predicate or object is a wildcard."""

    subject: str | None = Field(None, max_length=MAX_TERM, description="Subject; '*' is a wildcard (acme*, *corp).")
    predicate: str | None = Field(None, max_length=MAX_TERM, description="Predicate; '*' is a wildcard (has*).")
    object: str | None = Field(None, max_length=MAX_OBJECT, description="Object; '*' is a wildcard.")
    min_confidence: Unit | None = Field(None, description="Only facts at least this confident (0..1).")
    valid_at: UtcDatetime | None = Field(None, description="Only facts holding at this world time (ISO-8601).")
    as_of: UtcDatetime | None = Field(None, description="The store as it stood at this system time (ISO-8601).")
    include_derived: bool = Field(True, description="Include facts derived by inference.")
    only_derived: bool = Field(False, description="Only facts derived by inference.")
    include_retracted: bool = Field(False, description="Include retracted facts.")
    scope: str | None = Field(None, description="Only this one readable scope (default: every scope the agent reads).")
    limit: int = Field(
        DEFAULT_QUERY_LIMIT, ge=1, le=MAX_QUERY_LIMIT, description="At most this many facts (1..100000)."
    )


class FactExplainRequest(Request):
    """The fact to explain and how deep to follow its supports."""

    fact_id: str = Field(max_length=64, description="The uid (F-...) of the fact to explain.")
    depth: int = Field(
        2, ge=0, le=MAX_EXPLAIN_DEPTH, description="How many levels of supporting facts to follow (0..10)."
    )


class RdfDocument(BaseModel):
    """One RDF document to import."""

    model_config = ConfigDict(defer_build=True)  # built by an import, not by every fact command that loads this

    name: str = Field(max_length=1_024, description="Where it came from (a file name), for error messages.")
    format: RdfFormat = Field(
        description="turtle, nt, json-ld, xml (RDF/XML: .owl and .rdf files), nquads or trig (graph names are dropped)."
    )
    content: str = Field(max_length=MAX_DOCUMENT, description="The document text (at most 100,000,000 characters).")
    base_iri: str | None = Field(
        None,
        max_length=4_096,
        description="The absolute IRI relative IRIs resolve against (the CLI gives the file: URI); without it a "
        "relative IRI is refused.",
    )


class FactImportRequest(Request):
    """RDF documents to import as facts, one fact per triple."""

    documents: list[RdfDocument] = Field(min_length=1, max_length=MAX_LIST, description="The RDF documents.")
    scope: str | None = Field(None, description=_WRITE_SCOPE)


__all__ = [
    "DEFAULT_QUERY_LIMIT",
    "MAX_DOCUMENT",
    "MAX_EXPLAIN_DEPTH",
    "MAX_QUERY_LIMIT",
    "FactAssertRequest",
    "FactExplainRequest",
    "FactImportRequest",
    "FactQueryRequest",
    "FactRetractRequest",
    "RdfDocument",
    "RdfFormat",
]
