"""Whole-ontology checks, the OWL 2 RL shortcut and the byte-stable file writing (kg/ontology/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from filelock import FileLock, Timeout, lock_descriptor
from rdflib import OWL, RDF, RDFS, Graph, Literal, URIRef

import kg.memory.files
import kg.ontology.consistency
from kg.errors import WorkspaceError
from kg.memory.files import LOCK_FILE
from kg.ontology.consistency import constrained, module, owl_rl_problems
from kg.ontology.files import (
    OntologyFiles,
    atomic_write,
    directory_lock,
    graph_spans,
    insert_node,
    ontology_json,
    parse_jsonld,
    read_shapes,
    repository_ontology_dir,
    shapes_dir,
)
from kg.ontology.merge import file_checks
from kg.ontology.proposals import OntologyService
from tests.unit.conftest import ONTOLOGY_DATA as DATA

ROOT = Path(__file__).resolve().parents[2]
BIZ = "https://w3id.org/mabos/business#"


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(ontology_json(data), encoding="utf-8")


def failures(svc: OntologyService) -> dict[str, dict[str, str]]:
    return {r.domain: {c.check: c.message for c in r.checks if not c.ok} for r in svc.check()}


# ------------------------------------------------------------------------------------------------ check()


def test_check_passes_good_files(svc) -> None:
    results = svc.check()
    assert [(r.domain, r.ok) for r in results] == [("mabos-core", True), ("sbvr-business", True)]
    assert [c.check for c in results[0].checks] == ["parses", "header", "shacl", "owl_rl"]
    assert results[1].file == str(svc.ontology_dir / "sbvr-business.jsonld")


def test_check_reports_a_file_that_does_not_parse(svc) -> None:
    (svc.ontology_dir / "broken.jsonld").write_text('{"@graph": [', encoding="utf-8")
    (svc.ontology_dir / "list.jsonld").write_text("[]", encoding="utf-8")
    found = failures(svc)
    assert "does not parse" in found["broken"]["parses"]
    assert "@graph list" in found["list"]["parses"]
    assert found["sbvr-business"] == {} and found["mabos-core"] == {}
    with pytest.raises(WorkspaceError, match=r"broken\.jsonld"):
        svc.validate(svc.propose("a", domain="mabos-core", node_type="class", node_id="Plan", label="Plan").uid, "a")


def test_check_reports_shacl_violations_per_file(svc) -> None:
    edit(svc.ontology_dir / "sbvr-business.jsonld", lambda d: d["@graph"][0].pop("mabos:sbvr_definition"))
    found = failures(svc)
    assert list(found["sbvr-business"]) == ["shacl"]
    assert "biz:Party mabos:sbvr_definition" in found["sbvr-business"]["shacl"]
    assert found["mabos-core"] == {}


def test_check_reports_owl_rl_inconsistency(svc) -> None:
    def both(data):
        data["@graph"].append({"@id": "biz:SoleTrader", "@type": "owl:Class", "rdfs:label": "Sole trader",
                               "rdfs:subClassOf": [{"@id": "biz:Person"}, {"@id": "biz:Organization"}],
                               "mabos:sbvr_definition": "A person trading as an organization."})  # fmt: skip

    edit(svc.ontology_dir / "sbvr-business.jsonld", both)
    found = failures(svc)["sbvr-business"]
    assert list(found) == ["owl_rl"]
    assert "SoleTrader" in found["owl_rl"] and "Disjoint" in found["owl_rl"]


def test_check_reports_an_individual_in_disjoint_classes(svc) -> None:
    edit(svc.ontology_dir / "sbvr-business.jsonld", lambda d: d["@graph"].append(
        {"@id": "biz:acme", "@type": ["biz:Person", "biz:Organization"]}))  # fmt: skip
    assert "biz:acme" in failures(svc)["sbvr-business"]["owl_rl"].replace(BIZ, "biz:")


def test_check_reports_a_header_that_disagrees_with_the_file(svc) -> None:
    shutil.copy(svc.ontology_dir / "sbvr-business.jsonld", svc.ontology_dir / "copy.jsonld")
    assert "mabos:domain is 'sbvr-business' but the file is named copy.jsonld" in failures(svc)["copy"]["header"]


@pytest.mark.skipif(not (ROOT / "schema" / "shapes").is_dir(), reason="the shapes are not there yet")
def test_the_fixtures_and_the_shipped_ontologies_conform_to_the_shipped_shapes(tmp_path) -> None:
    shapes = read_shapes(shapes_dir())
    for directory in (DATA / "ontologies", repository_ontology_dir()):
        assert directory is not None
        active = OntologyFiles().load(directory)
        assert active.files
        for name in active.files:
            result = file_checks(active, name, shapes)
            assert result.ok, (directory, name, result.checks)


# ------------------------------------------------------------------------------------------------ OWL 2 RL


def _graph(*triples) -> Graph:
    graph = Graph()
    for s, p, o in triples:
        graph.add((URIRef(BIZ + s), p, o if not isinstance(o, str) else URIRef(BIZ + o)))
    return graph


def test_without_constraint_axioms_no_closure_is_computed(monkeypatch) -> None:
    graph = _graph(("A", RDF.type, OWL.Class), ("B", RDF.type, OWL.Class), ("B", RDFS.subClassOf, "A"))
    monkeypatch.setattr(kg.ontology.consistency.owlrl, "DeductiveClosure", None)  # would fail if called
    assert owl_rl_problems(graph, [URIRef(BIZ + "B")]) == []


def test_only_nodes_that_reach_a_constraint_are_probed() -> None:
    graph = _graph(
        ("A", RDF.type, OWL.Class), ("B", RDFS.subClassOf, "A"), ("C", RDF.type, OWL.Class),
        ("A", OWL.disjointWith, "D"), ("p", RDFS.domain, "B"), ("q", RDFS.range, "C"),
    )  # fmt: skip
    nodes = {URIRef(BIZ + n) for n in "ABCDpq"}
    assert constrained(graph, nodes) == {URIRef(BIZ + n) for n in "ABDp"}
    assert (URIRef(BIZ + "A"), OWL.disjointWith, URIRef(BIZ + "D")) in module(graph, [URIRef(BIZ + "D")])


def test_owl_rl_reports_ill_typed_literals() -> None:
    graph = _graph(
        ("A", RDF.type, OWL.Class), ("A", RDFS.comment, Literal("x", datatype=URIRef(str(RDF) + "PlainLiteral")))
    )
    graph.add(
        (
            URIRef(BIZ + "A"),
            URIRef(BIZ + "size"),
            Literal("big", datatype=URIRef("http://www.w3.org/2001/XMLSchema#integer")),
        )
    )
    assert [p for p in owl_rl_problems(graph, [URIRef(BIZ + "A")]) if p.startswith("ill-typed")]


# ------------------------------------------------------------------------------------------------ files


def test_parse_jsonld_keeps_the_nodes_of_a_named_graph() -> None:
    text = (DATA / "ontologies" / "sbvr-business.jsonld").read_text(encoding="utf-8")
    graph = parse_jsonld(text)
    assert (URIRef(BIZ + "Party"), RDF.type, OWL.Class) in graph
    assert (URIRef(BIZ), RDF.type, OWL.Ontology) in graph


def test_the_fixtures_and_shipped_files_use_the_ontology_layout() -> None:
    paths = sorted((DATA / "ontologies").rglob("*.jsonld")) + sorted((ROOT / "ontologies").rglob("*.jsonld"))
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert ontology_json(json.loads(text)) == text, path


NODE = {"@id": "biz:Mid", "@type": "owl:Class", "rdfs:label": "Mid", "rdfs:subClassOf": {"@id": "biz:A"}}


@pytest.mark.parametrize("indent", [2, 4])
def test_insert_node_keeps_every_other_byte_whatever_the_indent(indent) -> None:
    data = {"@context": {"biz": BIZ}, "@graph": [{"@id": "biz:A", "x": [1, 2]}, {"@id": "biz:Z"}]}
    text = json.dumps(data, indent=indent) + "\n"
    new = insert_node(text, NODE)
    assert json.loads(new)["@graph"] == [data["@graph"][0], NODE, data["@graph"][1]]
    start = text.index("{\n" + " " * indent * 3 + '"@id": "biz:Z"')
    assert new.startswith(text[:start]) and new.endswith(text[start:])
    last = insert_node(text, {**NODE, "@id": "biz:\u00e9"})  # sorts after biz:Z: appended, not escaped
    assert last.startswith(text[: graph_spans(text)[-1][1]]) and '"@id": "biz:\u00e9",' in last
    assert last.endswith('"rdfs:subClassOf": {"@id": "biz:A"}\n' + " " * indent * 2 + "}\n" + " " * indent + "]\n}\n")


def test_insert_node_rewrites_files_it_cannot_splice() -> None:
    data = {"@context": {"biz": BIZ}, "@graph": [{"@id": "biz:A"}]}
    assert insert_node(json.dumps(data), NODE) == ontology_json({**data, "@graph": [{"@id": "biz:A"}, NODE]})
    assert insert_node(json.dumps({**data, "@graph": []}), NODE) == ontology_json({**data, "@graph": [NODE]})


def test_graph_spans_find_each_node() -> None:
    text = '{"a": {"@graph": [1]}, "@graph" : [ {"@id": "x"} , [2, 3], "s" ], "z": 1}'
    assert [json.loads(text[s:e]) for s, e in graph_spans(text)] == [{"@id": "x"}, [2, 3], "s"]
    assert graph_spans("[]") is None and graph_spans('{"a": 1}') is None


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path) -> None:
    target = tmp_path / "sub" / "f.json"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two" and [p.name for p in target.parent.iterdir()] == ["f.json"]


#: Another process tries the lock once (exit code 3: held): on the directory itself, or on its lock file.
_PROBE = """import os, sys
from filelock import FileLock, Timeout, lock_descriptor
if sys.argv[2] == "directory":
    sys.exit(0 if lock_descriptor(os.open(sys.argv[1], os.O_RDONLY), blocking=False) else 3)
try:
    FileLock(os.path.join(sys.argv[1], ".lock"), timeout=0).acquire()
except Timeout:
    sys.exit(3)
"""


def _other_thread_gets(tmp_path: Path, way: str) -> bool:
    got: list[bool] = []

    def attempt() -> None:
        if way == "directory":
            fd = os.open(tmp_path, os.O_RDONLY)
            try:
                got.append(lock_descriptor(fd, blocking=False))
            finally:
                os.close(fd)
            return
        try:
            with FileLock(tmp_path / LOCK_FILE, timeout=0):
                got.append(True)
        except Timeout:
            got.append(False)

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return got == [True]


@pytest.mark.parametrize("way", ["directory", "lock file"])
def test_directory_lock_excludes_other_processes_and_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    """filelock's lock on the directory itself (POSIX: nothing is left behind) or on a hidden lock file in it (the
    way where a directory cannot be opened, Windows): while the block runs another process and another thread
    cannot take it, and both can once it is left."""
    monkeypatch.setattr(kg.memory.files, "LOCK_DIRECTORY_ITSELF", way == "directory")

    def other_process_gets() -> bool:
        return subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path), way], check=False).returncode == 0

    with directory_lock(tmp_path):
        assert not other_process_gets() and not _other_thread_gets(tmp_path, way)
    assert other_process_gets() and _other_thread_gets(tmp_path, way)
    assert [p.name for p in tmp_path.iterdir()] == ([] if way == "directory" else [LOCK_FILE])
