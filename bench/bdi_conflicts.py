"""BDI conflict-detection benchmark (R5): the indexed detector against the seed's all-pairs loop. One JSON line.

    python bench/bdi_conflicts.py                    # 10,000 beliefs (the issue's target size)
    python bench/bdi_conflicts.py --beliefs 2000     # a quick run

The beliefs are created through the real store (``ws.bdi.add``) and read back with ``ws.bdi.list``.
Both detectors then run on the same beliefs with the same subject rule: the indexed one groups by
subject (``detect_belief_conflicts``, 50 beliefs per chunk), the naive one is the seed's nested loop
over every pair. Target (issue 3): under 1 s for 10,000 beliefs (the seed's practical limit is ~500).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kg
from kg.models import BDINode, NodeKind
from reasoning.bdi import detect_belief_conflicts, run_cycle
from reasoning.bdi.conflicts import belief_subject, normalize_text

AGENT = "bench-agent"
SUBJECTS = ["Acme", "The Globex deal", "Initech's revenue", "subject: market {}\nnotes", "Umbrella Corp"]
STATEMENTS = ["is growing", "is shrinking", "is stable", "has 50 staff", "will close in Q3"]


def synthetic_beliefs(n: int, *, subjects: int, seed: int) -> list[tuple[str, float]]:
    """``n`` (content, certainty) pairs over about ``subjects`` distinct subjects."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        number = rng.randrange(subjects)
        template = SUBJECTS[number % len(SUBJECTS)]
        subject = template.format(number) if "{}" in template else f"{template} {number}"
        rows.append((f"{subject} {rng.choice(STATEMENTS)}", round(rng.uniform(0.4, 1.0), 2)))
    return rows


def naive_pairs(beliefs: list[BDINode]) -> int:
    """The seed's detector: parse each belief once, then compare every pair."""
    parsed = [(belief_subject(b.content), b.certainty or 0.0, normalize_text(b.content)) for b in beliefs]
    pairs = 0
    for i in range(len(parsed)):
        subject_a, certainty_a, content_a = parsed[i]
        for j in range(i + 1, len(parsed)):
            subject_b, certainty_b, content_b = parsed[j]
            if (subject_a and subject_a == subject_b and certainty_a > 0.6 and certainty_b > 0.6
                    and content_a != content_b):  # fmt: skip
                pairs += 1
    return pairs


def timed(func: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--subjects", type=int, default=2_500, help="distinct subjects (default 2,500)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-naive", action="store_true", help="do not run the all-pairs loop")
    args = parser.parse_args()
    print(json.dumps(run(args.beliefs, args.subjects, args.seed, skip_naive=args.skip_naive)))


def run(n_beliefs: int, subjects: int, seed: int, *, skip_naive: bool = False) -> dict[str, Any]:
    """Build ``n_beliefs`` beliefs in a temporary workspace and time conflict detection and the cycle."""
    with tempfile.TemporaryDirectory(prefix="mabos-bench-bdi-", ignore_cleanup_errors=True) as scratch:
        root = Path(scratch)
        with kg.init_workspace(root / "ws") as ws:
            ws.agents.add(AGENT)
            rows = synthetic_beliefs(n_beliefs, subjects=subjects, seed=seed)
            _, build_s = timed(lambda: [ws.bdi.add(NodeKind.BELIEF, AGENT, c, certainty=p) for c, p in rows])
            beliefs, load_s = timed(ws.bdi.list, AGENT, NodeKind.BELIEF, owner=AGENT, status="active", limit=100_000)
            conflicts, detect_s = timed(detect_belief_conflicts, beliefs)
            result, cycle_s = timed(run_cycle, ws, AGENT)
            naive, naive_s = (None, None) if skip_naive else timed(naive_pairs, beliefs)
        pairs = sum(c.pairs for c in conflicts)
        report: dict[str, Any] = {
            "benchmark": "bdi_conflicts",
            "beliefs": len(beliefs),
            "subjects": subjects,
            "conflict_groups": len(conflicts),
            "conflict_pairs": pairs,
            "chunks": result.chunks_processed,
            "build_s": round(build_s, 3),
            "load_s": round(load_s, 4),
            "detect_s": round(detect_s, 4),
            "cycle_s": round(cycle_s, 4),
            "naive_s": None if naive_s is None else round(naive_s, 3),
            "speedup": None if naive_s is None else round(naive_s / detect_s, 1),
            "agree": None if naive is None else naive == pairs == result.conflicts_detected,
            "target_met": detect_s < 1.0 and cycle_s < 1.0,
            "python": platform.python_version(),
            "machine": platform.machine(),
        }
        return report


if __name__ == "__main__":
    main()
