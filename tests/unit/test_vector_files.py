"""The vector index's data files are checked and read as one open file (kg/recall/vector_files.py ``verified``):
what was checked (a regular file, not a link, its size and sha256) is what NumPy, FAISS and the id map then read,
even if another file is renamed over the name meanwhile, and a named pipe, a socket or a folder in a data file's
place is refused without waiting on it and without leaving a descriptor open. (The sha256 checks integrity, not
authorship: whoever can write the folder can write the manifest too.)"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from kg.recall import vector_files
from kg.recall.vector_files import UnusableError, verified, write_file
from kg.recall.vectors import FaissVectorIndex, VectorIndexConfig

DIM = 8


def _entry(folder: Path, data: bytes) -> dict[str, object]:
    return write_file(folder, "ids", ".json", lambda path: path.write_bytes(data))


def test_the_file_read_is_the_file_checked_even_if_another_is_renamed_in_after_the_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = _entry(tmp_path, b'{"checked": true}')
    name = str(entry["name"])
    (tmp_path / "forged.json").write_bytes(b'{"checked": fals}')  # the same size, other bytes
    real_sha256 = hashlib.sha256

    class RenameOnDigest:
        """The file's hash, and another process renaming its own file over the name right after the last byte."""

        def __init__(self) -> None:
            self.inner = real_sha256()

        def update(self, data: bytes) -> None:
            self.inner.update(data)

        def hexdigest(self) -> str:
            os.replace(tmp_path / "forged.json", tmp_path / name)
            return self.inner.hexdigest()

    monkeypatch.setattr(vector_files.hashlib, "sha256", RenameOnDigest)
    with verified(tmp_path, entry) as handle:
        assert handle.read() == b'{"checked": true}'  # a reader that opened the name again would get the forgery
    monkeypatch.undo()
    with pytest.raises(UnusableError, match="does not match its sha256"), verified(tmp_path, entry):
        pass  # pragma: no cover - refused before the block: the forgery is what the name holds now


def test_the_open_file_names_its_path_for_the_readers_messages(tmp_path: Path) -> None:
    entry = _entry(tmp_path, b"{}")
    with verified(tmp_path, entry) as handle:
        assert handle.name == str(tmp_path / str(entry["name"]))


def test_a_refused_file_leaves_no_descriptor_open(tmp_path: Path) -> None:
    entry = _entry(tmp_path, b"{}")
    path = tmp_path / str(entry["name"])
    path.unlink()
    path.mkdir()  # opens (a folder can be opened for reading), then is refused on fstat
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(50):
        with pytest.raises(UnusableError, match="not a regular file"), verified(tmp_path, entry):
            pass  # pragma: no cover - refused before the block
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_socket_in_a_files_place_is_not_a_regular_file(tmp_path: Path) -> None:
    entry = _entry(tmp_path, b"{}")
    path = tmp_path / str(entry["name"])
    path.unlink()
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))  # open(2) answers ENXIO for a socket
        with pytest.raises(UnusableError, match="not a regular file"), verified(tmp_path, entry):
            pass  # pragma: no cover - refused before the block
    finally:
        server.close()


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


@pytest.mark.parametrize("name", ["../manifest.json", "ids-0123456789abcdef.json\n", "ids-0123456789abcdef.json/"])
def test_a_misnamed_entry_is_refused_before_anything_is_opened(tmp_path: Path, name: str) -> None:
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / "ids-0123456789abcdef.json\n").write_text("{}")
    with pytest.raises(UnusableError, match="misnamed"), verified(tmp_path, {"name": name}):
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
    name = json.loads(manifest.read_text())["files"][role]["name"]
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


def test_a_refusal_of_the_rows_names_the_rows_file(tmp_path: Path) -> None:
    folder = tmp_path / "vectors"
    index = FaissVectorIndex(folder, model="m", dimension=DIM, store_checksum="c")
    index.add([f"M-{i}" for i in range(3)], np.eye(3, DIM, dtype=np.float32).tolist())
    manifest_path = index.save()
    manifest = json.loads(manifest_path.read_text())

    def four_rows(path: Path) -> None:
        with path.open("wb") as handle:  # np.save given a path would add ".npy" to the temporary file's name
            np.save(handle, np.eye(4, DIM, dtype=np.float32))

    wrong = write_file(folder, "index", ".npy", four_rows)
    manifest["files"]["index"] = wrong  # a forged generation: rows that do not fit the id map, its own sha256
    manifest_path.write_text(json.dumps(manifest))
    loaded, reason = FaissVectorIndex.try_load(folder, model="m", dimension=DIM, store_checksum="c")
    assert loaded is None and reason.startswith(f"{wrong['name']}: float32 (4, {DIM}), not float32 (3, {DIM})")
