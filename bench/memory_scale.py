"""Memory-lifecycle scale benchmark. Prints one JSON line.

    python bench/memory_scale.py                 # 10k consolidation candidates, 10k beliefs, 365 days of logs
    python bench/memory_scale.py --candidates 2000 --beliefs 2000 --days 60     # a quick run
    python bench/memory_scale.py --sections daily_log --stores 10000             # daily-log appends only

Targets (issue 3): consolidating 10,000 candidates under 1 s and at least 20x faster than the seed's
all-pairs grouping in the same run; conflict detection over 10,000 beliefs under 1 s; hierarchy build
over 365 days of logs under 2 s. Daily log (issue 18): stores/s of ``memory_store_item`` with 10,000 items in one
day (one daily log), one by one and in batches (``store_many``), and the catch-up at the next open.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bdi_conflicts  # the conflict-detection benchmark (also runnable alone)
import hierarchy  # the time-hierarchy benchmark (also runnable alone)
from hierarchy import timed

import kg
from kg.clock import FixedClock
from kg.ids import new_id
from kg.memory.consolidation import Consolidator, group_by_tags, group_naive
from kg.models import MemoryItem, MemoryStoreKind
from kg.ports import StoreLimits

AGENT = "bench-agent"
START = datetime(2025, 1, 1, tzinfo=UTC)


def candidate_items(n: int, seed: int) -> list[MemoryItem]:
    """``n`` long-lived short-term candidates with 1-4 tags from a 500-tag vocabulary."""
    rng = random.Random(seed)
    vocab = [f"tag{i}" for i in range(500)]
    return [
        MemoryItem(
            uid=new_id("memory"),
            agent_id=AGENT,
            content=f"memory {i} about {' '.join(rng.sample(vocab, 2))}",
            importance=round(rng.uniform(0.6, 1.0), 3),
            tags=rng.sample(vocab, rng.randint(1, 4)),
            store=MemoryStoreKind.SHORT_TERM,
            expires_at=START + timedelta(days=30),
            created_at=START + timedelta(seconds=i),
        )
        for i in range(n)
    ]


def consolidation(root: Path, n: int, seed: int) -> dict[str, Any]:
    """Grouping alone (inverted index vs all pairs, same input) and the whole run on a real workspace."""
    items = candidate_items(n, seed)
    fast, fast_s = timed(lambda: group_by_tags(items))
    naive, naive_s = timed(lambda: group_naive(items))
    same = [[i.uid for i in g] for g in fast] == [[i.uid for i in g] for g in naive]
    clock = FixedClock(START + timedelta(days=1))
    with kg.init_workspace(root / "consolidation", clock=clock) as ws:
        ws.agents.add(AGENT)
        ws.ports.memory.add(items, limits=StoreLimits(short_term_capacity=n), now=clock.now())
        result, run_s = timed(lambda: Consolidator(ws.memory).run(AGENT))
    return {
        "candidates": result.candidates,
        "groups_merged": len(result.groups),
        "promoted_alone": len(result.promoted),
        "grouping_inverted_index_s": round(fast_s, 4),
        "grouping_all_pairs_s": round(naive_s, 4),
        "speedup": round(naive_s / fast_s, 1),
        "same_groups": same,
        "end_to_end_s": round(run_s, 3),
        "target": "< 1 s, >= 20x faster than all pairs",
    }


def daily_log(root: Path, n: int, batch: int) -> dict[str, Any]:
    """``n`` items stored in one day through the memory service: one call per item, then ``store_many`` batches
    (when the service has it), each into its own workspace; and the daily-log catch-up when it is reopened."""
    os.environ["MABOS_EMBEDDER"] = "none"  # the store path only: no model load
    report: dict[str, Any] = {"items": n, "batch": batch}
    clock = FixedClock(START)
    step = timedelta(seconds=max(1, 86_000 // max(n, 1)))

    def one_by_one(ws: kg.Workspace) -> None:
        for i in range(n):
            ws.memory.store_item(AGENT, f"daily log entry {i} about invoices and renewals", type="event",
                                 store="long_term", tags=["bench"])  # fmt: skip
            clock.advance(step)

    with kg.init_workspace(root / "daily-single", clock=clock) as ws:
        ws.agents.add(AGENT)
        _, single_s = timed(lambda: one_by_one(ws))
    report["single_s"] = round(single_s, 3)
    report["single_stores_per_s"] = round(n / single_s, 1)
    log = root / "daily-single" / "agents" / AGENT / "memory" / f"{START.date().isoformat()}.md"
    report["log_bytes"] = log.stat().st_size
    _, reopen_s = timed(lambda: kg.open_workspace(root / "daily-single", clock=clock).close())
    report["reopen_s"] = round(reopen_s, 4)
    clock = FixedClock(START)
    with kg.init_workspace(root / "daily-batch", clock=clock) as ws:
        if not hasattr(ws.memory, "store_many"):
            return report
        ws.agents.add(AGENT)

        def batched() -> None:
            for start in range(0, n, batch):
                ws.memory.store_many(AGENT, [
                    {"content": f"daily log entry {i} about invoices and renewals", "type": "event",
                     "store": "long_term", "tags": ["bench"]} for i in range(start, min(n, start + batch))
                ])  # fmt: skip
                clock.advance(step * batch)

        _, batch_s = timed(batched)
    report["batched_s"] = round(batch_s, 3)
    report["batched_stores_per_s"] = round(n / batch_s, 1)
    return report


SECTIONS = ("consolidation", "conflicts", "hierarchy", "daily_log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=365, help="days of daily logs for the hierarchy build")
    parser.add_argument("--stores", type=int, default=10_000, help="items stored in one day (daily-log section)")
    parser.add_argument("--batch", type=int, default=100, help="items per store_many call (daily-log section)")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, of {', '.join(SECTIONS)}")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--dir", type=Path, default=None, help="where to build workspaces (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mabos-memory-bench-", dir=args.dir, ignore_cleanup_errors=True) as scratch:
        root = Path(scratch)
        wanted = set(args.sections.split(","))
        runs = {
            "consolidation": lambda: consolidation(root, args.candidates, args.seed),
            "conflicts": lambda: bdi_conflicts.run(args.beliefs, max(1, args.beliefs // 4), args.seed),
            "hierarchy": lambda: hierarchy.run(args.days, 20, args.seed),
            "daily_log": lambda: daily_log(root, args.stores, args.batch),
        }
        report: dict[str, Any] = {"benchmark": "memory_scale"}
        report.update({name: run() for name, run in runs.items() if name in wanted})
        report["python"] = platform.python_version()
        print(json.dumps(report))


if __name__ == "__main__":
    main()
