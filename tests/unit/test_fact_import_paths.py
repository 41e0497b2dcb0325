"""The import's triple path (``FactService.assert_triples``: rows built straight from the parsed triples) writes the
database the dict path (``assert_many`` of :func:`kg.rdf.importer.rows_to_facts`) writes: the same fact rows in the
same order, the same outbox events, history, lineage and full-text results, and the same errors.

Both paths take the same parsed rows (blank-node labels are random per parse) into two fresh workspaces on the
same frozen clock; uids are random, so rows are compared in insertion order with each uid replaced by its position.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import kg
from kg.errors import InputError
from kg.rdf import importer
from kg.rdf.importer import RdfDocument, rows_to_facts
from kg.rdf.parse import parse_documents
from kg.workspace import Workspace

LIMIT = 10_000  # the most rows one read-only query returns
UID = re.compile(r"F-[0-9A-Z]{26}")
LUBM = Path("/work/shared/data/lubm1/University0_0.owl")
TTL = """
@prefix ex: <http://example.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:acme a ex:Company ; ex:revenue "50000"^^xsd:integer ; ex:label "Acme Corp"@en ; ex:note "   " ;
    ex:owner [ ex:name "Ann" ] ; ex:rank "01"^^xsd:integer ; ex:text "\u00e9t\u00e9 \u2603" .
ex:Company <http://www.w3.org/2000/01/rdf-schema#subClassOf> ex:Organisation .
"""
_SEQ = "(SELECT seq FROM facts f WHERE f.uid = {})"
TABLES = {
    "facts": "SELECT * FROM facts ORDER BY seq",
    "outbox": "SELECT op, record_uid, agent_id, scope, payload, created_at, acked_at FROM outbox "
    "WHERE aggregate = 'fact' ORDER BY seq",
    "fact_history": f"SELECT * FROM fact_history ORDER BY {_SEQ.format('fact_history.uid')}, sys_from",
    "lineage": f"SELECT * FROM lineage ORDER BY {_SEQ.format('child_uid')}, position",
}


def _second(tmp_path: Path, clock: Any) -> Workspace:
    other = kg.init_workspace(tmp_path / "other", clock=clock)
    other.agents.add("a")
    other.agents.add("b")
    return other


def _rows(ws: Workspace, sql: str) -> list[list[Any]]:
    result = ws.read_sql(sql, limit=LIMIT)
    assert not result.truncated
    return result.rows


def _dump(ws: Workspace) -> dict[str, Any]:
    """Every table an import writes, fact uids replaced by their fact's position, and what a search finds."""
    uids = {row[0]: f"#{n}" for n, row in enumerate(_rows(ws, "SELECT uid FROM facts ORDER BY seq"))}

    def plain(value: Any) -> Any:
        return UID.sub(lambda m: uids.get(m.group(), m.group()), value) if isinstance(value, str) else value

    dump: dict[str, Any] = {
        name: [[plain(cell) for cell in row] for row in _rows(ws, sql)] for name, sql in TABLES.items()
    }
    found = ws.ports.facts.search("acme corp", scopes=["agent:a", "global"], limit=50)
    dump["search"] = [(f.subject, f.predicate, f.object, f.scope) for f in found]
    return dump


def _both(ws: Workspace, other: Workspace, rows: list[Any], *, scope: str | None = None, atomic: bool = False) -> None:
    """The triple path into ``ws`` (``atomic``: the rows as a stream, in one transaction), the dict path into
    ``other``."""
    ws.facts.assert_triples("a", iter(rows) if atomic else rows, scope=scope, source=importer.SOURCE,
                            batch_size=importer.IMPORT_BATCH, atomic_source=atomic)  # fmt: skip
    other.facts.assert_many("a", rows_to_facts(rows, scope), batch_size=importer.IMPORT_BATCH)


@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("batch", [3, 10_000])
def test_the_triple_path_writes_what_the_dict_path_writes(
    ws: Workspace, tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch, *, batch: int, atomic: bool
) -> None:
    monkeypatch.setattr(importer, "IMPORT_BATCH", batch)
    other = _second(tmp_path, clock)
    rows = parse_documents([RdfDocument(name="acme.ttl", format="turtle", content=TTL)]).rows
    _both(ws, other, rows, atomic=atomic)
    _both(ws, other, rows, atomic=atomic)  # again: every fact unchanged
    _both(ws, other, rows[:4], scope="global", atomic=atomic)
    first = _dump(ws)
    assert len(first["facts"]) == len(rows) + 4  # the agent's own scope once (then unchanged), 4 more in global
    assert first["search"] and first["outbox"]
    assert first == _dump(other)
    other.close()


@pytest.mark.parametrize("atomic", [False, True])
def test_a_bad_triple_is_refused_as_the_dict_path_refuses_it(
    ws: Workspace, tmp_path: Path, clock: Any, atomic: bool
) -> None:
    other = _second(tmp_path, clock)
    rows = [("http://ex.org/s", "http://ex.org/p", str(i), "@en") for i in range(5)]
    rows.insert(3, ("http://ex.org/" + "x" * 1100, "http://ex.org/p", "http://ex.org/o", ""))
    errors = []
    source = iter(rows) if atomic else rows
    for call in (lambda: ws.facts.assert_triples("a", source, source=importer.SOURCE, batch_size=2,
                                                 atomic_source=atomic),
                 lambda: other.facts.assert_many("a", rows_to_facts(rows, None), batch_size=2)):  # fmt: skip
        with pytest.raises(InputError) as refused:
            call()
        errors.append(str(refused.value))
    assert errors[0] == errors[1] and "facts[3].subject" in errors[0]
    assert _dump(ws) == _dump(other)  # the batch before it is committed in both
    other.close()


@pytest.mark.skipif(not LUBM.exists(), reason="LUBM(1) is not on this machine (/work/shared/data/lubm1)")
@pytest.mark.parametrize("atomic", [False, True])
def test_a_lubm_file_imports_to_the_same_database(ws: Workspace, tmp_path: Path, clock: Any, atomic: bool) -> None:
    other = _second(tmp_path, clock)
    document = RdfDocument(name=LUBM.name, format="xml", content=LUBM.read_text(), base_iri=LUBM.as_uri())
    rows = parse_documents([document]).rows
    _both(ws, other, rows, atomic=atomic)
    first = _dump(ws)
    assert len(first["facts"]) == len(rows) > 5_000
    assert json.dumps(first) == json.dumps(_dump(other))
    other.close()


@pytest.mark.skipif(not LUBM.exists(), reason="LUBM(1) is not on this machine (/work/shared/data/lubm1)")
def test_storing_while_parsing_writes_what_parsing_first_writes(
    ws: Workspace, tmp_path: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """import_documents stores a LUBM file as pyoxigraph reads it (one transaction) or, above OVERLAP_CHARS (patched
    to 0 for ``other``), parses it whole first and commits batch by batch: the same database and report counts."""
    monkeypatch.setattr(importer, "IMPORT_BATCH", 1_000)
    other = _second(tmp_path, clock)
    document = RdfDocument(name=LUBM.name, format="xml", content=LUBM.read_text(), base_iri=LUBM.as_uri())
    streamed = importer.import_documents(ws, "a", [document])
    monkeypatch.setattr(importer, "OVERLAP_CHARS", 0)
    parsed_first = importer.import_documents(other, "a", [document])
    counts = ("triples", "created", "updated", "unchanged", "skipped")
    assert [getattr(streamed, c) for c in counts] == [getattr(parsed_first, c) for c in counts]
    assert streamed.created > 5_000
    assert json.dumps(_dump(ws)) == json.dumps(_dump(other))
    other.close()
