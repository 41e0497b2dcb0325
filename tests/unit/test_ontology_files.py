"""The base ontologies under ``ontologies/`` and the SHACL shapes that check them (design.md §6).

Each file must parse as JSON-LD with an inline context, conform to ``schema/shapes/ontology.ttl``, follow the
conventions that the proposal validator and the TypeQL converter rely on (PascalCase classes, camelCase
properties, single inheritance, existing parents, domains and ranges, no near-duplicate labels, no TypeQL
reserved words) and stay consistent under an OWL-RL closure.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import owlrl
import pyshacl
import pytest
from rdflib import OWL, RDF, RDFS, BNode, Dataset, Graph, Literal, Namespace, URIRef

from kg.models import RELATION_SPECS, RelationKind

ROOT = Path(__file__).resolve().parents[2]
ONTOLOGIES = ROOT / "ontologies"
SHAPES = ROOT / "schema" / "shapes" / "ontology.ttl"

MABOS = Namespace("https://w3id.org/mabos/core#")
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
OWLRL_ERRORS = Namespace("http://www.daml.org/2002/03/agents/agent-ont#")  # where owlrl records inconsistencies

#: domain -> (file, prefix, namespace)
FILES: dict[str, tuple[str, str, str]] = {
    "mabos-core": ("mabos-core.jsonld", "mabos", "https://w3id.org/mabos/core#"),
    "sbvr-business": ("sbvr-business.jsonld", "biz", "https://w3id.org/mabos/business#"),
    "saas": ("templates/saas.jsonld", "saas", "https://w3id.org/mabos/saas#"),
    "ecommerce": ("templates/ecommerce.jsonld", "ecommerce", "https://w3id.org/mabos/ecommerce#"),
    "consulting": ("templates/consulting.jsonld", "consulting", "https://w3id.org/mabos/consulting#"),
    "agency": ("templates/agency.jsonld", "agency", "https://w3id.org/mabos/agency#"),
}
TEMPLATES = ("saas", "ecommerce", "consulting", "agency")

XSD_RANGES = {f"xsd:{t}" for t in ("string", "boolean", "integer", "decimal", "double", "date", "dateTime", "anyURI")}
CLASS, OBJECT, DATATYPE, RULE, ANNOTATION = (
    "owl:Class",
    "owl:ObjectProperty",
    "owl:DatatypeProperty",
    "mabos:BusinessRule",
    "owl:AnnotationProperty",
)
PROPERTIES = (OBJECT, DATATYPE)

#: TypeQL 3 keywords and reserved words that must not be a type name.
TYPEQL_RESERVED = frozenset(
    {
        "entity", "relation", "attribute", "thing", "match", "define", "sub", "owns", "plays", "relates", "value",
        "label", "from", "in", "is", "has", "isa", "of", "or", "not", "try", "let", "end", "fun", "return", "struct",
        "update", "put", "reduce", "sort", "select", "limit", "offset", "count", "sum", "max", "min", "mean", "median",
        "std", "first", "last", "check", "distinct", "true", "false", "asc", "desc", "delete", "insert", "redefine",
        "undefine", "with", "links", "iid", "abstract", "alias", "as", "contains", "like", "group", "require", "fetch",
    }
)  # fmt: skip

#: concepts each template must name (by local name, label or synonym)
TEMPLATE_CONCEPTS = {
    "saas": ["Subscription", "Plan", "Tier", "MRR", "ARR", "Churn", "Trial"],
    "ecommerce": ["Product", "Cart", "Order", "Fulfillment", "Return", "Inventory"],
    "consulting": ["Engagement", "Deliverable", "Milestone", "SOW", "Retainer"],
    "agency": ["Campaign", "Creative", "Client", "Brief", "Approval"],
}

#: the knowledge types of design.md §2 that the core ontology defines
CORE_TYPES = [
    "Agent", "MemoryItem", "Fact", "Rule", "Case", "Belief", "Desire", "Goal", "Intention", "Plan", "PlanStep",
    "Checkpoint", "OntologyProposal", "Decision", "Skill", "BusinessRule", "Scope",
]  # fmt: skip

MODALITY_OPENERS = {
    "obligation": ("It is obligatory that ",),
    "prohibition": ("It is prohibited that ",),
    "necessity": ("It is necessary that ",),
    "permission": ("It is permitted that ", "It is possible that "),
}


# --------------------------------------------------------------------------------------------- loading


@cache
def document(domain: str) -> dict[str, Any]:
    path = ONTOLOGIES / FILES[domain][0]
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def nodes(domain: str, kind: str | None = None) -> list[dict[str, Any]]:
    return [n for n in document(domain)["@graph"] if kind is None or n["@type"] == kind]


def parse_dataset(text: str) -> Dataset:
    dataset = Dataset()
    with warnings.catch_warnings():  # rdflib's JSON-LD parser may warn that ConjunctiveGraph is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        dataset.parse(data=text, format="json-ld")
    return dataset


def parse_jsonld(text: str) -> Graph:
    """Every triple of a JSON-LD document, whatever graph it sits in.

    A file's top-level object has an ``@id`` (the ontology IRI) next to ``@graph``, which JSON-LD reads as a
    *named* graph: ``Graph().parse`` alone would keep only the header triples.
    """
    graph = Graph()
    for s, p, o, _ in parse_dataset(text).quads((None, None, None, None)):
        graph.add((s, p, o))
    return graph


def text_of(domain: str) -> str:
    return (ONTOLOGIES / FILES[domain][0]).read_text(encoding="utf-8")


@cache
def rdf(domain: str) -> Graph:
    return parse_jsonld(text_of(domain))


@cache
def shapes() -> Graph:
    return Graph().parse(SHAPES, format="turtle")


def validate(data: Graph) -> tuple[bool, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        conforms, _, text = pyshacl.validate(data, shacl_graph=shapes(), inference="none")
    return bool(conforms), str(text)


def local(curie: str) -> str:
    return curie.split(":", 1)[1]


def ref(value: Any) -> str:
    """The CURIE of a ``{"@id": ...}`` reference."""
    assert isinstance(value, dict), f"expected a single {{'@id': ...}} reference, got {value!r}"
    curie = value["@id"]
    assert isinstance(curie, str)
    return curie


def names(node: dict[str, Any]) -> list[str]:
    """The label and synonyms of a node."""
    return [node["rdfs:label"], *node.get("mabos:sbvr_synonyms", [])]


def defined_ids() -> set[str]:
    return {n["@id"] for domain in FILES for n in nodes(domain)}


def levenshtein_below(a: str, b: str, bound: int) -> bool:
    """Whether the edit distance of ``a`` and ``b`` is below ``bound`` (banded, early exit)."""
    if abs(len(a) - len(b)) >= bound:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) >= bound:
            return False
        previous = current
    return previous[-1] < bound


def _deletions(name: str, count: int) -> set[str]:
    """``name`` and every string made from it by deleting up to ``count`` characters."""
    found = {name}
    for _ in range(count):
        found |= {variant[:i] + variant[i + 1 :] for variant in found for i in range(len(variant))}
    return found


def near_duplicates(domain: str) -> Iterator[str]:
    """Pairs of names of two different nodes of one file at edit distance < 3 (label vs label or synonym)."""
    entries = [
        (node["@id"], name.lower(), position == 0)
        for node in nodes(domain)
        for position, name in enumerate(names(node))
    ]
    # Two names at edit distance 2 or less both become one same string when each loses at most 2 characters (a
    # substitution is a deletion on both sides, an insertion one on the other): only the names that share such a
    # string are compared, in the order of the file, as comparing every pair would give them.
    holders: dict[str, set[int]] = defaultdict(set)
    for index, (_, name, _) in enumerate(entries):
        for variant in _deletions(name, 2):
            holders[variant].add(index)
    close = {(i, j) for group in holders.values() for i in group for j in group if i < j}
    for i, j in sorted(close):
        (id_a, a, label_a), (id_b, b, label_b) = entries[i], entries[j]
        if id_a != id_b and (label_a or label_b) and levenshtein_below(a, b, 3):
            yield f"{id_a} {a!r} ~ {id_b} {b!r}"


# ------------------------------------------------------------------------------------------ file shape


@pytest.mark.parametrize("domain", FILES)
def test_file_is_one_ontology_object_with_inline_context(domain: str) -> None:
    doc = document(domain)
    _, prefix, namespace = FILES[domain]
    context = doc["@context"]
    assert isinstance(context, dict), "the @context is inline, never a remote URL"
    assert context["owl"] == "http://www.w3.org/2002/07/owl#"
    assert context["rdf"] == "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    assert context["rdfs"] == "http://www.w3.org/2000/01/rdf-schema#"
    assert context["xsd"] == XSD_NS
    assert context["mabos"] == str(MABOS)
    assert context[prefix] == namespace
    assert all(isinstance(v, str) and v.startswith(("http://", "https://")) for v in context.values())
    assert doc["@id"] == namespace
    assert doc["@type"] == "owl:Ontology"
    assert doc["mabos:domain"] == domain
    assert doc["mabos:prefix"] == prefix
    assert doc["owl:versionInfo"] == "1.0.0"
    assert doc["rdfs:label"]
    assert {n["@type"] for n in doc["@graph"]} <= {CLASS, OBJECT, DATATYPE, RULE, ANNOTATION}


@pytest.mark.parametrize("domain", FILES)
def test_file_parses_with_rdflib(domain: str) -> None:
    graph = rdf(domain)
    namespace = URIRef(FILES[domain][2])
    assert (namespace, RDF.type, OWL.Ontology) in graph
    assert (namespace, MABOS.domain, Literal(domain)) in graph
    assert len(set(graph.subjects(RDF.type, OWL.Class))) == len(nodes(domain, CLASS))
    assert len(set(graph.subjects(RDF.type, MABOS.BusinessRule))) == len(nodes(domain, RULE))


@pytest.mark.parametrize("domain", FILES)
def test_nodes_sit_in_the_named_graph_of_the_ontology(domain: str) -> None:
    """The loading contract: the header is in the default graph, the nodes in the graph named by the ontology IRI.

    Loaders must read every graph (``Dataset`` and its quads, as :func:`parse_jsonld` does).
    """
    dataset = parse_dataset(text_of(domain))
    namespace = URIRef(FILES[domain][2])
    named = dataset.graph(namespace)
    assert len(set(named.subjects(RDF.type, OWL.Class))) == len(nodes(domain, CLASS))
    assert (namespace, RDF.type, OWL.Ontology) in dataset.default_graph


@pytest.mark.parametrize("domain", FILES)
def test_nodes_live_in_the_files_namespace_and_are_unique(domain: str) -> None:
    prefix = FILES[domain][1]
    ids = [n["@id"] for n in nodes(domain)]
    assert len(ids) == len(set(ids)), "duplicate @id"
    assert all(i.startswith(f"{prefix}:") for i in ids)


def test_counts() -> None:
    assert len(nodes("sbvr-business", CLASS)) >= 150
    assert len(nodes("sbvr-business", OBJECT)) + len(nodes("sbvr-business", DATATYPE)) >= 100
    assert len(nodes("sbvr-business", OBJECT)) >= 50
    assert len(nodes("sbvr-business", RULE)) >= 8
    for domain in TEMPLATES:
        assert len(nodes(domain, CLASS)) >= 12, domain
        assert len(nodes(domain, OBJECT)) + len(nodes(domain, DATATYPE)) >= 12, domain
        assert len(nodes(domain, RULE)) >= 2, domain


# ---------------------------------------------------------------------------------------------- SHACL


@pytest.mark.parametrize("domain", FILES)
def test_file_conforms_to_shapes(domain: str) -> None:
    conforms, report = validate(rdf(domain))
    assert conforms, report


def _malformed() -> Graph:
    return parse_jsonld(
        json.dumps(
            {
                "@context": {
                    "owl": "http://www.w3.org/2002/07/owl#",
                    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
                    "xsd": XSD_NS,
                    "mabos": str(MABOS),
                    "biz": "https://w3id.org/mabos/business#",
                    "ex": "https://example.org/",
                },
                "@graph": [
                    {"@id": "biz:NoDefinition", "@type": "owl:Class", "rdfs:label": "No definition"},
                    {"@id": "biz:lowerClass", "@type": "owl:Class", "rdfs:label": "x", "mabos:sbvr_definition": "x"},
                    {"@id": "ex:Outside", "@type": "owl:Class", "rdfs:label": "y", "mabos:sbvr_definition": "y"},
                    {
                        "@id": "biz:TwoParents",
                        "@type": "owl:Class",
                        "rdfs:label": "Two parents",
                        "rdfs:subClassOf": [{"@id": "biz:Party"}, {"@id": "biz:Asset"}],
                        "mabos:sbvr_definition": "a class with two parents",
                    },
                    {
                        "@id": "biz:hasFloat",
                        "@type": "owl:DatatypeProperty",
                        "rdfs:label": "has float",
                        "rdfs:domain": {"@id": "biz:Party"},
                        "rdfs:range": {"@id": "xsd:float"},
                        "mabos:sbvr_definition": "a float",
                    },
                    {
                        "@id": "biz:twoDomains",
                        "@type": "owl:ObjectProperty",
                        "rdfs:label": "two domains",
                        "rdfs:domain": [{"@id": "biz:Party"}, {"@id": "biz:Asset"}],
                        "rdfs:range": {"@id": "biz:Party"},
                        "mabos:sbvr_definition": "two domains",
                    },
                    {
                        "@id": "biz:rule-bad",
                        "@type": "mabos:BusinessRule",
                        "rdfs:label": "Bad rule",
                        "mabos:sbvr_statement": "Orders should have customers",
                        "mabos:rule_modality": "advice",
                    },
                ],
            }
        )
    )


def test_shapes_reject_malformed_nodes() -> None:
    conforms, report = validate(_malformed())
    assert not conforms
    for expected in [
        "NoDefinition",  # no sbvr_definition
        "lowerClass",  # not PascalCase
        "https://example.org/Outside",  # outside the MABOS namespaces
        "TwoParents",  # two rdfs:subClassOf
        "hasFloat",  # xsd:float is not an allowed range
        "twoDomains",  # two rdfs:domain
        "rule-bad",  # statement, modality and refers_to
    ]:
        assert expected in report, expected
    assert "single inheritance" in report
    assert "rdfs:range among" in report
    assert "mabos:rule_modality" in report
    assert "mabos:refers_to" in report


# ------------------------------------------------------------------------------------------ conventions


@pytest.mark.parametrize("domain", FILES)
def test_naming_conventions(domain: str) -> None:
    for node in nodes(domain, CLASS):
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", local(node["@id"])), node["@id"]
    for kind in PROPERTIES:
        for node in nodes(domain, kind):
            assert re.fullmatch(r"[a-z][A-Za-z0-9]*", local(node["@id"])), node["@id"]
    for node in nodes(domain, RULE):
        assert re.fullmatch(r"rule-[a-z0-9]+(-[a-z0-9]+)*", local(node["@id"])), node["@id"]


@pytest.mark.parametrize("domain", FILES)
def test_every_class_and_property_is_labelled_and_defined(domain: str) -> None:
    for node in nodes(domain):
        assert node["rdfs:label"].strip() == node["rdfs:label"] != "", node["@id"]
        if node["@type"] == RULE:
            continue
        definition = node["mabos:sbvr_definition"]
        assert isinstance(definition, str), node["@id"]
        assert len(definition.split()) >= 4, f"{node['@id']}: definition too short"
        assert not definition.endswith("."), f"{node['@id']}: an SBVR definition is a phrase, not a sentence"
        assert definition[0].islower(), f"{node['@id']}: an SBVR definition starts lower-case"
        synonyms = node.get("mabos:sbvr_synonyms", [])
        assert isinstance(synonyms, list), node["@id"]
        assert all(isinstance(s, str) and s.strip() == s != "" for s in synonyms), node["@id"]
    for node in nodes(domain, OBJECT):
        assert node["mabos:sbvr_fact_type"], node["@id"]


@pytest.mark.parametrize("domain", FILES)
def test_single_inheritance_and_one_domain_and_range(domain: str) -> None:
    for node in nodes(domain, CLASS):
        parent = node.get("rdfs:subClassOf")
        assert parent is None or isinstance(parent, dict), f"{node['@id']}: at most one parent"
    for kind in PROPERTIES:
        for node in nodes(domain, kind):
            ref(node["rdfs:domain"])
            ref(node["rdfs:range"])


@pytest.mark.parametrize("domain", FILES)
def test_parents_domains_ranges_and_rule_references_exist(domain: str) -> None:
    own_prefix = FILES[domain][1]
    allowed_prefixes = {own_prefix, "mabos", "biz"}
    known = defined_ids()
    classes = {n["@id"] for d in FILES for n in nodes(d, CLASS)}
    for node in nodes(domain, CLASS):
        if "rdfs:subClassOf" in node:
            parent = ref(node["rdfs:subClassOf"])
            assert parent.split(":")[0] in allowed_prefixes and parent in classes, f"{node['@id']} -> {parent}"
    for node in nodes(domain, OBJECT):
        for key in ("rdfs:domain", "rdfs:range"):
            target = ref(node[key])
            assert target.split(":")[0] in allowed_prefixes and target in classes, f"{node['@id']} {key} {target}"
    for node in nodes(domain, DATATYPE):
        assert ref(node["rdfs:domain"]) in classes, node["@id"]
        assert ref(node["rdfs:range"]) in XSD_RANGES, node["@id"]
        assert node.get("mabos:multi_valued", False) in (True, False), node["@id"]
    for node in nodes(domain, RULE):
        refers = node["mabos:refers_to"]
        assert isinstance(refers, list) and refers, node["@id"]
        for target in map(ref, refers):
            assert target in known, f"{node['@id']} refers to unknown {target}"
    for node in nodes(domain, OBJECT):
        if "rdfs:subPropertyOf" in node:
            assert ref(node["rdfs:subPropertyOf"]) in known, node["@id"]
    used_terms = {key for n in nodes(domain) for key in n if key.startswith("mabos:")}
    used_terms |= {n["@type"] for n in nodes(domain) if n["@type"].startswith("mabos:")}
    assert used_terms <= known | {"mabos:domain", "mabos:prefix"}, used_terms - known


@pytest.mark.parametrize("domain", FILES)
def test_class_hierarchy_has_no_cycles(domain: str) -> None:
    parent_of = {n["@id"]: ref(n["rdfs:subClassOf"]) for d in FILES for n in nodes(d, CLASS) if "rdfs:subClassOf" in n}
    for node in nodes(domain, CLASS):
        seen, current = set(), node["@id"]
        while current in parent_of:
            assert current not in seen, f"cycle through {current}"
            seen.add(current)
            current = parent_of[current]


@pytest.mark.parametrize(
    ("a", "b", "bound", "below"),
    [("product", "project", 3, True), ("kitten", "sitting", 3, False), ("kitten", "sitting", 4, True),
     ("tier", "trial", 3, False), ("", "ab", 3, True), ("abc", "abcdef", 3, False)],
)  # fmt: skip
def test_levenshtein_helper(a: str, b: str, bound: int, below: bool) -> None:
    assert levenshtein_below(a, b, bound) is below
    assert levenshtein_below(b, a, bound) is below


@pytest.mark.parametrize("domain", FILES)
def test_no_near_duplicate_labels(domain: str) -> None:
    duplicates = list(near_duplicates(domain))
    assert not duplicates, "\n".join(duplicates)


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@pytest.mark.parametrize("domain", FILES)
def test_no_name_is_shared_by_a_class_and_a_property(domain: str) -> None:
    def spellings(kinds: tuple[str, ...]) -> set[str]:
        return {_normal(s) for k in kinds for n in nodes(domain, k) for s in (local(n["@id"]), n["rdfs:label"])}

    assert not spellings((CLASS,)) & spellings(PROPERTIES)


def test_local_names_are_unique_across_files() -> None:
    """One TypeQL schema may hold every domain, so a type name must not mean two things."""
    seen: dict[str, str] = {}
    for domain in FILES:
        for node in nodes(domain):
            if node["@type"] in (CLASS, *PROPERTIES):
                name = _normal(local(node["@id"]))
                assert name not in seen, f"{node['@id']} clashes with {seen[name]}"
                seen[name] = node["@id"]


@pytest.mark.parametrize("domain", FILES)
def test_no_typeql_reserved_words(domain: str) -> None:
    for node in nodes(domain):
        if node["@type"] in (CLASS, *PROPERTIES):
            name = local(node["@id"])
            kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()
            assert name.lower() not in TYPEQL_RESERVED and kebab not in TYPEQL_RESERVED, node["@id"]


@pytest.mark.parametrize("domain", FILES)
def test_business_rules_are_sbvr_statements(domain: str) -> None:
    for node in nodes(domain, RULE):
        statement, modality = node["mabos:sbvr_statement"], node["mabos:rule_modality"]
        assert statement.startswith(MODALITY_OPENERS[modality]), node["@id"]
        assert statement.endswith("."), node["@id"]


# ------------------------------------------------------------------------------------------ content


@pytest.mark.parametrize("domain", TEMPLATES)
def test_template_names_its_core_concepts(domain: str) -> None:
    available = {_normal(s) for n in nodes(domain, CLASS) for s in (local(n["@id"]), *names(n))}
    missing = [c for c in TEMPLATE_CONCEPTS[domain] if _normal(c) not in available]
    assert not missing, missing


@pytest.mark.parametrize("domain", TEMPLATES)
def test_template_builds_on_the_business_vocabulary(domain: str) -> None:
    parents = {ref(n["rdfs:subClassOf"]) for n in nodes(domain, CLASS) if "rdfs:subClassOf" in n}
    assert sum(p.startswith("biz:") for p in parents) >= 5


def test_core_defines_the_knowledge_types() -> None:
    classes = {local(n["@id"]) for n in nodes("mabos-core", CLASS)}
    assert set(CORE_TYPES) <= classes, set(CORE_TYPES) - classes


def test_core_object_properties_cover_every_relation_kind() -> None:
    by_kind = {n["mabos:relation_kind"]: n for n in nodes("mabos-core", OBJECT) if "mabos:relation_kind" in n}
    assert set(by_kind) == {k.value for k in RelationKind}
    for kind, spec in RELATION_SPECS.items():
        node = by_kind[kind.value]
        assert (node["mabos:source_role"], node["mabos:target_role"]) == (spec.source_role, spec.target_role)


def test_core_declares_the_annotation_vocabulary() -> None:
    declared = {local(n["@id"]) for n in nodes("mabos-core", ANNOTATION)}
    assert {
        "sbvr_definition",
        "sbvr_synonyms",
        "sbvr_fact_type",
        "sbvr_statement",
        "rule_modality",
        "refers_to",
        "multi_valued",
        "domain",
        "prefix",
    } <= declared


def test_business_vocabulary_covers_its_areas() -> None:
    classes = {local(n["@id"]) for n in nodes("sbvr-business", CLASS)}
    for concept in [
        "Party", "Person", "Organization", "Customer", "Supplier", "Employee", "Product", "Service", "Quote",
        "Order", "Invoice", "Payment", "Account", "Revenue", "Expense", "Budget", "MarketingCampaign",
        "MarketSegment", "Shipment", "Warehouse", "Position", "Contract", "Clause", "Project", "Task", "Asset",
        "Location", "Address", "TimePeriod", "FiscalYear",
    ]:  # fmt: skip
        assert concept in classes, concept


# ------------------------------------------------------------------------------------------ OWL-RL


def _axioms(*domains: str) -> Graph:
    """The logical triples of some files (no labels or definitions), to keep closures quick."""
    kept = {RDF.type, RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range, OWL.disjointWith}
    graph = Graph()
    for domain in domains:
        for triple in rdf(domain):
            if triple[1] in kept:
                graph.add(triple)
    return graph


def _inconsistencies(graph: Graph) -> list[str]:
    """What an OWL-RL closure of ``graph`` finds wrong: owl:Nothing members and owlrl's error messages."""
    closed = Graph()
    closed += graph
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(closed)
    members = [f"{m} is an owl:Nothing" for m in closed.subjects(RDF.type, OWL.Nothing)]
    errors = [
        str(m)
        for e in closed.subjects(RDF.type, OWLRL_ERRORS.ErrorMessage)
        for m in closed.objects(e, OWLRL_ERRORS.error)
    ]
    return members + errors


@pytest.mark.parametrize("domain", FILES)
def test_owl_rl_closure_is_consistent(domain: str) -> None:
    assert _inconsistencies(rdf(domain)) == []


def test_owl_rl_closure_finds_inconsistency_when_disjoint_classes_meet() -> None:
    """The check above can fail: Employee (a Person) and Company (an Organization) are disjoint."""
    graph = _axioms("sbvr-business")
    biz = Namespace(FILES["sbvr-business"][2])
    someone = BNode()
    graph.add((someone, RDF.type, biz.Employee))
    graph.add((someone, RDF.type, biz.Company))
    problems = _inconsistencies(graph)
    assert problems
    assert any("disjoint" in p.lower() for p in problems), problems


def test_owl_rl_closure_across_files_entails_template_parents() -> None:
    graph = _axioms(*FILES)
    saas = Namespace(FILES["saas"][2])
    biz = Namespace(FILES["sbvr-business"][2])
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(graph)
    assert (saas.Trial, RDFS.subClassOf, biz.Agreement) in graph
    assert not set(graph.subjects(RDF.type, OWL.Nothing))
