"""Bounds on what mabos reads from outside: every file, standard input, tool argument and XML document.

One place for the caps (docs/security.md, "Bounds") and the helpers that hold them:

* :func:`read_bounded` / :func:`read_text_bounded` read a file, ``-`` (standard input) or a binary stream in
  chunks of :data:`CHUNK` bytes and stop at ``cap + 1`` bytes: ``/dev/zero`` costs at most the cap, never the
  machine. Past the cap it is an :class:`~kg.errors.InputError` naming the field and the cap.
* :func:`jsonl_lines` splits JSONL on ``"\\n"`` only (JSON text may hold U+2028, U+0085 ... unescaped, which
  :meth:`str.splitlines` would split on) and caps each line at :data:`MAX_JSONL_LINE` characters;
  :func:`load_json` turns JSON nested past Python's recursion limit into an InputError; :func:`load_yaml` is
  ``yaml.safe_load`` that refuses aliases expanding a document far past its size (YAML's billion laughs).
  Writers of line formats (Markdown, JSONL) keep :data:`LINE_BREAKS` out of a line (:func:`one_line`,
  :func:`json_line`) and readers split with :func:`split_lines`: what one writes, the other reads back as written.
* :func:`refuse_xml_dtd` refuses any XML document with a DOCTYPE or an entity declaration before a parser sees
  it: pyoxigraph's RDF/XML parser and rdflib's both expand internal entities (ten entities nested nine deep ask
  for gigabytes), and neither has a switch to stop it. :func:`refuse_remote_context` refuses JSON-LD that names
  a context by IRI: rdflib would fetch it (a ``file:`` IRI reads the local disk).
* :func:`refuse_deep_nesting` refuses XML and JSON nested past :data:`MAX_NESTING` levels before pyoxigraph
  sees them: its RDF/XML parser takes time that grows with the square of the depth (a 3.6 MB document nested
  100,000 deep: 137 s) and its JSON-LD parser memory faster still (3,000 deep, 90 KB: 1.9 GB; 10,000: it aborts).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain, repeat
from pathlib import Path
from typing import Any, BinaryIO

from kg.errors import InputError

#: Any one document read from a file, standard input or a tool argument (RDF, rules, JSONL, inputs): 100 MB.
MAX_DOCUMENT_BYTES = 100_000_000
#: YAML aliases may expand a document to at most this many values a character of its text, plus YAML_FLOOR.
YAML_EXPANSION = 10
YAML_FLOOR = 10_000
#: One line of a JSONL document (a message's content is at most 1,000,000 characters; escaped, up to 6 times that).
MAX_JSONL_LINE = 8_000_000
#: Bytes read at a time by :func:`read_bounded`.
CHUNK = 1 << 20


def read_bounded(source: str | Path | BinaryIO, field: str, cap: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The bytes of ``source`` (a path, ``"-"`` for standard input, or an open binary stream), at most ``cap``.

    Raises:
        InputError: naming ``field``: the source cannot be read, or it holds more than ``cap`` bytes (reading
            stops at ``cap + 1``).
    """
    if isinstance(source, str | Path):
        if str(source) == "-":
            return _read_stream(sys.stdin.buffer, field, "standard input", cap)
        try:
            with open(source, "rb") as stream:
                return _read_stream(stream, field, str(source), cap)
        except OSError as exc:
            raise InputError(field, f"cannot read {source}: {exc.strerror or exc}") from None
    return _read_stream(source, field, getattr(source, "name", "the stream"), cap)


def _read_stream(stream: BinaryIO, field: str, name: str, cap: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while size <= cap:
        chunk = stream.read(min(CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
    raise InputError(field, f"{name} is larger than the cap of {cap:,} bytes")


def read_text_bounded(source: str | Path | BinaryIO, field: str, cap: int = MAX_DOCUMENT_BYTES) -> str:
    """:func:`read_bounded` decoded as UTF-8 (a leading byte-order mark kept); undecodable bytes name ``field``."""
    raw = read_bounded(source, field, cap)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(field, f"is not UTF-8 text (byte {exc.start}: {exc.reason})") from None


def jsonl_lines(text: str, max_line: int = MAX_JSONL_LINE) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each non-blank line of JSONL text, split on ``"\\n"`` only (a ``"\\r"`` before
    it is dropped), so a U+2028 or U+0085 inside a JSON string stays in its line.

    Raises:
        InputError: ``line <n>`` for a line longer than ``max_line`` characters.
    """
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) > max_line:
            raise InputError(f"line {number}", f"longer than the cap of {max_line:,} characters")
        if line.strip():
            yield number, line.removesuffix("\r")


#: Every character :meth:`str.splitlines` ends a line at, but ``"\n"``: a writer of a line format never lets one
#: stand in a line, and a reader splits on ``"\n"`` only (:func:`split_lines`), so both agree where lines end.
LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK_SPACES = str.maketrans(dict.fromkeys(LINE_BREAKS, " "))
_JSON_ESCAPES = str.maketrans({ch: f"\\u{ord(ch):04x}" for ch in "\x85\u2028\u2029"})  # json.dumps escapes the rest


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as a writer that joins on ``"\\n"`` made them (a ``"\\r"`` before it is dropped)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def one_line(text: str) -> str:
    """``text`` with every :data:`LINE_BREAKS` character and ``"\\n"`` made a space: safe inside one line."""
    return text.replace("\n", " ").translate(_BREAK_SPACES)


def json_line(data: Any) -> str:
    """``data`` as JSON on one line that no line reader splits: ``json.dumps`` escapes the control characters,
    this also U+0085, U+2028 and U+2029 (which JSON allows raw); ``json.loads`` reads it back as it was."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


def load_json(text: str, field: str) -> Any:
    """``json.loads(text)``; text that is not JSON (the error names the line when the text has several), or nested
    too deep for the parser, is an InputError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f" at line {exc.lineno}" if "\n" in text else ""
        raise InputError(field, f"not valid JSON: {exc.msg}{line}") from None
    except RecursionError:
        raise InputError(field, "JSON nested too deep") from None


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, refused when its aliases expand it past :data:`YAML_EXPANSION` values a character
    (plus :data:`YAML_FLOOR`) or make it recursive.

    Aliases themselves are fine (``yaml.safe_dump`` writes one for each shared object); YAML's billion laughs is
    not: a 530-byte document of anchors nested eight deep, ten aliases each, loads as shared lists in microseconds
    and is a billion values to whatever walks it (validation, JSON). The expanded size is counted once per
    distinct object, so the check is linear in the document.

    Raises:
        yaml.YAMLError: as for any YAML the document's reader reports (with a line when PyYAML gives one).
    """
    import yaml  # noqa: PLC0415 - only the commands that read YAML pay for PyYAML

    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise yaml.YAMLError("YAML nested too deep") from None
    limit = YAML_FLOOR + YAML_EXPANSION * len(text)
    if _expanded_size(data, limit) > limit:
        raise yaml.YAMLError(
            f"aliases expand the document past {limit:,} values, or into itself (YAML's billion laughs): "
            "write the values out"
        )
    return data


def _expanded_size(data: Any, limit: int) -> int:
    """How many values ``data`` holds with every shared list or mapping counted each time it appears (at most
    ``limit + 1``: the count stops there; a cycle counts as ``limit + 1``)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(data, False)]
    open_ids: set[int] = set()
    while stack:
        item, children_done = stack.pop()
        if not isinstance(item, list | dict) or (id(item) in sizes and not children_done):
            continue
        values = list(item.values()) + list(item.keys()) if isinstance(item, dict) else item
        if children_done:
            open_ids.discard(id(item))
            total = 1 + sum(sizes.get(id(v), 1) if isinstance(v, list | dict) else 1 for v in values)
            sizes[id(item)] = min(total, limit + 1)
            continue
        if id(item) in open_ids:
            return limit + 1  # an alias to an ancestor: a recursive structure
        open_ids.add(id(item))
        stack.append((item, True))
        stack.extend((v, False) for v in values if isinstance(v, list | dict) and id(v) not in sizes)
    return sizes.get(id(data), 1)


#: A DOCTYPE or ENTITY declaration (any case, spaces allowed), wherever it stands.
_DECLARATION = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def refuse_xml_dtd(content: str | bytes, field: str, name: str) -> None:
    """Refuse an XML document that holds a DOCTYPE or an entity declaration anywhere, or a NUL character.

    Why the whole text and not the prolog: pyoxigraph's RDF/XML parser also reads a DOCTYPE that stands inside
    the root element (a conforming parser calls that malformed) and expands its entities, so the check looks at
    every byte (one regex pass: milliseconds for megabytes). A ``<!DOCTYPE`` in a comment or CDATA section is
    refused too. Without a DTD there is no entity to expand and no external entity (``SYSTEM "file:///..."``) to
    fetch. U+0000 is never legal in XML 1.0; refusing it stops a parser that honours an ``encoding="UTF-16"``
    declaration (expat, under rdflib) from reading markup this UTF-8 scan did not see.

    Raises:
        InputError: ``<field>: <name>: XML with a DTD or entity declarations is refused (entity expansion)``.
    """
    data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    if b"\x00" in data:
        raise InputError(field, f"{name}: XML holding a NUL character is refused (not XML 1.0)")
    if _DECLARATION.search(data) is not None:
        raise InputError(field, f"{name}: XML with a DTD or entity declarations is refused (entity expansion)")


#: How deep elements (XML) or arrays and objects (JSON) may nest in a document a parser without a depth bound
#: reads (:func:`refuse_deep_nesting`). libxml2's default; real RDF nests a few tens of levels at most.
MAX_NESTING = 256
#: The longest query text a search accepts (recall and the time hierarchy's search): the embedder reads the first
#: 256 tokens of it, and tokenizing a longer one costs memory for every character (about 230 bytes each).
MAX_QUERY_TEXT = 100_000
#: XML markup that changes the depth: an end tag (group 1), a start tag (group 2 ``>``) or an empty-element tag
#: (group 2 ``/>``: one level deeper for itself); or markup to step over whole (comments, CDATA, processing
#: instructions: to the end of the text when unterminated, so the scan stays linear). A tag's quoted attribute
#: values may hold ``>``, ``/`` and even ``<`` (XML forbids it; pyoxigraph reads it): an attempt reads up to the
#: next ``<`` or ``>`` outside quotes, or to the next quote of the kind it opened, so attempts do not read the same
#: text over and over.
#: (Patterns are compiled on first use, by :mod:`re`'s own cache: not by every command that imports this module.)
_XML_MARKUP = (
    r"""(?s)<(?:(/)|!--.*?(?:-->|\Z)|!\[CDATA\[.*?(?:\]\]>|\Z)|\?.*?(?:\?>|\Z)"""
    r"""|[^\s<>!?/][^<>"'/]*+(?:(?:"[^"]*+"|'[^']*+'|/(?!>))[^<>"'/]*+)*+(/?>))"""
)
#: A JSON string (to the end of the text when unterminated, a last lone backslash included: every attempt
#: succeeds, so the scan stays linear) or a bracket.
_JSON_MARKUP = r'(?s)"(?:[^"\\]++|\\(?:.|\Z))*+(?:"|\Z)|[\[\]{}]'
_XML_STEPS = {("/", ""): (-1,), ("", ">"): (1,), ("", "/>"): (1, -1), ("", ""): ()}
_JSON_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nesting_depth(content: str, syntax: str) -> int:
    """The deepest nesting of ``content``: elements for ``syntax`` ``"xml"``, arrays and objects for ``"json"``.

    One regex pass in C (60-200 ms for LUBM(1)'s 8 MB of RDF/XML on this project's 2-core machines). Malformed
    text gets a number too; the parser refuses the text itself.
    """
    steps: Iterable[int]
    if syntax == "xml":
        steps = chain.from_iterable(map(_XML_STEPS.__getitem__, re.findall(_XML_MARKUP, content)))
    else:
        steps = map(_JSON_STEP.get, re.findall(_JSON_MARKUP, content), repeat(0))
    return max(accumulate(steps), default=0)


def refuse_deep_nesting(content: str, syntax: str, field: str, name: str, limit: int = MAX_NESTING) -> None:
    """Refuse XML (``syntax="xml"``) or JSON (``"json"``) nested more than ``limit`` levels deep.

    Raises:
        InputError: ``<field>: <name>: <syntax> nested <n> levels deep is refused (at most <limit>)``.
    """
    depth = nesting_depth(content, syntax)
    if depth > limit:
        label = "XML" if syntax == "xml" else "JSON"
        raise InputError(field, f"{name}: {label} nested {depth:,} levels deep is refused (at most {limit})")


def refuse_remote_context(data: Any, field: str, name: str) -> None:
    """Refuse JSON-LD that names a context by IRI anywhere (``"@context": "file:///etc/passwd"``, in a list, in a
    nested node or a term's scoped context) or imports one (``@import``): rdflib's JSON-LD parser would fetch it,
    over the network or from the local disk. Inline contexts (objects) are fine.

    Raises:
        InputError: ``<field>: <name>: remote @context '<iri>' is not supported: put it inline``.
    """
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            context = item.get("@context")
            for entry in context if isinstance(context, list) else [context]:
                if isinstance(entry, str):
                    raise InputError(field, f"{name}: remote @context {entry!r} is not supported: put it inline")
            if "@import" in item:
                raise InputError(field, f"{name}: @import of a remote context is not supported: put it inline")
            stack.extend(item.values())


__all__ = [
    "CHUNK",
    "LINE_BREAKS",
    "MAX_DOCUMENT_BYTES",
    "MAX_JSONL_LINE",
    "MAX_NESTING",
    "MAX_QUERY_TEXT",
    "YAML_EXPANSION",
    "YAML_FLOOR",
    "json_line",
    "jsonl_lines",
    "load_json",
    "load_yaml",
    "nesting_depth",
    "one_line",
    "read_bounded",
    "read_text_bounded",
    "refuse_deep_nesting",
    "refuse_remote_context",
    "refuse_xml_dtd",
    "split_lines",
]
