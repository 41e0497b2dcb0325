"""The Markdown index: an agent's Markdown files, chunked, kept in a sidecar, searched with BM25.

What is indexed, per agent (``agents/<id>/`` of a workspace, the layout of :mod:`kg.memory.files`):
every ``memory/**/*.md`` (daily logs, weekly/monthly/quarterly summaries, checkpoints, conflict
reports, materialized memory items) and the files at the top of the agent's folder (``MEMORY.md``,
``mabos-facts.md``, ``mabos-beliefs.md``, ``Beliefs.md`` ...). Dot-files and dot-folders are skipped,
and so is every file whose real path (symlinks resolved) lies outside the agent's folder, so an agent
never reads another agent's files or anything outside the workspace. An agent folder that is itself a
symlink is not indexed.

The sidecar is ``<workspace>/.mabos/mdindex/<agent_id>.json``, written atomically, and depends on
nothing but the files, so it answers when the database is missing, locked or corrupt::

    {"format": "mabos-mdindex", "version": 1, "chunker": "chunker-v1 size=400 overlap=80",
     "agent_id": "a",
     "files": {"agents/a/memory/2024-05-01.md": {"sha256": "<hex>", "size": 1234,
                "chunks": [{"id": "agents/a/memory/2024-05-01.md:1:<hash16>", "path": ..., "line_start": 1,
                            "line_end": 9, "heading": "Daily log 2024-05-01", "text": ..., "tokens": 57,
                            "starts_at_heading": true}]}}}

:meth:`MarkdownIndex.refresh` re-chunks a file only when the SHA-256 of its bytes changed and drops
the chunks of deleted files; it rewrites the sidecar only when something changed. A missing, corrupt
or outdated sidecar (other format, version, chunker or agent) is rebuilt from the files and logged,
never raised; a sidecar that cannot be written is logged and the index is used from memory.

Search terms (:func:`kg.text.terms.search_terms`): Unicode words, case-folded; runs of CJK characters become
overlapping character bigrams (a lone character stays a unigram), as Lucene's CJK analyzer does, so
``東京`` finds ``東京タワー``; a short English stopword list is dropped; plain ASCII words go through a
light Porter stemmer (steps 1a-1c and 5: plurals, ``-ed``, ``-ing``, final ``-e``), so ``deployed``,
``deploying`` and ``deploys`` meet. A chunk is searched by its heading path and its text. Scores are
BM25 (Lucene variant, k1 1.5, b 0.75, from ``bm25s``) over the agent's chunks; of two overlapping
chunks of one file only the better is returned.

Not thread-safe: use one :class:`MarkdownIndex` per thread (processes may share a workspace: every
write is atomic, and the last writer's sidecar is as good as any)."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from cachetools import LRUCache

from kg import layout
from kg.errors import InputError
from kg.models import AGENT_ID_RE, Model
from kg.recall.chunking import (
    CHUNK_OVERLAP,
    CHUNK_SIZE,
    CHUNKER_VERSION,
    Chunk,
    chunk_markdown,
    headed_lines,
)
from kg.recall.file_hits import MarkdownHit
from kg.text.terms import search_terms

log = logging.getLogger("mabos.recall.markdown")


SIDECAR_DIR = Path(".mabos") / "mdindex"


FORMAT: Literal["mabos-mdindex"] = "mabos-mdindex"


VERSION: Literal[1] = 1


MAX_FILE_BYTES = 8 * 1024 * 1024  # larger files are skipped (and logged): Markdown memory stays far below


MAX_LIMIT = 1000


MAX_DEPTH = 16  # folder levels under agents/<id>/memory


_CACHE_SIZE = 8  # BM25 models kept per process, by agent and corpus digest


class IndexedFile(Model):
    """One file of the sidecar: the hash of its bytes and its chunks."""

    sha256: str
    size: int
    chunks: list[Chunk]


class Sidecar(Model):
    """The persisted index of one agent."""

    format: Literal["mabos-mdindex"] = FORMAT
    version: Literal[1] = VERSION
    chunker: str
    agent_id: str
    files: dict[str, IndexedFile]


class RefreshStats(Model):
    """What a refresh did. ``rebuilt`` says why the sidecar was not reused (None when it was)."""

    agent_id: str
    files: int
    chunks: int
    added: list[str]
    changed: list[str]
    removed: list[str]
    unchanged: int
    rebuilt: str | None
    written: bool


def agent_files(workspace: Path, agent_id: str) -> dict[str, Path]:
    """The agent's indexable files by workspace-relative POSIX path, sorted (the id is validated).

    Symlinked folders are not followed; a symlinked file counts only when it resolves inside the agent's
    folder (anything else is skipped and logged).
    """
    folder = layout.agent_dir(workspace, agent_id)
    try:
        real_folder = folder.resolve(strict=True)
        inside = real_folder == workspace.resolve(strict=True) / "agents" / agent_id
    except OSError:
        return {}
    if not inside or not real_folder.is_dir():
        log.warning("agent folder %s is a symlink or not a folder: not indexed", folder)
        return {}
    found: dict[str, Path] = {}
    for rel, entry in _markdown_entries(str(folder), f"agents/{agent_id}", recurse={"memory"}, depth=0):
        if entry.is_symlink():
            try:
                real = Path(entry.path).resolve(strict=True)
            except OSError:
                continue
            if not real.is_relative_to(real_folder):
                log.warning("skipping %s: it points outside the agent folder", entry.path)
                continue
            if not real.is_file():
                continue
        elif not entry.is_file(follow_symlinks=False):
            continue
        found[rel] = Path(entry.path)
    return dict(sorted(found.items()))


def _markdown_entries(
    directory: str, rel: str, *, recurse: set[str] | None, depth: int
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """``*.md`` entries under ``directory`` (into ``recurse`` only, or every folder when None)."""
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            if (recurse is None or entry.name in recurse) and depth < MAX_DEPTH:
                yield from _markdown_entries(entry.path, f"{rel}/{entry.name}", recurse=None, depth=depth + 1)
        elif entry.name.endswith(".md"):
            yield f"{rel}/{entry.name}", entry


def _read(path: Path) -> bytes | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            log.warning("skipping %s: larger than %d bytes", path, MAX_FILE_BYTES)
            return None
        return path.read_bytes()
    except OSError as exc:
        log.warning("skipping %s: %s", path, exc)
        return None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


_BM25_CACHE: LRUCache[tuple[str, str], Any] = LRUCache(maxsize=_CACHE_SIZE)


class MarkdownIndex:
    """The Markdown index of one workspace (see the module docstring)."""

    def __init__(self, workspace: Path | str, *, chunk_size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> None:
        self.workspace = Path(workspace)
        self.chunk_size = chunk_size
        self.overlap = overlap
        self.chunker = f"{CHUNKER_VERSION} size={chunk_size} overlap={overlap}"
        chunk_markdown("", size=chunk_size, overlap=overlap)  # validates the parameters now
        self._sidecars: dict[str, Sidecar] = {}

    def sidecar_path(self, agent_id: str) -> Path:
        """``<workspace>/.mabos/mdindex/<agent_id>.json`` (the id is validated)."""
        layout.agent_dir(self.workspace, agent_id)
        return self.workspace / SIDECAR_DIR / f"{agent_id}.json"

    def agents(self) -> list[str]:
        """Agents that have a folder under ``agents/``, sorted."""
        folder = self.workspace / "agents"
        if not folder.is_dir():
            return []
        with os.scandir(folder) as entries:
            return sorted(e.name for e in entries if AGENT_ID_RE.match(e.name) and e.is_dir())

    def refresh(self, agent_id: str) -> RefreshStats:
        """Bring the agent's index up to date with its files (see the module docstring)."""
        sidecar_file = self.sidecar_path(agent_id)
        old, rebuilt = self._load(agent_id, sidecar_file)
        new: dict[str, IndexedFile] = {}
        added: list[str] = []
        changed: list[str] = []
        for rel, path in agent_files(self.workspace, agent_id).items():
            data = _read(path)
            if data is None:
                continue
            digest = hashlib.sha256(data).hexdigest()
            before = old.files.get(rel)
            if before is not None and before.sha256 == digest and all(c.path == rel for c in before.chunks):
                new[rel] = before
                continue
            chunks = chunk_markdown(_decode(data), rel, size=self.chunk_size, overlap=self.overlap)
            new[rel] = IndexedFile(sha256=digest, size=len(data), chunks=chunks)
            (changed if before is not None else added).append(rel)
        removed = sorted(set(old.files) - set(new))
        sidecar = Sidecar(chunker=self.chunker, agent_id=agent_id, files=new)
        self._sidecars[agent_id] = sidecar
        # a missing sidecar of an agent without files stays missing: searching creates no clutter
        dirty = bool(added or changed or removed or (rebuilt and (new or rebuilt != "missing")))
        written = dirty and self._save(sidecar_file, sidecar)
        return RefreshStats(agent_id=agent_id, files=len(new), chunks=sum(len(f.chunks) for f in new.values()),
                            added=added, changed=changed, removed=removed,
                            unchanged=len(new) - len(added) - len(changed), rebuilt=rebuilt,
                            written=written)  # fmt: skip

    def refresh_all(self) -> list[RefreshStats]:
        """Refresh every agent of the workspace."""
        return [self.refresh(agent_id) for agent_id in self.agents()]

    def chunks(self, agent_id: str, *, refresh: bool = True) -> list[Chunk]:
        """The agent's chunks in file and line order."""
        sidecar = self._current(agent_id, refresh=refresh)
        return [chunk for indexed in sidecar.files.values() for chunk in indexed.chunks]

    def search(self, agent_id: str, query: str, *, limit: int = 10, refresh: bool = True) -> list[MarkdownHit]:
        """The agent's chunks that best match ``query`` by BM25, best first (nothing when no term matches)."""
        _check_limit(limit)
        chunks = self.chunks(agent_id, refresh=refresh)
        terms = list(dict.fromkeys(search_terms(query)))
        if not chunks or not terms:
            return []
        model = self._model(agent_id, chunks)
        if model is None:
            return []
        import numpy as np  # noqa: PLC0415 - with the BM25 model, when files are searched (not by every recall's import)

        scores = model.get_scores(terms)
        order = sorted(np.flatnonzero(scores > 0), key=lambda k: (-float(scores[k]), chunks[k].path, k))
        hits: list[MarkdownHit] = []
        taken: dict[str, list[tuple[int, int]]] = {}
        for k in order:
            chunk = chunks[k]
            spans = taken.setdefault(chunk.path, [])
            if any(chunk.line_start <= end and start <= chunk.line_end for start, end in spans):
                continue  # an overlapping chunk of the same file scored better
            spans.append((chunk.line_start, chunk.line_end))
            hits.append(_hit(chunk, agent_id, round(float(scores[k]), 6)))
            if len(hits) == limit:
                break
        return hits

    def scan(self, agent_id: str, needle: str, *, limit: int = 10) -> list[MarkdownHit]:
        """Lines of the agent's files that contain ``needle`` (case-insensitive, whitespace-normalized).

        One hit per line, scored by the number of occurrences; ordered by score, then path and line.
        """
        _check_limit(limit)
        wanted = " ".join(needle.split()).casefold()
        if not wanted:
            return []
        hits: list[MarkdownHit] = []
        words = wanted.split()
        for rel, path in agent_files(self.workspace, agent_id).items():
            data = _read(path)
            if data is None:
                continue
            text = _decode(data)
            folded = text.casefold()
            if not all(word in folded for word in words):  # cheap test first: most files do not match
                continue
            for number, line, heading in headed_lines(text):
                count = " ".join(line.split()).casefold().count(wanted)
                if count:
                    hits.append(MarkdownHit(path=rel, line_start=number, line_end=number, heading=heading,
                                            text=line, score=float(count), agent_id=agent_id,
                                            chunk_id=f"{rel}:{number}:line"))  # fmt: skip
        hits.sort(key=lambda h: (-h.score, h.path, h.line_start))
        return hits[:limit]

    # -------------------------------------------------------------------------- internals

    def _current(self, agent_id: str, *, refresh: bool) -> Sidecar:
        if refresh or agent_id not in self._sidecars:
            self.refresh(agent_id)
        return self._sidecars[agent_id]

    def _load(self, agent_id: str, sidecar_file: Path) -> tuple[Sidecar, str | None]:
        """The sidecar to compare the files against, and why it was not reused (None when it was)."""
        empty = Sidecar(chunker=self.chunker, agent_id=agent_id, files={})
        cached = self._sidecars.get(agent_id)
        if cached is not None:
            return cached, None
        try:
            data = sidecar_file.read_bytes()
        except FileNotFoundError:
            return empty, "missing"
        except OSError as exc:
            log.warning("Markdown index of %r unreadable, rebuilding it: %s", agent_id, exc)
            return empty, f"unreadable: {exc}"
        try:
            sidecar = Sidecar.model_validate_json(data)
        except ValueError as exc:
            log.warning("Markdown index %s is corrupt, rebuilding it from the files: %s", sidecar_file,
                        str(exc).splitlines()[0])  # fmt: skip
            return empty, "corrupt"
        if sidecar.agent_id != agent_id or sidecar.chunker != self.chunker:
            log.info("Markdown index %s was built for %s/%s: rebuilding it", sidecar_file, sidecar.agent_id,
                     sidecar.chunker)  # fmt: skip
            return empty, "outdated"
        return sidecar, None

    def _save(self, sidecar_file: Path, sidecar: Sidecar) -> bool:
        if not self.workspace.is_dir():
            return False
        try:
            layout.atomic_write(sidecar_file, sidecar.model_dump_json())
        except OSError as exc:
            log.warning("cannot write the Markdown index %s (kept in memory): %s", sidecar_file, exc)
            return False
        return True

    def _model(self, agent_id: str, chunks: list[Chunk]) -> Any:
        """The BM25 model of these chunks (cached per process while the corpus is unchanged); None without terms."""
        digest = hashlib.sha256("\n".join(c.id for c in chunks).encode("utf-8")).hexdigest()
        key = (str(self.workspace.resolve() / agent_id), digest)
        model = _BM25_CACHE.get(key)
        if model is None:
            import bm25s  # noqa: PLC0415  (scipy makes it slow to import: only when searching)

            corpus = [search_terms(searchable_text(c)) for c in chunks]
            if not any(corpus):
                return None  # only punctuation and stopwords: bm25s would divide by a zero average length
            model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
            model.index(corpus, show_progress=False)
            _BM25_CACHE[key] = model
        return model


def searchable_text(chunk: Chunk) -> str:
    """Heading path and text: a chunk that starts at its heading already holds the last title."""
    titles = chunk.heading.split(" > ") if chunk.heading else []
    if chunk.starts_at_heading:
        titles = titles[:-1]
    return " ".join([*titles, chunk.text])


def _hit(chunk: Chunk, agent_id: str, score: float) -> MarkdownHit:
    return MarkdownHit(path=chunk.path, line_start=chunk.line_start, line_end=chunk.line_end, heading=chunk.heading,
                       text=chunk.text, score=score, agent_id=agent_id, chunk_id=chunk.id)  # fmt: skip


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"must be between 1 and {MAX_LIMIT}")


__all__ = [
    "FORMAT",
    "SIDECAR_DIR",
    "VERSION",
    "IndexedFile",
    "MarkdownHit",
    "MarkdownIndex",
    "RefreshStats",
    "Sidecar",
    "agent_files",
    "searchable_text",
]
