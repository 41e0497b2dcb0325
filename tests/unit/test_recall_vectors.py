"""Vector sidecar (flat rows in NumPy, HNSW in FAISS): exactness against numpy, HNSW recall, deletes, filters,
persistence and damage detection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kg.errors import InputError
from kg.recall.vector_branch import exact_scores
from kg.recall.vector_files import write_file
from kg.recall.vectors import MANIFEST, FaissVectorIndex, VectorIndexConfig

DIM = 16
MODEL = "test-model"
HNSW = VectorIndexConfig(hnsw_threshold=300)


def unit_vectors(n: int, dim: int = DIM, *, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def uids_for(n: int, prefix: str = "M-") -> list[str]:
    return [f"{prefix}{i:05d}" for i in range(n)]


def brute_force(uids: list[str], vectors: np.ndarray, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    scores = vectors @ query
    return sorted(zip(uids, scores.tolist(), strict=True), key=lambda hit: (-hit[1], hit[0]))[:k]


def built(tmp_path: Path, n: int, *, config: VectorIndexConfig | None = None, dim: int = DIM, seed: int = 0):
    index = FaissVectorIndex(tmp_path / "vectors", model=MODEL, dimension=dim, config=config)
    uids, vectors = uids_for(n), unit_vectors(n, dim, seed=seed)
    index.add(uids, vectors)
    return index, uids, vectors


def load(index: FaissVectorIndex, **changes):
    args = {"model": MODEL, "dimension": index.dimension, "store_checksum": "c1"} | changes
    return FaissVectorIndex.load(index.directory, **args)


def test_flat_search_equals_numpy_brute_force(tmp_path):
    index, uids, vectors = built(tmp_path, 500)
    assert index.kind == "flat" and len(index) == 500
    for query in unit_vectors(20, seed=1):
        got = index.search(query, 10)
        want = brute_force(uids, vectors, query, 10)
        assert [uid for uid, _ in got] == [uid for uid, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_hnsw_recall_at_10_against_flat(tmp_path):
    dim, n = 32, 5000
    hnsw, _, _ = built(tmp_path, n, config=VectorIndexConfig(hnsw_threshold=1000), dim=dim)
    flat, _, _ = built(tmp_path, n, dim=dim)
    assert (hnsw.kind, flat.kind) == ("hnsw", "flat")
    queries = unit_vectors(200, dim, seed=7)
    recall = np.mean(
        [len({u for u, _ in hnsw.search(q, 10)} & {u for u, _ in flat.search(q, 10)}) / 10 for q in queries]
    )
    assert recall >= 0.95


@pytest.mark.parametrize("config", [None, HNSW], ids=["flat", "hnsw"])
def test_removed_uids_never_come_back(tmp_path, config):
    index, uids, vectors = built(tmp_path, 600, config=config)
    removed = set(uids[::3])
    assert index.remove([*removed, "M-unknown", uids[0]]) == len(removed)
    assert len(index) == 600 - len(removed)
    assert uids[0] not in index and uids[1] in index
    for query in vectors[:40]:
        hits = index.search(query, 25)
        assert len(hits) == 25 and not removed & {uid for uid, _ in hits}
    assert index.remove(list(removed)) == 0


def test_hnsw_compacts_when_tombstones_pass_their_share(tmp_path):
    index, uids, vectors = built(tmp_path, 600, config=HNSW)
    index.remove(uids[:100])
    assert index.status()["tombstones"] == 100 and index.status()["rows"] == 600
    index.remove(uids[100:200])  # 200 of 600 rows > 20%: rebuilt, still HNSW (400 >= 300 // 2)
    assert index.status()["tombstones"] == 0 and index.status()["rows"] == 400 and index.kind == "hnsw"
    index.remove(uids[200:500])  # 100 live < 150: back to exact
    assert index.kind == "flat" and len(index) == 100
    assert index.search(vectors[550], 1)[0][0] == uids[550]


@pytest.mark.parametrize("config", [None, HNSW], ids=["flat", "hnsw"])
def test_allowed_filter(tmp_path, config):
    index, uids, vectors = built(tmp_path, 800, config=config)
    visible = set(uids[::7])
    asked: list[str] = []

    def allowed(uid: str) -> bool:
        asked.append(uid)
        return uid in visible

    query = vectors[7]
    hits = index.search(query, 10, allowed=allowed)
    assert len(hits) == 10 and {uid for uid, _ in hits} <= visible
    assert hits[0][0] == uids[7]
    assert len(asked) == len(set(asked)) and len(asked) < 200  # each uid once, and only as far as needed
    if config is None:
        keep = [i for i, uid in enumerate(uids) if uid in visible]
        want = brute_force([uids[i] for i in keep], vectors[keep], query, 10)
        assert [uid for uid, _ in hits] == [uid for uid, _ in want]
        assert [s for _, s in hits] == pytest.approx([s for _, s in want], abs=1e-5)
    assert index.search(query, 10, allowed=lambda uid: False) == []


@pytest.mark.parametrize("config", [None, HNSW], ids=["flat", "hnsw"])
def test_a_selective_filter_fetches_until_it_has_k(tmp_path, config):
    index, uids, vectors = built(tmp_path, 3000, config=config)
    query = vectors[0]
    farthest = [uid for uid, _ in brute_force(uids, vectors, query, 3000)[-12:]]
    hits = index.search(query, 10, allowed=set(farthest).__contains__)
    assert [uid for uid, _ in hits] == farthest[:10]


def test_re_adding_a_uid_replaces_its_vector(tmp_path):
    for config in (None, HNSW):
        index, uids, vectors = built(tmp_path, 400, config=config)
        index.add([uids[0]], [vectors[1]])
        assert len(index) == 400
        first = uids[0]
        assert index.search(vectors[0], 400, allowed=lambda uid, first=first: uid == first)[0][1] < 0.99
        top = index.search(vectors[1], 2)
        assert sorted(uid for uid, _ in top) == [uids[0], uids[1]]
        assert top[0][1] == pytest.approx(1.0, abs=1e-5)


def test_ties_are_broken_by_uid(tmp_path):
    index = FaissVectorIndex(tmp_path, model=MODEL, dimension=4)
    same = [[1.0, 0.0, 0.0, 0.0]] * 40
    index.add([f"u{i:02d}" for i in reversed(range(40))], same)
    index.add(["other"], [[0.0, 1.0, 0.0, 0.0]])
    assert [uid for uid, _ in index.search(same[0], 3)] == ["u00", "u01", "u02"]
    assert index.search(same[0], 41)[-1][0] == "other"


@pytest.mark.parametrize("config", [None, HNSW], ids=["flat", "hnsw"])
def test_save_load_round_trip_gives_identical_results(tmp_path, config):
    index, uids, vectors = built(tmp_path, 500, config=config)
    index.remove(uids[:50])
    index.add([uids[60]], [vectors[61]])
    index.save(store_checksum="c1")
    loaded = load(index)
    assert loaded is not None and loaded.kind == index.kind and len(loaded) == len(index)
    for query in unit_vectors(20, seed=3):
        assert loaded.search(query, 10) == index.search(query, 10)
    loaded.add(["new"], [vectors[0]])  # a loaded index keeps working and allocates fresh ids
    assert loaded.search(vectors[0], 1)[0][0] == "new"
    loaded.save(store_checksum="c2")
    assert load(loaded, store_checksum="c2") is not None
    files = sorted(p.name for p in loaded.directory.iterdir())
    assert len(files) == 3 and MANIFEST in files  # the previous generation was removed


def test_manifest_content(tmp_path):
    index, _, _ = built(tmp_path, 10)
    manifest = json.loads(index.save(store_checksum="c1").read_text())
    assert {k: manifest[k] for k in ("model", "dimension", "count", "kind", "store_checksum", "format_version")} == {
        "model": MODEL, "dimension": DIM, "count": 10, "kind": "flat", "store_checksum": "c1", "format_version": 1
    }  # fmt: skip
    assert set(manifest["files"]) == {"index", "ids"} and len(manifest["files"]["index"]["sha256"]) == 64
    assert manifest["created_at"]


def _data_file(index: FaissVectorIndex, role: str) -> Path:
    manifest = json.loads((index.directory / MANIFEST).read_text())
    return index.directory / manifest["files"][role]["name"]


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage",
    [
        lambda ix: (ix.directory / MANIFEST).unlink(),
        lambda ix: _data_file(ix, "index").unlink(),
        lambda ix: _data_file(ix, "ids").unlink(),
        lambda ix: _truncate(_data_file(ix, "index")),
        lambda ix: _flip(_data_file(ix, "index")),
        lambda ix: _flip(_data_file(ix, "ids")),
        lambda ix: (ix.directory / MANIFEST).write_text("{not json"),
        lambda ix: (ix.directory / MANIFEST).write_text('{"format_version": 1}'),
    ],
    ids=["no-manifest", "no-index", "no-ids", "truncated", "flipped-index", "flipped-ids", "bad-json", "partial"],
)
def test_load_returns_none_on_damage(tmp_path, damage):
    index, _, _ = built(tmp_path, 200)
    index.save(store_checksum="c1")
    assert load(index) is not None
    damage(index)
    assert load(index) is None


@pytest.mark.parametrize(
    "changes",
    [{"model": "other"}, {"dimension": DIM + 1}, {"store_checksum": "c2"}, {"count": 199}],
    ids=["model", "dimension", "checksum", "count"],
)
def test_load_returns_none_when_the_manifest_does_not_match(tmp_path, changes):
    index, _, _ = built(tmp_path, 200)
    index.save(store_checksum="c1")
    assert load(index, count=200) is not None
    assert load(index, **changes) is None


def test_manifest_edited_to_another_count_is_refused(tmp_path):
    index, _, _ = built(tmp_path, 200)
    path = index.save(store_checksum="c1")
    path.write_text(json.dumps(json.loads(path.read_text()) | {"count": 201}))
    assert load(index) is None and load(index, count=201) is None


def test_torn_save_leaves_the_old_generation_usable(tmp_path):
    index, uids, vectors = built(tmp_path, 200)
    index.save(store_checksum="c1")
    # what a crash between the data files and the manifest leaves: new files, temp files, old manifest
    (index.directory / "index-0123456789abcdef.faiss").write_bytes(b"half a new index")
    (index.directory / ".index.abc.tmp").write_bytes(b"partial")
    loaded = load(index)
    assert loaded is not None and loaded.search(vectors[5], 1)[0][0] == uids[5]
    loaded.save(store_checksum="c1")
    assert not (index.directory / "index-0123456789abcdef.faiss").exists()


def test_switching_to_hnsw_at_the_threshold_keeps_every_uid(tmp_path):
    index = FaissVectorIndex(tmp_path, model=MODEL, dimension=DIM, config=HNSW)
    uids, vectors = uids_for(300), unit_vectors(300)
    index.add(uids[:299], vectors[:299])
    assert index.kind == "flat"
    index.add(uids[299:], vectors[299:])
    assert index.kind == "hnsw" and len(index) == 300
    assert all(index.search(v, 1)[0][0] == uid for uid, v in zip(uids, vectors, strict=True))


def test_empty_index_and_k_zero(tmp_path):
    index = FaissVectorIndex(tmp_path, model=MODEL, dimension=DIM)
    assert index.search(unit_vectors(1)[0], 5) == [] and len(index) == 0
    index.add([], [])
    index.add(["a"], unit_vectors(1))
    assert index.search(unit_vectors(1)[0], 0) == []
    index.remove(["a"])
    assert index.search(unit_vectors(1)[0], 5) == []


@pytest.mark.parametrize(
    ("uids", "vectors", "field"),
    [
        (["a"], [[0.1] * (DIM - 1)], "vectors"),
        (["a"], [[float("nan")] * DIM], "vectors"),
        (["a"], [[float("inf")] + [0.0] * (DIM - 1)], "vectors"),
        (["a"], [[1e39] + [0.0] * (DIM - 1)], "vectors"),  # overflows float32
        (["a"], [["x"] * DIM], "vectors"),
        (["a", "b"], [[0.1] * DIM], "vectors"),
        (["a", "a"], [[0.1] * DIM] * 2, "uids"),
        ([""], [[0.1] * DIM], "uids"),
        ("ab", [[0.1] * DIM] * 2, "uids"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(tmp_path, uids, vectors, field):
    index = FaissVectorIndex(tmp_path, model=MODEL, dimension=DIM)
    with pytest.raises(InputError) as caught:
        index.add(uids, vectors)
    assert caught.value.field == field
    assert len(index) == 0


def test_bad_query_is_refused(tmp_path):
    index, _, _ = built(tmp_path, 10)
    for vector, k, field in (([0.1] * 3, 5, "vector"), ([float("nan")] * DIM, 5, "vector"), ([0.1] * DIM, -1, "k")):
        with pytest.raises(InputError) as caught:
            index.search(vector, k)
        assert caught.value.field == field
    with pytest.raises(InputError):
        FaissVectorIndex(tmp_path, model=MODEL, dimension=0)


def test_status_reports_counts_files_and_staleness(tmp_path):
    index, uids, _ = built(tmp_path, 400, config=HNSW)
    index.remove(uids[:10])
    status = index.status()
    assert (status["kind"], status["count"], status["rows"], status["tombstones"]) == ("hnsw", 390, 400, 10)
    assert status["stale"] and status["unsaved_changes"] and status["files"] == {}
    index.save(store_checksum="c1")
    status = index.status()
    assert not status["stale"] and not status["unsaved_changes"]
    assert set(status["files"]) == {MANIFEST, _data_file(index, "index").name, _data_file(index, "ids").name}
    assert status["files"][_data_file(index, "index").name] == os.path.getsize(_data_file(index, "index"))
    assert index.status(store_checksum="c2")["stale"]  # the store moved on since the save
    index.remove(uids[10:11])
    assert index.status()["stale"]


# ------------------------------------------------------------------------------------ flat rows without FAISS


def test_a_flat_index_is_saved_as_numpy_rows_and_searched_without_faiss(tmp_path):
    index, uids, vectors = built(tmp_path, 300)
    index.remove(uids[:7])
    index.save(store_checksum="c1")
    assert _data_file(index, "index").suffix == ".npy"
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from kg.recall.vectors import FaissVectorIndex\n"
        f"index = FaissVectorIndex.load(Path({str(index.directory)!r}), model={MODEL!r}, dimension={DIM},"
        " store_checksum='c1')\n"
        f"hits = index.search({vectors[20].tolist()!r}, 3)\n"
        "print(json.dumps({'hits': hits, 'faiss': 'faiss' in sys.modules}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    answer = json.loads(done.stdout)
    assert answer["faiss"] is False
    assert [tuple(hit) for hit in answer["hits"]] == index.search(vectors[20], 3)
    assert answer["hits"][0][0] == uids[20]


def test_a_flat_index_saved_by_faiss_before_is_still_read(tmp_path):
    import faiss  # noqa: PLC0415 - writes the earlier format: an IndexIDMap over IndexFlatIP

    index, uids, vectors = built(tmp_path, 50)
    index.remove(uids[:5])
    path = index.save(store_checksum="c1")
    manifest = json.loads(path.read_text())
    ids = json.loads(_data_file(index, "ids").read_text())["ids"]
    old = faiss.IndexIDMap(faiss.IndexFlatIP(DIM))
    old.add_with_ids(np.ascontiguousarray(vectors[5:][::-1]), np.asarray(ids[::-1], dtype=np.int64))  # any row order
    manifest["files"]["index"] = write_file(
        index.directory, "index", ".faiss", lambda p: faiss.write_index(old, str(p))
    )
    path.write_text(json.dumps(manifest))
    loaded = load(index)
    assert loaded is not None and len(loaded) == 45
    for query in unit_vectors(10, seed=4):
        assert [uid for uid, _ in loaded.search(query, 5)] == [uid for uid, _ in index.search(query, 5)]
    loaded.add(["new"], [vectors[0]])
    loaded.save(store_checksum="c1")
    assert _data_file(loaded, "index").suffix == ".npy" and load(loaded) is not None


def test_flat_rows_that_do_not_fit_the_id_map_are_refused(tmp_path):
    index, _, _ = built(tmp_path, 20)
    path = index.save(store_checksum="c1")
    manifest = json.loads(path.read_text())
    wrong = unit_vectors(19)  # a row short, with a valid name and hash: the shape check refuses it

    def save(path: Path) -> None:
        with path.open("wb") as handle:  # np.save(path) would add its own ".npy" to the temp file's name
            np.save(handle, wrong)

    manifest["files"]["index"] = write_file(index.directory, "index", ".npy", save)
    path.write_text(json.dumps(manifest))
    assert load(index) is None


def test_exact_scores_of_queued_items_equal_the_flat_index_scores(tmp_path):
    index, uids, vectors = built(tmp_path, 40)
    query = unit_vectors(1, seed=9)[0]
    exact = exact_scores(query.tolist(), {uid: v.tolist() for uid, v in zip(uids, vectors, strict=True)})
    assert exact[:10] == index.search(query, 10)  # the same function: the same float32 similarities
