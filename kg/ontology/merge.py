"""Merging a validated proposal into its domain file, and the whole-file checks a merge must pass.

:func:`merged_text` computes the new file text without writing: the node (with provenance) spliced into
``@graph`` before the first node whose ``@id`` sorts after it (:func:`~kg.ontology.files.insert_node`), so
every other byte of the file stays as it was and the same merge always gives the same bytes.
:func:`merge_record` is what a diff shows once the proposal is merged: the change the merge made.
:func:`file_checks` is what ``mabos ontology check`` runs per file and what a merge re-runs on the file it
wrote; the service restores the previous bytes when it finds a problem.
"""

from __future__ import annotations

import difflib
import json
from datetime import datetime
from typing import Any

from pydantic import Field
from rdflib import OWL, RDF, XSD, Graph, URIRef

from kg.models import Model, OntologyProposal, ProposalStatus, ValidationCheck, format_ts
from kg.models.base import new_list
from kg.ontology.consistency import module_triples, owl_rl_problems, shacl_problems
from kg.ontology.files import IRI_BASE, MABOS, ActiveSet, DomainFile, compact, insert_node
from kg.ontology.layout import graph_spans, ontology_json
from kg.ontology.validate import ProposedNode, build_node, domain_file

#: Provenance written on a merged node (``mabos:`` annotation properties).
PROVENANCE = ("proposed_by", "proposed_at", "approved_by", "approved_at", "rationale")


class FileCheck(Model):
    """The checks of one ontology file."""

    file: str
    domain: str
    ok: bool
    checks: list[ValidationCheck] = Field(default_factory=new_list)


def provenance(proposal: OntologyProposal, home: DomainFile, approved_by: str, approved_at: datetime) -> dict[str, Any]:
    """The provenance keys of a merged node, compacted against the domain file's context."""
    own = home.prefixes

    def stamp(when: datetime) -> dict[str, str]:
        return {"@value": format_ts(when), "@type": compact(XSD.dateTime, own)}

    values: dict[str, Any] = {"proposed_by": proposal.proposed_by, "proposed_at": stamp(proposal.created_at),
                              "approved_by": approved_by, "approved_at": stamp(approved_at)}  # fmt: skip
    if proposal.rationale.strip():
        values["rationale"] = proposal.rationale
    return {compact(MABOS + key, own): values[key] for key in PROVENANCE if key in values}


def merged_text(
    proposal: OntologyProposal, active: ActiveSet, approved_by: str, approved_at: datetime
) -> tuple[DomainFile, ProposedNode, str]:
    """The domain file, the node as merged, and the file's new text (nothing is written)."""
    home = domain_file(proposal.domain, active)
    node = build_node(proposal, active, extra=provenance(proposal, home, approved_by, approved_at))
    return home, node, insert_node(home.raw.decode("utf-8"), node.node)


def unified_diff(home: DomainFile, new_text: str) -> str:
    """A unified diff of a domain file (``a/<name>`` -> ``b/<name>``)."""
    old = home.raw.decode("utf-8").splitlines(keepends=True)
    name = home.path.name
    return "".join(difflib.unified_diff(old, new_text.splitlines(keepends=True), f"a/{name}", f"b/{name}"))


def without_node(text: str, node_id: str) -> str | None:
    """``text`` (a domain file) with the ``@graph`` node whose ``@id`` is ``node_id`` taken out: the exact inverse
    of :func:`~kg.ontology.files.insert_node`'s splice (the node and its separator), or the file rewritten without
    the node where the nodes are not one per line. None when no such node is in the file."""
    data = json.loads(text)
    graph = data.get("@graph") if isinstance(data, dict) else None
    if not isinstance(graph, list):
        return None
    found = [i for i, n in enumerate(graph) if isinstance(n, dict) and n.get("@id") == node_id]
    if not found:
        return None
    index = found[0]
    spans = graph_spans(text)
    if spans is None or len(spans) != len(graph):
        del graph[index]
        return ontology_json(data)
    if len(spans) == 1:
        return text[: spans[0][0]] + text[spans[0][1] :]
    if index + 1 < len(spans):
        return text[: spans[index][0]] + text[spans[index + 1][0] :]
    return text[: spans[index - 1][1]] + text[spans[index][1] :]


def merge_record(proposal: OntologyProposal, home: DomainFile, node_id: str) -> str:
    """For a merged proposal: a line saying so (where, by whom, when) and the diff the merge made, reconstructed
    from the file as it is now (the file without the merged node -> the file); a note when the node is gone."""
    step = next((h for h in reversed(proposal.history) if h.status is ProposalStatus.APPROVED_MERGED), None)
    who = f" by {step.by} at {format_ts(step.at)}" if step is not None else ""
    head = f"# {proposal.uid} is merged into {home.path.name}{who}; the merge made this change:\n"
    text = home.raw.decode("utf-8")
    before = without_node(text, node_id)
    if before is None:
        return (f"# {proposal.uid} is merged into {home.path.name}{who}, but {node_id} is no longer in the file "
                "(edited since); nothing to show\n")  # fmt: skip
    name = home.path.name
    body = difflib.unified_diff(before.splitlines(keepends=True), text.splitlines(keepends=True),
                                f"a/{name}", f"b/{name}")  # fmt: skip
    return head + "".join(body)


# ------------------------------------------------------------------------------------------------ file checks


def _check(name: str, problems: list[str], passed: str) -> ValidationCheck:
    return ValidationCheck(check=name, ok=not problems, message=("; ".join(problems) or passed)[:60_000])


def _header(domain: DomainFile) -> list[str]:
    problems = []
    declared = domain.data.get("mabos:domain")
    if declared is not None and declared != domain.name:
        problems.append(f"mabos:domain is {declared!r} but the file is named {domain.path.name}")
    namespace = URIRef(domain.namespace)
    if (namespace, RDF.type, OWL.Ontology) not in domain.graph:
        problems.append(f"the file's @id {str(namespace)!r} is not typed owl:Ontology")
    if not str(namespace).startswith(IRI_BASE):
        problems.append(f"namespace {str(namespace)!r} is not under {IRI_BASE}")
    bound = domain.prefixes.get(domain.prefix)
    if bound is not None and bound != str(namespace):
        problems.append(f"prefix {domain.prefix!r} is bound to {bound!r}, not to the namespace {str(namespace)!r}")
    return problems


def file_checks(active: ActiveSet, name: str, shapes: Graph) -> FileCheck:
    """``parses``, ``header``, ``shacl`` and ``owl_rl`` of one file of the active set.

    SHACL runs on the file's nodes together with what they reference in other files (results about the
    file's own subjects only); OWL 2 RL on the module of the file's nodes, with a probe member per class
    and property (:mod:`kg.ontology.consistency`).
    """
    domain = active.files[name]
    if domain.error:
        checks = [_check("parses", [domain.error], "")]
        return FileCheck(file=str(domain.path), domain=name, ok=False, checks=checks)
    subjects = set(domain.graph.subjects())
    data = module_triples(active.graph, subjects)
    shacl = shacl_problems(data, shapes, focus=subjects, prefixes=active.prefixes)
    owl = owl_rl_problems(active.graph, domain.subjects)
    checks = [
        _check("parses", [], f"{len(domain.graph)} triples"),
        _check("header", _header(domain), "domain, namespace and prefix agree"),
        _check("shacl", shacl, "conforms to the SHACL shapes"),
        _check("owl_rl", owl, "OWL 2 RL finds no inconsistency (one probe member per class and property)"),
    ]
    return FileCheck(file=str(domain.path), domain=name, ok=all(c.ok for c in checks), checks=checks)


def merge_problems(active: ActiveSet, name: str, node: ProposedNode, shapes: Graph) -> list[str]:
    """What is wrong with a domain file after a merge: failed file checks, or the node not read back whole."""
    result = file_checks(active, name, shapes)
    problems = [f"{c.check}: {c.message}" for c in result.checks if not c.ok]
    if not result.ok:
        return problems
    graph = active.files[name].graph
    for triple in node.triples():
        if triple not in graph and not any(str(o) == str(triple[2]) for o in graph.objects(triple[0], triple[1])):
            problems.append(f"merged node: {compact(str(triple[1]), active.prefixes)} {triple[2]} did not read back")
    return problems


__all__ = ["PROVENANCE", "FileCheck", "file_checks", "merge_problems", "merge_record", "merged_text", "provenance",
           "unified_diff", "without_node"]  # fmt: skip
