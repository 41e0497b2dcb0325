"""Which files an agent's Markdown index covers, found and read safely.

What is indexed, per agent (``agents/<id>/`` of a workspace, the layout of :mod:`kg.memory.files`):
every ``memory/**/*.md`` (daily logs, weekly/monthly/quarterly summaries, checkpoints, conflict
reports, materialized memory items) and the files at the top of the agent's folder (``MEMORY.md``,
``mabos-facts.md``, ``mabos-beliefs.md``, ``Beliefs.md`` ...). Dot-files and dot-folders are skipped,
and so is every file whose real path (symlinks resolved) lies outside the agent's folder, so an agent
never reads another agent's files or anything outside the workspace. An agent folder that is itself a
symlink is not indexed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

from kg import layout

log = logging.getLogger("mabos.recall.markdown")

MAX_FILE_BYTES = 8 * 1024 * 1024  # larger files are skipped (and logged): Markdown memory stays far below

MAX_DEPTH = 16  # folder levels under agents/<id>/memory


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


def read_capped(path: Path) -> bytes | None:
    """The file's bytes, or None (logged) when it is larger than :data:`MAX_FILE_BYTES` or cannot be read."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            log.warning("skipping %s: larger than %d bytes", path, MAX_FILE_BYTES)
            return None
        return path.read_bytes()
    except OSError as exc:
        log.warning("skipping %s: %s", path, exc)
        return None


def decode(data: bytes) -> str:
    """UTF-8, undecodable bytes replaced (a stray byte must not hide a whole file)."""
    return data.decode("utf-8", errors="replace")


__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "agent_files", "decode", "read_capped"]
