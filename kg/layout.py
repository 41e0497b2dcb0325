"""Where an agent's files live, and how a file is replaced so that readers never see half of it.

``agent_dir`` is ``<workspace>/agents/<agent_id>`` with the id validated (it must never escape the workspace).
:func:`atomic_write` writes a temporary file in the same directory (``.<name>.<pid>-<random>.tmp``, see
:mod:`kg.tempfiles`), flushes it to disk and renames it over the target; :func:`create_new` writes a file only
if the name is free. The memory, recall and ontology features all write through these; the layout of the files
under ``agents/<id>/`` is described in :mod:`kg.memory.files`.
"""

from __future__ import annotations

import os
from pathlib import Path

from kg.errors import InputError
from kg.models import AGENT_ID_RE
from kg.tempfiles import temp_prefix

#: The vector index's folder in a workspace and its lock file (:mod:`kg.recall.sidecar`); here so that opening a
#: workspace can clean the folder up without importing the index and numpy.
VECTORS_DIR = Path(".mabos") / "vectors"
LOCK_FILE = "index.lock"


def agent_dir(workspace: Path, agent_id: str) -> Path:
    """``<workspace>/agents/<agent_id>`` (the id is validated: it must never escape the workspace)."""
    if not AGENT_ID_RE.match(agent_id):
        raise InputError("agent", f"must match [a-z0-9][a-z0-9_-]{{0,63}}, got {agent_id[:80]!r}")
    return workspace / "agents" / agent_id


def _durable_temp(path: Path, data: str | bytes) -> Path:
    """``data`` (text as UTF-8 with ``\n`` line ends, or bytes as they are) in a temporary file next to
    ``path``, flushed to disk."""
    import tempfile  # noqa: PLC0415 - on the first write: a read-only command imports neither it nor shutil

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), suffix=".tmp", dir=path.parent)
    try:
        if isinstance(data, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(data)
                raw.flush()
                os.fsync(raw.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def atomic_write(path: Path, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (or exact bytes) so that readers see the old or the new file, never a mix."""
    tmp = _durable_temp(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def create_new(path: Path, text: str) -> bool:
    """Write ``path`` only if it does not exist yet (atomically, never replacing a file); whether it did.

    The temp file is hard-linked to the name, which fails if the name exists, even when another process
    takes it at the same instant. Where hard links are unsupported: check, then rename (a tiny race remains).
    """
    tmp = _durable_temp(path, text)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:
            if path.exists():
                return False
            os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["agent_dir", "atomic_write", "create_new"]
