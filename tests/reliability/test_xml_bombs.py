"""Entity expansion and external entities in every XML mabos parses (issue 30).

pyoxigraph's RDF/XML parser (``mabos fact import``, the ``fact_import`` tool) and rdflib's (ontology files given
to ``reason owl-rl`` and ``ontology`` commands) both expand internal entities: a 983-byte document of ten entities
nested nine deep made ``mabos fact import lol.rdf`` ask for 3 GB and abort. pyoxigraph even reads a DOCTYPE that
stands inside the root element. Every XML document is now refused before a parser sees it when it holds a DOCTYPE
or an entity declaration anywhere (:func:`kg.limits.refuse_xml_dtd`), with one line naming the field; nothing is
written. JSON-LD that names a context by IRI is refused too: rdflib would fetch it (a ``file:`` IRI reads the
disk). The 983-byte bomb itself runs only in child processes under an address-space limit (the CLI here, an MCP
worker in test_worker_memory.py), so a regression fails the test instead of taking the machine; in this process
the bombs are 3 deep (3,000 characters when expanded: a refusal, not a size, is what is checked).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import kg
from cli.main import cli
from kg.errors import InputError
from kg.limits import refuse_xml_dtd
from kg.ontology.files import parse_jsonld
from kg.ontology.graphs import load_graph
from kg.rdf.importer import import_documents
from kg.rdf.parse import RdfDocument, parse_documents
from kg.workspace import Workspace
from reasoning.owl_ontology import parse_ontology_file as owl_parse
from reasoning.rules import parse_rules
from tests.conftest import snapshot_workspace

RDF = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/"'
REFUSED = "XML with a DTD or entity declarations is refused (entity expansion)"


def laughs(depth: int) -> str:
    """The billion-laughs document: ``depth + 1`` entities, each ten of the one before (depth 9: 983 bytes)."""
    entities = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, depth + 1)]
    return (
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{chr(10).join(entities)}\n]>\n<rdf:RDF {RDF}>'
        f'<rdf:Description rdf:about="http://example.org/s"><ex:p>&lol{depth};</ex:p></rdf:Description></rdf:RDF>'
    )


def body(inside: str) -> str:
    return f'<rdf:RDF {RDF}><rdf:Description rdf:about="http://example.org/s">{inside}</rdf:Description></rdf:RDF>'


HOSTILE = {
    "billion laughs, 3 deep": laughs(3),
    "a DTD inside the root element": body('<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]><ex:p>&a;&a;</ex:p>'),
    "an external entity": '<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
    + body("<ex:p>&x;</ex:p>"),
    "an external DTD": '<!DOCTYPE rdf:RDF SYSTEM "http://example.org/evil.dtd">' + body("<ex:p>x</ex:p>"),
    "a parameter entity": '<!DOCTYPE rdf:RDF [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>' + body(""),
    "lower case, spaced": "<! doctype rdf:RDF>" + body("<ex:p>x</ex:p>"),
}


@pytest.fixture(autouse=True)
def _no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")


@pytest.mark.parametrize("name", HOSTILE)
def test_rdf_xml_with_a_dtd_is_refused_before_parsing(name: str) -> None:
    document = RdfDocument(name="lol.rdf", format="xml", content=HOSTILE[name])
    with pytest.raises(InputError) as caught:
        parse_documents([RdfDocument(name="ok.ttl", format="turtle", content="<urn:a> <urn:b> <urn:c> ."), document])
    assert str(caught.value) == f"documents[1]: lol.rdf: {REFUSED}"


def test_the_import_tool_changes_nothing(workspace: Workspace) -> None:
    workspace.agents.add("a")
    before = snapshot_workspace(workspace)
    with pytest.raises(InputError, match="entity expansion"):
        import_documents(workspace, "a", [RdfDocument(name="lol.rdf", format="xml", content=laughs(3))])
    assert snapshot_workspace(workspace) == before


def test_xml_without_a_dtd_still_imports_even_with_markup_like_text() -> None:
    text = body("<ex:p>&lt;!DOCTYPE is text here &amp; &#60;!ENTITY too</ex:p>")
    parsed = parse_documents([RdfDocument(name="ok.rdf", format="xml", content=text)])
    assert [row[2] for row in parsed.rows] == ["<!DOCTYPE is text here & <!ENTITY too"]


def test_a_nul_character_is_refused() -> None:
    with pytest.raises(InputError, match=r"^d: x\.rdf: XML holding a NUL character"):
        refuse_xml_dtd(body("<ex:p>a\x00b</ex:p>"), "d", "x.rdf")


def _limited() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_mabos_fact_import_of_the_983_byte_bomb_ends_with_one_line(tmp_path: Path) -> None:
    bomb = tmp_path / "lol.rdf"
    bomb.write_text(laughs(9), encoding="utf-8")
    assert len(bomb.read_bytes()) < 1_000
    with kg.init_workspace(tmp_path / "ws") as ws:
        ws.agents.add("a")
    env = {**os.environ, "MABOS_EMBEDDER": "none"}
    command = [sys.executable, "-m", "cli", "--workspace", str(tmp_path / "ws"), "fact", "import", str(bomb),
               "--agent", "a"]  # fmt: skip
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, preexec_fn=_limited,
                          timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [f"error: documents[0]: lol.rdf: {REFUSED}"]


@pytest.mark.parametrize("name", ["billion laughs, 3 deep", "an external entity", "a DTD inside the root element"])
def test_rdflib_ontology_files_refuse_a_dtd(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bomb.owl"
    path.write_text(HOSTILE[name], encoding="utf-8")
    for load in (lambda: load_graph([path]), lambda: owl_parse(path)):
        with pytest.raises(InputError) as caught:
            load()
        assert str(caught.value) == f"ontology: {path}: {REFUSED}"


CONTEXTS = {
    "top level": {"@context": "file:///etc/hostname", "@id": "http://example.org/a"},
    "in a list": {"@context": [{"ex": "http://example.org/"}, "file:///etc/hostname"], "@id": "ex:a"},
    "in a nested node": {
        "@context": {"ex": "http://example.org/"},
        "@graph": [{"@context": "file:///etc/hostname", "@id": "ex:a"}],
    },
    "a scoped context": {
        "@context": {"ex": "http://example.org/", "p": {"@id": "ex:p", "@context": "file:///etc/hostname"}},
        "@id": "ex:a",
    },
    "an @import": {"@context": {"@version": 1.1, "@import": "file:///etc/hostname"}, "@id": "http://example.org/a"},
}


@pytest.mark.parametrize("name", CONTEXTS)
def test_json_ld_naming_a_context_by_iri_is_refused_by_every_rdflib_entry(tmp_path: Path, name: str) -> None:
    """rdflib fetches such a context (it read /etc/hostname before); every entry refuses it with one line."""
    path = tmp_path / "remote.jsonld"
    path.write_text(json.dumps(CONTEXTS[name]), encoding="utf-8")
    for load in (lambda: load_graph([path]), lambda: owl_parse(path)):
        with pytest.raises(InputError, match=r"^ontology: .*remote\.jsonld: (remote @context|@import)"):
            load()
    with pytest.raises(InputError, match=r"^document: JSON-LD: (remote @context|@import)"):
        parse_jsonld(json.dumps(CONTEXTS[name]))


def yaml_laughs(depth: int) -> str:
    """YAML's billion laughs: anchors of ten aliases of the anchor before (depth 8: 530 bytes, 10^9 nodes)."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, depth + 1)]
    return "\n".join(lines)


def test_yaml_aliases_that_expand_a_document_are_refused(tmp_path: Path) -> None:
    """A YAML rule document (the rule tools, ``rule create --file``) and ``reason run --inputs``: aliases that
    expand the document far past its size are refused in one line (a 485-byte one ran for minutes through
    validation before); the aliases ``yaml.safe_dump`` writes for shared objects still load; a recursive alias is
    refused."""
    rules = yaml_laughs(8) + "\nrules:\n- name: r\n  conditions: *a8\n"
    with pytest.raises(InputError, match=r"^document: not valid YAML: aliases expand the document past [\d,]+ values"):
        parse_rules(rules, "yaml")
    with pytest.raises(InputError, match=r"^document: not valid YAML: .*into itself"):
        parse_rules("- &r {name: r, conditions: [*r]}", "yaml")
    shared = [{"subject": "?x", "predicate": "p", "object": "o"}]
    dumped = yaml.safe_dump(
        [
            {"name": n, "conditions": shared, "conclusion": {"subject": "?x", "predicate": "q", "object": "r"}}
            for n in ("a", "b")
        ]
    )
    assert "*id001" in dumped and [r["name"] for r in parse_rules(dumped, "yaml")] == ["a", "b"]
    inputs = tmp_path / "inputs.yaml"
    inputs.write_text(yaml_laughs(8), encoding="utf-8")
    result = CliRunner().invoke(cli, ["--workspace", str(tmp_path / "ws"), "reason", "run", "--agent", "a",
                                      "--method", "deductive", "--inputs", str(inputs)])  # fmt: skip
    assert result.exit_code == 1 and result.stderr.strip().startswith("error: inputs: "), result.stderr
