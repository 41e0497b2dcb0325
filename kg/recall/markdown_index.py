"""The Markdown index: an agent's Markdown files, chunked, kept in a sidecar, searched with BM25.

What is indexed, per agent, is :func:`kg.recall.markdown_files.agent_files`: the Markdown files of the agent's
folder (never another agent's, nothing outside the workspace).

The sidecar is ``<workspace>/.mabos/mdindex/<agent_id>.json``, written atomically, and depends on
nothing but the files, so it answers when the database is missing, locked or corrupt::

    {"format": "mabos-mdindex", "version": 1, "chunker": "chunker-v1 size=400 overlap=80",
     "agent_id": "a",
     "files": {"agents/a/memory/2024-05-01.md": {"sha256": "<hex>", "size": 1234,
                "chunks": [{"id": "agents/a/memory/2024-05-01.md:1:<hash16>", "path": ..., "line_start": 1,
                            "line_end": 9, "heading": "Daily log 2024-05-01", "text": ..., "tokens": 57,
                            "starts_at_heading": true}]}}}

Reads read, writes happen elsewhere (issue 33). A search (:meth:`MarkdownIndex.search`,
:meth:`MarkdownIndex.chunks`, :meth:`MarkdownIndex.view`) never writes: it takes the sidecar as it is on disk,
re-chunks in memory the files whose SHA-256 differs from it, leaves out deleted files, and answers; a missing
sidecar is built in memory from the files, silently. Only :meth:`MarkdownIndex.refresh` writes the sidecar, and
only when something changed; it runs where the Markdown files are written (``memory materialize``, ``memory
export``), in the servers' idle time (:mod:`cli.idle_index`), in the nightly job and in ``mabos index
update|rebuild`` (docs/decisions/2026-11-29-markdown-index-reads.md). A corrupt or outdated sidecar (other
format, version, chunker or agent) is logged and replaced by the files, never raised; a sidecar that cannot be
written is logged and the index is used from memory.

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
from kg.recall.markdown_files import agent_files, decode, read_capped
from kg.text.terms import search_terms

log = logging.getLogger("mabos.recall.markdown")


SIDECAR_DIR = Path(".mabos") / "mdindex"


FORMAT: Literal["mabos-mdindex"] = "mabos-mdindex"


VERSION: Literal[1] = 1


MAX_LIMIT = 1000


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
        """Bring the agent's sidecar up to date with its files and write it when something changed (the write path:
        see the module docstring)."""
        sidecar_file = self.sidecar_path(agent_id)
        old, rebuilt = self._load(agent_id, sidecar_file)
        sidecar, added, changed = self._compare(agent_id, old)
        removed = sorted(set(old.files) - set(sidecar.files))
        self._sidecars[agent_id] = sidecar
        # a missing sidecar of an agent without files stays missing: indexing creates no clutter
        dirty = bool(added or changed or removed or (rebuilt and (sidecar.files or rebuilt != "missing")))
        written = dirty and self._save(sidecar_file, sidecar)
        files = sidecar.files
        return RefreshStats(agent_id=agent_id, files=len(files), chunks=sum(len(f.chunks) for f in files.values()),
                            added=added, changed=changed, removed=removed,
                            unchanged=len(files) - len(added) - len(changed), rebuilt=rebuilt,
                            written=written)  # fmt: skip

    def view(self, agent_id: str, *, refresh: bool = True) -> Sidecar:
        """The agent's index as its files are now, without writing anything: the sidecar on disk with the files that
        changed since re-chunked in memory (see the module docstring). ``refresh`` false reuses this instance's last
        view when it has one."""
        if refresh or agent_id not in self._sidecars:
            old, _ = self._load(agent_id, self.sidecar_path(agent_id))
            self._sidecars[agent_id] = self._compare(agent_id, old)[0]
        return self._sidecars[agent_id]

    def refresh_all(self) -> list[RefreshStats]:
        """Refresh every agent of the workspace."""
        return [self.refresh(agent_id) for agent_id in self.agents()]

    def chunks(self, agent_id: str, *, refresh: bool = True) -> list[Chunk]:
        """The agent's chunks in file and line order, as :meth:`view` finds them (nothing is written)."""
        sidecar = self.view(agent_id, refresh=refresh)
        return [chunk for indexed in sidecar.files.values() for chunk in indexed.chunks]

    def search(self, agent_id: str, query: str, *, limit: int = 10, refresh: bool = True) -> list[MarkdownHit]:
        """The agent's chunks that best match ``query`` by BM25, best first (nothing when no term matches); a read:
        the chunks are :meth:`chunks`'s, nothing is written."""
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
            data = read_capped(path)
            if data is None:
                continue
            text = decode(data)
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

    def _compare(self, agent_id: str, old: Sidecar) -> tuple[Sidecar, list[str], list[str]]:
        """The index of the agent's files now, reusing ``old``'s chunks of every file whose bytes are unchanged; with
        the files added and changed since ``old``. Reads only."""
        new: dict[str, IndexedFile] = {}
        added: list[str] = []
        changed: list[str] = []
        for rel, path in agent_files(self.workspace, agent_id).items():
            data = read_capped(path)
            if data is None:
                continue
            digest = hashlib.sha256(data).hexdigest()
            before = old.files.get(rel)
            if before is not None and before.sha256 == digest and all(c.path == rel for c in before.chunks):
                new[rel] = before
                continue
            chunks = chunk_markdown(decode(data), rel, size=self.chunk_size, overlap=self.overlap)
            new[rel] = IndexedFile(sha256=digest, size=len(data), chunks=chunks)
            (changed if before is not None else added).append(rel)
        return Sidecar(chunker=self.chunker, agent_id=agent_id, files=new), added, changed

    def _load(self, agent_id: str, sidecar_file: Path) -> tuple[Sidecar, str | None]:
        """The sidecar on disk to compare the files against, and why it cannot be used (None when it can).

        A missing sidecar is no news (nothing is logged); an unreadable, corrupt or outdated one is logged once per
        read, and the files stand in for it until :meth:`refresh` writes it again.
        """
        empty = Sidecar(chunker=self.chunker, agent_id=agent_id, files={})
        try:
            data = sidecar_file.read_bytes()
        except FileNotFoundError:
            return empty, "missing"
        except OSError as exc:
            log.warning("Markdown index of %r unreadable, reading the files instead: %s", agent_id, exc)
            return empty, f"unreadable: {exc}"
        try:
            sidecar = Sidecar.model_validate_json(data)
        except ValueError as exc:
            log.warning("Markdown index %s is corrupt, reading the files instead: %s", sidecar_file,
                        str(exc).splitlines()[0])  # fmt: skip
            return empty, "corrupt"
        if sidecar.agent_id != agent_id or sidecar.chunker != self.chunker:
            log.info("Markdown index %s was built for %s/%s: reading the files instead", sidecar_file,
                     sidecar.agent_id, sidecar.chunker)  # fmt: skip
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
