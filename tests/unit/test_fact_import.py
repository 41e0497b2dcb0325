"""RDF import (mabos fact import / fact_import): triples become facts through the bulk path, with owl-rl's terms."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rdflib import URIRef

from cli.main import cli
from kg.errors import InputError, ScopeError
from kg.rdf import importer as fact_import
from kg.rdf.importer import RdfDocument, import_documents
from reasoning.owl import term_to_iri

TTL = """
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:acme a ex:Company ;
    ex:revenue "50000"^^xsd:integer ;
    ex:label "Acme Corp"@en ;
    ex:note "   " ;
    ex:owner [ ex:name "Ann" ] .
ex:Company <http://www.w3.org/2000/01/rdf-schema#subClassOf> ex:Organisation .
"""


def _doc(text: str = TTL, fmt: str = "turtle") -> RdfDocument:
    return RdfDocument(name="acme.ttl", format=fmt, content=text)  # type: ignore[arg-type]


def test_triples_become_facts_with_the_owl_rl_term_mapping(ws: Any) -> None:
    seen: list[tuple[int, int]] = []
    report = import_documents(ws, "a", [_doc()], progress=lambda done, total: seen.append((done, total)))
    assert (report.triples, report.created, report.skipped) == (7, 6, 1)  # the whitespace literal is skipped
    assert seen == [(7, 7)]
    facts = {(f.subject, f.predicate, f.object): f for f in ws.facts.query("a", limit=100)}
    acme, company = "http://example.org/acme", "http://example.org/Company"
    assert facts[(acme, "type", company)].object_kind.value == "entity"
    assert facts[(company, "subClassOf", "http://example.org/Organisation")].source == "rdf-import"
    assert facts[(acme, "http://example.org/revenue", "50000")].object_kind.value == "literal"
    assert (acme, "http://example.org/label", "Acme Corp") in facts
    owner = next(f for f in facts.values() if f.predicate == "http://example.org/owner")
    assert owner.object.startswith("_:")
    assert (owner.object, "http://example.org/name", "Ann") in facts
    # owl-rl reads the terms back as the same IRIs
    assert term_to_iri("type", predicate=True) == URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    assert term_to_iri(acme) == URIRef(acme)

    again = import_documents(ws, "a", [_doc()])
    assert (again.created, again.unchanged) == (2, 4)  # a blank node is new in each import (its two triples)


def _committed(ws: Any) -> int:
    """Facts committed in the workspace's store, read through a connection of its own."""
    with sqlite3.connect(ws._store.db.path) as other:
        return int(other.execute("SELECT COUNT(*) FROM facts").fetchone()[0])


@pytest.mark.parametrize(("overlap", "reports"), [(0, [(3, 7), (5, 7), (7, 7)]), (10_000, [(7, 7)])])
def test_progress_never_runs_ahead_of_what_is_committed(
    ws: Any, monkeypatch: pytest.MonkeyPatch, overlap: int, reports: list[tuple[int, int]]
) -> None:
    """Batches of 2 (the import's batch size patched down): each report is at most what another connection sees.
    Documents larger than OVERLAP_CHARS (patched to 0) are parsed first and committed batch by batch, with a
    report after each commit; smaller ones are stored as they are parsed, in one transaction: one report."""
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 2)
    monkeypatch.setattr(fact_import, "OVERLAP_CHARS", overlap)
    seen: list[tuple[int, int, int]] = []

    def report(done: int, total: int) -> None:
        seen.append((done, total, _committed(ws)))

    result = import_documents(ws, "a", [_doc()], progress=report)
    assert (result.created, result.skipped) == (6, 1)
    assert [(done, total) for done, total, _ in seen] == reports  # 6 facts + 1 skipped
    assert seen[-1][2] == 6
    assert all(done - 1 <= stored for done, _, stored in seen)  # never ahead (done counts the skipped triple)
    assert ws.facts.query("a", limit=100)[0].source == "rdf-import"


def test_formats_and_scope(ws: Any) -> None:
    nt = '<http://ex.org/a> <http://ex.org/b> "c" .\n'
    jsonld = json.dumps({"@id": "http://ex.org/a", "http://ex.org/d": {"@id": "http://ex.org/e"}})
    xml = (
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">'
        '<rdf:Description rdf:about="http://ex.org/a"><ex:f>g</ex:f></rdf:Description></rdf:RDF>'
    )
    docs = [_doc(nt, "nt"), _doc(jsonld, "json-ld"), _doc(xml, "xml")]
    report = import_documents(ws, "a", docs, scope="global")
    assert report.created == 3
    assert {f.scope for f in ws.facts.query("a", subject="http://ex.org/a")} == {"global"}


def test_refusals_change_nothing(ws: Any) -> None:
    with pytest.raises(InputError) as bad:
        import_documents(ws, "a", [_doc(), _doc("ex:a ex:b", "turtle")])
    assert bad.value.field == "documents[1]" and "acme.ttl is not valid turtle" in bad.value.rule
    with pytest.raises(ScopeError):
        import_documents(ws, "a", [_doc()], scope="agent:b")
    with pytest.raises(InputError) as long_term:
        import_documents(ws, "a", [_doc(f"<http://ex.org/{'x' * 1100}> <http://ex.org/p> <http://ex.org/o> .", "nt")])
    assert long_term.value.field == "facts[0].subject"
    assert ws.facts.query("a") == []


def _reader_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """A CLI runner on a fresh workspace with the agent ``reader``."""
    monkeypatch.setenv("MABOS_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    runner = CliRunner()
    assert runner.invoke(cli, ["init"]).exit_code == 0
    assert runner.invoke(cli, ["agent", "add", "reader"]).exit_code == 0
    return runner


def test_the_cli_imports_files_and_reports_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = _reader_cli(tmp_path, monkeypatch)
    (tmp_path / "acme.ttl").write_text(TTL)
    (tmp_path / "data.owl").write_text(
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">'
        '<rdf:Description rdf:about="#me"><ex:f>g</ex:f></rdf:Description></rdf:RDF>'
    )
    files = [str(tmp_path / "acme.ttl"), str(tmp_path / "data.owl")]
    result = runner.invoke(cli, ["fact", "import", "--agent", "reader", *files, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["created"] == 7
    relative = (tmp_path / "data.owl").resolve().as_uri() + "#me"  # relative IRIs resolve against the file
    assert runner.invoke(cli, ["fact", "query", "--agent", "reader", "--subject", relative]).exit_code == 0
    unknown = tmp_path / "x.foo"
    unknown.write_text("")
    refused = runner.invoke(cli, ["fact", "import", "--agent", "reader", str(unknown)])
    assert refused.exit_code == 1 and "unknown suffix" in refused.output


def test_a_bad_triple_is_numbered_across_batches_and_earlier_batches_stay(
    ws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 2)
    lines = [f"<http://ex.org/s{i}> <http://ex.org/p> <http://ex.org/o> ." for i in range(4)]
    lines.append(f"<http://ex.org/{'x' * 1100}> <http://ex.org/p> <http://ex.org/o> .")  # the 5th: batch 3
    with pytest.raises(InputError) as refused:
        import_documents(ws, "a", [_doc("\n".join(lines), "nt")])
    assert refused.value.field == "facts[4].subject"
    assert len(ws.facts.query("a", limit=100)) == 4  # the two batches before it were committed


def test_a_malformed_document_after_written_batches_leaves_nothing(ws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stored as they are parsed (batches of 2 written before the second document fails): the one transaction
    is rolled back, and a refused triple before the malformed document does not keep the batches before it."""
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 2)
    bad = _doc("ex:a ex:b", "turtle")
    with pytest.raises(InputError) as malformed:
        import_documents(ws, "a", [_doc(), bad])
    assert malformed.value.field == "documents[1]"
    long_subject = f"<http://ex.org/{'x' * 1100}> <http://ex.org/p> <http://ex.org/o> ."
    lines = [f"<http://ex.org/s{i}> <http://ex.org/p> <http://ex.org/o> ." for i in range(4)] + [long_subject]
    with pytest.raises(InputError) as first:
        import_documents(ws, "a", [_doc("\n".join(lines), "nt"), bad])
    assert first.value.field == "documents[1]"  # the document's error, as when every document was parsed first
    assert _committed(ws) == 0 and ws.facts.query("a") == []
    assert import_documents(ws, "a", [_doc()]).created == 6  # the write lock was let go


@pytest.mark.parametrize(("bad_at", "kept"), [(2, 0), (3, 0), (5, 4), (9, 8)])
def test_a_refusal_keeps_the_whole_batches_before_its_own(
    ws: Any, monkeypatch: pytest.MonkeyPatch, bad_at: int, kept: int
) -> None:
    """Batches of 4, streamed: the first batch is written in quarters (one triple each here), later ones whole; a
    refused triple keeps exactly the batches of 4 before its own, as when the document was parsed first."""
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 4)
    lines = [f"<http://ex.org/s{i}> <http://ex.org/p> <http://ex.org/o> ." for i in range(10)]
    lines[bad_at] = f"<http://ex.org/{'x' * 1100}> <http://ex.org/p> <http://ex.org/o> ."
    with pytest.raises(InputError) as refused:
        import_documents(ws, "a", [_doc("\n".join(lines), "nt")])
    assert refused.value.field == f"facts[{bad_at}].subject"
    assert _committed(ws) == kept
    assert sorted(f.subject for f in ws.facts.query("a", limit=100)) == sorted(
        f"http://ex.org/s{i}" for i in range(kept)
    )


TRIG = """
@prefix ex: <http://example.org/> .
ex:acme a ex:Company .
ex:g1 { ex:acme ex:revenue 50000 . ex:acme ex:label "Acme Corp"@en . }
ex:g2 { ex:acme a ex:Company . }
"""
EX, RDF_TYPE = "http://example.org/", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
NQUADS = f"""
<{EX}acme> {RDF_TYPE} <{EX}Company> .
<{EX}acme> <{EX}revenue> "50000"^^<http://www.w3.org/2001/XMLSchema#integer> <{EX}g1> .
<{EX}acme> <{EX}label> "Acme Corp"@en <{EX}g1> .
<{EX}acme> {RDF_TYPE} <{EX}Company> <{EX}g2> .
"""
SAME_AS_TURTLE = """
@prefix ex: <http://example.org/> .
ex:acme a ex:Company ; ex:revenue 50000 ; ex:label "Acme Corp"@en .
"""


def _facts(ws: Any, agent: str) -> set[tuple[str, str, str, str]]:
    return {(f.subject, f.predicate, f.object, f.object_kind.value) for f in ws.facts.query(agent, limit=100)}


@pytest.mark.parametrize(("fmt", "text"), [("trig", TRIG), ("nquads", NQUADS)])
def test_named_graph_formats_import_their_triples_without_the_graph_names(ws: Any, fmt: str, text: str) -> None:
    """TriG and N-Quads give the facts the same triples give in Turtle: graph names are dropped, a triple
    repeated in two graphs is one fact."""
    ws.agents.add("t")
    reference = import_documents(ws, "t", [_doc(SAME_AS_TURTLE)])
    report = import_documents(ws, "a", [_doc(text, fmt)])
    assert (report.triples, report.created) == (reference.triples, reference.created) == (3, 3)
    assert _facts(ws, "a") == _facts(ws, "t")
    assert not any("g1" in part or "g2" in part for fact in _facts(ws, "a") for part in fact)
    with pytest.raises(InputError) as bad:
        import_documents(ws, "a", [_doc(text.replace(" .", "", 1), fmt)])
    assert bad.value.field == "documents[0]" and f"is not valid {fmt}" in bad.value.rule
    assert len(_facts(ws, "a")) == 3  # the refused document changed nothing


def test_the_cli_reads_nq_and_trig_by_their_suffix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = _reader_cli(tmp_path, monkeypatch)
    (tmp_path / "data.trig").write_text(TRIG)
    (tmp_path / "data.nq").write_text(NQUADS)
    result = runner.invoke(cli, ["fact", "import", "--agent", "reader", str(tmp_path / "data.trig"),
                                 str(tmp_path / "data.nq"), "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["created"] == 3  # the two files hold the same three triples
    forced = runner.invoke(cli, ["fact", "import", "--agent", "reader", "--format", "nquads",
                                 str(tmp_path / "data.trig")])  # fmt: skip
    assert forced.exit_code == 1 and "data.trig is not valid nquads" in forced.output
