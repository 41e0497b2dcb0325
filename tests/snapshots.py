"""The "nothing changed" snapshot of a workspace: digests of its store's content and of its file tree.

Hundreds of refusal tests compare a snapshot before and after a call (the ``snapshot`` fixture of tests/conftest.py,
or ``snapshot_workspace`` imported); tests/unit/test_snapshot_digest.py checks what it sees and what it does not.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from kg.workspace import DB_FILE, STATE_DIR, Workspace

#: The last content digests computed, by database file, with the bytes of the file and its WAL they were computed
#: from (see :func:`sqlite_digest`); the few most recent files only.
_DIGESTS: OrderedDict[str, tuple[tuple[bytes | None, ...], str]] = OrderedDict()
_DIGESTS_KEPT = 4


def _database_bytes(db_path: Path) -> tuple[bytes | None, ...]:
    """The bytes of the database file, of its WAL and of a rollback journal; None for no such file or an empty WAL
    or journal, which hold nothing (a read-only connection creates an empty WAL where there was none)."""
    out: list[bytes | None] = []
    for name in (str(db_path), f"{db_path}-wal", f"{db_path}-journal"):
        try:
            with open(name, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            data = None
        out.append(data if data or name == str(db_path) else None)
    return tuple(out)


def sqlite_digest(db_path: Path) -> str:
    """SHA-256 over the schema and every table's rows, read through a separate connection.

    Tables are taken by name and rows sorted, so the digest depends on content only, not on page
    layout, WAL checkpoints or row order on disk. A table's rows are written out and sorted in C (``map``,
    ``sorted``, ``join``) and hashed at once: a snapshot runs before and after every refused call of the fuzz files.

    The committed content is a function of the bytes of the database file and its WAL or journal (the WAL index,
    ``-shm``, is rebuilt from them), so when they are byte for byte what they were at this file's last digest, that
    digest is returned without reading the tables again (a refused call mostly writes nothing: the fuzz files' "after"
    snapshot; in test_bad_input.py 694 of 743 digests: 12.4 -> 1.9 s of CPU).
    """
    key = os.path.realpath(db_path)
    raw = _database_bytes(db_path)
    kept = _DIGESTS.get(key)
    if kept is not None and kept[0] == raw:
        _DIGESTS.move_to_end(key)
        return kept[1]
    digest = _content_digest(db_path)
    if _database_bytes(db_path) == raw:  # nothing wrote meanwhile: the digest is that of these bytes
        _DIGESTS[key] = (raw, digest)
        _DIGESTS.move_to_end(key)
        while len(_DIGESTS) > _DIGESTS_KEPT:
            _DIGESTS.popitem(last=False)
    return digest


def _content_digest(db_path: Path) -> str:
    digest = hashlib.sha256()
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        for name, sql in tables:
            digest.update(f"\x00table {name}\x00{sql}\x00".encode())
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            digest.update("\x00".join(sorted(map(repr, rows))).encode())
        for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type != 'table' AND sql IS NOT NULL ORDER BY name"
        ):
            digest.update(f"\x00schema {sql}".encode())
    finally:
        conn.close()
    return digest.hexdigest()


def tree_digest(root: Path, *, skip: Callable[[str], bool] = lambda rel: False) -> str:
    """SHA-256 over every path (files and directories) under ``root`` and each file's bytes; ``skip`` is given each
    path relative to ``root`` (``a/b.md``). Walked with ``os.walk``, which, as ``Path.rglob`` did, lists a link to a
    directory as a directory without entering it and reads a link to a file as its target's bytes."""
    entries: list[tuple[tuple[str, ...], str, bool]] = []
    for folder, dirs, files in os.walk(root):
        parts = Path(folder).relative_to(root).parts
        entries.extend(((*parts, name), os.path.join(folder, name), True) for name in dirs)
        entries.extend(((*parts, name), os.path.join(folder, name), False) for name in files)
    digest = hashlib.sha256()
    for parts, full, is_dir in sorted(entries):
        rel = "/".join(parts)
        if skip(rel):
            continue
        digest.update(f"\x00{rel}\x00{'d' if is_dir else 'f'}".encode())
        if not is_dir and os.path.isfile(full):
            with open(full, "rb") as file:
                digest.update(file.read())
    return digest.hexdigest()


def _is_db_file(rel: str) -> bool:
    # The database files change bytes on checkpoints; their content is covered by sqlite_digest.
    folder, _, name = rel.rpartition("/")
    return folder == STATE_DIR and name.startswith(DB_FILE)


def snapshot_workspace(ws: Workspace) -> dict[str, str]:
    """Digests of the workspace's store content and of its file tree (database files aside)."""
    return {
        "store": sqlite_digest(ws.path / STATE_DIR / DB_FILE),
        "files": tree_digest(ws.path, skip=_is_db_file),
    }
