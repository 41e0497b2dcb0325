"""Recall latency at scale (issue 4): p50/p95 with and without the query embedding, ingestion, memory.

    python bench/recall_latency.py --n 10000,100000,1000000
    python bench/recall_latency.py --n 20000 --queries 100       # a quick run

Each size runs in its own process (so its peak memory is its own) on a fresh workspace:

1. **Ingest**: ``n`` synthetic long-term observations (8-16 words of a 20,000-word Zipf vocabulary) through
   the store's batch insert (FTS5 with the context column, outbox events), in batches of 5,000.
2. **Vectors**: embedding ``n`` texts with MiniLM would take hours at 1M (the measured rate is printed:
   ``embed_items_per_s`` on a 512-item sample), so the index gets clustered synthetic unit vectors
   (bench/vector_index.py's generator) and is saved as the sidecar the engine loads; the queue is marked done.
   Search cost does not depend on where the vectors came from.
3. **Queries** through ``MemoryService.recall`` (hybrid, weighted fusion, limit 10, ``touch=False``):
   *without embedding* - query texts whose vectors are already in the embedding cache (a second recall
   of the same text); *with embedding* - new texts, embedded on one thread by the real model.

``--query-prefix TEXT`` starts every query text with TEXT: ``--query-prefix "When did"`` makes every query a
when-question, so the time boost (kg.recall.boosts) tests every candidate's text.

``--peer-setting KEY=JSON`` (repeatable) overrides engine settings (``RecallSettings`` fields) for a peer
configuration measured in the same process, on the same store and query texts, alternating query by query
with the defaults (who goes first alternates too): ``peer_p50_ms_without_embedding`` and
``peer_p95_ms_without_embedding``. For example the scoring before 2026-11-26 (no feedback search, relative
fusion):

    python bench/recall_latency.py --n 20000 --peer-setting feedback_docs=0 \
        --peer-setting 'fusion={"vector_weight": 0.4, "bm25_weight": 0.6, "normalization": "relative"}'

Prints one JSON line per size to stderr as it goes and, last, one JSON object on stdout.
Targets: at 100k p95 <= 10 ms without the embedding and <= 30 ms with it; 1M within 8 GiB.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vector_index import clustered, percentile

from kg.clock import FixedClock
from kg.ids import new_id
from kg.models import MemoryItem, MemoryStoreKind
from kg.ports import StoreLimits
from kg.recall.engine import RecallSettings
from kg.recall.sidecar import embedding_text
from kg.recall.vectors import FaissVectorIndex
from kg.workspace import Workspace, init_workspace

AGENT = "bench"
BATCH = 5_000
VOCABULARY = 20_000
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def sentence(rng: random.Random, words: list[str], cumulative: list[float], lo: int, hi: int) -> str:
    return " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(lo, hi)))


def rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def ingest(ws: Workspace, n: int, rng: random.Random, words: list[str], cumulative: list[float], *,
           start: datetime) -> list[str]:  # fmt: skip
    """``n`` synthetic long-term observations, 30 s apart, in batches; their uids."""
    limits = StoreLimits()
    uids: list[str] = []
    for first in range(0, n, BATCH):
        items = []
        for i in range(first, min(n, first + BATCH)):
            at = start + timedelta(seconds=30 * i)
            items.append(MemoryItem(uid=new_id("memory"), agent_id=AGENT, scope=f"agent:{AGENT}",
                                    content=sentence(rng, words, cumulative, 8, 16), store=MemoryStoreKind.LONG_TERM,
                                    created_at=at, updated_at=at))  # fmt: skip
        ws.ports.memory.add(items, limits=limits, now=items[-1].created_at)
        uids += [i.uid for i in items]
    return uids


def timed_queries(ws: Workspace, texts: list[str],
                  peer: dict[str, Any] | None) -> tuple[list[float], list[float], list[float]]:  # fmt: skip
    """Seconds per recall of each text: with its embedding, then without (cached), and the peer's without."""
    recall = ws.memory.recall
    recall(AGENT, "first recall loads the index", limit=10, touch=False)
    with_embedding: list[float] = []
    without: list[float] = []
    peer_without: list[float] = []
    for text in texts:
        began = time.perf_counter()
        result = recall(AGENT, text, limit=10, touch=False)
        with_embedding.append(time.perf_counter() - began)
        if result.mode != "hybrid":
            raise SystemExit(f"recall ran {result.mode}: {result.notes}")
    defaults = ws.recall_engine.settings
    other = RecallSettings.model_validate(defaults.model_dump() | peer) if peer else None
    for n_text, text in enumerate(texts):  # the same texts again: their vectors now come from the cache
        runs = [(defaults, without)] if other is None else [(defaults, without), (other, peer_without)]
        for settings, times in runs if n_text % 2 == 0 else runs[::-1]:
            ws.recall_engine.settings = settings
            began = time.perf_counter()
            recall(AGENT, text, limit=10, touch=False)
            times.append(time.perf_counter() - began)
    ws.recall_engine.settings = defaults
    return with_embedding, without, peer_without


def one(n: int, queries: int, seed: int, peer: dict[str, Any] | None = None, prefix: str = "") -> dict[str, Any]:
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))  # Zipf
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = FixedClock(start)
    with tempfile.TemporaryDirectory(prefix="mabos-latency-") as tmp:
        ws = init_workspace(Path(tmp) / "ws", clock=clock)
        ws.agents.add(AGENT)
        began = time.perf_counter()
        uids = ingest(ws, n, rng, words, weights, start=start)
        ingest_s = time.perf_counter() - began
        clock.set(start + timedelta(seconds=30 * n + 60))

        sample = [i for _, i in ws.ports.memory.scan(0, 512)]
        if ws.embedder is None or ws.vectors is None:
            raise SystemExit("the bench needs the local embedder (unset MABOS_EMBEDDER)")
        ws.embedder.embed(["warm up the model"])
        began = time.perf_counter()
        ws.embedder.embed([embedding_text(i) + " sample" for i in sample], batch=True)
        embed_rate = len(sample) / (time.perf_counter() - began)

        began = time.perf_counter()
        queue = ws.ports.index_queue
        index = FaissVectorIndex(ws.vectors.directory, model=ws.embedder.model, dimension=ws.embedder.dimension,
                                 store_checksum=queue.store_id())  # fmt: skip
        vectors = clustered(n, ws.embedder.dimension, seed=seed)
        for first in range(0, n, 50_000):
            index.add(uids[first : first + 50_000], vectors[first : first + 50_000])
        del vectors
        position = queue.last()
        index.save(store_checksum=queue.store_id(), extra={"queue_position": position})
        queue.done(position)
        index_s = time.perf_counter() - began
        del index

        texts = [" ".join((prefix, sentence(rng, words, weights, 2, 5))).strip() for _ in range(queries)]
        with_embedding, without, peer_without = timed_queries(ws, texts, peer)
        db_bytes = ws.ports.stats()["size_bytes"]
        kind = ws.vectors.status()["kind"]
        ws.close()
    ms = lambda values, q: round(percentile(values, q) * 1000, 2)  # noqa: E731
    return {
        "n": n, "queries": queries, "query_prefix": prefix, "index_kind": kind,
        "ingest_items_per_s": round(n / ingest_s, 1), "index_build_s": round(index_s, 1),
        "embed_items_per_s": round(embed_rate, 1),
        "p50_ms_without_embedding": ms(without, 0.5), "p95_ms_without_embedding": ms(without, 0.95),
        "p50_ms_with_embedding": ms(with_embedding, 0.5), "p95_ms_with_embedding": ms(with_embedding, 0.95),
        "db_mib": round(db_bytes / 2**20, 1), "peak_rss_mib": rss_mib(),
    } | ({"peer_settings": peer, "peer_p50_ms_without_embedding": ms(peer_without, 0.5),
          "peer_p95_ms_without_embedding": ms(peer_without, 0.95)} if peer else {})  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", default="10000,100000,1000000", help="comma-separated corpus sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--peer-setting", action="append", default=[], metavar="KEY=JSON",
                        help="a RecallSettings field of the peer configuration measured alongside")  # fmt: skip
    parser.add_argument("--query-prefix", default="", help='start every query with this, e.g. "When did"')
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # one size, in this process
    args = parser.parse_args()
    peer = {key: json.loads(value) for key, _, value in (p.partition("=") for p in args.peer_setting)}
    if args.one is not None:
        print(json.dumps(one(args.one, args.queries, args.seed, peer or None, args.query_prefix)))
        return
    results = []
    for n in (int(x) for x in args.n.split(",")):
        argv = [sys.executable, __file__, "--one", str(n), "--queries", str(args.queries), "--seed", str(args.seed),
                f"--query-prefix={args.query_prefix}", *(f"--peer-setting={p}" for p in args.peer_setting)]  # fmt: skip
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)  # noqa: S603 - this script, our ints
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"size {n} failed")
        line = proc.stdout.strip().splitlines()[-1]
        print(line, file=sys.stderr)
        results.append(json.loads(line))
    print(json.dumps({"benchmark": "recall_latency", "results": results, "python": platform.python_version(),
                      "machine": platform.machine()}))  # fmt: skip


if __name__ == "__main__":
    main()
