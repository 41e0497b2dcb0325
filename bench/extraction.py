"""Extraction on LoCoMo (issue 21): conversation -> memories, then QA answered by recall over them only.

    python bench/extraction.py --data ../shared/data/locomo/locomo-dev.json    # "data" in the output: the file's stem
    python bench/extraction.py --conversations 2 --mode bm25           # a quick look
    MABOS_LLM_URL=http://127.0.0.1:8080/v1 MABOS_LLM_MODEL=m python bench/extraction.py --extractors deterministic,llm

For each conversation: a fresh workspace and agent; every turn is ingested as a conversation message (role user,
``name`` = the speaker, ``created_at`` = the session date plus one second per turn); then ``memory extract`` (timed:
messages per second) with each extractor (``llm`` only when ``MABOS_LLM_URL`` or the workspace's ``llm_url`` is
set). Every QA item of categories 1-4 is then asked through ``MemoryService.recall`` over the **extracted**
memories only (``--mode``, top ``--k``); each hit is mapped back to its source turns through ``derived_from``
(a memory it replaced is followed one level). Scores, averaged over questions:

- ``recall@k_items``: share of the evidence turns among all source turns of the top k items (an aggregated
  item can cover many turns: ``turns_per_item`` says how many on average);
- ``recall@k_turns``: the same over only the first k distinct source turns in rank order (comparable with
  turn retrieval).

The peer, in the same run and workspace: every turn stored as its own memory item (content ``"speaker: text"``,
the recall benchmark's setting) and recalled with the same mode and k; its recall@k is the ceiling extraction
is measured against. Also: items and facts made per 100 messages, and messages per second of the extraction.
Only turns and session dates are read (no LoCoMo text is written anywhere but the temporary workspaces).
Progress goes to stderr; stdout gets ONE JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import default_data, evidence, speaker_turns

from kg.clock import FixedClock
from kg.extraction import extraction_service, workspace_chat
from kg.workspace import Workspace, init_workspace

AGENT = "locomo"
PEER = "turns"


def ingest(ws: Workspace, conv_turns: list[tuple[str, datetime, str, str]]) -> dict[str, str]:
    """The turns as messages of one session; message uid -> dia_id."""
    rows = [{"role": "user", "name": speaker, "content": text or "(no text)", "created_at": when}
            for _, when, speaker, text in conv_turns]  # fmt: skip
    dia_of: dict[str, str] = {}
    for start in range(0, len(rows), 1000):
        result = ws.conversations.ingest(AGENT, "locomo", rows[start : start + 1000])
        conv = ws.ports.conversations.get(result.conversation_uid)
        from kg.models.conversation import MessageQuery  # noqa: PLC0415 - keeps the bench's imports short

        for m in ws.ports.conversations.messages(MessageQuery(conversation_uid=conv.uid, from_seq=result.first_seq)):
            dia_of[m.uid] = conv_turns[m.seq][0]
    return dia_of


def sources(ws: Workspace, uid: str, dia_of: dict[str, str], seen: set[str] | None = None) -> list[str]:
    """The turns an item came from (following replaced items one level)."""
    item = ws.ports.memory.get_many([uid]).get(uid)
    if item is None:
        return []
    out: list[str] = []
    for parent in item.derived_from:
        if parent in dia_of:
            out.append(dia_of[parent])
        elif parent.startswith("M-") and seen is None:
            out += sources(ws, parent, dia_of, {uid})
    return list(dict.fromkeys(out))


def ask(ws: Workspace, agent: str, sample: dict[str, Any], dia_of: dict[str, str], *, k: int, mode: str,
        peer_text: dict[str, str] | None = None) -> dict[str, list[float]]:  # fmt: skip
    known = set(dia_of.values())
    scores: dict[str, list[float]] = {"items": [], "turns": [], "turns_per_item": []}
    for qa in sample["qa"]:
        if qa.get("category") not in (1, 2, 3, 4) or not (ev := evidence(qa, known)):
            continue
        hits = ws.memory.recall(agent, qa["question"], limit=k, mode=mode, touch=False).hits
        ranked: list[str] = []
        for hit in hits:
            found = [peer_text[hit.item.uid]] if peer_text is not None else sources(ws, hit.item.uid, dia_of)
            scores["turns_per_item"].append(len(found))
            ranked += [t for t in found if t not in ranked]
        first_k = ranked[:k]
        scores["items"].append(sum(e in ranked for e in ev) / len(ev))
        scores["turns"].append(sum(e in first_k for e in ev) / len(ev))
    return scores


def mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))[: args.conversations]
    extractors = [e for e in args.extractors.split(",") if e]
    totals: dict[str, dict[str, Any]] = {e: {"items": [], "turns": [], "tpi": [], "messages": 0, "made": 0,
                                             "facts": 0, "seconds": 0.0, "failed": 0} for e in extractors}  # fmt: skip
    peer: dict[str, list[float]] = {"items": [], "turns": []}
    skipped: list[str] = []
    for sample in data:
        conv_turns = speaker_turns(sample)
        for extractor in extractors:
            with tempfile.TemporaryDirectory() as tmp:
                ws = init_workspace(Path(tmp) / "ws", clock=FixedClock(datetime(2026, 1, 1, tzinfo=UTC)))
                try:
                    if extractor == "llm" and workspace_chat(ws) is None:
                        skipped.append("llm: no MABOS_LLM_URL / llm_url")
                        continue
                    ws.agents.add(AGENT)
                    dia_of = ingest(ws, conv_turns)
                    t0 = time.perf_counter()
                    report = extraction_service(ws, extractor=extractor, window=args.window).extract(AGENT)
                    seconds = time.perf_counter() - t0
                    if ws.vectors is not None:
                        ws.vectors.sync(save=False)
                    t = totals[extractor]
                    t["messages"] += len(conv_turns)
                    t["seconds"] += seconds
                    t["made"] += len(ws.memory.list_items(AGENT, include_archived=False))
                    t["facts"] += len(ws.facts.query(AGENT, limit=100_000))
                    t["failed"] += report.totals()["windows_failed"]  # type: ignore[operator]
                    got = ask(ws, AGENT, sample, dia_of, k=args.k, mode=args.mode)
                    t["items"] += got["items"]
                    t["turns"] += got["turns"]
                    t["tpi"] += got["turns_per_item"]
                    print(f"{sample['sample_id']} {extractor}: {len(conv_turns)} turns, {seconds:.1f}s, "
                          f"recall@{args.k} {mean(got['turns'])}", file=sys.stderr)  # fmt: skip
                    if extractor == extractors[0]:  # the peer once per conversation, in the same workspace
                        ws.agents.add(PEER)
                        stored = ws.memory.store_many(PEER, [{"content": f"{s}: {x}", "store": "long_term"}
                                                             for _, _, s, x in conv_turns])  # fmt: skip
                        turn_of = {item.uid: conv_turns[i][0] for i, item in enumerate(stored.items)}
                        if ws.vectors is not None:
                            ws.vectors.sync(save=False)
                        got = ask(ws, PEER, sample, dia_of, k=args.k, mode=args.mode, peer_text=turn_of)
                        peer["items"] += got["items"]
                        peer["turns"] += got["turns"]
                finally:
                    ws.close()
    results = []
    for extractor, t in totals.items():
        if not t["messages"]:
            continue
        results.append({
            "extractor": extractor, f"recall@{args.k}_turns": mean(t["turns"]),
            f"recall@{args.k}_items": mean(t["items"]),
            "turns_per_item": mean(t["tpi"]), "questions": len(t["turns"]),
            "items_per_100_messages": round(100 * t["made"] / t["messages"], 2),
            "facts_per_100_messages": round(100 * t["facts"] / t["messages"], 2),
            "messages_per_second": round(t["messages"] / t["seconds"], 1) if t["seconds"] else None,
            "messages": t["messages"], "windows_failed": t["failed"],
        })  # fmt: skip
    return {
        "bench": "extraction", "data": Path(args.data).stem, "data_path": str(args.data),
        "conversations": len(data), "k": args.k, "mode": args.mode,
        "window": args.window, "embedder": os.environ.get("MABOS_EMBEDDER", "local"), "results": results,
        "peer": {"what": "every turn as its own memory item, same recall", f"recall@{args.k}": mean(peer["turns"]),
                 "questions": len(peer["turns"])},
        "skipped": sorted(set(skipped)),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(default_data()))
    parser.add_argument("--conversations", type=int, default=7)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--mode", default="bm25", choices=["bm25", "vector", "hybrid"])
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--extractors", default="deterministic,llm")
    args = parser.parse_args()
    if args.mode == "bm25":
        os.environ.setdefault("MABOS_EMBEDDER", "none")
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
