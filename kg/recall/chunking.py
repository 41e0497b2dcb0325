"""Markdown text cut into overlapping, header-aware chunks that cite their line span.

A **token** here is what :data:`kg.text.words.TOKEN_RE` matches: a run of Unicode word characters (letters, digits,
``_``), except that every CJK character (Han, Hiragana, Katakana, Hangul) is a token of its own, since
those scripts put no spaces between words. So ``"JWT uses RS256."`` is 3 tokens and ``"東京タワー"`` is 5.
Punctuation and Markdown markup are not tokens. No model, no download: the count is close enough to a
sub-word tokenizer's for sizing chunks (English text runs about 1.3 model tokens per word).

How a text is cut (:func:`chunk_markdown`, defaults ``size=400``, ``overlap=80``):

* Lines are the unit: a chunk is a run of whole lines, so its 1-based ``line_start``/``line_end`` cite
  exactly what it holds. Only a line longer than ``overlap`` tokens is split, at token boundaries, into
  pieces (a chunk may then start or end inside that line; both cite it).
* A chunk holds at most ``size`` tokens. Sections (an ATX heading ``#`` .. ``######`` and the lines up to
  the next heading; ``#`` lines inside fenced code blocks are not headings) are packed whole while they
  fit; when the next section does not fit and the chunk is at least half full, the chunk ends before the
  heading and the next chunk starts at it.
* Otherwise the next chunk repeats the last whole lines of the previous one, up to ``overlap`` tokens,
  and if a heading lies in that overlap it starts at the heading instead: a chunk never starts in the
  middle of a section when it can start at a header. Blank lines never start or end a chunk.
* Each chunk carries its heading path, the headings enclosing its first line joined by ``" > "``
  (``"Daily log 2024-05-01 > 14:03 decision M-01J... (importance 0.80, store working)"``).
* The id is ``<path>:<line_start>:<sha256 of the text, 16 hex>`` (``<line>+<column>`` when the chunk
  starts inside a split line): the same text at the same place keeps its id across re-indexing.

Cutting is deterministic: the same text and parameters give the same chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from pydantic import ConfigDict

from kg.errors import InputError
from kg.models import Model
from kg.text import words  # TOKEN_RE compiles on first use: a recall that chunks nothing never does

CHUNK_SIZE = 400
CHUNK_OVERLAP = 80
#: Changes whenever the cutting rules change, so stored chunks of an older cutter are rebuilt.
CHUNKER_VERSION = "chunker-v1"

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


class Chunk(Model):
    """A span of a Markdown file, as indexed and cited."""

    model_config = ConfigDict(frozen=True)

    id: str
    path: str
    line_start: int
    line_end: int
    heading: str
    text: str
    tokens: int
    starts_at_heading: bool


@dataclass(frozen=True, slots=True)
class _Unit:
    """A line, or a piece of a long line: what chunks are made of."""

    line: int  # 1-based
    column: int  # where the piece starts in its line (0 for whole lines)
    text: str
    tokens: int
    heading: bool  # the line is a heading (only its first piece carries the flag)
    blank: bool
    path: tuple[str, ...]  # heading path at this unit (a heading unit includes itself)


def count_tokens(text: str) -> int:
    """The number of tokens in ``text`` (see the module docstring for what a token is)."""
    return sum(1 for _ in words.TOKEN_RE.finditer(text))


def split_lines(text: str) -> list[str]:
    """Lines as editors number them (``\\n``, ``\\r\\n`` or ``\\r``), without a phantom last line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _NEWLINE_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def chunk_markdown(text: str, path: str = "", *, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> list[Chunk]:
    """Cut ``text`` (the content of the file at ``path``) into chunks; see the module docstring."""
    if size < 1:
        raise InputError("size", f"must be at least 1 token, got {size}")
    if not 0 <= overlap < size:
        raise InputError("overlap", f"must be between 0 and size - 1 ({size - 1}), got {overlap}")
    units = _units(split_lines(text), piece=overlap or size)
    return [_make_chunk(path, units[start:end]) for start, end in _spans(units, size, overlap)]


def headed_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """``(line number, line, heading path)`` for every line of ``text`` (for line-level scans)."""
    for number, line, _, path in _outline(split_lines(text)):
        yield number, line, _heading(path)


def _heading(path: tuple[str, ...]) -> str:
    return " > ".join(title for title in path if title)


# ------------------------------------------------------------------------------------- units


def _outline(lines: list[str]) -> Iterator[tuple[int, str, bool, tuple[str, ...]]]:
    """``(line number, line, is a heading, heading path)`` for every line."""
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    fence: str | None = None
    for number, line in enumerate(lines, start=1):
        fence, is_heading = _scan_fence(line, fence)
        if is_heading and (match := _HEADING_RE.match(line)):
            level = len(match[1])
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, (match[2] or "").strip()))
            path = tuple(title for _, title in stack)
        else:
            is_heading = False
        yield number, line, is_heading, path


def _units(lines: list[str], *, piece: int) -> list[_Unit]:
    units: list[_Unit] = []
    for number, line, is_heading, path in _outline(lines):
        units.extend(_pieces(line, number, piece, heading=is_heading, path=path))
    return units


def _scan_fence(line: str, fence: str | None) -> tuple[str | None, bool]:
    """The fence still open after ``line``, and whether ``line`` may be a heading."""
    match = _FENCE_RE.match(line)
    if fence is None:
        return (match[1], False) if match else (None, line.lstrip(" ").startswith("#"))
    if match and match[1][0] == fence[0] and len(match[1]) >= len(fence) and not line[match.end() :].strip():
        return None, False
    return fence, False


def _pieces(line: str, number: int, piece: int, *, heading: bool, path: tuple[str, ...]) -> list[_Unit]:
    starts = [m.start() for m in words.TOKEN_RE.finditer(line)]
    if len(starts) <= piece:
        return [_Unit(number, 0, line, len(starts), heading, not line.strip(), path)]
    cuts = [0, *starts[piece::piece], len(line)]
    counts = [min(piece, len(starts) - k * piece) for k in range(len(cuts) - 1)]
    return [
        _Unit(number, cuts[k], line[cuts[k] : cuts[k + 1]], counts[k], heading and k == 0, False, path)
        for k in range(len(cuts) - 1)
    ]


# ------------------------------------------------------------------------------------- spans


def _spans(units: list[_Unit], size: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` unit ranges of the chunks."""
    content = [k for k, u in enumerate(units) if not u.blank]
    if not content:
        return []
    last = content[-1]
    spans: list[tuple[int, int]] = []
    start = content[0]
    while True:
        end = _fill(units, start, size)
        spans.append((start, end))
        if end > last:
            return spans
        start = _skip_blank(units, _next_start(units, start, end, overlap))


def _fill(units: list[_Unit], start: int, size: int) -> int:
    """End of the chunk that starts at ``start``: as many units as fit, ended before a heading if it can."""
    end, total = start, 0
    while end < len(units) and (end == start or total + units[end].tokens <= size):
        total += units[end].tokens
        end += 1
    if end >= len(units) or units[end].heading:
        return end
    kept = 0
    best = None
    for k in range(start, end):
        if units[k].heading and k > start and kept * 2 >= size:
            best = k
        kept += units[k].tokens
    return best if best is not None else end


def _next_start(units: list[_Unit], start: int, end: int, overlap: int) -> int:
    """Where the chunk after ``units[start:end]`` starts (see the module docstring)."""
    if units[end].heading or overlap == 0:
        return end
    begin, kept = end, 0
    while begin - 1 > start and (kept == 0 or kept + units[begin - 1].tokens <= overlap):
        begin -= 1
        kept += units[begin].tokens
    return next((k for k in range(begin, end) if units[k].heading), begin)


def _skip_blank(units: list[_Unit], k: int) -> int:
    while k < len(units) and units[k].blank:
        k += 1
    return k


def _make_chunk(path: str, units: list[_Unit]) -> Chunk:
    while units and units[-1].blank:
        units = units[:-1]
    parts: list[str] = []
    for k, unit in enumerate(units):
        if k and unit.line != units[k - 1].line:
            parts.append("\n")
        parts.append(unit.text)
    text = "".join(parts)
    first = units[0]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    where = f"{first.line}+{first.column}" if first.column else str(first.line)
    return Chunk(
        id=f"{path}:{where}:{digest}",
        path=path,
        line_start=first.line,
        line_end=units[-1].line,
        heading=_heading(first.path),
        text=text,
        tokens=sum(u.tokens for u in units),
        starts_at_heading=first.heading,
    )


__all__ = [
    "CHUNKER_VERSION",
    "CHUNK_OVERLAP",
    "CHUNK_SIZE",
    "Chunk",
    "chunk_markdown",
    "count_tokens",
    "headed_lines",
    "split_lines",
]
