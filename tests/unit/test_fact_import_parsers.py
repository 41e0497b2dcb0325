"""pyoxigraph's parse + term mapping (kg/rdf/parse.py) gives the facts rdflib's parse gave.

The reference below is the import path before pyoxigraph: rdflib parses each document into a dataset (all of
its graphs) and every term goes through ``kg.rdf.terms.iri_to_term`` with the core prefixes; a literal is
rdflib's ``str`` of it. Both sides are compared as RDF graphs up to blank-node labels (rdflib's isomorphism),
with the counts of distinct and skipped triples, on every RDF file the repository ships and on documents built
to cover the mapping's corners (typed literals in rdflib's normal form, languages, blank nodes, lists, relative
IRIs, ``urn:mabos:``, JSON-LD values, RDF/XML's ``rdf:ID``/``nodeID``/``parseType``, N-Triples escapes).
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import cast
from urllib.parse import quote

import pytest
from rdflib import BNode, Dataset, Graph, URIRef
from rdflib import Literal as RdfLiteral
from rdflib.compare import isomorphic
from rdflib.term import Node

from kg.errors import InputError
from kg.rdf.parse import SUFFIX_FORMATS, RdfDocument, TripleStream, parse_documents
from kg.rdf.terms import CORE_PREFIXES, iri_to_term

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    path
    for folder in ("ontologies", "schema", "tests/data")
    for path in (ROOT / folder).rglob("*")
    if path.suffix in SUFFIX_FORMATS and path.suffix not in (".json", ".xml")  # .json/.xml: not RDF here
)
LUBM = Path("/work/shared/data/lubm1")  # the benchmark's data (not in the repository): checked when present

Row = tuple[str, str, str, str]

TURTLE = r"""
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@base <http://example.org/base/> .
<rel> ex:n "01"^^xsd:integer , "1"^^xsd:integer , "1"^^xsd:boolean , "1.0E0"^^xsd:double , "1.50"^^xsd:decimal ,
    "2020-01-01T00:00:00Z"^^xsd:dateTime , "abc"^^xsd:integer , " 5 "^^xsd:int , "   "^^xsd:integer , "" , "  "@en .
<urn:mabos:acme> a owl:Class ; rdfs:subClassOf <urn:mabos:Org%20Unit> ; owl:sameAs <urn:mabos:acme2> .
ex:a ex:list ( ex:b "c" ex:d ) ; ex:label "Caf\u00e9 \"q\"\nline"@fr-BE , "chat"@en , "chat"@EN , "chat" .
ex:a ex:blank [ ex:x [ ex:y "z" ] ] , _:n1 .
_:n1 ex:self _:n1 .
ex:a <http://www.w3.org/1999/02/22-rdf-syntax-ns#value> "v" ; ex:weird owl: , rdfs:Resource .
ex:a ex:custom "x"^^ex:myType ; ex:inverse ex:b .
ex:inverse owl:inverseOf ex:other ; rdfs:domain ex:A ; rdfs:range ex:B ; rdfs:subPropertyOf ex:p .
"""
RDF_XML = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"
         xml:base="http://example.org/xb/">
  <rdf:Description rdf:ID="me">
    <ex:n rdf:datatype="http://www.w3.org/2001/XMLSchema#integer">007</ex:n>
    <ex:label xml:lang="de">Hallo</ex:label>
    <ex:knows rdf:resource="you"/>
    <ex:knows rdf:nodeID="b1"/>
    <ex:has rdf:parseType="Resource"><ex:x>1</ex:x></ex:has>
    <ex:seq><rdf:Seq><rdf:li>a</rdf:li><rdf:li>b</rdf:li></rdf:Seq></ex:seq>
    <ex:empty></ex:empty>
  </rdf:Description>
  <rdf:Description rdf:nodeID="b1"><ex:name>B</ex:name></rdf:Description>
  <ex:Thing rdf:about="#t" ex:attr="v"/>
</rdf:RDF>
"""
JSON_LD = json.dumps(
    {
        "@context": {
            "ex": "http://example.org/",
            "xsd": "http://www.w3.org/2001/XMLSchema#",
            "n": {"@id": "ex:n", "@type": "xsd:integer"},
            "tags": {"@id": "ex:tag", "@container": "@list"},
            "lbl": {"@id": "ex:lbl", "@language": "en"},
        },
        "@id": "http://example.org/doc",
        "ex:title": "a named graph's name",
        "@graph": [
            {
                "@id": "rel",
                "@type": "ex:Kind",
                "n": "01",
                "ex:num": [1.5, 2, True, 1e30, 0.1],
                "tags": ["a", "b"],
                "lbl": "hi",
                "ex:b": {"ex:c": "d"},
                "ex:v": {"@value": "x", "@type": "ex:T"},
                "ex:e": "",
            },
            {"@id": "_:k", "ex:p": {"@id": "_:k"}},
        ],
    }
)
N_TRIPLES = (
    '<http://ex.org/a> <http://ex.org/b> "esc \\u00e9 \\t tab \\\\ back"@en-GB .\n'
    "<http://ex.org/a> <http://ex.org/b> _:x .\n"
    '_:x <http://ex.org/c> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
    '<http://ex.org/a> <http://ex.org/b> "esc \\u00e9 \\t tab \\\\ back"@en-GB .\n'  # a duplicate: merged
)
BUILT = {"edge.ttl": TURTLE, "edge.rdf": RDF_XML, "edge.jsonld": JSON_LD, "edge.nt": N_TRIPLES}


def _document(path: Path) -> RdfDocument:
    return RdfDocument(
        name=path.name,
        format=SUFFIX_FORMATS[path.suffix],
        content=path.read_text(encoding="utf-8"),
        base_iri=path.resolve().as_uri(),
    )


def _built(name: str, base: str = "file:///data/") -> RdfDocument:
    return RdfDocument(name=name, format=SUFFIX_FORMATS[Path(name).suffix], content=BUILT[name], base_iri=base + name)


def rdflib_facts(documents: Sequence[RdfDocument]) -> tuple[list[Row], int, int]:
    """The reference: (fact rows, skipped, distinct triples) as the rdflib import path produced them."""
    triples: set[tuple[Node, Node, Node]] = set()
    for document in documents:
        dataset = Dataset()
        with warnings.catch_warnings():  # rdflib's JSON-LD parser warns about its own ConjunctiveGraph use
            warnings.simplefilter("ignore")
            dataset.parse(data=document.content, format=document.format, publicID=document.base_iri)
        triples |= {(s, p, o) for s, p, o, _ in dataset.quads((None, None, None, None))}

    def term(node: Node, predicate: bool = False) -> str:
        if isinstance(node, BNode):
            return f"_:{node}"
        return str(iri_to_term(cast(URIRef, node), CORE_PREFIXES, predicate=predicate))

    rows, skipped = [], 0
    for s, p, o in triples:
        if isinstance(o, RdfLiteral):
            if not str(o).strip():
                skipped += 1
                continue
            rows.append((term(s), term(p, True), str(o), "literal"))
        else:
            rows.append((term(s), term(p, True), term(o), "entity"))
    return rows, skipped, len(triples)


def oxigraph_facts(documents: Sequence[RdfDocument]) -> tuple[list[Row], int, int]:
    """The same from :func:`kg.rdf.parse.parse_documents`."""
    parsed = parse_documents(documents)
    rows = [(s, p, o, "literal" if mark else "entity") for s, p, o, mark in parsed.rows]
    return rows, parsed.skipped, parsed.triples


def as_graph(rows: Sequence[Row]) -> Graph:
    """Fact rows as an RDF graph whose blank nodes are the ``_:`` terms, for an isomorphism check."""
    graph = Graph()

    def node(term: str) -> Node:
        return BNode(term[2:]) if term.startswith("_:") else URIRef("urn:term:" + quote(term, safe=""))

    for s, p, o, kind in rows:
        graph.add((node(s), node(p), RdfLiteral(o) if kind == "literal" else node(o)))
    return graph


def assert_same_facts(documents: Sequence[RdfDocument]) -> list[Row]:
    rows, skipped, triples = rdflib_facts(documents)
    ox_rows, ox_skipped, ox_triples = oxigraph_facts(documents)
    assert (ox_triples, ox_skipped) == (triples, skipped)
    # distinct triples can give one fact ("1"@en and "1"): both paths hand such a fact over twice
    assert (len(ox_rows), len(set(ox_rows))) == (len(rows), len(set(rows)))
    if any(term.startswith("_:") for row in rows for term in row[:3]):
        assert isomorphic(as_graph(ox_rows), as_graph(rows))
    else:
        assert sorted(ox_rows) == sorted(rows)
    return ox_rows


def test_the_shipped_rdf_files_are_found() -> None:
    names = {path.name for path in SHIPPED}
    assert {"mabos-core.jsonld", "ontology.ttl", "equality_and_keys.ttl"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(ROOT)) for p in SHIPPED])
def test_shipped_files_give_the_same_facts(path: Path) -> None:
    assert assert_same_facts([_document(path)])


@pytest.mark.parametrize("name", sorted(BUILT))
def test_the_mapping_corners_give_the_same_facts(name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.CRITICAL, logger="rdflib.term"):  # rdflib logs the ill-typed "abc"^^xsd:integer
        rows = assert_same_facts([_built(name)])
    facts = {(s, p, o) for s, p, o, _ in rows}
    if name == "edge.ttl":  # a few of the mapping's rules, spelled out
        rel = "http://example.org/base/rel"
        assert {(rel, "http://example.org/n", text) for text in ("1", "true", "1.0", "1.50", "abc", "5")} <= facts
        assert (rel, "http://example.org/n", "2020-01-01T00:00:00+00:00") in facts
        assert ("acme", "type", "owl:Class") in facts and ("acme", "subClassOf", "Org Unit") in facts
        assert ("http://example.org/a", "rdf:value", "v") in facts
        assert ("http://example.org/inverse", "inverseOf", "http://example.org/other") in facts
    if name == "edge.jsonld":  # the named graph's nodes are imported too, not only the top-level node
        assert ("file:///data/rel", "type", "http://example.org/Kind") in facts


def test_several_documents_merge_duplicates_and_keep_blank_nodes_apart(caplog: pytest.LogCaptureFixture) -> None:
    documents = [_built("edge.nt"), _built("edge.nt"), _built("edge.ttl")]
    with caplog.at_level(logging.CRITICAL, logger="rdflib.term"):
        rows = assert_same_facts(documents)
    blank_subjects = {s for s, p, _, _ in rows if p == "http://ex.org/c"}
    assert len(blank_subjects) == 2  # _:x of each copy of edge.nt is its own node


@pytest.mark.skipif(not LUBM.is_dir(), reason=f"LUBM(1) data not at {LUBM}")
def test_lubm_gives_the_same_facts() -> None:
    documents = [_document(LUBM / name) for name in ("univ-bench.owl", "University0_0.owl", "University0_1.owl")]
    assert len(assert_same_facts(documents)) > 10_000


def test_an_exhausted_stream_keeps_its_counts_and_releases_its_keys() -> None:
    """The thread that exhausts a stream frees its duplicate check's keys (the screening thread of a streamed
    import, while the writing thread still writes), and the counts stay what they were."""
    documents = [_built("edge.ttl"), _built("edge.ttl")]  # the second copy adds no triple (its blank nodes do)
    stream = TripleStream(documents)
    counts = []
    for _ in stream:
        counts.append((stream.rows, stream.skipped))
    parsed = parse_documents(documents)
    assert counts[-1] == (len(parsed.rows), parsed.skipped) == (stream.rows, stream.skipped)
    assert [rows for rows, _ in counts] == list(range(1, len(counts) + 1))
    assert stream.triples == parsed.triples and stream.skipped > 0
    assert not [value for value in vars(stream).values() if isinstance(value, set) and value]  # nothing kept


def test_plain_and_xsd_string_literals_are_one_triple() -> None:
    """pyoxigraph reads ``"a"`` and ``"a"^^xsd:string`` as the same literal (RDF 1.1); rdflib kept two triples
    that gave one fact, so the triple count can be lower than rdflib's by such pairs; the facts are the same."""
    text = '<http://ex.org/a> <http://ex.org/b> "x" , "x"^^<http://www.w3.org/2001/XMLSchema#string> .'
    document = RdfDocument(name="s.ttl", format="turtle", content=text)
    rows, _, triples = rdflib_facts([document])
    ox_rows, _, ox_triples = oxigraph_facts([document])
    assert (triples, ox_triples) == (2, 1)
    assert set(rows) == set(ox_rows) == {("http://ex.org/a", "http://ex.org/b", "x", "literal")}


@pytest.mark.parametrize(
    ("content", "fmt", "base", "field", "message"),
    [
        ("ex:a ex:b", "turtle", None, "documents[0]", "bad.x is not valid turtle: "),
        ("<a> <http://ex.org/b> <http://ex.org/c> .", "turtle", None, "documents[0]", "No scheme found"),
        ('{"@context": "http://schema.org/", "@id": "http://a", "name": "x"}', "json-ld", None, "documents[0]",
         "remote contexts"),
        ("<http://ex.org/a> <http://ex.org/b> <<( <http://ex.org/a> <http://ex.org/b> <http://ex.org/c> )>> .",
         "turtle", None, "documents[0]", "triple term"),
        ("<rdf:RDF", "xml", None, "documents[0]", "bad.x is not valid xml: "),
        ("<a> <http://ex.org/b> <http://ex.org/c> .", "turtle", "not an iri", "documents[0].base_iri",
         "must be an absolute IRI"),
    ],
)  # fmt: skip
def test_what_does_not_parse_is_refused_naming_the_document(
    content: str, fmt: str, base: str | None, field: str, message: str
) -> None:
    good = RdfDocument(name="good.nt", format="nt", content="<http://ex.org/a> <http://ex.org/b> <http://ex.org/c> .")
    bad = RdfDocument(name="bad.x", format=fmt, content=content, base_iri=base)  # type: ignore[arg-type]
    with pytest.raises(InputError) as refused:
        parse_documents([good, bad])
    assert refused.value.field == field.replace("[0]", "[1]")
    assert message in refused.value.rule
    assert "\n" not in refused.value.rule
