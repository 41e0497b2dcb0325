"""JSON-LD -> TypeQL 3 (kg.ontology.typeql): identifiers, inheritance, properties, determinism, goldens.

Every generated schema goes through :func:`parse_schema`, a small structural checker written here from the
TypeQL 3 grammar (typedb-notes.md §1): each statement ends with ``;``, declares its kind once, and every
``sub``/``owns``/``plays``/``relates`` refers to a type or role defined in the same query.

Goldens: ``tests/data/ontology/typeql/<stem>.tql`` for each ``ontologies/*.jsonld`` (the file alone), each
``ontologies/templates/*.jsonld`` (the active set plus the template), and ``active-set.tql`` (the active
set, what ``mabos ontology to-typeql`` writes). Regenerate them after changing an ontology or the converter:

    MABOS_UPDATE_GOLDENS=1 python -m pytest -q tests/unit/test_ontology_typeql.py -k golden
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, URIRef

from kg.errors import InputError
from kg.ontology.typeql import (
    AVOIDED_WORDS,
    BUSINESS_NS,
    CORE_NS,
    TypeQLSchema,
    kebab_case,
    load_graph,
    ontology_files,
    to_typeql,
)
from tests.budget import examples

ROOT = Path(__file__).resolve().parents[2]
ONTOLOGIES = ROOT / "ontologies"
GOLDEN_DIR = ROOT / "tests" / "data" / "ontology" / "typeql"
UPDATE_GOLDENS = os.environ.get("MABOS_UPDATE_GOLDENS") == "1"
REGENERATE = "MABOS_UPDATE_GOLDENS=1 python -m pytest -q tests/unit/test_ontology_typeql.py -k golden"

EX = "http://example.org/shop#"
ECOMMERCE_NS = "https://w3id.org/mabos/ecommerce#"
CONTEXT = {
    "mabos": CORE_NS,
    "biz": BUSINESS_NS,
    "ecommerce": ECOMMERCE_NS,
    "ex": EX,
    "owl": str(OWL),
    "rdfs": str(RDFS),
    "xsd": str(XSD),
}

# typedb-notes.md §1.8, copied rather than imported so that the module is checked against the notes
TYPEQL_RESERVED = {
    "with", "match", "fetch", "update", "define", "undefine", "redefine", "insert", "put", "delete", "end",
    "entity", "relation", "attribute", "role", "asc", "desc", "struct", "fun", "return", "alias", "sub", "owns",
    "as", "plays", "relates", "iid", "isa", "links", "has", "is", "or", "not", "try", "in", "true", "false", "of",
    "from", "first", "last",
}  # fmt: skip
TYPEQL_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")  # the ASCII part of XID_START (XID_CONTINUE | -)*
VALUE_TYPES_3X = {"boolean", "integer", "double", "decimal", "string", "date", "datetime", "datetime-tz", "duration"}


# ----------------------------------------------------------------------------------------------- helpers


def cls(curie: str, *parents: str, **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"@id": curie, "@type": "owl:Class", **extra}
    if parents:
        node["rdfs:subClassOf"] = [{"@id": p} for p in parents]
    return node


def obj_prop(curie: str, domain: str | None, range_: str | None) -> dict[str, Any]:
    node: dict[str, Any] = {"@id": curie, "@type": "owl:ObjectProperty"}
    node |= {"rdfs:domain": {"@id": domain}} if domain else {}
    return node | ({"rdfs:range": {"@id": range_}} if range_ else {})


def data_prop(curie: str, domain: str | None, range_: str | None = "xsd:string", **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"@id": curie, "@type": "owl:DatatypeProperty", **extra}
    node |= {"rdfs:domain": {"@id": domain}} if domain else {}
    return node | ({"rdfs:range": {"@id": range_}} if range_ else {})


def write_ontology(
    path: Path, nodes: list[dict[str, Any]], namespace: str = EX, prefix: str = "ex", domain: str = "shop"
) -> Path:
    """A file in the layout of ontologies/*.jsonld: top-level ``@id`` + ``@graph`` (a named graph)."""
    document = {
        "@context": CONTEXT,
        "@id": namespace,
        "@type": "owl:Ontology",
        "mabos:prefix": prefix,
        "mabos:domain": domain,
        "@graph": nodes,
    }
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def convert(tmp_path: Path, nodes: list[dict[str, Any]], **kwargs: Any) -> TypeQLSchema:
    schema = to_typeql(load_graph([write_ontology(tmp_path / "shop.jsonld", nodes, **kwargs)]))
    parse_schema(schema.text)
    return schema


def notes_of(schema: TypeQLSchema, kind: str) -> list[str]:
    return [f"{n.iri}: {n.message}" for n in schema.notes if n.kind == kind]


# ------------------------------------------------------------------------------------ structural checker


def parse_schema(text: str) -> dict[str, dict[str, Any]]:
    """Check a generated ``define`` query structurally and return label -> its declaration.

    A declaration is ``{"kind", "sub", "value", "owns": {attribute: annotation}, "plays": {(rel, role)},
    "relates": [roles]}``. Fails the test on anything the TypeQL 3 grammar or the type rules would refuse.
    """
    body = re.sub(r"#[^\n]*", "", text)
    assert text.endswith("\n") and not text.endswith("\n\n"), "the text ends with exactly one newline"
    words = body.split(maxsplit=1)
    assert words[0] == "define", "the query starts with define"
    *statements, rest = words[1].split(";")
    assert statements, "define needs at least one definition"
    assert not rest.strip(), f"text after the last ';': {rest.strip()[:80]!r}"
    types: dict[str, dict[str, Any]] = {}
    for statement in statements:
        head, *capabilities = [part.split() for part in statement.split(",")]
        assert len(head) in (2, 4) and head[0] in {"entity", "relation", "attribute"}, f"bad head {head}"
        label = head[1]
        assert label not in types, f"{label} is declared twice"
        assert_label(label)
        declared: dict[str, Any] = {
            "kind": head[0],
            "sub": None,
            "value": None,
            "owns": {},
            "plays": set(),
            "relates": [],
        }
        if len(head) == 4:
            assert head[2] == "sub", f"bad head {head}"
            declared["sub"] = head[3]
        for capability in capabilities:
            add_capability(declared, capability)
        types[label] = declared
    check_references(types)
    return types


def assert_label(label: str) -> None:
    assert TYPEQL_LABEL.match(label), f"{label!r} is not a TypeQL identifier"
    assert label not in TYPEQL_RESERVED and label not in AVOIDED_WORDS, f"{label!r} is a reserved word"
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", label), f"{label!r} is not kebab-case"


def add_capability(declared: dict[str, Any], words: list[str]) -> None:
    keyword, kind = words[0] if words else "", declared["kind"]
    if keyword == "value" and kind == "attribute" and len(words) == 2:
        assert declared["value"] is None and words[1] in VALUE_TYPES_3X, f"bad value type {words}"
        declared["value"] = words[1]
    elif keyword == "owns" and kind == "entity" and len(words) in (2, 3):
        assert words[2:] in ([], ["@card(0..)"]), f"bad annotation {words}"
        declared["owns"][words[1]] = words[2] if len(words) == 3 else None
    elif keyword == "plays" and kind == "entity" and len(words) == 2 and words[1].count(":") == 1:
        declared["plays"].add(tuple(words[1].split(":")))
    elif keyword == "relates" and kind == "relation" and len(words) == 2:
        assert_label(words[1])
        declared["relates"].append(words[1])
    else:
        pytest.fail(f"capability {' '.join(words)!r} is not allowed on an {kind} here")


def check_references(types: dict[str, dict[str, Any]]) -> None:
    for label, declared in types.items():
        if declared["kind"] == "attribute":
            assert declared["value"] is not None, f"attribute {label} has no value type"
        if declared["kind"] == "relation":
            roles = declared["relates"]
            assert len(roles) == 2 and roles[0] != roles[1], f"relation {label} needs two distinct roles"
        for attribute in declared["owns"]:
            assert types.get(attribute, {}).get("kind") == "attribute", f"{label} owns undefined {attribute}"
        for relation, role in declared["plays"]:
            assert role in types.get(relation, {}).get("relates", []), f"{label} plays undefined {relation}:{role}"
        seen, current = {label}, declared["sub"]
        while current is not None:
            assert types.get(current, {}).get("kind") == declared["kind"], f"{label} sub undefined {current}"
            assert current not in seen, f"sub cycle through {label}"
            seen.add(current)
            current = types[current]["sub"]


# ------------------------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("DropshipFulfillment", "dropship-fulfillment"),
        ("placesOrder", "places-order"),
        ("hasURL", "has-url"),
        ("HTTPServer", "http-server"),
        ("B2BCustomer", "b2b-customer"),
        ("Level2Support", "level2-support"),
        ("order_id", "order-id"),
        ("Café Owner", "cafe-owner"),
        ("--x--", "x"),
        ("3PL", "3pl"),
        ("", ""),
    ],
)
def test_kebab_case(name: str, expected: str) -> None:
    assert kebab_case(name) == expected


def test_small_ontology_gives_exactly_this_text(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Party", **{"rdfs:label": "Party"}),
        cls("ex:Customer", "ex:Party"),
        cls("ex:Order"),
        obj_prop("ex:placesOrder", "ex:Customer", "ex:Order"),
        data_prop("ex:total", "ex:Order", "xsd:decimal"),
        data_prop("ex:email", "ex:Party", **{"mabos:multi_valued": True}),
    ]
    path = write_ontology(tmp_path / "shop.jsonld", nodes)
    schema = to_typeql(load_graph([path]), sources=["ontologies/shop.jsonld"])
    assert schema.text == EXPECTED_SMALL
    assert schema.types == {
        EX + "Party": "party",
        EX + "Customer": "customer",
        EX + "Order": "order",
        EX + "placesOrder": "places-order",
        EX + "total": "total",
        EX + "email": "email",
    }
    assert schema.kinds[EX + "placesOrder"] == "relation"
    assert schema.roles == {EX + "placesOrder": ("customer", "order")}
    assert schema.value_types == {EX + "total": "decimal", EX + "email": "string"}
    assert schema.notes == []
    assert schema.counts == {
        "entities": 3,
        "relations": 1,
        "attributes": 2,
        "owns": 2,
        "plays": 2,
        "business_rules": 0,
        "annotations": 0,
        "skipped": 0,
        "renamed": 0,
        "multiple_inheritance": 0,
    }


EXPECTED_SMALL = """\
# TypeQL 3 schema generated from the mabos JSON-LD ontologies by `mabos ontology to-typeql`.
# Do not edit: change the ontologies and regenerate. Mapping rules: docs/ontology-typeql.md
# Sources:
#   ontologies/shop.jsonld
# Ontologies:
#   http://example.org/shop# (ex, shop)
# Types: 3 entity, 1 relation, 2 attribute. Not mapped: 0 business rule(s), 0 annotation property(ies), 0 other node(s).

define

# attribute types (owl:DatatypeProperty)
  # http://example.org/shop#email
  attribute email, value string;

  # http://example.org/shop#total
  attribute total, value decimal;

# entity types (owl:Class)
  # http://example.org/shop#Customer
  entity customer sub party,
    plays places-order:customer;

  # http://example.org/shop#Order
  entity order,
    owns total,
    plays places-order:order;

  # http://example.org/shop#Party
  entity party,
    owns email @card(0..);

# relation types (owl:ObjectProperty)
  # http://example.org/shop#placesOrder
  relation places-order,
    relates customer,
    relates order;
"""


def test_reserved_words_get_the_domain_prefix(tmp_path: Path) -> None:
    schema = convert(
        tmp_path,
        [
            cls("ex:Entity"),
            cls("ex:Match"),
            data_prop("ex:value", "ex:Entity"),
            data_prop("ex:date", "ex:Entity", "xsd:date"),
            obj_prop("ex:in", "ex:Entity", "ex:Match"),
        ],
    )
    assert [schema.types[EX + n] for n in ("Entity", "Match", "value", "date", "in")] == [
        "ex-entity",
        "ex-match",
        "ex-value",
        "ex-date",
        "ex-in",
    ]
    assert f"{EX}value: identifier ex-value: value is a TypeQL keyword or built-in name" in notes_of(schema, "renamed")
    assert schema.counts["renamed"] == 5


def test_collisions_across_namespaces_keep_core_then_business_then_iri_order(tmp_path: Path) -> None:
    nodes = [cls("ecommerce:Order"), cls("biz:Order"), cls("ex:Order"), cls("mabos:Agent"), cls("ex:Agent")]
    schema = convert(tmp_path, nodes)
    assert schema.types[BUSINESS_NS + "Order"] == "order"
    assert schema.types[ECOMMERCE_NS + "Order"] == "ecommerce-order"  # no mabos:prefix: last path segment
    assert schema.types[EX + "Order"] == "ex-order"  # the ontology node declares mabos:prefix "ex"
    assert schema.types[CORE_NS + "Agent"] == "agent"
    assert schema.types[EX + "Agent"] == "ex-agent"
    assert f"{ECOMMERCE_NS}Order: identifier ecommerce-order: order is taken by {BUSINESS_NS}Order" in notes_of(
        schema, "renamed"
    )


def test_entities_beat_relations_beat_attributes_for_a_name(tmp_path: Path) -> None:
    schema = convert(
        tmp_path,
        [cls("ex:Status"), data_prop("ex:status", "ex:Status"), obj_prop("ex:STATUS", "ex:Status", "ex:Status")],
    )
    assert schema.types[EX + "Status"] == "status"
    assert schema.types[EX + "STATUS"] == "ex-status"
    assert schema.types[EX + "status"] == "ex-status-2"


def test_bare_names_are_settled_before_prefixed_ones(tmp_path: Path) -> None:
    """``ecommerce:EcommerceOrder`` keeps ``ecommerce-order``; the renamed ``ecommerce:Order`` gets ``-2``."""
    schema = convert(tmp_path, [cls("biz:Order"), cls("ecommerce:Order"), cls("ecommerce:EcommerceOrder")])
    assert schema.types[ECOMMERCE_NS + "EcommerceOrder"] == "ecommerce-order"
    assert schema.types[ECOMMERCE_NS + "Order"] == "ecommerce-order-2"


def test_unusable_local_names_fall_back_to_label_or_prefix(tmp_path: Path) -> None:
    other, empty = "http://example.org/other#", "http://example.org/empty#"
    schema = convert(tmp_path, [cls("ex:3PL"), cls(other, **{"rdfs:label": "Shop Root"}), cls(empty), cls("ex:\u00d7")])
    assert schema.types[EX + "3PL"] == "ex-3pl"
    assert schema.types[other] == "shop-root"
    assert schema.types[empty] == "empty"
    assert schema.types[EX + "\u00d7"] == "ex"
    assert notes_of(schema, "renamed") == [
        f"{empty}: identifier empty: the IRI has no usable local name or label",
        f"{EX}3PL: identifier ex-3pl: 3pl does not start with a letter",
        f"{EX}\u00d7: identifier ex: the IRI has no usable local name or label",
    ]


# ------------------------------------------------------------------------------------------- inheritance


def test_sub_chain(tmp_path: Path) -> None:
    types = parse_schema(
        convert(tmp_path, [cls("ex:A"), cls("ex:B", "ex:A"), cls("ex:C", "ex:B"), cls("ex:D", "owl:Thing")]).text
    )
    assert {label: t["sub"] for label, t in types.items()} == {"a": None, "b": "a", "c": "b", "d": None}


def test_multiple_inheritance_keeps_the_most_specific_parent_and_copies_the_other(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Root"),
        cls("ex:Party", "ex:Root"),
        cls("ex:Asset"),
        cls("ex:Employee", "ex:Asset", "ex:Party"),
        cls("ex:Manager", "ex:Employee"),
        data_prop("ex:tag", "ex:Asset", **{"mabos:multi_valued": True}),
        data_prop("ex:name", "ex:Root"),
        obj_prop("ex:owns", "ex:Asset", "ex:Party"),
    ]
    schema = convert(tmp_path, nodes)
    types = parse_schema(schema.text)
    assert types["employee"]["sub"] == "party"  # party has one ancestor, asset none
    assert types["employee"]["owns"] == {"tag": "@card(0..)"}  # copied from asset; name comes through party
    assert types["employee"]["plays"] == {("ex-owns", "asset")}
    assert types["manager"] == types["manager"] | {"sub": "employee", "owns": {}, "plays": set()}
    assert notes_of(schema, "inheritance") == [
        f"{EX}Employee: superclasses asset, party: sub party; copies the owns and plays of asset "
        "(its instances do not match isa asset)"
    ]
    assert schema.counts["multiple_inheritance"] == 1


def test_multiple_inheritance_tie_is_broken_by_identifier(tmp_path: Path) -> None:
    schema = convert(tmp_path, [cls("ex:Zeta"), cls("ex:Alpha"), cls("ex:Both", "ex:Zeta", "ex:Alpha")])
    assert parse_schema(schema.text)["both"]["sub"] == "alpha"


def test_a_redundant_superclass_is_not_multiple_inheritance(tmp_path: Path) -> None:
    schema = convert(tmp_path, [cls("ex:A"), cls("ex:B", "ex:A"), cls("ex:C", "ex:A", "ex:B")])
    assert parse_schema(schema.text)["c"]["sub"] == "b"
    assert schema.notes == []


def test_a_subclass_cycle_is_broken_and_reported(tmp_path: Path) -> None:
    nodes = [cls("ex:A", "ex:B"), cls("ex:B", "ex:A"), cls("ex:S", "ex:S"), data_prop("ex:x", "ex:A")]
    schema = convert(tmp_path, nodes)
    types = parse_schema(schema.text)
    assert (types["a"]["sub"], types["b"]["sub"], types["s"]["sub"]) == ("b", None, None)
    assert types["b"]["owns"] == {"x": None}  # b is equivalent to a: it gets a's attribute
    assert f"{EX}B: sub a would close a subClassOf cycle: left out" in notes_of(schema, "inheritance")


def test_capabilities_a_supertype_has_are_not_repeated(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Party"),
        cls("ex:Customer", "ex:Party"),
        {**data_prop("ex:name", "ex:Party"), "rdfs:domain": [{"@id": "ex:Party"}, {"@id": "ex:Customer"}]},
    ]
    types = parse_schema(convert(tmp_path, nodes).text)
    assert types["party"]["owns"] == {"name": None}
    assert types["customer"]["owns"] == {}


# -------------------------------------------------------------------------------------------- properties


@pytest.mark.parametrize(
    ("xsd", "value_type"),
    [
        ("string", "string"),
        ("boolean", "boolean"),
        ("integer", "integer"),
        ("int", "integer"),
        ("long", "integer"),
        ("nonNegativeInteger", "integer"),
        ("decimal", "decimal"),
        ("double", "double"),
        ("float", "double"),
        ("date", "date"),
        ("dateTime", "datetime"),
        ("dateTimeStamp", "datetime-tz"),
        ("duration", "duration"),
        ("anyURI", "string"),
    ],
)
def test_xsd_ranges_give_typeql_value_types(tmp_path: Path, xsd: str, value_type: str) -> None:
    schema = convert(tmp_path, [cls("ex:Order"), data_prop("ex:field", "ex:Order", f"xsd:{xsd}")])
    assert f"  attribute field, value {value_type};\n" in schema.text
    assert schema.notes == []


def test_unsupported_or_missing_ranges_give_string_and_a_note(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Order"),
        data_prop("ex:year", "ex:Order", "xsd:gYear"),
        data_prop("ex:free", "ex:Order", None),
        data_prop("ex:party", "ex:Order", "ex:Order"),
        {**data_prop("ex:mixed", "ex:Order"), "rdfs:range": [{"@id": "xsd:integer"}, {"@id": "xsd:date"}]},
    ]
    schema = convert(tmp_path, nodes)
    assert set(schema.value_types.values()) == {"string"}
    assert notes_of(schema, "reference") == [
        f"{EX}free: no rdfs:range: value string",
        f"{EX}mixed: ranges give several value types (date, integer): string",
        f"{EX}party: range {EX}Order is a class (use an owl:ObjectProperty): value string",
        f"{EX}year: range xsd:gYear is not a supported datatype: value string",
    ]


def test_multi_valued_owns_get_card_and_single_valued_keep_the_default(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Order"),
        data_prop("ex:tag", "ex:Order", **{"mabos:multi_valued": True}),
        data_prop("ex:note", "ex:Order", **{"mabos:multi_valued": False}),
        data_prop("ex:code", "ex:Order"),
    ]
    assert parse_schema(convert(tmp_path, nodes).text)["order"]["owns"] == {
        "code": None,
        "note": None,
        "tag": "@card(0..)",
    }


def test_roles_are_named_after_domain_and_range(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Employee"),
        cls("ex:Team"),
        cls("ex:Vendor"),
        obj_prop("ex:memberOf", "ex:Employee", "ex:Team"),
        obj_prop("ex:reportsTo", "ex:Employee", "ex:Employee"),
        {**obj_prop("ex:supplies", None, "ex:Team"), "rdfs:domain": [{"@id": "ex:Employee"}, {"@id": "ex:Vendor"}]},
    ]
    schema = convert(tmp_path, nodes)
    types = parse_schema(schema.text)
    assert schema.roles == {
        EX + "memberOf": ("employee", "team"),
        EX + "reportsTo": ("employee-subject", "employee-object"),
        EX + "supplies": ("subject", "team"),  # two domain classes: the generic role name
    }
    assert types["employee"]["plays"] == {
        ("member-of", "employee"),
        ("reports-to", "employee-subject"),
        ("reports-to", "employee-object"),
        ("supplies", "subject"),
    }
    assert types["vendor"]["plays"] == {("supplies", "subject")}
    assert types["team"]["plays"] == {("member-of", "team"), ("supplies", "team")}


def test_relation_kind_and_declared_roles_name_the_relation(tmp_path: Path) -> None:
    """The core ontology maps object properties to the MABOS graph relation kinds (kg.models.RELATION_SPECS)."""
    kinds = {"mabos:relation_kind": "goal-decomposition", "mabos:source_role": "parent", "mabos:target_role": "subgoal"}
    nodes = [
        cls("ex:Goal"),
        {**obj_prop("ex:hasSubgoal", "ex:Goal", "ex:Goal"), **kinds},
        {**obj_prop("ex:blocks", "ex:Goal", "ex:Goal"), "mabos:source_role": "is", "mabos:target_role": "Blocked Goal"},
    ]
    schema = convert(tmp_path, nodes)
    types = parse_schema(schema.text)
    assert schema.types[EX + "hasSubgoal"] == "goal-decomposition"
    assert types["goal-decomposition"]["relates"] == ["parent", "subgoal"]
    assert schema.roles[EX + "blocks"] == ("goal", "blocked-goal")  # "is" is reserved: the default name instead
    assert {("goal-decomposition", "parent"), ("goal-decomposition", "subgoal")} <= types["goal"]["plays"]
    assert notes_of(schema, "renamed") == [f"{EX}blocks: mabos:source_role is is not a usable TypeQL label: not used"]


def test_union_domain_is_expanded(tmp_path: Path) -> None:
    nodes = [
        cls("ex:A"),
        cls("ex:B"),
        {**data_prop("ex:code", None), "rdfs:domain": {"owl:unionOf": {"@list": [{"@id": "ex:A"}, {"@id": "ex:B"}]}}},
    ]
    types = parse_schema(convert(tmp_path, nodes).text)
    assert types["a"]["owns"] == types["b"]["owns"] == {"code": None}


def test_missing_domain_or_range_declares_the_type_and_reports_it(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Order"),
        data_prop("ex:loose", None),
        obj_prop("ex:about", None, "ex:Order"),
        obj_prop("ex:label", "ex:Order", "xsd:string"),
    ]
    schema = convert(tmp_path, nodes)
    types = parse_schema(schema.text)
    assert types["loose"] == types["loose"] | {"kind": "attribute", "value": "string"}
    assert types["about"]["relates"] == ["subject", "order"]
    assert types["order"]["plays"] == {("about", "order"), ("ex-label", "order")}
    assert schema.roles[EX + "label"] == ("order", "object")
    assert notes_of(schema, "reference") == [
        f"{EX}about: no domain class: no type plays role subject",
        f"{EX}label: no range class: no type plays role object",
        f"{EX}label: range xsd:string is a datatype, not a class",
        f"{EX}loose: no domain class: the attribute type is declared, no type owns it",
    ]


def test_classes_of_another_file_resolve_only_when_that_file_is_loaded(tmp_path: Path) -> None:
    base = write_ontology(tmp_path / "business.jsonld", [cls("biz:Order")], BUSINESS_NS, "biz", "business")
    template = write_ontology(
        tmp_path / "ecommerce.jsonld",
        [
            cls("ecommerce:Cart", "biz:Order"),
            obj_prop("ecommerce:holds", "ecommerce:Cart", "biz:Order"),
            data_prop("ecommerce:sku", "biz:Order"),
        ],
        ECOMMERCE_NS,
        "shop",
        "ecommerce",
    )
    alone = to_typeql(load_graph([template]))
    types = parse_schema(alone.text)
    assert set(types) == {"cart", "holds", "sku"} and types["cart"]["sub"] is None
    assert notes_of(alone, "reference") == [
        f"{ECOMMERCE_NS}Cart: superclass {BUSINESS_NS}Order is not a class of the loaded ontologies: no sub",
        f"{ECOMMERCE_NS}holds: no range class: no type plays role object",
        f"{ECOMMERCE_NS}holds: range {BUSINESS_NS}Order is not a class of the loaded ontologies",
        f"{ECOMMERCE_NS}sku: domain {BUSINESS_NS}Order is not a class of the loaded ontologies",
        f"{ECOMMERCE_NS}sku: no domain class: the attribute type is declared, no type owns it",
    ]
    together = to_typeql(load_graph([base, template]))
    types = parse_schema(together.text)
    assert types["cart"]["sub"] == "order"
    assert types["order"]["owns"] == {"sku": None} and types["order"]["plays"] == {("holds", "order")}
    assert together.notes == []


def test_business_rules_and_other_nodes_are_not_mapped(tmp_path: Path) -> None:
    nodes = [
        cls("ex:Order"),
        {"@id": "ex:R1", "@type": "mabos:BusinessRule", "rdfs:label": "rule"},
        {"@id": "ex:seeAlso", "@type": "owl:AnnotationProperty"},
        {"@id": "ex:acme", "@type": ["owl:NamedIndividual", "ex:Order"]},
        {"@id": "ex:Both", "@type": ["owl:Class", "owl:ObjectProperty"]},
    ]
    schema = convert(tmp_path, nodes)
    assert (schema.counts["business_rules"], schema.counts["annotations"], schema.counts["skipped"]) == (1, 1, 1)
    assert notes_of(schema, "skipped") == [
        f"{EX}Both: typed as entity and relation types: mapped as entity only",
        f"{EX}acme: a http://example.org/shop#Order, owl:NamedIndividual is not part of the schema",
    ]
    assert "R1" not in schema.text and "seeAlso" not in schema.text


def test_a_graph_without_classes_or_properties_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="nothing to convert"):
        convert(tmp_path, [{"@id": "ex:R1", "@type": "mabos:BusinessRule"}])


def test_converts_a_graph_built_in_memory() -> None:
    graph = Graph()
    graph.add((URIRef(EX + "Order"), RDF.type, OWL.Class))
    graph.add((URIRef(EX + "total"), RDF.type, OWL.DatatypeProperty))
    graph.add((URIRef(EX + "total"), RDFS.domain, URIRef(EX + "Order")))
    graph.add((URIRef(EX + "total"), RDFS.range, XSD.integer))
    graph.add((URIRef(EX + "total"), URIRef(CORE_NS + "multi_valued"), Literal("true")))
    types = parse_schema(to_typeql(graph).text)
    assert types["order"]["owns"] == {"total": "@card(0..)"}
    assert types["total"]["value"] == "integer"


# --------------------------------------------------------------------------------------- files and loading


def test_load_graph_keeps_the_nodes_of_the_named_graph(tmp_path: Path) -> None:
    """The ontology layout (top-level ``@id`` + ``@graph``) is a named graph: a plain Graph.parse drops it."""
    graph = load_graph([write_ontology(tmp_path / "shop.jsonld", [cls("ex:Order")])])
    assert (URIRef(EX + "Order"), RDF.type, OWL.Class) in graph
    assert (URIRef(EX), RDF.type, OWL.Ontology) in graph
    assert dict(graph.namespaces())["ex"] == URIRef(EX)


def test_load_graph_merges_files_and_reads_turtle(tmp_path: Path) -> None:
    ttl = tmp_path / "extra.ttl"
    ttl.write_text(f"@prefix owl: <{OWL}> .\n<{EX}Invoice> a owl:Class .\n", encoding="utf-8")
    graph = load_graph([write_ontology(tmp_path / "shop.jsonld", [cls("ex:Order")]), ttl])
    assert set(to_typeql(graph).types.values()) == {"order", "invoice"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("broken.jsonld", '{"@context": {', "broken.jsonld: does not parse as json-ld"),
        ("broken.ttl", "<a> <b> .", "broken.ttl: does not parse as turtle"),
        ("remote.jsonld", '{"@context": "https://schema.org/", "@id": "x"}', "remote @context"),
        ("notes.txt", "", "notes.txt: unknown ontology format"),
    ],
)
def test_load_graph_names_the_file_that_does_not_parse(tmp_path: Path, name: str, content: str, message: str) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)) as caught:
        load_graph([tmp_path / name])
    assert caught.value.field == "ontology"


def test_load_graph_refuses_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.jsonld: no such file"):
        load_graph([tmp_path / "missing.jsonld"])


def test_ontology_files_is_the_sorted_active_set(tmp_path: Path) -> None:
    for name in ("sbvr.jsonld", "core.jsonld", "templates/saas.jsonld", "proposals/p1.jsonld", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}", encoding="utf-8")
    assert ontology_files(tmp_path) == [tmp_path / "core.jsonld", tmp_path / "sbvr.jsonld"]
    with pytest.raises(InputError, match="no such directory"):
        ontology_files(tmp_path / "absent")


# ------------------------------------------------------------------------------------------- determinism


SHOP = [
    cls("ex:Party"),
    cls("ex:Customer", "ex:Party"),
    cls("ex:Asset"),
    cls("ex:Employee", "ex:Party", "ex:Asset"),
    cls("biz:Order"),
    cls("ex:Order"),
    cls("ex:Value"),
    obj_prop("ex:placesOrder", "ex:Customer", "biz:Order"),
    obj_prop("ex:reportsTo", "ex:Employee", "ex:Employee"),
    data_prop("ex:email", "ex:Party", **{"mabos:multi_valued": True}),
    data_prop("ex:total", "biz:Order", "xsd:decimal"),
    data_prop("ex:order", "ex:Order", "xsd:integer"),
    data_prop("ex:loose", None),
]


def test_output_is_byte_identical_across_runs_and_input_orders(tmp_path: Path) -> None:
    first = convert(tmp_path, SHOP)
    assert convert(tmp_path, SHOP) == first
    shuffled = list(SHOP)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert convert(tmp_path, shuffled).text == first.text
    half = len(SHOP) // 2
    a = write_ontology(tmp_path / "a.jsonld", SHOP[:half])
    b = write_ontology(tmp_path / "b.jsonld", SHOP[half:])
    assert to_typeql(load_graph([a, b])).text == to_typeql(load_graph([b, a])).text == first.text


def test_header_lists_sources_and_has_no_timestamp(tmp_path: Path) -> None:
    schema = to_typeql(
        load_graph([write_ontology(tmp_path / "shop.jsonld", SHOP)]),
        sources=[Path("ontologies/shop.jsonld"), "extra.ttl"],
    )
    header = schema.text.split("\ndefine\n", 1)[0]
    assert "#   ontologies/shop.jsonld\n#   extra.ttl\n" in header
    assert not re.search(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}", header)
    assert all(line.startswith("#") for line in header.strip().splitlines())


NAMES = st.one_of(
    st.sampled_from(sorted(TYPEQL_RESERVED | {"Order", "order", "ORDER", "3D", "_", "Value", "x-y", "XY"})),
    st.from_regex(r"[A-Za-z0-9_]{1,6}", fullmatch=True),
)


@settings(max_examples=examples(60), deadline=None)
@given(
    classes=st.lists(NAMES, min_size=1, max_size=8, unique=True),
    properties=st.lists(st.tuples(NAMES, st.booleans(), st.integers(0, 7), st.integers(0, 7)), max_size=6),
    edges=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=10),
    namespaces=st.lists(st.sampled_from([EX, BUSINESS_NS, ECOMMERCE_NS, CORE_NS]), min_size=8, max_size=8),
)
def test_any_graph_gives_a_structurally_valid_schema(
    classes: list[str],
    properties: list[tuple[str, bool, int, int]],
    edges: list[tuple[int, int]],
    namespaces: list[str],
) -> None:
    graph = Graph()
    iris = [URIRef(namespaces[i] + name) for i, name in enumerate(classes)]
    for iri in iris:
        graph.add((iri, RDF.type, OWL.Class))
    for child, parent in edges:
        graph.add((iris[child % len(iris)], RDFS.subClassOf, iris[parent % len(iris)]))
    for name, is_object, domain, range_ in properties:
        prop = URIRef(EX + "p/" + name)
        graph.add((prop, RDF.type, OWL.ObjectProperty if is_object else OWL.DatatypeProperty))
        graph.add((prop, RDFS.domain, iris[domain % len(iris)]))
        graph.add((prop, RDFS.range, iris[range_ % len(iris)] if is_object else XSD.string))
    schema = to_typeql(graph)
    types = parse_schema(schema.text)
    assert len(set(schema.types.values())) == len(schema.types)  # one label per term
    assert set(schema.types.values()) == set(types)
    for label in schema.types.values():
        assert_label(label)


# ----------------------------------------------------------------------------------------------- goldens


def golden_cases() -> dict[str, list[Path]]:
    """Golden name -> the files it converts (see the module docstring)."""
    base = sorted(ONTOLOGIES.glob("*.jsonld"))
    templates = sorted((ONTOLOGIES / "templates").glob("*.jsonld"))
    cases = {path.stem: [path] for path in base}
    cases |= {"active-set": base} if base else {}
    for template in templates:
        assert template.stem not in cases, f"templates/{template.name}: its golden name is taken"
        cases[template.stem] = [*base, template]
    return cases


def render_golden(paths: list[Path]) -> str:
    return to_typeql(load_graph(paths), sources=[p.relative_to(ROOT).as_posix() for p in paths]).text


@pytest.mark.parametrize("name", sorted(golden_cases()) or ["(no ontology files)"])
def test_golden_schema(name: str) -> None:
    cases = golden_cases()
    if name not in cases or not sorted(ONTOLOGIES.glob("*.jsonld")):
        pytest.skip("no base ontology ontologies/*.jsonld exists yet: nothing to compare")
    text = render_golden(cases[name])
    parse_schema(text)
    golden = GOLDEN_DIR / f"{name}.tql"
    if UPDATE_GOLDENS:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
        return
    assert golden.exists(), f"{golden.relative_to(ROOT)} is missing: run {REGENERATE}"
    expected = golden.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), "golden", "now", n=1))
    assert text == expected, f"{golden.relative_to(ROOT)} is out of date (run {REGENERATE}):\n{diff[:4000]}"


def test_golden_files_all_have_a_source() -> None:
    stale = sorted(p for p in GOLDEN_DIR.glob("*.tql") if p.stem not in golden_cases())
    if UPDATE_GOLDENS:
        for path in stale:
            path.unlink()
        return
    assert not stale, f"goldens without an ontology file: {[p.name for p in stale]} (run {REGENERATE})"


def test_the_repository_schema_file_is_the_output_for_the_base_set() -> None:
    """``schema/typedb/ontology.tql`` is regenerated, not edited: ``mabos ontology to-typeql --ontology-dir
    ontologies --out schema/typedb/ontology.tql`` (from the repository root)."""
    root = Path(__file__).resolve().parents[2]
    files = ontology_files(root / "ontologies")
    expected = to_typeql(load_graph(files), sources=[f.name for f in files]).text
    assert (root / "schema" / "typedb" / "ontology.tql").read_text(encoding="utf-8") == expected
