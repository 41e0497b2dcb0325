"""kg.ontology.graphs keeps parsed ontology files for the process, keyed by path and content: a changed file is
read again, every caller gets a graph of its own, and the graph is the one a fresh parse gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from rdflib import RDFS, BNode, Graph, Literal, URIRef

from kg.ontology import graphs, memo
from kg.ontology.graphs import load_graph

ONTOLOGIES = Path(__file__).resolve().parents[2] / "ontologies"


def _copy(tmp_path: Path) -> list[Path]:
    paths = [tmp_path / name for name in ("mabos-core.jsonld", "sbvr-business.jsonld")]
    for path in paths:
        shutil.copyfile(ONTOLOGIES / path.name, path)
    return paths


def _named(graph: Graph) -> set[tuple[object, ...]]:
    """The triples without a blank node (a fresh parse labels its blank nodes afresh)."""
    return {t for t in graph if not any(isinstance(term, BNode) for term in t)}


def test_a_remembered_file_gives_the_graph_a_fresh_parse_gives(tmp_path: Path) -> None:
    paths = _copy(tmp_path)
    with memo.uncached():
        fresh = load_graph(paths)
    hits = graphs._PARSED.hits
    first, second = load_graph(paths), load_graph(paths)
    assert graphs._PARSED.hits >= hits + 2  # the second load parsed nothing
    assert len(first) == len(second) == len(fresh) > 1000
    assert set(first) == set(second) and _named(first) == _named(fresh) and len(_named(fresh)) > 1000
    assert dict(first.namespaces()) == dict(fresh.namespaces())
    first.remove((None, None, None))  # each caller's graph is its own
    assert len(load_graph(paths)) == len(fresh)


def test_a_changed_file_is_read_again_even_with_its_old_size_and_time(tmp_path: Path) -> None:
    [core, _] = _copy(tmp_path)
    load_graph([core])
    text = core.read_text(encoding="utf-8")
    label = '"Agent"'
    assert label in text
    stat = core.stat()
    core.write_text(text.replace(label, '"Agenz"', 1), encoding="utf-8")  # the same size
    os.utime(core, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and the same modification time
    assert core.stat().st_size == stat.st_size
    labels = {str(o) for o in load_graph([core]).objects(None, RDFS.label)}
    assert "Agenz" in labels and "Agent" not in labels


def test_the_same_text_under_another_path_is_parsed_for_that_path(tmp_path: Path) -> None:
    """Relative IRIs resolve against the file's own location, so the key holds the path as well as the text."""
    document = '{"@context": {"rdfs": "http://www.w3.org/2000/01/rdf-schema#"}, "@id": "thing", "rdfs:label": "x"}'
    one, two = tmp_path / "one" / "o.jsonld", tmp_path / "two" / "o.jsonld"
    for path in (one, two):
        path.parent.mkdir()
        path.write_text(document, encoding="utf-8")
    assert set(load_graph([one])) == {(URIRef((one.parent / "thing").as_uri()), RDFS.label, Literal("x"))}
    assert set(load_graph([two])) == {(URIRef((two.parent / "thing").as_uri()), RDFS.label, Literal("x"))}
