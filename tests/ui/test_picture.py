"""``mabos graph render``: every format from a real workspace, each label escaped for its format (hostile labels
parsed back by an XML parser, a JSON parser and the DOT/Mermaid unescaping rules), scopes kept, nightly link."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from cli.main import cli
from cli.ui.graphview import GraphEdge, GraphNode, GraphView
from cli.ui.picture import dot_string, mermaid_label, render, script_json
from kg.workspace import open_workspace
from sync.nightly import render_markdown, run_nightly

if TYPE_CHECKING:
    from conftest import Built

HOSTILE = ['plain', 'quote " and \\ backslash', "</script><script>alert(1)</script>", "a & b < c > d", "line\nbreak",
           "#hash; #quot; ]) --> x", "ünïcödé ✓", "{{ braces }}"]  # fmt: skip


def _view() -> GraphView:
    nodes = [GraphNode(id=f"entity:{text}", kind="entity", label=text) for text in HOSTILE]
    edges = [GraphEdge(id=f"F-{i}", source=nodes[i].id, target=nodes[i + 1].id, kind="fact", label=HOSTILE[-1 - i])
             for i in range(len(nodes) - 1)]  # fmt: skip
    return GraphView(agent_id="a", nodes=nodes, edges=edges, kinds=["entity"], limit=150)


def _undot(quoted: str) -> str:
    assert quoted.startswith('"') and quoted.endswith('"')
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), quoted[1:-1])


@pytest.mark.parametrize("text", HOSTILE)
def test_dot_strings_round_trip(text: str) -> None:
    quoted = dot_string(text)
    assert re.fullmatch(r'"(?:[^"\\\n]|\\.)*"', quoted), quoted  # one string token, nothing leaks out
    assert _undot(quoted) == text.replace("\r", "")


@pytest.mark.parametrize("text", HOSTILE)
def test_mermaid_labels_round_trip(text: str) -> None:
    label = mermaid_label(text)
    assert label.count('"') == 2 and "\n" not in label and "<" not in label
    body = label[1:-1].replace("#quot;", '"').replace("#lt;", "<").replace("#gt;", ">").replace("#35;", "#")
    assert body == " ".join(text.split())


def test_svg_is_valid_xml_and_keeps_every_label() -> None:
    root = ET.fromstring(render(_view(), "svg"))  # noqa: S314 - our own output
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for text in HOSTILE:
        assert any(t.startswith(text[:20]) or text[:20] in t for t in texts), text
    assert len(root.findall("{http://www.w3.org/2000/svg}g")) == len(HOSTILE)


def test_html_embeds_the_library_and_data_that_cannot_close_its_script() -> None:
    html = render(_view(), "html")
    assert html.count("</script>") == 3  # the data block, the library, the drawing code: nothing from a label
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', html, re.S)
    assert data is not None
    assert [n["label"] for n in json.loads(data.group(1))["nodes"]] == HOSTILE
    assert "cytoscape" in html and "http://" not in html.split("<script>", 1)[0]
    assert json.loads(script_json({"x": "</script>&"})) == {"x": "</script>&"}


@pytest.mark.parametrize(("fmt", "ext"), [("html", "html"), ("svg", "svg"), ("dot", "dot"), ("mermaid", "mmd")])
def test_render_command_writes_what_the_agent_sees(built: Built, fmt: str, ext: str) -> None:
    result = CliRunner().invoke(cli, ["graph", "render", "--workspace", str(built.path), "--agent", "a",
                                      "--format", fmt, "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    path = built.path / ".mabos" / "reports" / f"graph-a.{ext}"
    assert summary["path"] == str(path) and summary["nodes"] == 10 and summary["capped"] is False
    text = path.read_text(encoding="utf-8")
    assert "Win the Acme renewal" in text and "saas" in text
    assert "secretcorp" not in text and "Bobs hidden" not in text


def test_render_to_stdout_and_bad_input(built: Built) -> None:
    runner = CliRunner()
    printed = runner.invoke(cli, ["graph", "render", "--workspace", str(built.path), "--agent", "b", "--format",
                                  "mermaid", "--out", "-"])  # fmt: skip
    assert printed.exit_code == 0 and printed.stdout.startswith("flowchart LR") and "secretcorp" in printed.stdout
    bad = runner.invoke(cli, ["graph", "render", "--workspace", str(built.path), "--agent", "a", "--types", "x"])
    assert bad.exit_code == 1 and bad.stderr.startswith("error: types: unknown node type 'x'")
    assert not (built.path / ".mabos" / "reports" / "graph-a.html").exists()


def test_the_nightly_report_links_the_pictures(built: Built) -> None:
    assert CliRunner().invoke(cli, ["graph", "render", "--workspace", str(built.path), "--agent", "a"]).exit_code == 0
    with open_workspace(built.path) as ws:
        skip = [
            "consolidate",
            "hierarchy",
            "bdi-cycle",
            "infer",
            "materialize",
            "vector-index",
            "markdown-index",
            "schema",
            "push",
        ]
        report = run_nightly(ws, ["a"], skip=skip)
    markdown = render_markdown(report)
    assert "Graph pictures: [graph-a.html](graph-a.html)" in markdown
