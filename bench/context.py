"""Conversation memory at 5,000 messages (issue 8): ingest, compaction, lossless expansion, assembly latency.

    python bench/context.py --data ../shared/data/locomo/locomo-dev.json
    python bench/context.py --messages 1000 --runs 50            # a quick run

1. **Conversation**: the turns of the LoCoMo conversations (``--data``, default ``$MABOS_BENCH_DATA`` or
   ``../shared/data``; see its README) concatenated into one session of ``--messages`` messages (the turns
   are reused from the start when the file has fewer). ``speaker_a`` is the user, ``speaker_b`` the
   assistant, with the speaker's name; times are the session dates plus 30 s a turn, each LoCoMo
   conversation shifted to start a day after the previous one ends, so time only moves forward.
2. **Ingest** through ``ConversationService.ingest`` (one call, every row validated first).
3. **Compact** once (a manual full sweep) with the extractive summariser and the issue's defaults (leaf
   chunk 20,000 tokens, targets 2,400 / 2,000, fan-out 8 / 4, fresh tail 64): time, and per depth the
   summaries made, source and summary tokens and the compression ratio (summary / source tokens).
4. **Lossless**: every summary is expanded with ``lcm_expand`` down to its messages (no cap reached, message
   count = ``descendant_count``), and the messages beneath the roots plus the uncovered ones must be
   exactly the log: ``lossless_pct`` is the share of messages recovered (target 100).
5. **Assembly** under a 32,000-token budget, ``--runs`` times each: newest-first, and by relevance to the
   LoCoMo questions (BM25; the embedder is off). p50/p95 in ms (target p95 < 50 ms). For comparison,
   ``assembly_uncompacted_*``: newest-first over the same log before compaction (``--runs / 4`` times).

Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ["MABOS_EMBEDDER"] = "none"  # summaries and assembly here need no embedder; keep the bench offline

from locomo_data import default_data, speaker_turns
from vector_index import percentile

from kg.clock import FixedClock
from kg.conversation.compaction import lossless_check
from kg.conversation.service import ConversationService
from kg.conversation.summarize import ExtractiveSummarizer
from kg.conversation.tools import MAX_EXPAND_DEPTH, MAX_EXPAND_TOKENS
from kg.models.conversation import MessageQuery
from kg.workspace import init_workspace

AGENT = "bench"
SESSION = "locomo-concatenated"
TURN_SECONDS = 30


def locomo_rows(path: Path, n: int) -> tuple[list[dict[str, Any]], list[str]]:
    """``n`` message rows from the LoCoMo turns (cycled when fewer), and the QA questions (prompts)."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    turns: list[tuple[datetime, str, str, str]] = []  # (time, role, name, text) in conversation order
    questions: list[str] = [qa["question"] for s in samples for qa in s.get("qa", []) if qa.get("question")]
    for sample in samples:
        user = sample["conversation"]["speaker_a"]
        for _, at, speaker, text in speaker_turns(sample, seconds=TURN_SECONDS):
            turns.append((at, "user" if speaker == user else "assistant", speaker, text))
        turns.append((datetime.min.replace(tzinfo=UTC), "", "", ""))  # end of one LoCoMo conversation
    rows: list[dict[str, Any]] = []
    clock = datetime(2023, 1, 1, tzinfo=UTC)
    shift = timedelta(0)
    first_of_conversation = True
    while len(rows) < n:
        for at, role, name, text in turns:
            if not role:
                first_of_conversation = True
                continue
            if first_of_conversation:  # start a day after the previous conversation ended
                shift = clock + timedelta(days=1) - at
                first_of_conversation = False
            clock = max(clock, at + shift)
            rows.append({"role": role, "name": name, "content": text, "created_at": clock.isoformat()})
            if len(rows) == n:
                break
    return rows, questions


def ms(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 2)


def timed(call: Callable[[], object], runs: int) -> list[float]:
    call()  # warm-up
    out = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        out.append(time.perf_counter() - began)
    return out


def lossless_by_expansion(svc: ConversationService, conversation_uid: str) -> dict[str, Any]:
    """Expand every summary with lcm_expand; compare what the roots reach plus the uncovered with the log."""
    store = svc.store
    log = {m.uid for m in store.conversations.messages(MessageQuery(conversation_uid=conversation_uid))}
    roots = {s.uid for s in store.summaries.roots(conversation_uid)}
    reached: list[str] = []
    bad: list[str] = []
    summaries = store.summaries.list(conversation_uid)
    for summary in summaries:
        result = svc.expand(AGENT, summary.uid, max_depth=MAX_EXPAND_DEPTH, include_messages=True,
                            max_tokens=MAX_EXPAND_TOKENS)  # fmt: skip
        messages = [item.uid for item in result.items if item.kind == "message"]
        if result.truncated or len(messages) != summary.descendant_count:
            bad.append(summary.uid)
        if summary.uid in roots:
            reached += messages
    reached += [m.uid for m in store.summaries.uncovered_messages(conversation_uid)]
    recovered = len(set(reached) & log)
    return {"summaries_expanded": len(summaries), "expansion_errors": len(bad),
            "duplicates": len(reached) - len(set(reached)),
            "lossless_pct": round(100 * recovered / len(log), 3) if log else 100.0}  # fmt: skip


def run(data: Path, n: int, runs: int, budget: int) -> dict[str, Any]:
    rows, questions = locomo_rows(data, n)
    last = datetime.fromisoformat(rows[-1]["created_at"])
    with tempfile.TemporaryDirectory(prefix="mabos-context-") as tmp:
        clock = FixedClock(last + timedelta(minutes=5))
        ws = init_workspace(Path(tmp) / "ws", clock=clock)
        ws.agents.add(AGENT)
        svc = ConversationService(ws.ports, ws.scopes, clock, summarizer=ExtractiveSummarizer(), checkpoints=ws.path)
        began = time.perf_counter()
        ingested = svc.ingest(AGENT, SESSION, rows)
        ingest_s = time.perf_counter() - began
        raw = timed(lambda: svc.assemble(AGENT, SESSION, budget=budget), max(1, runs // 4))
        began = time.perf_counter()
        report = svc.compact(AGENT, SESSION)
        compact_s = time.perf_counter() - began
        uid = ingested.conversation_uid
        check = lossless_check(ws.ports.conversations, ws.ports.summaries, uid)
        expansion = lossless_by_expansion(svc, uid)
        newest: list[float] = []
        relevant: list[float] = []
        context = svc.assemble(AGENT, SESSION, budget=budget)  # warm-up
        for i in range(runs):
            began = time.perf_counter()
            context = svc.assemble(AGENT, SESSION, budget=budget)
            newest.append(time.perf_counter() - began)
            began = time.perf_counter()
            svc.assemble(AGENT, SESSION, budget=budget, prompt=questions[i % len(questions)])
            relevant.append(time.perf_counter() - began)
        ws.close()
    return {
        "messages": ingested.appended, "message_tokens": ingested.tokens,
        "ingest_s": round(ingest_s, 3), "ingest_messages_per_s": round(n / ingest_s, 1),
        "compact_s": round(compact_s, 3), "summaries": len(report.created), "rejected": len(report.rejected),
        "retried": report.retried, "checkpoint_written": report.checkpoint is not None,
        "depths": [d.model_dump() for d in report.depths],
        "context_tokens_before": report.context_tokens_before, "context_tokens_after": report.context_tokens_after,
        "roots": report.roots, "uncovered_messages": report.uncovered_messages,
        "lossless": check.lossless and expansion["lossless_pct"] == 100.0 and not expansion["expansion_errors"],
        **expansion,
        "assembly_budget": budget, "assembly_runs": runs,
        "assembly_items": len(context.items), "assembly_tokens": context.total_tokens,
        "assembly_summaries": context.summaries,
        "assembly_p50_ms": ms(newest, 0.5), "assembly_p95_ms": ms(newest, 0.95),
        "assembly_prompt_p50_ms": ms(relevant, 0.5), "assembly_prompt_p95_ms": ms(relevant, 0.95),
        "assembly_uncompacted_p50_ms": ms(raw, 0.5), "assembly_uncompacted_p95_ms": ms(raw, 0.95),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data(), help="LoCoMo JSON (locomo-dev.json)")
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=200, help="assemblies timed per mode")
    parser.add_argument("--budget", type=int, default=32_000)
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"no LoCoMo file at {args.data} (use --data or MABOS_BENCH_DATA)")
    result = run(args.data, args.messages, args.runs, args.budget)
    print(json.dumps({"benchmark": "context", **result, "python": platform.python_version(),
                      "machine": platform.machine()}))  # fmt: skip


if __name__ == "__main__":
    main()
