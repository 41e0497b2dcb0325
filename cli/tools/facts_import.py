"""The fact tool fact_import (RDF documents as facts), in a module of its own so that other fact commands import
neither it nor the importer (issue 33; the other fact tools: :mod:`cli.tools.facts`)."""

from __future__ import annotations

from cli.tools.overrides import count_progress, may_tune_process
from cli.tools.registry import ToolContext, ToolInput, tool
from kg.facts_requests import FactImportRequest
from kg.rdf.importer import ImportReport, import_documents


class FactImportInput(FactImportRequest, ToolInput):
    """Arguments of ``fact_import``."""


@tool(
    "fact_import",
    group="facts",
    description="""Import RDF documents (Turtle, N-Triples, JSON-LD or RDF/XML text) as facts: each triple becomes
    a fact (IRIs stay IRIs, rdf:type becomes 'type', literals become literal objects), asserted in batches of
    10,000 with the usual checks. Use it to load an existing knowledge graph or ontology data. Returns the counts
    (created, updated, unchanged, skipped blank literals) and the parse and store times.""",
)
def fact_import(ctx: ToolContext, args: FactImportInput) -> ImportReport:
    """Parse the documents and bulk-assert their triples through the fact service."""
    workspace, agent_id = ctx.workspace(), ctx.agent_for(args)
    return import_documents(workspace, agent_id, args, progress=count_progress(ctx), tune_process=may_tune_process(ctx))


__all__ = ["FactImportInput", "fact_import"]
