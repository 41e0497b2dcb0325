"""Fact-store benchmark: bulk assert against pyoxigraph, LUBM(1) import, pattern-query latency. One JSON line.

    python bench/facts.py                     # 100k bulk assert (3 runs), LUBM(1), 1M-fact store for queries
    python bench/facts.py --store-size 0      # the bulk and LUBM comparisons only
    python bench/facts.py --bulk 20000 --store-size 100000 --queries 500   # a quick run

The peer is pyoxigraph (an embedded, on-disk RDF store): the same triples (``urn:mabos:<term>`` IRIs, as
``mabos reason owl-rl`` maps terms) go into a fresh on-disk Store with ``bulk_extend`` in the same run,
alternating with ours, and the medians and their ratio are reported. LUBM(1) (``--lubm``, RDF/XML files)
is imported by ``kg.rdf.importer`` (rdflib parsing timed apart from storing) and by pyoxigraph's
``bulk_load`` (its Rust parser included in its time).

Targets: issue 2: bulk assert >= 20,000 facts/s, subject + predicate query p95 < 5 ms on 1M facts;
issue 22: bulk assert >= 100,000 facts/s in batches of 10,000 (about half of pyoxigraph's bulk load),
LUBM(1) stored in under 2 s.

Since migration 11 writers leave the full-text index to the first search: ``search_catch_up_seconds`` times
that catch-up after each load (pyoxigraph builds no full-text index at all), and
``facts_per_s_with_search_index`` counts it in.
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

import pyoxigraph as ox

import kg
from kg.facts_fast import fast_row
from kg.rdf.importer import IMPORT_BATCH, SUFFIX_FORMATS, RdfDocument, import_documents, rows_to_facts
from kg.rdf.parse import parse_documents

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
    result = ws.facts.assert_many(AGENT, facts, batch_size=batch, tune_process=True)  # as `mabos fact import`
    return result.created, time.perf_counter() - start


def write_floor(ws: kg.Workspace, facts: list[dict[str, Any]], batch: int) -> tuple[int, float]:
    """The write transactions alone: every batch validated and prepared first (untimed), then only the store's
    ``assert_prepared`` calls timed (insert, outbox events, commit; the full-text index is left to the first
    search, timed apart as ``search_catch_up_seconds``). What ``assert_many`` would reach if
    validation and row building cost nothing: the ceiling of this schema and these statements."""
    store = ws.ports.facts
    prepared = []
    for start in range(0, len(facts), batch):
        rows = [fast_row(AGENT, fact) for fact in facts[start : start + batch]]
        if any(row is None for row in rows):
            raise SystemExit("the write floor needs facts the fast path accepts")
        prepared.append(store.prepare(rows, asserted_by=AGENT))  # type: ignore[arg-type]
    created, seconds = 0, 0.0
    for ready in prepared:
        start_time = time.perf_counter()
        created += len(store.assert_prepared(ready))
        seconds += time.perf_counter() - start_time
    return created, seconds


def search_catch_up(ws: kg.Workspace, expected: int) -> float:
    """Seconds the first search after a load spends bringing the full-text index up to date (writers leave
    it to the search since migration 11): the cost moved out of the write transactions, paid once."""
    start = time.perf_counter()
    indexed = ws.ports.facts.catch_up_search()  # type: ignore[attr-defined]  # the SQLite adapter's own step, measured here
    seconds = time.perf_counter() - start
    if indexed != expected:
        raise SystemExit(f"search catch-up indexed {indexed} facts, expected {expected}")
    return round(seconds, 3)


def oxigraph_quads(facts: list[dict[str, Any]]) -> list[ox.Quad]:
    """The same facts as pyoxigraph quads in the default graph (terms as ``urn:mabos:<term>`` IRIs)."""
    return [
        ox.Quad(
            ox.NamedNode(f"urn:mabos:{f['subject']}"),
            ox.NamedNode(f"urn:mabos:{f['predicate']}"),
            ox.NamedNode(f"urn:mabos:{f['object']}"),
            ox.DefaultGraph(),
        )
        for f in facts
    ]


def oxigraph_bulk(path: Path, quads: list[ox.Quad]) -> tuple[int, float]:
    """Load ``quads`` into a fresh on-disk pyoxigraph store with ``bulk_extend``, flushed: (count, seconds)."""
    start = time.perf_counter()
    store = ox.Store(str(path))
    store.bulk_extend(quads)
    store.flush()
    seconds = time.perf_counter() - start
    return len(store), seconds


def bulk_runs(root: Path, n: int, batch: int, seed: int, repeat: int) -> dict[str, Any]:
    """Bulk-assert ``n`` facts into a fresh workspace and load them into a fresh pyoxigraph store, alternately,
    ``repeat`` times; report both median rates and their ratio."""
    facts = synthetic_facts(n, entities=max(1, n // 10), seed=seed)
    quads = oxigraph_quads(facts)
    ours, peer, floor, catch_up = [], [], [], []
    for run in range(repeat):
        with kg.init_workspace(root / f"bulk-{run}") as ws:
            ws.agents.add(AGENT)
            created, seconds = bulk(ws, facts, batch)
            catch_up.append(search_catch_up(ws, created))
        ours.append(round(created / seconds))
        with kg.init_workspace(root / f"floor-{run}") as ws:
            ws.agents.add(AGENT)
            written, seconds = write_floor(ws, facts, batch)
        floor.append(round(written / seconds))
        loaded, seconds = oxigraph_bulk(root / f"oxigraph-{run}", quads)
        peer.append(round(loaded / seconds))
    median_ours, median_peer = statistics.median(ours), statistics.median(peer)
    with_index = n / (n / median_ours + statistics.median(catch_up))
    return {
        "facts": n,
        "batch": batch,
        "runs_facts_per_s": ours,
        "facts_per_s": round(median_ours),
        "pyoxigraph_runs_triples_per_s": peer,
        "pyoxigraph_triples_per_s": round(median_peer),
        "ratio_ours_to_pyoxigraph": round(median_ours / median_peer, 3),
        "write_floor_runs_facts_per_s": floor,
        "write_floor_facts_per_s": round(statistics.median(floor)),
        "ratio_write_floor_to_pyoxigraph": round(statistics.median(floor) / median_peer, 3),
        "search_catch_up_runs_seconds": catch_up,
        "search_catch_up_seconds": round(statistics.median(catch_up), 3),
        "facts_per_s_with_search_index": round(with_index),
        "ratio_with_search_index_to_pyoxigraph": round(with_index / median_peer, 3),
    }


def lubm_runs(root: Path, data: Path, repeat: int) -> dict[str, Any] | None:
    """Import LUBM(1)'s RDF/XML files with ``mabos fact import``'s service and with pyoxigraph's bulk_load."""
    files = sorted(p for p in data.glob("*") if p.suffix.lower() in (".owl", ".rdf"))
    if not files:
        return None
    documents = [
        RdfDocument(name=p.name, format=SUFFIX_FORMATS[p.suffix.lower()], content=p.read_text(encoding="utf-8"),
                    base_iri=p.resolve().as_uri())
        for p in files
    ]  # fmt: skip
    store_s, parse_s, peer_s, floor_s, catch_up, triples, peer_triples = [], [], [], [], [], 0, 0
    facts = list(rows_to_facts(parse_documents(documents).rows, None))
    for run in range(repeat):
        with kg.init_workspace(root / f"lubm-{run}") as ws:
            ws.agents.add(AGENT)
            report = import_documents(ws, AGENT, documents, tune_process=True)  # as `mabos fact import`
            catch_up.append(search_catch_up(ws, report.created))
        store_s.append(report.store_seconds)
        parse_s.append(report.parse_seconds)
        with kg.init_workspace(root / f"lubm-floor-{run}") as ws:
            ws.agents.add(AGENT)
            floor_s.append(round(write_floor(ws, facts, IMPORT_BATCH)[1], 3))
        triples = report.created
        start = time.perf_counter()
        store = ox.Store(str(root / f"lubm-oxigraph-{run}"))
        for path in files:
            store.bulk_load(path=str(path), format=ox.RdfFormat.RDF_XML, base_iri=path.resolve().as_uri())
        store.flush()
        peer_s.append(round(time.perf_counter() - start, 3))
        peer_triples = len(store)
    ours_store, ours_parse, peer = (statistics.median(v) for v in (store_s, parse_s, peer_s))
    return {
        "files": len(files),
        "facts": triples,
        "ours_store_seconds": round(ours_store, 3),
        "ours_parse_seconds": round(ours_parse, 3),
        "ours_runs_store_seconds": store_s,
        "pyoxigraph_triples": peer_triples,
        "pyoxigraph_seconds": round(peer, 3),
        "pyoxigraph_runs_seconds": peer_s,
        "ratio_pyoxigraph_to_ours_store": round(peer / ours_store, 3),
        "write_floor_store_seconds": round(statistics.median(floor_s), 3),
        "write_floor_runs_store_seconds": floor_s,
        "target_store_seconds": 2.0,
        "parse_and_store_seconds": round(ours_parse + ours_store, 3),
        "search_catch_up_seconds": round(statistics.median(catch_up), 3),
        "search_catch_up_runs_seconds": catch_up,
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


def _platform() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bulk", type=int, default=100_000, help="facts for the bulk-assert timing")
    parser.add_argument("--store-size", type=int, default=1_000_000, help="facts in the store for query timing")
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="bulk runs (the median is reported)")
    parser.add_argument("--lubm", type=Path, default=Path("/work/shared/data/lubm1"), help="LUBM(1) RDF/XML files")
    parser.add_argument("--dir", type=Path, default=None, help="where to build workspaces (default: a temp dir)")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="mabos-bench-", dir=args.dir))
    try:
        bulk_result = bulk_runs(root, args.bulk, args.batch, args.seed, args.repeat)
        lubm_result = lubm_runs(root, args.lubm, args.repeat) if args.lubm.is_dir() else None
        if args.store_size <= 0:
            print(json.dumps({"benchmark": "facts", "bulk_assert": {**bulk_result, "target_facts_per_s": 100_000},
                              "lubm1_import": lubm_result, "pyoxigraph": ox.__version__, **_platform()}))  # fmt: skip
            return
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
                    "bulk_assert": {**bulk_result, "target_facts_per_s": 100_000},
                    "lubm1_import": lubm_result,
                    "store": {"facts": built, "build_seconds": round(build_seconds, 1), "db_mb": size_mb},
                    "pattern_query_subject_predicate": {**query_result, "target_p95_ms": 5.0},
                    "pyoxigraph": ox.__version__,
                    **_platform(),
                }
            )
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
