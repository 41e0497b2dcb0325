"""Which thread frees what in a streamed import: the screening thread frees each written batch
(:func:`kg.facts_fast.drop_batch`) and the stream's duplicate-check keys (:class:`kg.rdf.parse.TripleStream`), so
what the writing thread does between its batches and after the last one is SQLite's work
(docs/decisions/2026-11-29-lubm-import-speed.md, "Fifth pass")."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import kg.facts_fast
import kg.rdf.parse
from kg.ports.facts import PreparedFacts
from kg.rdf import importer as fact_import
from kg.rdf.importer import RdfDocument, import_documents


def _triples(count: int) -> RdfDocument:
    lines = [f"<http://ex.org/s{i}> <http://ex.org/p> <http://ex.org/o{i}> ." for i in range(count)]
    return RdfDocument(name="many.nt", format="nt", content="\n".join(lines))


def test_written_batches_are_freed_by_the_screening_thread(ws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 4)  # the first batch in quarters of one, then 4, 4 and 2
    freed: list[tuple[str, int]] = []
    drop = kg.facts_fast.drop_batch

    def recording(spent: list[Any]) -> None:
        prepared = spent[1]
        assert isinstance(prepared, PreparedFacts)
        freed.append((threading.current_thread().name, len(prepared.facts)))
        drop(spent)
        assert spent == [] and len(prepared.facts) == 0

    monkeypatch.setattr(kg.facts_fast, "drop_batch", recording)
    report = import_documents(ws, "a", [_triples(14)])
    assert report.created == 14
    objects = {fact.object for fact in ws.facts.query("a", limit=100)}
    assert objects == {f"http://ex.org/o{i}" for i in range(14)}
    # every written batch but the last one or two (which the pool's shutdown may cancel and the writing thread then
    # frees) went to the screening thread, in order
    assert 5 <= len(freed) <= 7
    assert [size for _, size in freed] == [1, 1, 1, 1, 4, 4, 2][: len(freed)]
    assert {name.rsplit("_", 1)[0] for name, _ in freed} == {"mabos-facts-screen"}


def test_the_stream_is_released_before_the_writing_ends(ws: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys go when the screening thread reads past the last triple, while batches are still being written."""
    monkeypatch.setattr(fact_import, "IMPORT_BATCH", 4)
    release = kg.rdf.parse._release
    released: list[str] = []
    writes: list[str] = []
    write = type(ws.ports.facts).assert_prepared

    def releasing(values: set[Any]) -> None:
        if values:
            released.append(threading.current_thread().name)
        release(values)

    def writing(store: Any, prepared: PreparedFacts) -> Any:
        writes.append("after release" if released else "before release")
        return write(store, prepared)

    monkeypatch.setattr(kg.rdf.parse, "_release", releasing)
    monkeypatch.setattr(type(ws.ports.facts), "assert_prepared", writing)
    assert import_documents(ws, "a", [_triples(14)]).created == 14
    assert [name.rsplit("_", 1)[0] for name in released] == ["mabos-facts-screen"]
    assert writes[0] == "before release" and writes[-1] == "after release"  # the last batch is written after it
