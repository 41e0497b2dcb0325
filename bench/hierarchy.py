"""Time-hierarchy benchmark (R2): build weekly/monthly/quarterly summaries of a year of daily logs.

    python bench/hierarchy.py                       # 365 days x 20 entries, scope all
    python bench/hierarchy.py --days 730 --entries 40

Prints one JSON line: the cold build (every summary written), the warm rebuild (nothing stale),
the rebuild after touching one daily log (its week, month and quarter), and a weekly search.
Target (issue 3): the cold build over 365 days of logs under 2 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kg.clock import FixedClock
from kg.ids import new_id
from kg.memory import files
from kg.memory.hierarchy import build_hierarchy, search_hierarchy

T = TypeVar("T")
AGENT = "bench-agent"
TYPES = ["event", "decision", "outcome", "lesson", "fact", "observation", "preference", "goal"]
TAGS = ["auth", "billing", "pricing", "acme", "globex", "hiring", "infra", "security", "sales", "support"]
WORDS = [
    "customer",
    "renewal",
    "contract",
    "invoice",
    "latency",
    "deploy",
    "rollback",
    "incident",
    "pipeline",
    "forecast",
    "quota",
    "churn",
    "onboarding",
    "migration",
    "schema",
    "token",
    "password",
    "review",
    "roadmap",
    "budget",
    "vendor",
    "partner",
    "launch",
    "campaign",
]


def write_logs(workspace: Path, start: date, days: int, per_day: int, seed: int) -> None:
    """``days`` daily logs of ``per_day`` entries each, in the shape :func:`files.daily_log_entry` writes."""
    rng = random.Random(seed)
    for offset in range(days):
        day = start + timedelta(days=offset)
        parts = [files.daily_log_header(day)]
        for n in range(per_day):
            when = datetime(day.year, day.month, day.day, 8 + n * 12 // per_day, rng.randrange(60), tzinfo=UTC)
            content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
            parts.append(files.daily_log_entry(when=when, uid=new_id("memory"), type_=rng.choice(TYPES),
                                               importance=round(rng.random(), 2), store="short_term",
                                               tags=rng.sample(TAGS, rng.randint(0, 3)), content=content))  # fmt: skip
        files.atomic_write(files.daily_log_path(workspace, AGENT, day), "".join(parts))


def timed(func: Callable[[], T]) -> tuple[T, float]:
    """Call ``func`` and return (its result, seconds)."""
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--entries", type=int, default=20, help="Entries per daily log.")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps(run(args.days, args.entries, args.seed)))


def run(days: int, entries: int, seed: int) -> dict[str, Any]:
    """Write ``days`` daily logs in a temporary workspace and time the builds and searches."""
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    with tempfile.TemporaryDirectory(prefix="mabos-bench-hierarchy-", ignore_cleanup_errors=True) as scratch:
        root = Path(scratch)
        start = date(2025, 1, 1)
        write_logs(root, start, days, entries, seed)
        cold, cold_s = timed(lambda: build_hierarchy(root, AGENT, scope="all", clock=clock))
        warm, warm_s = timed(lambda: build_hierarchy(root, AGENT, scope="all", clock=clock))
        touched = files.daily_log_path(root, AGENT, start + timedelta(days=days // 2))
        files.atomic_append(touched, "A hand-written note about the renewal.\n")
        after, touch_s = timed(lambda: build_hierarchy(root, AGENT, scope="all", clock=clock))
        _, search_s = timed(lambda: search_hierarchy(root, AGENT, "renewal contract", level="weekly"))
        _, daily_search_s = timed(lambda: search_hierarchy(root, AGENT, "renewal contract", level="daily"))
        result = {
            "bench": "hierarchy",
            "days": days,
            "entries_per_day": entries,
            "summaries": len(cold.written),
            "cold_build_s": round(cold_s, 3),
            "warm_rebuild_s": round(warm_s, 3),
            "warm_unchanged": len(warm.unchanged),
            "touch_one_rebuild_s": round(touch_s, 3),
            "touch_one_rewritten": len(after.written),
            "search_weekly_s": round(search_s, 4),
            "search_daily_s": round(daily_search_s, 4),
            "target_cold_build_s": 2.0,
            "ok": cold_s < 2.0,
            "python": platform.python_version(),
        }
        return result


if __name__ == "__main__":
    main()
