"""The fact write requests, what ``assert`` and ``retract`` take: named by :mod:`kg.facts_requests` (where every fact
request is declared) and defined here, so that a query does not define them (issue 33)."""

from pydantic import Field

from kg.models import MAX_LIST, ObjectKind, ObjectText, RecordId, Term, Unit, UtcDatetime
from kg.models.base import MAX_TERM, new_list
from kg.models.request import Request

#: The help of a write's ``scope`` field (also the import's).
WRITE_SCOPE_HELP = (
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
    scope: str | None = Field(None, description=WRITE_SCOPE_HELP)
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


__all__ = ["FactAssertRequest", "FactRetractRequest"]
