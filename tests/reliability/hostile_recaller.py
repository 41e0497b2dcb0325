"""One process of tests/reliability/test_hostile_cold_paths.py's recall-access attacks.

    python hostile_recaller.py recall WS OUT --agent a --rounds 30    # recall (touching), one JSON line per answer
    python hostile_recaller.py write  WS OUT --agent a --rounds 30    # store items, one JSON line per acknowledged one
    python hostile_recaller.py forever WS OUT --agent a               # recall until killed
    python hostile_recaller.py vector WS OUT --agent a --rounds 60    # recall by vector, one line per answer
    python hostile_recaller.py save WS OUT --agent a --rounds 20      # store an item and save the index, each round

Every line is flushed before the next operation, so ``OUT`` is what the process was told: a recall line lists the
uids it answered (the access a later count must show), a write line the uid the store acknowledged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import kg

QUERIES = ["renewal terms", "car trouble", "JWT tokens", "refund policy", "renewal car"]


def main(role: str, path: str, out: str, agent: str, rounds: int) -> None:
    with Path(out).open("a", encoding="utf-8") as journal, kg.open_workspace(Path(path)) as ws:
        count = 0
        while role == "forever" or count < rounds:
            if role in {"write", "save"}:
                uid = ws.memory.store_item(agent, f"renewal note {count} about car trouble and JWT tokens").item.uid
                saved = ws.vectors.sync(save=True).saved if role == "save" and ws.vectors is not None else None
                journal.write(json.dumps({"ack": uid, "saved": saved}) + "\n")
            elif role == "vector":
                result = ws.memory.recall(agent, "car trouble and JWT tokens", mode="vector", limit=5, touch=False)
                line = {"mode": result.mode, "fallback": result.fallback, "notes": result.notes,
                        "hits": [h.item.uid for h in result.hits]}  # fmt: skip
                journal.write(json.dumps(line) + "\n")
            else:
                result = ws.memory.recall(agent, QUERIES[count % len(QUERIES)], mode="bm25", limit=5)
                journal.write(json.dumps({"hits": [h.item.uid for h in result.hits], "notes": result.notes}) + "\n")
            journal.flush()
            count += 1


if __name__ == "__main__":
    role, path, out = sys.argv[1:4]
    options = dict(zip(sys.argv[4::2], sys.argv[5::2], strict=True))
    main(role, path, out, options["--agent"], int(options.get("--rounds", "0")))
