"""Searching the time hierarchy: query terms (stemmed, stopwords out) matched against the sections of the
weekly, monthly, quarterly or daily files, best sections first."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, get_args

from kg.errors import InputError
from kg.memory import files
from kg.memory.hierarchy_logs import (
    LABEL_RE,
    SNIPPET_CHARS,
    _agent_root,
    _inside,
    _normalize,
    _own_daily_logs,
    words,
)
from kg.memory.hierarchy_models import MAX_LIMIT, HierarchyHit, Level
from kg.text.stem import strip_plural
from kg.text.stopwords import LOG_STOPWORDS


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a query (stop words dropped unless nothing else is left)."""
    terms = list(dict.fromkeys(strip_plural(w) for w in words(query)))
    content = [t for t in terms if t not in LOG_STOPWORDS]
    return content or terms


def search_hierarchy(workspace: Path, agent_id: str, query: str, *, level: Level = "weekly",
                     limit: int = 10) -> list[HierarchyHit]:  # fmt: skip
    """Lexical search over one level of the hierarchy, ranked by query-term overlap.

    At the ``daily`` level each entry (the text under one heading) is scored; at the summary levels
    each summary file. Ranking: the share of the query's terms present, then their occurrences, then
    file and line order. Each hit cites the file and the span of the lines that matched. A missing
    directory gives no hits.
    """
    if level not in get_args(Level):
        raise InputError("level", f"must be one of daily, weekly, monthly, quarterly; got {level!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    terms = query_terms(query)
    if not terms:
        raise InputError("query", "must contain at least one word")
    hits: list[HierarchyHit] = []
    for label, path in _level_files(workspace, agent_id, level):
        text = _normalize(path.read_text(encoding="utf-8", errors="replace"))
        for match in _match_sections(text.split("\n"), terms, by_heading=level == "daily"):
            hits.append(HierarchyHit(level=level, period=label, path=path, **match))
    hits.sort(key=lambda hit: (-hit.score, -hit.term_hits, str(hit.path), hit.line_start))
    return hits[:limit]


def _level_files(workspace: Path, agent_id: str, level: Level) -> list[tuple[str, Path]]:
    if level == "daily":
        return [(day.isoformat(), path) for day, path in _own_daily_logs(workspace, agent_id)[0].items()]
    directory = files.memory_dir(workspace, agent_id) / level
    if not directory.is_dir():
        return []
    root = _agent_root(workspace, agent_id)
    found = [(p.stem, p) for p in directory.iterdir()
             if p.suffix == ".md" and LABEL_RE[level].match(p.stem) and _inside(p, root)]  # fmt: skip
    return sorted(found)


def _match_sections(lines: list[str], terms: list[str], *, by_heading: bool) -> list[dict[str, Any]]:
    """Score each section by the query terms it contains.

    A daily log's sections run from one heading to the next (one entry each); a summary is scored as
    a whole, so that terms found in different parts of it (top entries, top terms) add up.
    """
    bounds = [i for i, line in enumerate(lines) if i and line.startswith("#")] if by_heading else []
    starts, ends = [0, *bounds], [*bounds, len(lines)]
    return [m for start, end in zip(starts, ends, strict=True) if (m := _match(lines, start, end, terms))]


def _match(lines: list[str], start: int, end: int, terms: list[str]) -> dict[str, Any] | None:
    wanted = set(terms)
    hit_lines: list[int] = []
    seen: Counter[str] = Counter()
    for i in range(start, end):
        comment = lines[i].startswith("<!--")
        found = [] if comment else [t for t in map(strip_plural, words(lines[i])) if t in wanted]
        if found:
            hit_lines.append(i)
            seen.update(found)
    if not hit_lines:
        return None
    matched = [t for t in terms if t in seen]
    return {
        "line_start": hit_lines[0] + 1,
        "line_end": hit_lines[-1] + 1,
        "score": round(len(matched) / len(terms), 4),
        "term_hits": sum(seen.values()),
        "matched": matched,
        "snippet": " | ".join(lines[i].strip() for i in hit_lines[:3])[: SNIPPET_CHARS * 2],
    }
