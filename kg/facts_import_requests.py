"""The RDF import's request, what ``fact import`` takes: named by :mod:`kg.facts_requests` (where every fact request is
declared) and defined here, so that other fact commands do not define it (issue 33)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kg.facts_write_requests import WRITE_SCOPE_HELP as _WRITE_SCOPE
from kg.limits import MAX_DOCUMENT_BYTES as MAX_DOCUMENT
from kg.models import MAX_LIST
from kg.models.request import Request

RdfFormat = Literal["turtle", "nt", "json-ld", "xml", "nquads", "trig"]


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


__all__ = ["FactImportRequest", "RdfDocument", "RdfFormat"]
