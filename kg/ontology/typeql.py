"""JSON-LD ontologies -> one TypeQL 3 ``define`` query (design.md §6; the rules: docs/ontology-typeql.md).

The mapping:

* ``owl:Class`` -> ``entity``, with ``sub`` for its superclass;
* ``owl:ObjectProperty`` -> a ``relation`` with two roles, and ``plays`` on the domain and range types; the
  relation is named by its ``mabos:relation_kind`` and the roles by ``mabos:source_role``/``target_role``
  when the ontology gives them (the MABOS graph relation kinds), else after the property and the types;
* ``owl:DatatypeProperty`` -> an ``attribute`` (value type from the XSD range) and ``owns`` on the domain
  types, ``@card(0..)`` when the property has ``mabos:multi_valued true``;
* business rules, annotation properties, the ``owl:Ontology`` nodes and anything else are not part of the
  schema.

Identifiers are the kebab-cased IRI local names (``placesOrder`` -> ``places-order``). A name that is a
TypeQL keyword, does not start with a letter, or is claimed by several terms is prefixed with the term's
domain prefix (``ecommerce-order``), deterministically; see :func:`to_typeql`. TypeQL has single
inheritance: a class with several superclasses keeps the one with the most ancestors as its ``sub`` and
gets copies of the ``owns``/``plays`` of the others. Every such decision is reported as a :class:`Note`.

The output is byte-identical for the same graph, whatever the order of its triples or files: everything is
sorted by identifier, and the header carries no timestamp."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from rdflib import OWL, RDF, RDFS, XSD, BNode, Graph, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from kg.errors import InputError
from kg.models import Model
from kg.models.typeql import AVOIDED_WORDS, IDENTIFIER_RE, RESERVED_WORDS
from kg.ontology.graphs import FORMATS, load_graph, ontology_files
from kg.ontology.typeql_render import _flatten, _Mapping, _namespace_prefix, _render, _resolve_inheritance
from kg.ontology.typeql_terms import (
    _BUILTIN,
    _KIND_MARKS,
    BUSINESS_NS,
    CORE_NS,
    MABOS,
    VALUE_TYPES,
    Note,
    NoteKind,
    TypeKind,
    _assign_identifiers,
    _short,
    _split_iri,
    _Term,
    _usable,
    kebab_case,
)


class TypeQLSchema(Model):
    """The result of :func:`to_typeql`.

    Attributes:
        text: the ``define`` query, header comment included, ending with a newline.
        types: IRI -> type label, for every class and property.
        kinds: IRI -> ``entity``, ``relation`` or ``attribute``.
        roles: object property IRI -> its (domain role, range role) labels.
        value_types: datatype property IRI -> its TypeQL value type.
        notes: the decisions taken (see :class:`Note`), sorted.
        counts: ``entities``, ``relations``, ``attributes``, ``owns``, ``plays``, ``business_rules``,
            ``annotations`` (``owl:AnnotationProperty`` nodes), ``skipped`` (other unmapped nodes), ``renamed``,
            ``multiple_inheritance``.
    """

    text: str
    types: dict[str, str]
    kinds: dict[str, TypeKind]
    roles: dict[str, tuple[str, str]]
    value_types: dict[str, str]
    notes: list[Note]
    counts: dict[str, int]


def ontology_schema(ontology_dir: Path) -> str:
    """The TypeQL ``define`` query of the active ontology set in ``ontology_dir`` ('' when it is empty)."""
    files = ontology_files(ontology_dir) if ontology_dir.is_dir() else []
    if not files:
        return ""
    return to_typeql(load_graph(files), sources=[f.name for f in files]).text


def to_typeql(graph: Graph, *, sources: Sequence[str | Path] = ()) -> TypeQLSchema:
    """Convert the classes and properties of ``graph`` into one TypeQL 3 ``define`` query.

    ``sources`` (e.g. the file paths given to :func:`load_graph`, relative so the text stays portable) are
    listed in the header comment. The rules are in the module docstring and docs/ontology-typeql.md.

    Raises:
        InputError: the graph has no class and no property to convert (a ``define`` needs a definition).
    """
    return _Converter(graph).run([Path(s).as_posix() if isinstance(s, Path) else s for s in sources])


class _Converter:
    """One conversion: collects the notes and counts while it maps the graph's terms."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.notes: set[tuple[NoteKind, str, str]] = set()
        self.counts: Counter[str] = Counter()

    def note(self, kind: NoteKind, iri: Node, message: str) -> None:
        self.notes.add((kind, str(iri), message))

    def run(self, sources: list[str]) -> TypeQLSchema:
        terms = self._collect()
        if not terms:
            raise InputError("ontology", "nothing to convert: no owl:Class, owl:ObjectProperty or owl:DatatypeProperty")
        ids = _assign_identifiers(terms, self.note)
        classes = {t.iri for t in terms if t.kind == "entity"}
        parents = self._superclasses(classes)
        sub, missing, flattened = _resolve_inheritance(parents, ids, self.note)
        owns: dict[URIRef, set[URIRef]] = defaultdict(set)
        plays: dict[URIRef, set[tuple[URIRef, str]]] = defaultdict(set)
        value_types, multi = self._attributes([t.iri for t in terms if t.kind == "attribute"], classes, owns)
        roles = self._relations([t.iri for t in terms if t.kind == "relation"], classes, ids, plays)
        mapping = _Mapping(terms, ids, sub, _flatten(owns, classes, sub, missing),
                           _flatten(plays, classes, sub, missing), roles, value_types, multi,
                           flattened)  # fmt: skip
        notes = [Note(kind=k, iri=i, message=m) for k, i, m in sorted(self.notes)]
        counts = self._counts(mapping, notes)
        return TypeQLSchema(
            text=_render(mapping, notes, counts, sources, self._ontologies()),
            types={str(t.iri): ids[t.iri] for t in terms},
            kinds={str(t.iri): t.kind for t in terms},
            roles={str(iri): pair for iri, pair in roles.items()},
            value_types={str(iri): value for iri, value in value_types.items()},
            notes=notes,
            counts=counts,
        )

    # -- nodes

    def _collect(self) -> list[_Term]:
        prefixes = self._prefixes()
        terms = []
        for subject in sorted({s for s in self.graph.subjects(RDF.type, None) if isinstance(s, URIRef)}):
            if str(subject).startswith(_BUILTIN):
                continue
            types = set(self.graph.objects(subject, RDF.type))
            kinds = [kind for kind, marks in _KIND_MARKS if types & marks]
            if not kinds:
                self._unmapped(subject, types)
                continue
            if len(kinds) > 1:
                self.note("skipped", subject, f"typed as {' and '.join(kinds)} types: mapped as {kinds[0]} only")
            namespace, local = _split_iri(str(subject))
            declared = self._annotation(subject, MABOS.relation_kind) if kinds[0] == "relation" else ""
            base = declared or kebab_case(local) or self._annotation(subject, RDFS.label)
            terms.append(_Term(subject, kinds[0], base, prefixes.get(namespace) or _namespace_prefix(namespace)))
        return terms

    def _annotation(self, subject: URIRef, predicate: URIRef) -> str:
        """The kebab-cased value of an annotation (the smallest, if there are several), or ``""``."""
        return kebab_case(min(map(str, self.graph.objects(subject, predicate)), default=""))

    def _unmapped(self, subject: URIRef, types: set[Node]) -> None:
        if OWL.Ontology in types:
            return
        for counted, key in ((MABOS.BusinessRule, "business_rules"), (OWL.AnnotationProperty, "annotations")):
            if counted in types:
                self.counts[key] += 1
                return
        self.counts["skipped"] += 1
        self.note("skipped", subject, f"a {', '.join(sorted(map(_short, types)))} is not part of the schema")

    def _prefixes(self) -> dict[str, str]:
        """Namespace -> the ``mabos:prefix`` of the ``owl:Ontology`` node named after it (with or without ``#``)."""
        found: dict[str, str] = {}
        for ontology in sorted(map(str, self.graph.subjects(RDF.type, OWL.Ontology))):
            declared = sorted(kebab_case(str(p)) for p in self.graph.objects(URIRef(ontology), MABOS.prefix))
            if declared and declared[0][:1].isalpha():
                for namespace in {ontology, ontology.rstrip("#/") + "#", ontology.rstrip("#/") + "/"}:
                    found.setdefault(namespace, declared[0])
        return found

    def _ontologies(self) -> list[str]:
        lines = []
        for ontology in sorted(self.graph.subjects(RDF.type, OWL.Ontology), key=str):
            details = [
                str(v) for p in (MABOS.prefix, MABOS.domain) for v in sorted(map(str, self.graph.objects(ontology, p)))
            ]
            lines.append(f"{ontology} ({', '.join(details)})" if details else str(ontology))
        return lines

    # -- classes

    def _superclasses(self, classes: set[URIRef]) -> dict[URIRef, list[URIRef]]:
        parents: dict[URIRef, list[URIRef]] = {}
        for cls in sorted(classes):
            found: set[URIRef] = set()
            for sup in self.graph.objects(cls, RDFS.subClassOf):
                if isinstance(sup, URIRef) and sup in classes and sup != cls:
                    found.add(sup)
                elif isinstance(sup, BNode):
                    self.note("skipped", cls, "an anonymous superclass (an owl:Restriction, say) is not mapped")
                elif sup != cls and not str(sup).startswith(_BUILTIN):
                    self.note("reference", cls, f"superclass {sup} is not a class of the loaded ontologies: no sub")
            parents[cls] = sorted(found)
        return parents

    # -- properties

    def _class_refs(self, prop: URIRef, predicate: URIRef, classes: set[URIRef]) -> list[URIRef]:
        """The loaded classes named by ``prop``'s domain or range (``owl:unionOf`` lists expanded)."""
        what = "domain" if predicate == RDFS.domain else "range"
        found: set[URIRef] = set()
        for ref in self.graph.objects(prop, predicate):
            union = self.graph.value(ref, OWL.unionOf) if isinstance(ref, BNode) else None
            for member in Collection(self.graph, union) if union is not None else [ref]:
                if isinstance(member, URIRef) and member in classes:
                    found.add(member)
                elif str(member) in VALUE_TYPES or str(member).startswith(str(XSD)):
                    self.note("reference", prop, f"{what} {_short(member)} is a datatype, not a class")
                elif isinstance(member, BNode):
                    self.note("skipped", prop, f"an anonymous {what} (not an owl:unionOf of classes) is not mapped")
                else:
                    self.note("reference", prop, f"{what} {_short(member)} is not a class of the loaded ontologies")
        return sorted(found)

    def _attributes(
        self, attributes: list[URIRef], classes: set[URIRef], owns: dict[URIRef, set[URIRef]]
    ) -> tuple[dict[URIRef, str], set[URIRef]]:
        value_types: dict[URIRef, str] = {}
        multi: set[URIRef] = set()
        for attribute in attributes:
            value_types[attribute] = self._value_type(attribute, classes)
            domains = self._class_refs(attribute, RDFS.domain, classes)
            if not domains:
                self.note("reference", attribute, "no domain class: the attribute type is declared, no type owns it")
            for domain in domains:
                owns[domain].add(attribute)
            flag = self.graph.value(attribute, MABOS.multi_valued)
            if flag is not None and str(flag).strip().lower() in {"true", "1"}:
                multi.add(attribute)
        return value_types, multi

    def _value_type(self, attribute: URIRef, classes: set[URIRef]) -> str:
        ranges = sorted(self.graph.objects(attribute, RDFS.range), key=str)
        if not ranges:
            self.note("reference", attribute, "no rdfs:range: value string")
        found = set()
        for rng in ranges:
            value_type = VALUE_TYPES.get(str(rng))
            if value_type is None:
                what = "a class (use an owl:ObjectProperty)" if rng in classes else "not a supported datatype"
                self.note("reference", attribute, f"range {_short(rng)} is {what}: value string")
            found.add(value_type or "string")
        if len(found) > 1:
            self.note("reference", attribute, f"ranges give several value types ({', '.join(sorted(found))}): string")
        return found.pop() if len(found) == 1 else "string"

    def _relations(
        self,
        relations: list[URIRef],
        classes: set[URIRef],
        ids: dict[URIRef, str],
        plays: dict[URIRef, set[tuple[URIRef, str]]],
    ) -> dict[URIRef, tuple[str, str]]:
        roles: dict[URIRef, tuple[str, str]] = {}
        for relation in relations:
            domains = self._class_refs(relation, RDFS.domain, classes)
            ranges = self._class_refs(relation, RDFS.range, classes)
            subject = self._role(relation, MABOS.source_role) or (ids[domains[0]] if len(domains) == 1 else "subject")
            obj = self._role(relation, MABOS.target_role) or (ids[ranges[0]] if len(ranges) == 1 else "object")
            if subject == obj:
                subject, obj = f"{subject}-subject", f"{obj}-object"
            roles[relation] = (subject, obj)
            for role, players, what in ((subject, domains, "domain"), (obj, ranges, "range")):
                if not players:
                    self.note("reference", relation, f"no {what} class: no type plays role {role}")
                for player in players:
                    plays[player].add((relation, role))
        return roles

    def _role(self, relation: URIRef, predicate: URIRef) -> str:
        """A role name the ontology declares (``mabos:source_role``/``target_role``), if it is a usable label."""
        role = self._annotation(relation, predicate)
        if role and not _usable(role):
            self.note("renamed", relation, f"{_short(predicate)} {role} is not a usable TypeQL label: not used")
        return role if _usable(role) else ""

    def _counts(self, mapping: _Mapping, notes: list[Note]) -> dict[str, int]:
        kinds = Counter(t.kind for t in mapping.terms)
        return {
            "entities": kinds["entity"],
            "relations": kinds["relation"],
            "attributes": kinds["attribute"],
            "owns": sum(map(len, mapping.owns.values())),
            "plays": sum(map(len, mapping.plays.values())),
            "business_rules": self.counts["business_rules"],
            "annotations": self.counts["annotations"],
            "skipped": self.counts["skipped"],
            "renamed": sum(n.kind == "renamed" for n in notes),
            "multiple_inheritance": mapping.multiple_inheritance,
        }


__all__ = [
    "AVOIDED_WORDS",
    "BUSINESS_NS",
    "CORE_NS",
    "FORMATS",
    "IDENTIFIER_RE",
    "RESERVED_WORDS",
    "VALUE_TYPES",
    "Note",
    "TypeQLSchema",
    "kebab_case",
    "load_graph",
    "ontology_files",
    "ontology_schema",
    "to_typeql",
]
