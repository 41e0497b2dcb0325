"""FAISS sidecar benchmark: flat vs HNSW query latency and recall, filtered search, save/load. One JSON line.

    python bench/vector_index.py                          # 100k x 384-d clustered unit vectors
    python bench/vector_index.py --n 20000 --queries 200  # a quick run
    python bench/vector_index.py --vectors emb.npy        # real embeddings (float32 rows); last --queries are queries

Data are clustered unit vectors of low intrinsic dimension (random ones are a misleading worst case).
Recall@10 of HNSW is measured against the exact flat index on the same data; latency is one query at a
time through ``FaissVectorIndex.search`` (uid mapping and filtering included, one OpenMP thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kg.recall.vectors import FaissVectorIndex, VectorIndexConfig

MODEL = "bench"


def clustered(n: int, dim: int, *, seed: int, clusters: int = 200, latent: int = 24) -> np.ndarray:
    """``n`` unit vectors around ``clusters`` centres in a ``latent``-dimensional subspace, plus a little noise
    (text embeddings have a low intrinsic dimension; isotropic noise in 384-d is a worst case)."""
    rng = np.random.default_rng(seed)
    projection = rng.standard_normal((latent, dim)).astype(np.float32)
    centres = rng.standard_normal((clusters, latent)).astype(np.float32)
    points = centres[rng.integers(0, clusters, n)] + 0.5 * rng.standard_normal((n, latent)).astype(np.float32)
    rows = points @ projection + 0.05 * rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def timed_queries(
    index: FaissVectorIndex, queries: np.ndarray, **kwargs: Any
) -> tuple[list[set[str]], dict[str, float]]:
    """Top-10 uid sets and p50/p95 latency in ms."""
    results, latencies = [], []
    for query in queries:
        start = time.perf_counter()
        hits = index.search(query, 10, **kwargs)
        latencies.append((time.perf_counter() - start) * 1000)
        results.append({uid for uid, _ in hits})
    return results, {"p50_ms": round(statistics.median(latencies), 3), "p95_ms": round(percentile(latencies, 0.95), 3)}


def build(
    root: Path, kind: str, uids: list[str], vectors: np.ndarray, ef_search: int
) -> tuple[FaissVectorIndex, float]:
    """An index of ``kind`` over the data, and the seconds it took."""
    threshold = 1 if kind == "hnsw" else len(uids) + 1
    config = VectorIndexConfig(hnsw_threshold=threshold, ef_search=ef_search)
    index = FaissVectorIndex(root / kind, model=MODEL, dimension=vectors.shape[1], config=config)
    start = time.perf_counter()
    for at in range(0, len(uids), 10_000):
        index.add(uids[at : at + 10_000], vectors[at : at + 10_000])
    if index.kind != kind:
        raise SystemExit(f"expected a {kind} index, got {index.kind}")
    return index, time.perf_counter() - start


def persistence(index: FaissVectorIndex) -> dict[str, Any]:
    """Save and verified-load times and file sizes."""
    start = time.perf_counter()
    index.save(store_checksum="bench")
    saved = time.perf_counter() - start
    start = time.perf_counter()
    loaded = FaissVectorIndex.load(index.directory, model=MODEL, dimension=index.dimension, store_checksum="bench")
    if loaded is None or len(loaded) != len(index):
        raise SystemExit("the saved index did not load back")
    files_mb = round(sum(index.status()["files"].values()) / 1e6, 1)
    return {"save_s": round(saved, 2), "load_s": round(time.perf_counter() - start, 2), "files_mb": files_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--ef-search", type=int, default=64)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--vectors", type=Path, default=None, help=".npy of unit rows instead of synthetic data")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the index files (default: a temp dir)")
    args = parser.parse_args()

    if args.vectors:
        rows = np.load(args.vectors).astype(np.float32)
        vectors, queries = rows[: -args.queries], rows[-args.queries :]
        args.n, args.dim = vectors.shape
    else:
        vectors = clustered(args.n, args.dim, seed=args.seed)
        queries = clustered(args.queries, args.dim, seed=args.seed + 1)
    uids = [f"M-{i:09d}" for i in range(args.n)]
    visible = set(uids[::10])
    data = str(args.vectors) if args.vectors else "synthetic"
    report: dict[str, Any] = {"benchmark": "vector_index", "data": data, "n": args.n, "dim": args.dim}
    with tempfile.TemporaryDirectory(
        prefix="mabos-bench-vectors-", dir=args.dir, ignore_cleanup_errors=True
    ) as scratch:
        root = Path(scratch)
        exact: list[set[str]] = []
        for kind in ("flat", "hnsw"):
            index, seconds = build(root, kind, uids, vectors, args.ef_search)
            found, latency = timed_queries(index, queries)
            _, filtered = timed_queries(index, queries, allowed=visible.__contains__)
            exact = exact or found
            recall = statistics.mean(len(a & b) / 10 for a, b in zip(found, exact, strict=True))
            report[kind] = {"build_s": round(seconds, 2), **latency, "recall@10": round(recall, 4),
                            "filtered_10pct": filtered, **persistence(index)}  # fmt: skip
            del index
        report |= {"queries": len(queries), "ef_search": args.ef_search, "cpus": os.cpu_count()}
        print(json.dumps(report))


if __name__ == "__main__":
    main()
