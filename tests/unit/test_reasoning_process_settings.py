"""Forward chaining and RDF parsing pause the garbage collector only when the owner of the process asks (issue 34):
a library call leaves its host's settings alone; ``mabos fact import`` and ``mabos infer forward`` opt in."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import kg
import kg.rdf.importer
import kg.rdf.parse
import reasoning.service
from cli.main import cli
from kg.models import Rule
from kg.rdf.parse import RdfDocument, parse_documents
from reasoning.rules import Triple, build_rule, forward_chain
from reasoning.service import Reasoner
from tests.cli_owner import cli_with_agent, spy_keyword


def _rule(name: str, conditions: list[tuple[str, str, str]], conclusion: tuple[str, str, str]) -> Rule:
    conds = [dict(zip(("subject", "predicate", "object"), c, strict=True)) for c in conditions]
    concl = dict(zip(("subject", "predicate", "object"), conclusion, strict=True))
    return build_rule({"name": name, "conditions": conds, "conclusion": concl})


RULES = [
    _rule("ancestor", [("?x", "parent", "?y")], ("?x", "ancestor", "?y")),
    _rule("ancestor_step", [("?x", "parent", "?y"), ("?y", "ancestor", "?z")], ("?x", "ancestor", "?z")),
]


def _observed_triples(seen: list[bool]) -> Iterator[Triple]:
    """A parent chain that notes whether the collector runs each time a triple is taken (inside the call)."""
    for i in range(5):
        seen.append(gc.isenabled())
        yield Triple(f"p{i}", "parent", f"p{i + 1}")


class _ObservedDocuments(list[RdfDocument]):
    """Documents that note whether the collector runs when the parser goes through them."""

    def __init__(self, documents: list[RdfDocument], seen: list[bool]) -> None:
        super().__init__(documents)
        self.seen = seen

    def __iter__(self) -> Iterator[RdfDocument]:
        self.seen.append(gc.isenabled())
        return super().__iter__()


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:  # pragma: no cover - pytest runs with the collector on
        gc.disable()


def test_forward_chaining_leaves_the_collector_alone_unless_asked(collector_on: None) -> None:
    seen: list[bool] = []
    result = forward_chain(_observed_triples(seen), RULES, max_iterations=10)
    assert len(result.derived) == 15 and result.fixpoint  # 5 + 4 + 3 + 2 + 1 ancestors
    assert seen == [True] * 5 and gc.isenabled()

    seen.clear()
    asked = forward_chain(_observed_triples(seen), RULES, max_iterations=10, tune_process=True)
    assert seen == [False] * 5 and gc.isenabled()  # paused while it ran, back on after
    assert [d.triple.key for d in asked.derived] == [d.triple.key for d in result.derived]


def test_forward_chaining_restores_the_collector_after_an_error(collector_on: None) -> None:
    def broken() -> Iterator[Triple]:
        yield Triple("a", "parent", "b")
        raise OSError("the source failed")

    with pytest.raises(OSError, match="source failed"):
        forward_chain(broken(), RULES, tune_process=True)
    assert gc.isenabled()


def test_rdf_parsing_leaves_the_collector_alone_unless_asked(collector_on: None) -> None:
    seen: list[bool] = []
    document = RdfDocument(name="d.nt", format="nt", content="<urn:a> <urn:b> <urn:c> .\n")
    assert parse_documents(_ObservedDocuments([document], seen)).triples == 1
    assert parse_documents(_ObservedDocuments([document], seen), tune_process=True).triples == 1
    assert seen == [True, False] and gc.isenabled()


def test_mabos_fact_import_asks_the_parser_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI owns its process: its import asks the parser for the pause (a spy records the call, which runs);
    an input over OVERLAP_CHARS (patched to 0) is parsed whole first."""
    runner = cli_with_agent(tmp_path, monkeypatch, "reader")
    monkeypatch.setattr(kg.rdf.importer, "OVERLAP_CHARS", 0)
    asked = spy_keyword(monkeypatch, kg.rdf.parse, "parse_documents", "tune_process")
    (tmp_path / "d.nt").write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    result = runner.invoke(cli, ["fact", "import", "--agent", "reader", str(tmp_path / "d.nt"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["created"] == 1
    assert asked == [True]


def test_mabos_fact_import_streams_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    """A small input is stored as it is parsed: the CLI's import reads it with the collector paused (the bulk
    assert's own pause, asked for by the CLI) and turns it back on after."""
    runner = cli_with_agent(tmp_path, monkeypatch, "reader")
    seen: list[bool] = []
    reading = kg.rdf.parse.TripleStream.__iter__

    def observed(stream: kg.rdf.parse.TripleStream) -> Iterator[tuple[str, str, str, str]]:
        seen.append(gc.isenabled())
        return reading(stream)

    monkeypatch.setattr(kg.rdf.parse.TripleStream, "__iter__", observed)
    (tmp_path / "d.nt").write_text("<urn:a> <urn:b> <urn:c> .\n", encoding="utf-8")
    result = runner.invoke(cli, ["fact", "import", "--agent", "reader", str(tmp_path / "d.nt"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["created"] == 1
    assert seen == [False] and gc.isenabled()


def test_mabos_infer_forward_opts_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's forward chaining asks for the pause; the same tool through the library does not."""
    runner = cli_with_agent(tmp_path, monkeypatch, "a")
    asked = spy_keyword(monkeypatch, reasoning.service, "forward_chain", "tune_process")  # the name it imported
    result = runner.invoke(cli, ["infer", "forward", "--agent", "a", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["fixpoint"] is True
    with kg.open_workspace(tmp_path / "ws") as ws:
        Reasoner.for_workspace(ws).forward("a")
    assert asked == [True, False]
