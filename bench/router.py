"""Router benchmark (issue 31): top-1 and top-3 hit rates of auto-selection from plain-English problems. One JSON line.

    python bench/router.py                 # cues + semantic similarity (the local embedder) and the peer
    python bench/router.py --no-embedder   # cues only (what runs when the model cannot load)

Sets: ``tests/data/reasoning/router_dev.jsonl`` (the cues were tuned on it), ``router_heldout.jsonl`` (written after
the cues; its misses were seen once, nothing was tuned on it) and ``router_heldout2.jsonl`` (written after the cues
were frozen; never tuned on). Each problem lists the methods a careful reader would accept. A hit is a
ranked method in that list. The router runs as ``reason`` runs it (``semantic=None``: the embedder is asked
only when the cues do not decide the first method), and ``semantic=True`` (always compared) beside it.

The peer, in the same run, is the keyword router this one replaced: ``classify_problem`` (keywords per
dimension) then the seed's profile scoring with catalogue-order tie-break (``score_methods_for_problem``),
on today's catalogue.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kg.ports import Embedder
from reasoning.router import classify_problem, score_methods_for_problem
from reasoning.router.textroute import route

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "reasoning"
Ranker = Callable[[str], list[str]]


def load(name: str) -> list[dict[str, Any]]:
    """The problems of one set."""
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def rates(rows: list[dict[str, Any]], ranker: Ranker) -> dict[str, Any]:
    """Top-1 and top-3 hit rates of ``ranker`` over ``rows``, with the misses at top-1."""
    top1 = top3 = 0
    misses = []
    for row in rows:
        ranked = ranker(row["problem"])
        top1 += ranked[0] in row["accept"]
        top3 += any(m in row["accept"] for m in ranked[:3])
        if ranked[0] not in row["accept"]:
            misses.append({"problem": row["problem"][:70], "accept": row["accept"], "got": ranked[:3]})
    n = len(rows)
    return {"n": n, "top1": round(top1 / n, 4), "top3": round(top3 / n, 4), "misses_top1": misses}


def keyword_peer(problem: str) -> list[str]:
    """The replaced router: keyword classification, then the seed's scoring with catalogue-order ties."""
    return [s.method for s in score_methods_for_problem(classify_problem(problem))]


def router(embedder: Embedder | None, semantic: bool | None) -> Ranker:
    """This router as ``reason`` runs it from text."""
    return lambda problem: [s.method for s in route(problem, None, embedder, semantic=semantic).scores]


def main() -> None:
    """Run both sets through both routers and print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-embedder", action="store_true", help="Cues only (no semantic similarity).")
    parser.add_argument("--misses", action="store_true", help="List the top-1 misses.")
    args = parser.parse_args()
    embedder: Embedder | None = None
    load_seconds = None
    if not args.no_embedder:
        from kg.recall.embedder import SentenceTransformerEmbedder  # noqa: PLC0415 - only with the embedder

        started = time.perf_counter()
        embedder = SentenceTransformerEmbedder()
        embedder.embed(["warm up"])
        load_seconds = round(time.perf_counter() - started, 2)
    sets = {"dev": load("router_dev.jsonl"), "heldout": load("router_heldout.jsonl"),
            "heldout2": load("router_heldout2.jsonl")}  # fmt: skip
    rankers: dict[str, Ranker] = {"router": router(embedder, None), "keyword_peer": keyword_peer}
    if embedder is not None:
        rankers["router_semantic_always"] = router(embedder, True)
    report: dict[str, Any] = {"bench": "router", "embedder": "none" if embedder is None else embedder.model,
                              "embedder_load_s": load_seconds, "python": platform.python_version()}  # fmt: skip
    for name, ranker in rankers.items():
        started = time.perf_counter()
        for set_name, rows in sets.items():
            found = rates(rows, ranker)
            if not args.misses:
                found.pop("misses_top1")
            report[f"{name}_{set_name}"] = found
        report[f"{name}_ms_per_problem"] = round(1000 * (time.perf_counter() - started) /
                                                 sum(len(r) for r in sets.values()), 2)  # fmt: skip
    print(json.dumps(report))


if __name__ == "__main__":
    main()
