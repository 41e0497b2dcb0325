"""The vector index's files (``.mabos/vectors/``): each written whole under a name from its sha256, checked on read.

Every data file is written to a temporary file in the same directory, fsynced, renamed to ``<prefix>-<sha16><suffix>``
and the directory fsynced, so a save never overwrites a file the current manifest names; files no manifest names
(and temporary files older than an hour, left by a crash) are removed after the next save. See
``docs/vector-index.md`` ("Files and crash safety").
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

#: The data files of a generation: the index (FAISS for HNSW, NumPy rows for flat) and the id map.
DATA_FILE_RE = re.compile(r"(index-[0-9a-f]{16}\.(faiss|npy)|ids-[0-9a-f]{16}\.json)")  # fullmatch: "$" takes a "\n"
_TEMP_MAX_AGE_SECONDS = 3600  # leftovers of a crashed save; younger ones may belong to a save in progress
#: The file naming a generation's data files (written last: the index is what it names).
MANIFEST = "manifest.json"


class UnusableError(Exception):
    """The files on disk cannot be trusted; the message says why."""


def write_file(directory: Path, prefix: str, suffix: str, write: Callable[[Path], object]) -> dict[str, Any]:
    """Write via ``write`` to a temp file, fsync, rename to ``<prefix>-<sha16><suffix>`` (or to ``prefix`` itself
    when ``suffix`` is empty), fsync the directory; name, sha256 and size."""
    import tempfile  # noqa: PLC0415 - with the first save: a recall reads the manifest's name only (issue 33)

    fd, name = tempfile.mkstemp(prefix=f".{prefix}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        digest, size = sha256(tmp, sync=True)
        final = f"{prefix}-{digest[:16]}{suffix}" if suffix else prefix
        os.replace(tmp, directory / final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(directory)
    return {"name": final, "sha256": digest, "bytes": size}


def remove_unreferenced(directory: Path, keep: set[str]) -> None:
    """Delete the data files not in ``keep`` and temporary files older than an hour."""
    cutoff = datetime.now(UTC).timestamp() - _TEMP_MAX_AGE_SECONDS
    for path in directory.iterdir():
        with contextlib.suppress(OSError):  # another process may be cleaning up too
            old_temp = path.name.endswith(".tmp") and path.name.startswith(".") and path.stat().st_mtime < cutoff
            if old_temp or (DATA_FILE_RE.fullmatch(path.name) and path.name not in keep):
                path.unlink()


def sha256(path: Path, *, sync: bool = False) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
        if sync:
            os.fsync(handle.fileno())
    return digest.hexdigest(), size


#: What ``open`` answers for a file that cannot be read as one (a socket: ``ENXIO``; some devices: ``ENODEV``,
#: ``EOPNOTSUPP``): the same "not a regular file" as a FIFO or a folder, which open and are refused on ``fstat``.
_NOT_A_FILE = frozenset({errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP})


def _open_regular(path: Path) -> tuple[BinaryIO, os.stat_result]:
    """``path`` open for reading and its status, when it is a regular file: opened without following a symbolic link
    (every file of the index is written here by a rename, never linked: a link may lead out of the workspace) and
    without waiting on a FIFO, then checked on the open file, so no other file can be renamed into its place in
    between. FileNotFoundError when it is missing, UnusableError when it is not a regular file. The open file's
    ``name`` is the path (error messages name the file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnusableError(f"{path.name!r} is not a regular file (a symbolic link is not followed)") from None
        if exc.errno in _NOT_A_FILE:
            raise UnusableError(f"{path.name!r} is not a regular file") from None
        raise
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise UnusableError(f"{path.name!r} is not a regular file")
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    handle.raw.name = str(path)  # type: ignore[attr-defined] # FileIO keeps its name as a plain attribute (was the fd)
    return handle, status


def read_regular(path: Path) -> str:
    """The text of ``path`` (the manifest), read as :func:`_open_regular` opens it."""
    handle, _ = _open_regular(path)
    with handle:
        return handle.read().decode()


def load_manifest(directory: Path) -> dict[str, Any]:
    """The manifest of the index in ``directory``, parsed: FileNotFoundError when it is missing, ValueError (or
    RecursionError) when it is not JSON, UnusableError when it is not a regular file or not a JSON object."""
    manifest = json.loads(read_regular(directory / MANIFEST))
    if not isinstance(manifest, dict):
        raise UnusableError(f"a JSON {type(manifest).__name__}, not an object")
    return manifest


@contextmanager
def verified(directory: Path, entry: dict[str, Any]) -> Iterator[BinaryIO]:
    """The data file a manifest entry names, open at its start once its name, that it is a regular file, its size
    and its sha256 are checked, all on the one open file that the caller then reads (NumPy, FAISS, JSON)."""
    name = str(entry["name"])
    if not DATA_FILE_RE.fullmatch(name):
        raise UnusableError(f"{name!r} is misnamed")
    try:
        handle, status = _open_regular(directory / name)
    except FileNotFoundError as exc:
        raise UnusableError(f"{name!r} is missing ({exc.strerror})") from None
    with handle:
        if status.st_size != entry["bytes"]:
            raise UnusableError(f"{name!r} has another size")
        digest = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
        if digest.hexdigest() != entry["sha256"]:
            raise UnusableError(f"{name} does not match its sha256")
        handle.seek(0)
        yield handle


def _fsync_directory(directory: Path) -> None:
    """Make renames durable (POSIX; a no-op where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


__all__ = [
    "DATA_FILE_RE",
    "UnusableError",
    "load_manifest",
    "read_regular",
    "remove_unreferenced",
    "sha256",
    "verified",
    "write_file",
]
