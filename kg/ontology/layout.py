"""The byte layout of mabos ontology files: plain JSON as mabos writes it, and splicing a node into the
``@graph`` array of a file's text so that every other byte stays as it was (:func:`insert_node`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def dump_json(data: Any) -> str:
    """Plain JSON as mabos writes it: two-space indent, keys in their order, UTF-8 text, final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render_node(node: Any, indent: str = "    ", unit: str = "  ") -> str:
    """A ``@graph`` node: one key per line (at ``indent + unit``), each value on its key's line."""
    if not isinstance(node, dict) or not node:
        return _inline(node)
    inner = ",\n".join(f"{indent}{unit}{_inline(key)}: {_inline(value)}" for key, value in node.items())
    return "{\n" + inner + "\n" + indent + "}"


def ontology_json(data: dict[str, Any], unit: str = "  ") -> str:
    """The layout of mabos ontology files: top-level keys and ``@context`` entries one per line, each
    ``@graph`` node as :func:`render_node`, everything else inline; UTF-8 text and a final newline."""
    lines = []
    for key, value in data.items():
        name = _inline(key)
        if key == "@graph" and isinstance(value, list) and value:
            nodes = ",\n".join(unit * 2 + render_node(node, unit * 2, unit) for node in value)
            lines.append(f"{unit}{name}: [\n{nodes}\n{unit}]")
        elif isinstance(value, dict) and value:
            lines.append(f"{unit}{name}: {render_node(value, unit, unit)}")
        else:
            lines.append(f"{unit}{name}: {_inline(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def graph_spans(text: str) -> list[tuple[int, int]] | None:
    """Start and end offsets of each element of the top-level ``@graph`` array (None if there is none).

    Walks the top-level object with :meth:`json.JSONDecoder.raw_decode`, one key and value at a time.
    """
    decoder = json.JSONDecoder()
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        return None
    i += 1
    while (i := _skip(text, i)) < len(text) and text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = _skip(text, _skip(text, i) + 1)  # past the colon
        if key == "@graph" and text[i : i + 1] == "[":
            return _array_spans(decoder, text, i + 1)
        _, i = decoder.raw_decode(text, i)
        i = _skip(text, i)
        i += text[i : i + 1] == ","
    return None


def _array_spans(decoder: json.JSONDecoder, text: str, i: int) -> list[tuple[int, int]]:
    spans = []
    while (i := _skip(text, i)) < len(text) and text[i] != "]":
        _, end = decoder.raw_decode(text, i)
        spans.append((i, end))
        i = _skip(text, end)
        i += text[i : i + 1] == ","
    return spans


def insertion_index(ids: Iterable[str], node_id: str) -> int:
    """Where a node goes: before the first node whose ``@id`` sorts after it, else at the end."""
    ids = list(ids)
    return next((i for i, other in enumerate(ids) if other > node_id), len(ids))


def insert_node(text: str, node: dict[str, Any]) -> str:
    """``text`` with ``node`` added to its ``@graph`` at :func:`insertion_index`, other bytes unchanged.

    The node is laid out by :func:`render_node` at its neighbours' indentation. A file whose nodes are not
    one per indented line (or with an empty ``@graph``) is rewritten whole by :func:`ontology_json` instead.
    """
    data = json.loads(text)
    graph = data["@graph"]
    index = insertion_index((str(n.get("@id", "")) if isinstance(n, dict) else "" for n in graph), node["@id"])
    spans = graph_spans(text)
    indent = _element_indent(text, spans)
    unit = indent[: len(indent) // 2] if len(indent) % 2 == 0 and indent == indent[:1] * len(indent) else ""
    if spans is None or not unit or len(spans) != len(graph):
        graph.insert(index, node)
        return ontology_json(data)
    rendered = render_node(node, indent, unit)
    if index < len(spans):
        at = spans[index][0]
        return text[:at] + rendered + ",\n" + indent + text[at:]
    at = spans[-1][1]
    return text[:at] + ",\n" + indent + rendered + text[at:]


def _element_indent(text: str, spans: list[tuple[int, int]] | None) -> str:
    """The whitespace before the first node on its line ("" when the nodes do not start lines)."""
    if not spans:
        return ""
    start = spans[0][0]
    line_start = text.rfind("\n", 0, start) + 1
    indent = text[line_start:start]
    return indent if line_start and not indent.strip() else ""


__all__ = ["dump_json", "graph_spans", "insert_node", "insertion_index", "ontology_json", "render_node"]
