"""Fact-store benchmark: bulk assert throughput and pattern-query latency. Prints one JSON line.

    python bench/facts.py                     # 100k bulk assert, 1M-fact store for queries
    python bench/facts.py --bulk 20000 --store-size 100000 --queries 500   # a quick run

Targets (issue 2): bulk assert >= 20,000 facts/s through the Python API in batches; a
subject + predicate pattern query on a 1M-fact store answers with p95 under 5 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kg

AGENT = "bench-agent"
PREDICATES = [f"p{i}" for i in range(50)]


def synthetic_facts(n: int, *, entities: int, seed: int) -> list[dict[str, Any]]:
    """``n`` distinct facts over ``entities`` subjects and 50 predicates, as plain dicts (API input)."""
    rng = random.Random(seed)
    return [
        {
            "subject": f"e{rng.randrange(entities)}",
            "predicate": PREDICATES[i % len(PREDICATES)],
            "object": f"v{i}",
            "confidence": round(rng.uniform(0.5, 1.0), 3),
            "source": "bench",
        }
        for i in range(n)
    ]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def bulk(ws: kg.Workspace, facts: list[dict[str, Any]], batch: int) -> tuple[int, float]:
    """Assert ``facts`` through the API (validation, scope checks, outbox, FTS, commits): (created, seconds)."""
    start = time.perf_counter()
    result = ws.facts.assert_many(AGENT, facts, batch_size=batch)
    return result.created, time.perf_counter() - start


def bulk_runs(root: Path, n: int, batch: int, seed: int, repeat: int) -> dict[str, Any]:
    """Bulk-assert ``n`` facts into a fresh workspace ``repeat`` times; report the median rate."""
    facts = synthetic_facts(n, entities=max(1, n // 10), seed=seed)
    rates = []
    for run in range(repeat):
        with kg.init_workspace(root / f"bulk-{run}") as ws:
            ws.agents.add(AGENT)
            created, seconds = bulk(ws, facts, batch)
        rates.append(round(created / seconds))
    return {
        "facts": n,
        "batch": batch,
        "runs_facts_per_s": rates,
        "facts_per_s": round(statistics.median(rates)),
    }


def queries(ws: kg.Workspace, pairs: list[tuple[str, str]], count: int, seed: int) -> dict[str, float]:
    """Subject + predicate queries through the service (scope checks included) for pairs that exist."""
    rng = random.Random(seed)
    latencies, hits = [], 0
    for _ in range(count):
        subject, predicate = rng.choice(pairs)
        start = time.perf_counter()
        found = ws.facts.query(AGENT, subject=subject, predicate=predicate)
        latencies.append((time.perf_counter() - start) * 1000)
        hits += len(found)
    return {
        "queries": count,
        "mean_hits": round(hits / count, 2),
        "p50_ms": round(statistics.median(latencies), 3),
        "p95_ms": round(percentile(latencies, 0.95), 3),
        "p99_ms": round(percentile(latencies, 0.99), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulk", type=int, default=100_000, help="facts for the bulk-assert timing")
    parser.add_argument("--store-size", type=int, default=1_000_000, help="facts in the store for query timing")
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--batch", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="bulk runs (the median is reported)")
    parser.add_argument("--dir", type=Path, default=None, help="where to build workspaces (default: a temp dir)")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="mabos-bench-", dir=args.dir))
    try:
        bulk_result = bulk_runs(root, args.bulk, args.batch, args.seed, args.repeat)
        entities = max(1, args.store_size // 20)  # ~20 facts per subject, ~0.4 per (subject, predicate)
        with kg.init_workspace(root / "large") as ws:
            ws.agents.add(AGENT)
            built, build_seconds, pairs = 0, 0.0, []
            for start in range(0, args.store_size, 200_000):  # generate in slices to bound memory
                chunk = synthetic_facts(
                    min(200_000, args.store_size - start), entities=entities, seed=args.seed + start
                )
                for fact in chunk:
                    fact["object"] = f"v{start}-{fact['object']}"
                created, seconds = bulk(ws, chunk, args.batch)
                built, build_seconds = built + created, build_seconds + seconds
                pairs += [(f["subject"], f["predicate"]) for f in chunk[:: max(1, len(chunk) // 2_000)]]
            ws.facts.query(AGENT, subject="e0", predicate="p0")  # warm the page cache like a running service
            query_result = queries(ws, pairs, args.queries, args.seed + 2)
            size_mb = round((root / "large" / ".mabos" / "kg.sqlite").stat().st_size / 1e6, 1)
        print(
            json.dumps(
                {
                    "benchmark": "facts",
                    "bulk_assert": {**bulk_result, "target_facts_per_s": 20_000},
                    "store": {"facts": built, "build_seconds": round(build_seconds, 1), "db_mb": size_mb},
                    "pattern_query_subject_predicate": {**query_result, "target_p95_ms": 5.0},
                    "python": platform.python_version(),
                    "sqlite": sqlite3.sqlite_version,
                    "cpus": os.cpu_count(),
                }
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
