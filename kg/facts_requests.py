"""The fact use cases' requests: what ``assert``, ``retract``, ``query``, ``explain`` and ``import`` take, each
declared once.

:class:`kg.facts.FactService` accepts these models (and :func:`kg.rdf.importer.import_documents` the import's);
the tools ``fact_assert`` ... ``fact_import`` (cli/tools/fact*.py) are these models plus ``agent_id``, and ``mabos
fact ...`` generates its options from them (docs/decisions/2026-11-28-request-models.md). The limits are the
store's: confidence 0..1, query limit 1..100,000 (100 by default), explain depth 0..10, a document 100 MB.

The write requests (:mod:`kg.facts_write_requests`) and the import's (:mod:`kg.facts_import_requests`) are defined
in modules of their own and named here on first use (PEP 562), so that a query defines neither (issue 33).
"""

from typing import TYPE_CHECKING

from pydantic import Field

from kg.faces import lazy_names
from kg.limits import MAX_DOCUMENT_BYTES
from kg.models import Unit, UtcDatetime
from kg.models.base import MAX_OBJECT, MAX_TERM
from kg.models.request import Request

if TYPE_CHECKING:
    from kg.facts_import_requests import FactImportRequest, RdfDocument, RdfFormat
    from kg.facts_write_requests import FactAssertRequest, FactRetractRequest

MAX_EXPLAIN_DEPTH = 10
MAX_QUERY_LIMIT = 100_000  # the store's own ceiling (kg.models.FactQuery.limit)
DEFAULT_QUERY_LIMIT = 100
MAX_DOCUMENT = MAX_DOCUMENT_BYTES


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


#: The requests defined in modules of their own, named here on first use.
_SOURCES = {
    "kg.facts_write_requests": ("FactAssertRequest", "FactRetractRequest"),
    "kg.facts_import_requests": ("FactImportRequest", "RdfDocument", "RdfFormat"),
}
if not TYPE_CHECKING:  # mypy reads the imports above
    __getattr__, __dir__ = lazy_names(__name__, _SOURCES)


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
