"""Validation of an ontology proposal against the active ontology set: a list of named checks.

Checks, in order (each a :class:`~kg.models.ValidationCheck` ``{check, ok, message}``):

* ``jsonld``: the node, written as JSON-LD in the domain file's context, parses with rdflib and yields every
  triple it should (a reference that is not a valid IRI would be dropped);
* ``shacl``: the SHACL shapes (``schema/shapes/*.ttl``) hold for the node (pyshacl);
* ``references``: the parent class, the domain and the range exist in the active set (``owl:Thing`` counts
  as a class; a datatype property's range is an ``xsd:`` datatype);
* ``new_id``: the node's IRI is not already a class or property;
* ``near_duplicate``: no label or synonym within 2 edits (case-insensitive) of an existing label or synonym;
* ``naming``: classes PascalCase, properties camelCase;
* ``sbvr_definition``: an SBVR definition is present;
* ``owl_rl``: OWL 2 RL finds no inconsistency once the node is added (see :mod:`kg.ontology.consistency`);
* ``typeql``: the node maps to TypeQL 3 as :mod:`kg.ontology.typeql` converts it: its kebab-case label is
  no reserved or built-in word and no other node's label (labels are unique across kinds; the converter
  would rename it), it has one supertype at most, and a datatype range has a TypeQL value type.

Nothing here writes anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, URIRef

from kg.errors import InputError
from kg.models import OntologyProposal, ProposalNodeType, ValidationCheck
from kg.ontology.consistency import module_triples, owl_rl_problems, shacl_problems
from kg.ontology.files import (
    MABOS,
    SBVR_DEFINITION,
    SBVR_SYNONYMS,
    ActiveSet,
    DomainFile,
    compact,
    parse_jsonld,
    resolve,
)
from kg.ontology.typeql import AVOIDED_WORDS, RESERVED_WORDS, VALUE_TYPES, kebab_case

#: Labels a proposal may not map to: TypeQL's reserved keywords and the built-in names the converter avoids.
RESERVED_LABELS = AVOIDED_WORDS

NEAR_DUPLICATE_DISTANCE = 3  # a label within fewer edits than this of an existing one is a near-duplicate
RDF_TYPES = {
    ProposalNodeType.CLASS: OWL.Class,
    ProposalNodeType.OBJECT_PROPERTY: OWL.ObjectProperty,
    ProposalNodeType.DATATYPE_PROPERTY: OWL.DatatypeProperty,
}
MULTI_VALUED = URIRef(MABOS + "multi_valued")
_PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*\Z")
_CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*\Z")


# ------------------------------------------------------------------------------------------------ helpers


def levenshtein(a: str, b: str, limit: int | None = None) -> int:
    """Edit distance (insertions, deletions, substitutions); stops early at ``limit + 1`` when given."""
    if len(a) < len(b):
        a, b = b, a
    if limit is not None and len(a) - len(b) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if limit is not None and min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def typeql_label(local_name: str) -> str:
    """The TypeQL label the converter (:mod:`kg.ontology.typeql`) gives a local name when it is free."""
    return kebab_case(local_name)


def valid_iri(iri: str) -> bool:
    """Whether ``iri`` has none of the characters an IRI may not contain (spaces, controls, ``<>"{}|\\^```)."""
    return not any(ord(ch) <= 0x20 or ch in '<>"{}|\\^`' for ch in iri)


def local_name(iri: str) -> str:
    """What follows the last ``#`` or ``/``."""
    return re.split(r"[#/]", iri)[-1]


def domain_file(domain: str, active: ActiveSet) -> DomainFile:
    """The file of a domain; InputError when the active set has none."""
    found = active.files.get(domain)
    if found is None:
        known = ", ".join(active.files) or "none"
        raise InputError("domain", f"no ontology {domain!r} in {active.directory} (known: {known})")
    return found


# ------------------------------------------------------------------------------------------------ the node


@dataclass
class ProposedNode:
    """A proposal as the JSON-LD node it would add, and what that node must say in RDF."""

    iri: URIRef
    kind: ProposalNodeType
    node: dict[str, Any]
    context: Any
    references: dict[str, tuple[str, URIRef | None]] = field(default_factory=dict)
    expected: list[tuple[URIRef, URIRef | str]] = field(default_factory=list)  # (predicate, IRI or literal text)
    invalid: list[str] = field(default_factory=list)  # references that are not IRIs at all

    def document(self) -> str:
        """The node with its context, as JSON-LD text."""
        return json.dumps({"@context": self.context, **self.node}, ensure_ascii=False)

    def triples(self) -> Graph:
        """The triples the node should produce (built directly, for when it does not parse)."""
        graph = Graph(bind_namespaces="none")
        for predicate, value in self.expected:
            graph.add((self.iri, predicate, value if isinstance(value, URIRef) else Literal(value)))
        return graph


def build_node(proposal: OntologyProposal, active: ActiveSet, extra: dict[str, Any] | None = None) -> ProposedNode:
    """The JSON-LD node of a proposal, compacted against its domain file's context (``extra`` keys appended)."""
    home = domain_file(proposal.domain, active)
    own = home.prefixes
    iri = URIRef(home.namespace + proposal.node_id)
    rdf_type = RDF_TYPES[proposal.node_type]
    node: dict[str, Any] = {"@id": compact(iri, own), "@type": compact(rdf_type, own)}
    out = ProposedNode(iri, proposal.node_type, node, home.data.get("@context"), expected=[(RDF.type, rdf_type)])

    def put(predicate: URIRef, value: Any, expected: list[URIRef | str]) -> None:
        node[compact(predicate, own)] = value
        out.expected.extend((predicate, v) for v in expected)

    put(RDFS.label, proposal.label, [proposal.label])
    refs = {"parent_class": (RDFS.subClassOf, proposal.parent_class), "domain_class": (RDFS.domain,
            proposal.domain_class), "range": (RDFS.range, proposal.range)}  # fmt: skip
    for name, (predicate, text) in refs.items():
        if text:
            target = resolve(text, active.prefixes, home.namespace)
            if target is not None and not valid_iri(target):
                out.invalid.append(f"{name}: {text!r} is not a valid IRI")
                node[compact(predicate, own)] = {"@id": text}
                continue
            out.references[name] = (text, target)
            put(predicate, {"@id": compact(target, own) if target else text}, [target or URIRef(text)])
    if proposal.sbvr_definition.strip():
        put(SBVR_DEFINITION, proposal.sbvr_definition, [proposal.sbvr_definition])
    if proposal.sbvr_synonyms:
        put(SBVR_SYNONYMS, list(proposal.sbvr_synonyms), list(proposal.sbvr_synonyms))
    if proposal.multi_valued and proposal.node_type is ProposalNodeType.DATATYPE_PROPERTY:
        put(MULTI_VALUED, True, [])
    for key, value in (extra or {}).items():
        node[key] = value
    return out


# ------------------------------------------------------------------------------------------------ checks


@dataclass
class _Context:
    proposal: OntologyProposal
    active: ActiveSet
    shapes: Graph
    node: ProposedNode
    graph: Graph  # the node's triples as parsed (or as built when they do not parse)


def _check(name: str, problems: list[str], passed: str) -> ValidationCheck:
    message = "; ".join(problems) if problems else passed
    return ValidationCheck(check=name, ok=not problems, message=message[:60_000])


def _jsonld(ctx: _Context) -> ValidationCheck:
    try:
        parsed = parse_jsonld(ctx.node.document())
    except Exception as exc:  # rdflib raises many unrelated types
        return _check("jsonld", [f"does not parse: {' '.join(str(exc).split())[:300]}"], "")
    missing = []
    for predicate, value in ctx.node.expected:
        objects = list(parsed.objects(ctx.node.iri, predicate))
        if not (value in objects if isinstance(value, URIRef) else any(str(o) == value for o in objects)):
            missing.append(f"{compact(predicate, ctx.active.prefixes)} {value} is missing (not a valid IRI?)")
    ctx.graph = parsed if not missing else ctx.node.triples()
    return _check("jsonld", ctx.node.invalid + missing, f"parses to {len(parsed)} triples")


def _shacl(ctx: _Context) -> ValidationCheck:
    data = module_triples([ctx.active.graph, ctx.graph], [ctx.node.iri])
    problems = shacl_problems(data, ctx.shapes, focus=[ctx.node.iri], prefixes=ctx.active.prefixes)
    return _check("shacl", problems, "conforms to the SHACL shapes")


def _references(ctx: _Context) -> ValidationCheck:
    kind, problems = ctx.proposal.node_type, list(ctx.node.invalid)
    invalid = {text.partition(":")[0] for text in ctx.node.invalid}
    needed = {"domain_class", "range"} if kind is not ProposalNodeType.CLASS else set()
    problems += [f"{name}: required for a {kind.value.replace('_', ' ')}" for name in sorted(needed)
                 if name not in ctx.node.references and name not in invalid]  # fmt: skip
    for name, (text, target) in ctx.node.references.items():
        if target is None:
            problems.append(f"{name}: {text!r} has an unknown prefix (known: {', '.join(sorted(ctx.active.prefixes))})")
        elif name == "range" and kind is ProposalNodeType.DATATYPE_PROPERTY:
            if not (str(target).startswith(str(XSD)) or target in (RDFS.Literal, RDF.langString)):
                problems.append(f"range: {text!r} is not an xsd: datatype")
        elif target == ctx.node.iri:
            problems.append(f"{name}: {text!r} is the proposed node itself")
        elif target != OWL.Thing and ctx.active.kinds.get(target) != "class":
            problems.append(f"{name}: {text!r} is not a class of the active ontology set")
    return _check("references", problems, "every referenced class and datatype exists")


def _new_id(ctx: _Context) -> ValidationCheck:
    kind = ctx.active.kinds.get(ctx.node.iri)
    home = ctx.active.domain_of(ctx.node.iri)
    where = f" in {home.path.name}" if home else ""
    problems = [f"{ctx.node.node['@id']} is already defined{where} ({kind})"] if kind else []
    return _check("new_id", problems, f"{ctx.node.node['@id']} is new")


def _near_duplicate(ctx: _Context) -> ValidationCheck:
    problems, limit = [], NEAR_DUPLICATE_DISTANCE - 1
    for name in dict.fromkeys([ctx.proposal.label, *ctx.proposal.sbvr_synonyms]):
        wanted = name.casefold()
        for iri, other in ctx.active.name_index:
            if iri != ctx.node.iri and levenshtein(wanted, other, limit) <= limit:
                problems.append(f"{name!r} is within {limit} edits of {other!r} ({compact(iri, ctx.active.prefixes)})")
    return _check("near_duplicate", sorted(set(problems)), "no existing label or synonym is within 2 edits")


def _naming(ctx: _Context) -> ValidationCheck:
    is_class = ctx.proposal.node_type is ProposalNodeType.CLASS
    pattern, style = (_PASCAL, "PascalCase") if is_class else (_CAMEL, "camelCase")
    ok = bool(pattern.match(ctx.proposal.node_id))
    what = "a class" if is_class else "a property"
    problems = [] if ok else [f"{ctx.proposal.node_id!r}: {what} id must be {style} (letters and digits)"]
    return _check("naming", problems, f"{ctx.proposal.node_id} is {style}")


def _definition(ctx: _Context) -> ValidationCheck:
    problems = [] if ctx.proposal.sbvr_definition.strip() else ["sbvr_definition: missing (say what the term means)"]
    return _check("sbvr_definition", problems, "an SBVR definition is present")


def _owl_rl(ctx: _Context) -> ValidationCheck:
    problems = owl_rl_problems([ctx.active.graph, ctx.graph], [ctx.node.iri])
    return _check("owl_rl", problems, "OWL 2 RL finds no inconsistency with the node added")


def _typeql(ctx: _Context) -> ValidationCheck:
    label, problems = typeql_label(ctx.proposal.node_id), []
    if label in RESERVED_WORDS:
        problems.append(f"TypeQL label {label!r} is a reserved word")
    elif label in RESERVED_LABELS:
        problems.append(f"TypeQL label {label!r} is a TypeQL built-in name")
    for iri, kind in ctx.active.kinds.items():
        if iri != ctx.node.iri and typeql_label(local_name(iri)) == label:
            taken = f"{compact(iri, ctx.active.prefixes)} ({kind})"
            problems.append(f"TypeQL label {label!r} is already taken by {taken} (labels are unique across kinds)")
    parents = {o for o in ctx.active.graph.objects(ctx.node.iri, RDFS.subClassOf) if isinstance(o, URIRef)}
    parents |= {o for o in ctx.graph.objects(ctx.node.iri, RDFS.subClassOf) if isinstance(o, URIRef)}
    if len(parents) > 1:
        problems.append(f"{len(parents)} superclasses: TypeQL has single inheritance")
    if ctx.proposal.node_type is ProposalNodeType.DATATYPE_PROPERTY:
        target = ctx.node.references.get("range", ("", None))[1]
        if target is not None and str(target) not in VALUE_TYPES:
            problems.append(f"range {compact(target, ctx.active.prefixes)} has no TypeQL value type")
    return _check("typeql", problems, f"maps to TypeQL label {label!r}")


CHECKS: tuple[Callable[[_Context], ValidationCheck], ...] = (
    _jsonld, _shacl, _references, _new_id, _near_duplicate, _naming, _definition, _owl_rl, _typeql,
)  # fmt: skip


def validate_proposal(proposal: OntologyProposal, active: ActiveSet, shapes: Graph) -> list[ValidationCheck]:
    """Every check of the module docstring, in order; reads the ontology, never writes it.

    Raises:
        InputError: the proposal's domain is not in the active set.
        WorkspaceError: a file of the active set does not parse.
    """
    active.require_parsed()
    node = build_node(proposal, active)
    ctx = _Context(proposal, active, shapes, node, node.triples())
    return [check(ctx) for check in CHECKS]


__all__ = [
    "CHECKS",
    "RESERVED_LABELS",
    "RESERVED_WORDS",
    "ProposedNode",
    "build_node",
    "domain_file",
    "levenshtein",
    "local_name",
    "typeql_label",
    "valid_iri",
    "validate_proposal",
]
