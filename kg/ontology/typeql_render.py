"""Rendering a converted ontology as one TypeQL ``define`` query: single inheritance resolved, then one
statement per type."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdflib import URIRef

from kg.ontology.typeql_terms import _T, Note, _NoteFn, _Term, kebab_case


@dataclass
class _Mapping:
    """Everything :func:`_render` needs, keyed by IRI."""

    terms: list[_Term]
    ids: dict[URIRef, str]
    sub: dict[URIRef, URIRef]
    owns: dict[URIRef, set[URIRef]]
    plays: dict[URIRef, set[tuple[URIRef, str]]]
    roles: dict[URIRef, tuple[str, str]]
    value_types: dict[URIRef, str]
    multi_valued: set[URIRef]
    multiple_inheritance: int


def _namespace_prefix(namespace: str) -> str:
    """The last path segment of a namespace without a declared ``mabos:prefix``: ``.../ecommerce#`` -> ``ecommerce``."""
    segments = [kebab_case(s) for s in re.split(r"[#/:]", namespace)]
    last = next((s for s in reversed(segments) if s), "")
    return last if last[:1].isalpha() else f"ns-{last}".rstrip("-")


def _chain(start: URIRef | None, sub: dict[URIRef, URIRef]) -> list[URIRef]:
    """``start`` and its ancestors along the chosen ``sub`` edges (which never form a cycle)."""
    chain = []
    while start is not None:
        chain.append(start)
        start = sub.get(start)
    return chain


def _ancestors(cls: URIRef, parents: dict[URIRef, list[URIRef]]) -> set[URIRef]:
    """Every class reachable by ``rdfs:subClassOf`` (``cls`` itself only when it lies on a cycle)."""
    seen: set[URIRef] = set()
    todo = list(parents[cls])
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo += parents[current]
    return seen


def _resolve_inheritance(
    parents: dict[URIRef, list[URIRef]], ids: dict[URIRef, str], note: _NoteFn
) -> tuple[dict[URIRef, URIRef], dict[URIRef, list[URIRef]], int]:
    """Pick one ``sub`` per class: (the ``sub`` map, per class the OWL ancestors its chain misses, how many
    classes with several superclasses had to be flattened).

    The kept superclass is the one with the most ancestors (the most specific), ties broken by the smaller
    identifier; a superclass that would close a cycle is passed over. Classes are settled in identifier order.
    """
    ancestors = {cls: _ancestors(cls, parents) for cls in parents}
    sub: dict[URIRef, URIRef] = {}
    for cls in sorted(parents, key=ids.__getitem__):
        ranked = sorted(parents[cls], key=lambda p: (-len(ancestors[p] - {p}), ids[p]))
        for parent in ranked:
            if cls in _chain(parent, sub):
                note("inheritance", cls, f"sub {ids[parent]} would close a subClassOf cycle: left out")
            elif cls not in sub:
                sub[cls] = parent
    lost = {cls: ancestors[cls] - set(_chain(cls, sub)) for cls in parents}
    flattened = 0
    for cls, supers in parents.items():
        # an ancestor the parent's own chain lost is reported (and copied onto) the parent already
        own = sorted(lost[cls].difference(*(lost[a] for a in _chain(sub.get(cls), sub))), key=ids.__getitem__)
        names = ", ".join(ids[c] for c in own)
        if own and len(supers) > 1:
            flattened += 1
            chosen = f"sub {ids[sub[cls]]}" if cls in sub else "no sub"
            message = f"superclasses {', '.join(ids[p] for p in supers)}: {chosen}; copies the owns and plays of"
            note("inheritance", cls, f"{message} {names} (its instances do not match isa {names})")
        elif own:
            note("inheritance", cls, f"copies the owns and plays of {names} (a subClassOf cycle)")
    return sub, {cls: sorted(found, key=ids.__getitem__) for cls, found in lost.items() if found}, flattened


def _flatten(
    direct: dict[URIRef, set[_T]], classes: set[URIRef], sub: dict[URIRef, URIRef], missing: dict[URIRef, list[URIRef]]
) -> dict[URIRef, set[_T]]:
    """Per class, its own capabilities plus those of the ancestors its ``sub`` chain misses, minus inherited ones."""
    effective = {c: direct.get(c, set()).union(*(direct.get(m, set()) for m in missing.get(c, []))) for c in classes}
    return {c: effective[c].difference(*(effective[a] for a in _chain(sub.get(c), sub))) for c in classes}


def _render(
    mapping: _Mapping, notes: list[Note], counts: dict[str, int], sources: list[str], ontologies: list[str]
) -> str:
    lines = [
        "# TypeQL 3 schema generated from the mabos JSON-LD ontologies by `mabos ontology to-typeql`.",
        "# Do not edit: change the ontologies and regenerate. Mapping rules: docs/ontology-typeql.md",
    ]
    for title, items in (("Sources", sources), ("Ontologies", ontologies)):
        lines += [f"# {title}:", *(f"#   {item}" for item in items)] if items else []
    lines.append(
        f"# Types: {counts['entities']} entity, {counts['relations']} relation, {counts['attributes']} attribute."
        f" Not mapped: {counts['business_rules']} business rule(s), {counts['annotations']} annotation property(ies),"
        f" {counts['skipped']} other node(s)."
    )
    if notes:
        lines += ["# Notes:", *(f"#   {note}" for note in notes)]
    lines += ["", "define", ""]
    ids = mapping.ids
    for kind, title in (
        ("attribute", "owl:DatatypeProperty"),
        ("entity", "owl:Class"),
        ("relation", "owl:ObjectProperty"),
    ):
        members = sorted((t for t in mapping.terms if t.kind == kind), key=lambda t: ids[t.iri])
        if members:
            lines.append(f"# {kind} types ({title})")
        for term in members:
            lines += [f"  # {term.iri}", *_statement(term, mapping), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _statement(term: _Term, mapping: _Mapping) -> list[str]:
    ids, iri = mapping.ids, term.iri
    head = f"{term.kind} {ids[iri]}"
    capabilities: list[str] = []
    if term.kind == "attribute":
        return [f"  {head}, value {mapping.value_types[iri]};"]
    if term.kind == "relation":
        capabilities = [f"relates {role}" for role in mapping.roles[iri]]
    else:
        if iri in mapping.sub:
            head += f" sub {ids[mapping.sub[iri]]}"
        for attribute in sorted(mapping.owns[iri], key=ids.__getitem__):
            capabilities.append(f"owns {ids[attribute]}" + (" @card(0..)" if attribute in mapping.multi_valued else ""))
        capabilities += [
            f"plays {ids[r]}:{role}" for r, role in sorted(mapping.plays[iri], key=lambda p: (ids[p[0]], p[1]))
        ]
    if not capabilities:
        return [f"  {head};"]
    return [f"  {head},", *(f"    {c}," for c in capabilities[:-1]), f"    {capabilities[-1]};"]
