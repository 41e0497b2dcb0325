"""Static pictures of an agent's graph (``mabos graph render``): self-contained HTML, SVG, Graphviz DOT, Mermaid.

Every writer takes the :class:`~cli.ui.graphview.GraphView` the console draws, so a picture shows exactly what
the agent may see, capped the same way. Nothing is fetched when a picture is opened: the HTML embeds
cytoscape.js (and its licence notice) and the data; the SVG is laid out here (one column per node type) and
needs no Graphviz. Every label is escaped for its format (DOT strings, Mermaid quoted labels, XML, a JSON
script block that cannot close its ``<script>``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from cli.ui.context import Console
from cli.ui.graphview import KINDS, GraphView, build_view, parse_kinds
from kg.errors import InputError
from kg.memory.files import atomic_write
from kg.workspace import STATE_DIR, Workspace
from sync.nightly import REPORTS_DIR

STATIC = Path(__file__).with_name("static")
FORMATS = ("html", "svg", "dot", "mermaid")
COLORS = {"belief": "#3b82f6", "desire": "#ec4899", "goal": "#16a34a", "intention": "#f97316", "plan": "#8b5cf6",
          "plan_step": "#a78bfa", "entity": "#0ea5e9", "literal": "#9ca3af", "memory": "#eab308"}  # fmt: skip
OTHER = "#6b7280"


def _title(view: GraphView) -> str:
    parts = [f"{view.shown.get(k, 0)} of {n} {'BDI nodes' if k == 'bdi' else k}" for k, n in view.total.items()]
    return f"mabos graph of {view.agent_id}: " + (", ".join(parts) or "empty")


# ------------------------------------------------------------------------------------------------ DOT


def dot_string(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as ``\\n``."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{body}"'


def to_dot(view: GraphView) -> str:
    """Graphviz DOT (``dot -Tsvg``), node types as fill colours, edges labelled."""
    lines = ["digraph mabos {", f"  label={dot_string(_title(view))};", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, fontcolor=white];',
             '  edge [fontname="Helvetica", fontsize=8, color="#94a3b8"];']  # fmt: skip
    for node in view.nodes:
        color = COLORS.get(node.kind, OTHER)
        lines.append(f"  {dot_string(node.id)} [label={dot_string(node.label)}, fillcolor={dot_string(color)}];")
    for edge in view.edges:
        lines.append(f"  {dot_string(edge.source)} -> {dot_string(edge.target)} [label={dot_string(edge.label)}];")
    return "\n".join([*lines, "}"]) + "\n"


# ------------------------------------------------------------------------------------------------ Mermaid


def mermaid_label(text: str) -> str:
    """A Mermaid quoted label: quotes and angle brackets as entity codes, one line."""
    body = " ".join(text.split()).replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")
    return f'"{body}"'


def to_mermaid(view: GraphView) -> str:
    """A Mermaid flowchart (renders in GitHub Markdown): node ids renumbered ``n0..``, one class per type."""
    ids = {node.id: f"n{i}" for i, node in enumerate(view.nodes)}
    lines = ["flowchart LR", f"  %% {' '.join(_title(view).split())}"]
    lines += [f"  {ids[node.id]}[{mermaid_label(node.label)}]" for node in view.nodes]
    lines += [f"  {ids[e.source]} -->|{mermaid_label(e.label)}| {ids[e.target]}" for e in view.edges
              if e.source in ids and e.target in ids]  # fmt: skip
    for kind in KINDS:
        members = [ids[n.id] for n in view.nodes if n.kind == kind]
        if members:
            lines.append(f"  classDef {kind} fill:{COLORS[kind]},color:#fff,stroke:#334155")
            lines.append(f"  class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ SVG

COLUMN, ROW, PER_COLUMN, BOX_W, BOX_H, MARGIN = 230, 34, 28, 190, 24, 40


def layout(view: GraphView) -> dict[str, tuple[float, float]]:
    """Positions (box centres): one column per node type in a fixed order, long types wrapped into more columns."""
    positions: dict[str, tuple[float, float]] = {}
    column = 0
    for kind in [*KINDS, *sorted({n.kind for n in view.nodes} - set(KINDS))]:
        members = [n for n in view.nodes if n.kind == kind]
        for start in range(0, len(members), PER_COLUMN):
            for row, node in enumerate(members[start : start + PER_COLUMN]):
                positions[node.id] = (MARGIN + column * COLUMN + BOX_W / 2, MARGIN + 30 + row * ROW + BOX_H / 2)
            column += 1
    return positions


def _clip(text: str, width: int = 30) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def to_svg(view: GraphView) -> str:
    """An SVG picture laid out by :func:`layout`, with a title line; valid XML whatever the labels hold."""
    where = layout(view)
    width = max([x for x, _ in where.values()], default=0) + BOX_W / 2 + MARGIN
    height = max([y for _, y in where.values()], default=0) + BOX_H / 2 + MARGIN
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(width, 400):.0f}" height="{max(height, 120):.0f}" '
           'font-family="Helvetica, Arial, sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#94a3b8"/></marker></defs>',
           f'<text x="{MARGIN}" y="{MARGIN}" font-size="14" font-weight="bold">'
           f"{escape(_title(view))}</text>"]  # fmt: skip
    for edge in view.edges:
        if edge.source not in where or edge.target not in where:
            continue
        (x1, y1), (x2, y2) = where[edge.source], where[edge.target]
        out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#cbd5e1" '
                   'marker-end="url(#arrow)"/>')  # fmt: skip
        out.append(f'<text x="{(x1 + x2) / 2:.0f}" y="{(y1 + y2) / 2 - 3:.0f}" font-size="8" fill="#475569" '
                   f'text-anchor="middle">{escape(_clip(edge.label, 24))}</text>')  # fmt: skip
    for node in view.nodes:
        x, y = where[node.id]
        color = COLORS.get(node.kind, OTHER)
        out.append(f"<g><title>{escape(node.kind)}: {escape(node.id)}</title>"
                   f'<rect x="{x - BOX_W / 2:.0f}" y="{y - BOX_H / 2:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
                   f"fill={quoteattr(color)}/>"
                   f'<text x="{x:.0f}" y="{y + 4:.0f}" font-size="10" fill="#fff" text-anchor="middle">'
                   f"{escape(_clip(node.label))}</text></g>")  # fmt: skip
    return "\n".join([*out, "</svg>"]) + "\n"


# ------------------------------------------------------------------------------------------------ HTML


def script_json(data: object) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` as ``\\u`` escapes (``</script>`` cannot appear)."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def to_html(view: GraphView) -> str:
    """One HTML file: cytoscape.js (with its licence notice), the data and a few lines that draw it."""
    library = (STATIC / "cytoscape.min.js").read_text(encoding="utf-8")
    data = {"nodes": [n.model_dump() for n in view.nodes], "edges": [e.model_dump() for e in view.edges],
            "colors": COLORS, "title": _title(view)}  # fmt: skip
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(_title(view))}</title>
<style>body{{margin:0;font:14px Helvetica,Arial,sans-serif}}h1{{font-size:15px;margin:8px 12px}}
#cy{{position:absolute;top:38px;bottom:0;left:0;right:0}}</style></head>
<body><h1>{escape(_title(view))}</h1><div id="cy"></div>
<script type="application/json" id="graph-data">{script_json(data)}</script>
<script>/* cytoscape.js, MIT licence: see cli/ui/static/cytoscape.LICENSE in mabos */
{library}</script>
<script>
const data = JSON.parse(document.getElementById("graph-data").textContent);
const elements = data.nodes.map(n => ({{group: "nodes", data: n}})).concat(
  data.edges.map(e => ({{group: "edges", data: {{...e, id: "e:" + e.id}}}})));
cytoscape({{container: document.getElementById("cy"), elements: elements, layout: {{name: "cose", animate: false}},
  style: [{{selector: "node", style: {{"label": "data(label)", "font-size": 9, "width": 16, "height": 16,
    "background-color": n => data.colors[n.data("kind")] || "{OTHER}"}}}},
    {{selector: "edge", style: {{"label": "data(label)", "font-size": 7, "curve-style": "bezier",
    "target-arrow-shape": "triangle", "width": 1, "line-color": "#cbd5e1", "target-arrow-color": "#cbd5e1"}}}}]}});
</script></body></html>
"""


def write_picture(workspace: Workspace, agent: str, *, fmt: str, out: str | None, types: str | None,
                  limit: int) -> tuple[Path | None, str, GraphView]:  # fmt: skip
    """Render what ``agent`` sees of the graph; write it to ``out`` (default: the reports folder, where the nightly
    report links it), or return it only for ``out == "-"``. Returns (file or None, picture, view)."""
    if fmt not in FORMATS:
        raise InputError("format", f"must be one of {', '.join(FORMATS)}, got {fmt[:20]!r}")
    console = Console(workspace.path, workspace=workspace)
    workspace.scopes.require_agent(agent)
    view = build_view(console, agent, kinds=parse_kinds(types), scope=None, limit=limit)
    text = render(view, fmt)
    if out == "-":
        return None, text, view
    target = Path(out) if out else workspace.path / STATE_DIR / REPORTS_DIR / f"graph-{agent}.{EXTENSIONS[fmt]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, text.encode("utf-8"))
    return target, text, view


WRITERS: dict[str, Callable[[GraphView], str]] = {"html": to_html, "svg": to_svg, "dot": to_dot,
                                                  "mermaid": to_mermaid}  # fmt: skip
EXTENSIONS = {"html": "html", "svg": "svg", "dot": "dot", "mermaid": "mmd"}


def render(view: GraphView, fmt: str) -> str:
    """The picture of ``view`` in format ``fmt`` (html, svg, dot or mermaid)."""
    return WRITERS[fmt](view)


__all__ = ["EXTENSIONS", "FORMATS", "dot_string", "layout", "mermaid_label", "render", "script_json", "to_dot",
           "to_html", "to_mermaid", "to_svg", "write_picture"]  # fmt: skip
