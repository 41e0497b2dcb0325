"""The vector index's data files are checked and read as one open file (kg/recall/vector_files.py ``verified``):
what was checked (a regular file, not a link, its size and sha256) is what NumPy, FAISS and the id map then read,
and a named pipe in a data file's place is refused without waiting on it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from kg.recall.vector_files import UnusableError, verified, write_file
from kg.recall.vectors import FaissVectorIndex, VectorIndexConfig

DIM = 8


def _entry(folder: Path, data: bytes) -> dict[str, object]:
    return write_file(folder, "ids", ".json", lambda path: path.write_bytes(data))


def test_the_file_read_is_the_file_checked_even_if_the_name_is_replaced_after_the_check(tmp_path: Path) -> None:
    entry = _entry(tmp_path, b'{"checked": true}')
    name = str(entry["name"])
    with verified(tmp_path, entry) as handle:
        # another process renames a file of the same size, other bytes, over the name once the checks passed
        (tmp_path / "forged.json").write_bytes(b'{"checked": fals}')
        os.replace(tmp_path / "forged.json", tmp_path / name)
        assert handle.read() == b'{"checked": true}'
    with pytest.raises(UnusableError, match="does not match its sha256"), verified(tmp_path, entry):
        pass  # pragma: no cover - refused before the block: the forged file is what the name holds now


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda path: path.write_bytes(path.read_bytes()[:-1]), "has another size"),
        (lambda path: path.write_bytes(path.read_bytes().upper()), "does not match its sha256"),
        (lambda path: path.unlink(), "is missing"),
        (lambda path: (path.unlink(), path.symlink_to(path.with_name("elsewhere"))), "symbolic link is not followed"),
        (lambda path: (path.unlink(), path.mkdir()), "not a regular file"),
    ],
    ids=["a byte short", "other bytes", "missing", "a link", "a folder"],
)
def test_a_damaged_data_file_is_refused_with_its_reason(tmp_path: Path, damage, reason: str) -> None:
    entry = _entry(tmp_path, b'{"ids": [1, 2, 3]}')
    (tmp_path / "elsewhere").write_bytes(b'{"ids": [1, 2, 3]}')
    damage(tmp_path / str(entry["name"]))
    with pytest.raises(UnusableError, match=reason), verified(tmp_path, entry):
        pass  # pragma: no cover - refused before the block


def test_a_misnamed_entry_is_refused_before_anything_is_opened(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(UnusableError, match="misnamed"), verified(tmp_path, {"name": "../manifest.json"}):
        pass  # pragma: no cover - refused before the block


@pytest.mark.parametrize("role", ["index", "ids"])
@pytest.mark.parametrize("rows", [5, 400], ids=["flat rows", "hnsw"])
def test_a_data_file_that_is_a_fifo_is_refused_without_waiting_on_it(tmp_path: Path, role: str, rows: int) -> None:
    # attacks: a data file of the index replaced by a named pipe nobody writes to. The loader runs in a thread
    # joined with a bound: one that waits on the pipe fails the join instead of hanging the suite (not a timing).
    folder = tmp_path / "vectors"
    index = FaissVectorIndex(folder, model="m", dimension=DIM, store_checksum="c", config=VectorIndexConfig(300))
    vectors = np.random.default_rng(0).standard_normal((rows, DIM)).astype(np.float32)
    index.add([f"M-{i}" for i in range(rows)], (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist())
    manifest = index.save()
    loaded = FaissVectorIndex.load(folder, model="m", dimension=DIM, store_checksum="c")
    assert loaded is not None and len(loaded) == rows  # the pristine files load
    name = __import__("json").loads(manifest.read_text())["files"][role]["name"]
    (folder / name).unlink()
    os.mkfifo(folder / name)
    seen: dict[str, object] = {}

    def load() -> None:
        seen["loaded"], seen["reason"] = FaissVectorIndex.try_load(folder, model="m", dimension=DIM,
                                                                   store_checksum="c")  # fmt: skip

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(60)
    assert not reader.is_alive(), "the loader waited on the FIFO"
    assert seen["loaded"] is None and "not a regular file" in str(seen["reason"])
