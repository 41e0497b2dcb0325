"""kg.ontology.graphs keeps parsed ontology files for the process, keyed by content (and path, when the parse depends on
the file's location): a changed file is read again, every caller gets a graph of its own, and the graph is the one a
fresh parse gives."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
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


def test_the_shipped_files_in_another_folder_are_not_parsed_again(tmp_path: Path) -> None:
    """No IRI of the shipped files is relative: a new workspace's copies find the parse of the first folder's."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _copy(tmp_path / "a"), _copy(tmp_path / "b")
    load_graph(first)
    with memo.uncached():
        fresh = load_graph(second)
    misses = graphs._PARSED.misses
    found = load_graph(second)
    assert graphs._PARSED.misses == misses  # each file found at its first look: nothing parsed
    assert set(found) == set(fresh) and len(fresh) > 1000
    assert dict(found.namespaces()) == dict(fresh.namespaces())


#: Documents whose triples or prefixes depend on where the file is: each names the relative IRI ``x`` (as a subject,
#: a datatype, a prefix's namespace), which resolves to a file ``x`` beside the document.
RELATIVE = {
    "subject.ttl": '<x> <http://example.org/p> "v" .',
    "datatype.ttl": '<http://example.org/s> <http://example.org/p> "v"^^<x> .',
    "prefix.ttl": '@prefix ex: <x#> .\n<http://example.org/s> <http://example.org/p> "v" .',
}


@pytest.mark.parametrize("name", sorted(RELATIVE))
def test_a_relative_iri_resolves_against_each_files_own_location(tmp_path: Path, name: str) -> None:
    one, two = tmp_path / "one" / name, tmp_path / "two" / name
    for path in (one, two):
        path.parent.mkdir()
        path.write_text(RELATIVE[name], encoding="utf-8")
    for path in (one, two):
        graph = load_graph([path])
        with memo.uncached():
            fresh = load_graph([path])
        mentions = {str(term) for triple in graph for term in triple}
        mentions |= {str(term.datatype) for triple in graph for term in triple if isinstance(term, Literal)}
        mentions |= {str(namespace) for _, namespace in graph.namespaces()}
        own = (path.parent / "x").as_uri()
        assert any(iri.startswith(own) for iri in mentions), (path, mentions)
        assert set(graph) == set(fresh) and dict(graph.namespaces()) == dict(fresh.namespaces())


def test_two_files_with_the_same_blank_nodes_text_keep_nodes_of_their_own(tmp_path: Path) -> None:
    """Blank nodes are labelled per parse: the same text in two files gives two nodes, as two parses do."""
    document = '{"@context": {"ex": "http://example.org/"}, "@id": "ex:s", "ex:p": {"ex:q": "v"}}'
    paths = [tmp_path / "one.jsonld", tmp_path / "two.jsonld"]
    for path in paths:
        path.write_text(document, encoding="utf-8")
    load_graph(paths[:1])
    merged = load_graph(paths)
    with memo.uncached():
        fresh = load_graph(paths)
    assert len({o for o in merged.objects(URIRef("http://example.org/s"), URIRef("http://example.org/p"))}) == 2
    assert len(merged) == len(fresh) == 4
