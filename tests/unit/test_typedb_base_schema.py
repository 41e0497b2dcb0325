"""Golden-style checks of schema/typedb/base.tql, alone and combined with ontology.tql (no server)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kg.models import RELATION_SPECS
from kg.ontology.typeql import IDENTIFIER_RE, RESERVED_WORDS

SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "typedb"
BASE = (SCHEMA / "base.tql").read_text(encoding="utf-8")
ONTOLOGY = (SCHEMA / "ontology.tql").read_text(encoding="utf-8")
KINDS = ("entity", "relation", "attribute")
VALUE_TYPES = {"boolean", "integer", "double", "decimal", "string", "date", "datetime", "datetime-tz", "duration"}
RECORD_TYPES = ["agent", "memory-item", "fact", "rule", "case", "belief", "desire", "goal", "intention", "plan",
                "plan-step", "checkpoint", "ontology-proposal"]  # fmt: skip


@dataclass
class TypeDef:
    """Everything one schema file says about one label."""

    kind: str | None = None
    sub: str | None = None
    value: str | None = None
    owns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    plays: set[str] = field(default_factory=set)
    relates: set[str] = field(default_factory=set)


def parse(text: str) -> dict[str, TypeDef]:
    """A small structural parser of a TypeQL 3 ``define`` query; fails the test on anything malformed."""
    body = re.sub(r"#[^\n]*", "", text).strip()
    assert body.startswith("define"), "a schema file must start with define"
    types: dict[str, TypeDef] = {}
    for raw in body.removeprefix("define").split(";"):
        statement = " ".join(raw.split())
        if not statement:
            continue
        head, *caps = [part.strip() for part in statement.split(",")]
        words = head.split()
        kind = words.pop(0) if words[0] in KINDS else None
        label = words.pop(0)
        assert IDENTIFIER_RE.match(label) and label not in RESERVED_WORDS, f"bad label {label!r}"
        definition = types.setdefault(label, TypeDef())
        if kind is not None:
            assert definition.kind is None, f"{label} declared with a kind twice"
            definition.kind = kind
        if words:
            caps.insert(0, " ".join(words))
        for cap in caps:
            verb, target, *annotations = cap.split()
            assert all(a.startswith("@") for a in annotations), f"{label}: malformed {cap!r}"
            if verb == "sub":
                assert definition.sub in (None, target), f"{label} has two supertypes"
                definition.sub = target
            elif verb == "value":
                assert target in VALUE_TYPES, f"{label}: unknown value type {target}"
                definition.value = target
            elif verb == "owns":
                definition.owns[target] = tuple(sorted(annotations))
            elif verb == "plays":
                assert re.fullmatch(r"[a-z0-9-]+:[a-z0-9-]+", target), f"{label}: plays needs relation:role"
                definition.plays.add(target)
            elif verb == "relates":
                definition.relates.add(target)
            else:
                pytest.fail(f"{label}: unknown capability {cap!r}")
    return types


BASE_TYPES = parse(BASE)
ONTOLOGY_TYPES = parse(ONTOLOGY)


def combined() -> dict[str, TypeDef]:
    merged: dict[str, TypeDef] = {}
    for types in (ONTOLOGY_TYPES, BASE_TYPES):
        for label, d in types.items():
            m = merged.setdefault(label, TypeDef())
            m.kind, m.sub, m.value = m.kind or d.kind, m.sub or d.sub, m.value or d.value
            m.owns.update(d.owns)
            m.plays |= d.plays
            m.relates |= d.relates
    return merged


def test_every_label_is_declared_once_with_a_kind() -> None:
    assert re.sub(r"#[^\n]*", "", BASE).strip().startswith("define")
    for label, d in BASE_TYPES.items():
        assert d.kind in KINDS, f"{label} has no kind"
        if d.kind == "attribute":
            assert d.value is not None, f"attribute {label} has no value type"
            assert not d.owns and not d.plays and not d.relates, f"attribute {label} owns or plays"
        else:
            assert d.value is None, f"{label} is not an attribute but has a value type"
        assert d.kind == "relation" or not d.relates, f"{label} relates roles but is no relation"


def test_no_typeql_2_forms() -> None:
    text = re.sub(r"#[^\n]*", "", BASE)
    for pattern in [r"\bsub\s+(entity|relation|attribute|thing)\b", r"\bvalue\s+long\b", r"\brule\s+[a-z-]+\s*:",
                    r"\bwhen\s*\{", r"\bthen\s*\{", r"\babstract\s*,", r"\bregex\s+\""]:  # fmt: skip
        assert not re.search(pattern, text), pattern


def test_references_resolve_in_base_or_ontology() -> None:
    known = combined()
    for label, d in BASE_TYPES.items():
        if d.sub:
            assert known.get(d.sub) and known[d.sub].kind == d.kind, f"{label} sub {d.sub}"
        for attribute in d.owns:
            assert known.get(attribute) and known[attribute].kind == "attribute", f"{label} owns {attribute}"
        for scoped in d.plays:
            relation, role = scoped.split(":")
            assert known.get(relation) and known[relation].kind == "relation", f"{label} plays {scoped}"
            assert role in known[relation].relates, f"{label} plays {scoped}: no such role"


def test_record_types_and_relations_own_uid_as_key() -> None:
    types = combined()

    def owns_key(label: str | None) -> bool:
        while label is not None:
            if types[label].owns.get("uid") == ("@key",):
                return True
            label = types[label].sub
        return False

    for label in RECORD_TYPES:
        assert label in BASE_TYPES, f"base.tql lacks {label}"
        assert owns_key(label), f"{label} does not own uid @key"
    for kind, spec in RELATION_SPECS.items():
        relation = BASE_TYPES[kind.value]
        assert relation.kind == "relation"
        assert relation.relates == {spec.source_role, spec.target_role}, kind.value
        assert owns_key(kind.value)


def test_multi_valued_fields_are_unbounded() -> None:
    expected = {
        ("record", "derived-from-uid"),
        ("memory-item", "memory-tag"),
        ("case", "situation-belief"),
        ("case", "solution-action"),
        ("ontology-proposal", "proposed-synonym"),
        ("checkpoint", "next-step"),
    }
    for owner, attribute in expected:
        assert "@card(0..)" in BASE_TYPES[owner].owns[attribute], (owner, attribute)


def test_base_and_ontology_combine_without_conflicts() -> None:
    for label, base in BASE_TYPES.items():
        other = ONTOLOGY_TYPES.get(label)
        if other is None:
            continue
        assert other.kind in (None, base.kind), f"{label}: {base.kind} here, {other.kind} in ontology.tql"
        assert other.value in (None, base.value), f"{label}: value {base.value} vs {other.value}"
        if other.sub or base.sub:
            assert other.sub == base.sub, f"{label}: sub {base.sub} vs {other.sub}"
        for attribute in base.owns.keys() & other.owns.keys():
            assert base.owns[attribute] == other.owns[attribute], f"{label} owns {attribute}: annotations differ"
        if base.kind == "relation":
            assert base.relates == other.relates, f"{label}: roles differ"


def test_no_capability_redeclared_on_a_subtype() -> None:
    types = combined()
    for label, d in types.items():
        parent = d.sub
        while parent is not None:
            p = types[parent]
            assert not (set(d.owns) & set(p.owns)), f"{label} repeats owns of {parent}: {set(d.owns) & set(p.owns)}"
            assert not (d.plays & p.plays), f"{label} repeats plays of {parent}: {d.plays & p.plays}"
            parent = p.sub


def test_parser_catches_malformed_schemas() -> None:
    with pytest.raises(AssertionError):
        parse("entity x;")
    with pytest.raises(AssertionError):
        parse("define entity x; entity x;")
    with pytest.raises(AssertionError):
        parse("define entity x sub a; x sub b;")
    with pytest.raises(AssertionError):
        parse("define attribute n, value long;")
    with pytest.raises(AssertionError):
        parse("define entity has;")
