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
sorted by identifier, and the header carries no timestamp.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from rdflib import OWL, RDF, RDFS, XSD, BNode, Dataset, Graph, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.term import Node

from kg.errors import InputError
from kg.models import Model
from kg.models.typeql import AVOIDED_WORDS, IDENTIFIER_RE, RESERVED_WORDS

CORE_NS = "https://w3id.org/mabos/core#"
BUSINESS_NS = "https://w3id.org/mabos/business#"
MABOS = Namespace(CORE_NS)

#: Parsers by file extension (:func:`load_graph`).
FORMATS: dict[str, str] = {".jsonld": "json-ld", ".json": "json-ld", ".ttl": "turtle", ".nt": "nt",
                           ".owl": "xml", ".rdf": "xml", ".trig": "trig", ".nq": "nquads"}  # fmt: skip


_INTEGERS = ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "negativeInteger",
             "nonPositiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte")  # fmt: skip
_STRINGS = ("string", "anyURI", "normalizedString", "token", "language", "Name", "NCName", "NMTOKEN")
#: XSD (and RDF literal) datatypes -> TypeQL 3 value types. Any other range gives ``string`` and a note.
VALUE_TYPES: dict[str, str] = {
    **{str(XSD[name]): "integer" for name in _INTEGERS},
    **{str(XSD[name]): "string" for name in _STRINGS},
    str(XSD.boolean): "boolean", str(XSD.decimal): "decimal", str(XSD.double): "double", str(XSD["float"]): "double",
    str(XSD.date): "date", str(XSD.dateTime): "datetime", str(XSD.dateTimeStamp): "datetime-tz",
    str(XSD.duration): "duration", str(RDFS.Literal): "string", str(RDF.langString): "string",
    str(RDF.PlainLiteral): "string",
}  # fmt: skip

TypeKind = Literal["entity", "relation", "attribute"]
NoteKind = Literal["inheritance", "renamed", "reference", "skipped"]
_NoteFn = Callable[[NoteKind, Node, str], None]
_T = TypeVar("_T")

_KIND_MARKS: tuple[tuple[TypeKind, frozenset[Node]], ...] = (
    ("entity", frozenset({OWL.Class, RDFS.Class})),
    ("relation", frozenset({OWL.ObjectProperty})),
    ("attribute", frozenset({OWL.DatatypeProperty})),
)
_KIND_RANK: dict[str, int] = {"entity": 0, "relation": 1, "attribute": 2}
_BUILTIN = (str(RDF), str(RDFS), str(OWL), str(XSD))
_SHORT = {str(RDF): "rdf:", str(RDFS): "rdfs:", str(OWL): "owl:", str(XSD): "xsd:", CORE_NS: "mabos:"}


class Note(Model):
    """One decision the converter took that a reader of the schema should know about.

    ``kind`` is ``inheritance`` (multiple inheritance flattened, a subclass cycle broken), ``renamed`` (the
    identifier is not the plain kebab-cased local name), ``reference`` (a domain, range or superclass that is
    not a loaded class or a supported datatype) or ``skipped`` (a node or axiom left out of the schema).
    """

    kind: NoteKind
    iri: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.iri}: {self.message}"


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


# ---------------------------------------------------------------------------------------------- loading


def ontology_files(directory: Path) -> list[Path]:
    """The active set: ``directory/*.jsonld``, sorted by name (``templates/`` and ``proposals/`` are not in it).

    Raises:
        InputError: ``directory`` does not exist.
    """
    if not directory.is_dir():
        raise InputError("ontology", f"{directory}: no such directory")
    return sorted(path for path in directory.glob("*.jsonld") if path.is_file())


def load_graph(paths: Sequence[Path]) -> Graph:
    """Parse the files (by extension, :data:`FORMATS`) and merge them into one graph.

    Every named graph of a file is merged too: a JSON-LD document whose top level has both ``@id`` and
    ``@graph`` (the mabos ontology layout) puts its nodes in a named graph, which a plain ``Graph.parse``
    would drop. Prefixes the files declare are bound on the result (the first declaration wins).

    Raises:
        InputError: a file is missing, has an unknown extension, uses a remote JSON-LD ``@context`` or does
            not parse; the message names the file.
    """
    merged = Graph(bind_namespaces="core")
    for path in paths:
        dataset = _parse(path)
        for subject, predicate, obj, _ in dataset.quads((None, None, None, None)):
            merged.add((subject, predicate, obj))
        bound = {prefix for prefix, _ in merged.namespaces()}
        for prefix, namespace in dataset.namespaces():
            if prefix and prefix not in bound:
                merged.bind(prefix, namespace)
    return merged


def _parse(path: Path) -> Dataset:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError("ontology", f"{path}: unknown ontology format (use {', '.join(sorted(FORMATS))})")
    if not path.is_file():
        raise InputError("ontology", f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
        if fmt == "json-ld":
            _refuse_remote_context(path, json.loads(text))
        dataset = Dataset()
        with warnings.catch_warnings():  # rdflib's JSON-LD parser goes through deprecated ConjunctiveGraph APIs
            warnings.simplefilter("ignore", DeprecationWarning)
            dataset.parse(data=text, format=fmt, publicID=path.resolve().as_uri())
    except InputError:
        raise
    except Exception as exc:  # rdflib's parsers raise many unrelated types: one clear line instead
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise InputError("ontology", f"{path}: does not parse as {fmt}: {reason}") from exc
    return dataset


def _refuse_remote_context(path: Path, data: Any) -> None:
    """rdflib would fetch a remote ``@context`` over the network: ontologies keep theirs inline."""
    for item in data if isinstance(data, list) else [data]:
        context = item.get("@context") if isinstance(item, dict) else None
        for entry in context if isinstance(context, list) else [context]:
            if isinstance(entry, str):
                raise InputError("ontology", f"{path}: remote @context {entry!r} is not supported: put it inline")


# ------------------------------------------------------------------------------------------ identifiers


def kebab_case(name: str) -> str:
    """``DropshipFulfillment`` -> ``dropship-fulfillment``, ``hasURL`` -> ``has-url``, ``order_id`` -> ``order-id``.

    Accents are stripped and any other non-alphanumeric run becomes one ``-``; the result may be empty or
    start with a digit (:func:`to_typeql` then prefixes it).
    """
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"([a-z])([A-Z])", r"\1-\2", text)
    text = re.sub(r"([A-Z0-9])([A-Z][a-z])", r"\1-\2", text)
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _usable(name: str) -> bool:
    return bool(IDENTIFIER_RE.match(name)) and name not in AVOIDED_WORDS


def _split_iri(iri: str) -> tuple[str, str]:
    """(namespace, local name): the local name follows the last ``#``, else the last ``/``, else ``:``."""
    for separator in "#/:":
        if separator in iri:
            namespace, local = iri.rsplit(separator, 1)
            return namespace + separator, local
    return "", iri


def _namespace_rank(iri: str) -> int:
    return 0 if iri.startswith(CORE_NS) else 1 if iri.startswith(BUSINESS_NS) else 2


def _short(node: Node) -> str:
    text = str(node)
    for namespace, prefix in _SHORT.items():
        if text.startswith(namespace):
            return prefix + text[len(namespace) :]
    return text


@dataclass(frozen=True)
class _Term:
    iri: URIRef
    kind: TypeKind
    base: str  # the kebab-cased local name (or label): the identifier it would like
    prefix: str  # its domain prefix, used to rename it

    @property
    def claim(self) -> tuple[int, int, str]:
        """Who keeps a contested name: entities, then relations, then attributes; core, business, others."""
        return _KIND_RANK[self.kind], _namespace_rank(str(self.iri)), str(self.iri)


def _assign_identifiers(terms: Iterable[_Term], note: _NoteFn) -> dict[URIRef, str]:
    """Bare names first (one winner per name), then ``<prefix>-<name>``, then ``-2``, ``-3`` ... for the rest."""
    claims: dict[str, list[_Term]] = defaultdict(list)
    for term in sorted(terms, key=lambda t: t.claim):
        claims[term.base].append(term)
    ids: dict[URIRef, str] = {}
    losers: list[tuple[_Term, _Term | None]] = []
    for base, claimants in claims.items():
        winner = claimants[0] if _usable(base) else None
        if winner is not None:
            ids[winner.iri] = base
        losers += [(term, winner) for term in claimants if term is not winner]
    used = set(ids.values())
    for term, winner in sorted(losers, key=lambda pair: pair[0].claim):
        stem = f"{term.prefix}-{term.base}" if term.base else term.prefix
        name = next(
            c for c in (stem, *(f"{stem}-{n}" for n in range(2, len(used) + 3))) if _usable(c) and c not in used
        )
        used.add(name)
        ids[term.iri] = name
        if winner is not None:
            reason = f"{term.base} is taken by {winner.iri}"
        elif not term.base:
            reason = "the IRI has no usable local name or label"
        elif term.base in AVOIDED_WORDS:
            reason = f"{term.base} is a TypeQL keyword or built-in name"
        else:
            reason = f"{term.base} does not start with a letter"
        note("renamed", term.iri, f"identifier {name}: {reason}")
    return ids


# --------------------------------------------------------------------------------------------- conversion


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


def _namespace_prefix(namespace: str) -> str:
    """The last path segment of a namespace without a declared ``mabos:prefix``: ``.../ecommerce#`` -> ``ecommerce``."""
    segments = [kebab_case(s) for s in re.split(r"[#/:]", namespace)]
    last = next((s for s in reversed(segments) if s), "")
    return last if last[:1].isalpha() else f"ns-{last}".rstrip("-")


# ---------------------------------------------------------------------------------------------- inheritance


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


# ---------------------------------------------------------------------------------------------- rendering


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
