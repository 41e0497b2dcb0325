"""Scaffolding a domain ontology from a template (kg/ontology/scaffold.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import kg.ontology.scaffold
from kg.errors import ConflictError, InputError
from kg.ontology.files import OntologyFiles, ontology_json, parse_jsonld, read_domain_file, read_shapes, shapes_dir
from kg.ontology.merge import file_checks
from kg.workspace import base_ontologies_dir
from tests.unit.conftest import ONTOLOGY_DATA as DATA

OLD_NS = "https://w3id.org/mabos/ecommerce#"


def strings(value) -> list[str]:
    if isinstance(value, dict):
        return [*value.keys(), *(s for v in value.values() for s in strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def test_scaffold_rewrites_the_template_into_a_new_namespace(svc) -> None:
    path = svc.scaffold("ecommerce", "pet-shop")
    assert path == svc.ontology_dir / "pet-shop.jsonld"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == ontology_json(data)
    assert (data["@id"], data["mabos:domain"], data["mabos:prefix"]) == (
        "https://w3id.org/mabos/pet-shop#",
        "pet-shop",
        "petshop",
    )
    assert data["@context"]["petshop"] == "https://w3id.org/mabos/pet-shop#" and "ecommerce" not in data["@context"]
    assert not [s for s in strings(data) if s.startswith(("ecommerce:", OLD_NS))]
    ids = [n["@id"] for n in data["@graph"]]
    assert ids == ["petshop:Cart", "petshop:Shipment", "petshop:contains", "petshop:trackingNumber", "petshop:shipsTo"]
    ships = data["@graph"][4]
    assert ships["rdfs:domain"] == {"@id": "https://w3id.org/mabos/pet-shop#Shipment"}  # full IRIs too
    assert ships["rdfs:range"] == {"@id": "biz:Customer"}  # other vocabularies stay
    assert not {str(n) for t in parse_jsonld(text) for n in t if str(n).startswith(OLD_NS)}


def test_a_scaffolded_domain_is_active_checked_and_open_to_proposals(svc) -> None:
    svc.scaffold("ecommerce", "Pet Shop")  # sanitised to pet-shop
    assert {r.domain: r.ok for r in svc.check()} == {"mabos-core": True, "pet-shop": True, "sbvr-business": True}
    p = svc.propose("a", domain="pet-shop", node_type="class", node_id="petshop:Aquarium", label="Aquarium",
                    parent_class="petshop:Cart", sbvr_definition="A tank for fish.")  # fmt: skip
    assert all(c.ok for c in svc.validate(p.uid, "knowledge"))
    svc.merge(p.uid, "knowledge")
    assert "petshop:Aquarium" in (svc.ontology_dir / "pet-shop.jsonld").read_text(encoding="utf-8")


def test_scaffold_refuses_an_existing_domain(svc) -> None:
    first = svc.scaffold("ecommerce", "pet-shop").read_bytes()
    with pytest.raises(ConflictError, match="domain: 'pet-shop' exists already"):
        svc.scaffold("ecommerce", "pet-shop")
    with pytest.raises(ConflictError, match="sbvr-business"):
        svc.scaffold("ecommerce", "sbvr-business")
    with pytest.raises(ConflictError, match="prefix or namespace"):
        svc.scaffold("ecommerce", "petshop")  # same prefix as pet-shop
    assert (svc.ontology_dir / "pet-shop.jsonld").read_bytes() == first


@pytest.mark.parametrize("name", ["1shop", "pet--shop", "pet.shop", "-shop", "", "x" * 41, "templates", "owl", "biz"])
def test_scaffold_refuses_a_bad_domain_name(svc, name) -> None:
    with pytest.raises(InputError) as err:
        svc.scaffold("ecommerce", name)
    assert err.value.field == "domain"
    assert sorted(p.name for p in svc.ontology_dir.glob("*.jsonld")) == ["mabos-core.jsonld", "sbvr-business.jsonld"]


@pytest.mark.parametrize(("template", "message"), [("nope", "available: ecommerce"), ("../x", "template name")])
def test_scaffold_refuses_an_unknown_template(svc, monkeypatch, template, message) -> None:
    monkeypatch.setattr(kg.ontology.scaffold, "repository_ontology_dir", lambda: None)
    with pytest.raises(InputError, match=message) as err:
        svc.scaffold(template, "pet-shop")
    assert err.value.field == "template"


def test_scaffold_falls_back_to_the_shipped_templates(svc, monkeypatch) -> None:
    shutil.rmtree(svc.ontology_dir / "templates")
    monkeypatch.setattr(kg.ontology.scaffold, "repository_ontology_dir", lambda: DATA / "ontologies")
    assert svc.scaffold("ecommerce", "shop").is_file()
    monkeypatch.setattr(kg.ontology.scaffold, "repository_ontology_dir", lambda: None)
    with pytest.raises(InputError, match=r"available: none"):
        svc.scaffold("ecommerce", "other-shop")


SHIPPED = Path(__file__).resolve().parents[2] / "ontologies" / "templates"


@pytest.mark.skipif(not SHIPPED.is_dir(), reason="the shipped templates are not there yet")
@pytest.mark.parametrize("template", sorted(p.stem for p in SHIPPED.glob("*.jsonld")) if SHIPPED.is_dir() else [])
def test_every_shipped_template_scaffolds_into_a_clean_domain(tmp_path, template) -> None:
    onto = tmp_path / "ontologies"
    shutil.copytree(SHIPPED.parent, onto)
    path, text = kg.ontology.scaffold.scaffold(template, f"my-{template}", onto, OntologyFiles().load(onto))
    path.write_text(text, encoding="utf-8")
    assert f"https://w3id.org/mabos/{template}#" not in text
    result = file_checks(OntologyFiles().load(onto), f"my-{template}", read_shapes(shapes_dir()))
    assert result.ok, result.checks


def test_a_domain_named_like_its_template_keeps_the_namespace(tmp_path):
    """``scaffold --template ecommerce --domain ecommerce`` (the issue's workflow) is a plain copy."""
    base = base_ontologies_dir()
    if base is None:
        pytest.skip("no base ontologies in this checkout")
    folder = tmp_path / "ontologies"
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "ecommerce.jsonld").write_bytes((base / "templates" / "ecommerce.jsonld").read_bytes())
    path, text = kg.ontology.scaffold.scaffold("ecommerce", "ecommerce", folder, OntologyFiles().load(folder))
    written = read_domain_file(path, text.encode("utf-8"))
    assert path.name == "ecommerce.jsonld" and not written.error
    assert written.namespace == "https://w3id.org/mabos/ecommerce#" and len(written.graph) > 100
