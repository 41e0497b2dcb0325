"""Extraction quality on hand-written dialogues with gold facts (issue 32): what the extractor hears and believes.

    python bench/extraction_dev.py                                   # dev and held-out sets, deterministic
    python bench/extraction_dev.py --sets dev --verbose              # misses and false facts on stderr (tune here)
    MABOS_LLM_URL=http://127.0.0.1:8080/v1 MABOS_LLM_MODEL=m python bench/extraction_dev.py   # also the LLM path

Data: ``tests/data/extraction/<set>/*.jsonl``, one dialogue a line: ``id``, ``kind``, ``messages`` (``at``,
``text``, ``role`` default user), ``gold`` facts (``s``, ``p``, ``o``; ``p``/``o`` may list alternatives;
``open``: whether the fact is still current after the last message; ``from``/``to``: its validity, a day
``YYYY-MM-DD`` within ``tol`` days (default 1), a month ``YYYY-MM`` or a year), ``absent`` facts that must not
appear (``o`` null: any object; ``cause``: hypothetical, question, reported, correction, negation, pronoun,
distractor) and ``ok`` facts that are neither required nor wrong. The held-out set was written before the
extractor was changed for issue 32 and is never tuned on.

Each dialogue runs through the real pipeline: a fresh agent in one temporary workspace (SQLite, the shipped
ontologies, no embedder), its messages ingested as one session with their times, ``memory extract``, then every
fact of the agent (closed ones included) is read back. Scores:

- ``precision``: extracted facts matching a gold fact / extracted facts that match a gold fact or nothing
  (``ok`` facts and a named entity's own ``name`` fact, ``anna name Anna``, are not counted either way);
- ``recall``: gold facts found (subject, predicate, object after normalising: lower case, ``_`` for runs of
  non-letters, a leading article dropped);
- ``superseded_closed``: gold facts with ``open: false`` found and closed (``valid_until`` set);
- ``current_open``: gold facts with ``open: true`` found and still open;
- ``dates``: ``from``/``to`` checks passed (a fact not found fails its checks);
- ``false_by_cause``: extracted facts matching an ``absent`` fact, by cause.

Stdout gets ONE JSON line; ``--verbose`` lists misses and false facts on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kg.clock import FixedClock  # noqa: E402
from kg.extraction import extraction_service, workspace_chat  # noqa: E402
from kg.models import Fact  # noqa: E402
from kg.workspace import Workspace, init_workspace  # noqa: E402

DATA = ROOT / "tests" / "data" / "extraction"
CAUSES = ("hypothetical", "question", "reported", "correction", "negation", "pronoun", "distractor", "other")


def load(name: str, data: Path = DATA) -> list[dict[str, Any]]:
    """The dialogues of one set (every ``*.jsonl`` under ``data/name``, in file order)."""
    out: list[dict[str, Any]] = []
    for path in sorted((data / name).glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def norm(text: str) -> str:
    """``The Green Tea`` -> ``green_tea``."""
    low = re.sub(r"[^\w]+", "_", text.strip().lower()).strip("_")
    return re.sub(r"^(?:a|an|the)_", "", low)


def _alts(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [norm(v) for v in ([value] if isinstance(value, str) else value)]


def matches(fact: Fact, spec: dict[str, Any]) -> bool:
    """Whether ``fact`` is the fact ``spec`` describes (``p``/``o`` None: any)."""
    preds = [spec["p"]] if isinstance(spec["p"], str) else spec["p"]
    objects = _alts(spec.get("o"))
    return (norm(fact.subject) == norm(spec["s"]) and (preds is None or fact.predicate in preds)
            and (objects is None or norm(fact.object) in objects))  # fmt: skip


def _date_ok(got: datetime | None, want: str, tol: int | None) -> bool:
    if got is None:
        return False
    if len(want) == 4:
        return got.year == int(want)
    if len(want) == 7:
        return f"{got:%Y-%m}" == want
    day = datetime.fromisoformat(want).replace(tzinfo=UTC)
    return abs(got - day) <= timedelta(days=1 if tol is None else tol)


def score_dialogue(dialogue: dict[str, Any], facts: list[Fact]) -> dict[str, Any]:  # noqa: PLR0912 - one branch a count
    """The counts of one dialogue (see the module docstring) and what went wrong."""
    out: Counter[str] = Counter()
    wrong: list[str] = []
    for gold in dialogue["gold"]:
        found = [f for f in facts if matches(f, gold)]
        out["gold"] += 1
        out["found"] += bool(found)
        if not found:
            wrong.append(f"missed {gold['s']} {gold['p']} {gold['o']}")
        if gold.get("open", True):
            out["current"] += 1
            out["current_open"] += any(f.valid_until is None for f in found)
        else:
            out["superseded"] += 1
            out["superseded_closed"] += any(f.valid_until is not None for f in found)
            if found and all(f.valid_until is None for f in found):
                wrong.append(f"not closed {gold['s']} {gold['p']} {gold['o']}")
        for key, attr in (("from", "valid_from"), ("to", "valid_until")):
            if key in gold:
                out["date_checks"] += 1
                ok = any(_date_ok(getattr(f, attr), gold[key], gold.get("tol")) for f in found)
                out["dates_passed"] += ok
                if found and not ok:
                    wrong.append(f"date {key} {gold['s']} {gold['p']} {gold['o']}: want {gold[key]}, got "
                                 f"{[str(getattr(f, attr))[:10] for f in found]}")  # fmt: skip
    for fact in facts:
        said = f"{fact.subject} {fact.predicate} {fact.object}"
        if any(matches(fact, g) for g in dialogue["gold"]):
            out["true"] += 1
            continue
        bad = next((a for a in dialogue["absent"] if matches(fact, a)), None)
        if bad is not None:
            out["false"] += 1
            out["false:" + bad["cause"]] += 1
            wrong.append(f"false ({bad['cause']}) {said}")
        elif any(matches(fact, o) for o in dialogue.get("ok", [])) or (
            fact.predicate == "name" and norm(fact.subject) == norm(fact.object)
        ):
            out["neutral"] += 1
        else:
            out["false"] += 1
            out["false:unlisted"] += 1
            wrong.append(f"false (unlisted) {said}")
    return {"counts": out, "wrong": wrong}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def summarise(counts: Counter[str], dialogues: int) -> dict[str, Any]:
    """The scores of a set from its summed counts."""
    return {
        "dialogues": dialogues, "gold_facts": counts["gold"],
        "precision": _ratio(counts["true"], counts["true"] + counts["false"]),
        "recall": _ratio(counts["found"], counts["gold"]),
        "superseded_closed": f"{counts['superseded_closed']}/{counts['superseded']}",
        "superseded_closed_rate": _ratio(counts["superseded_closed"], counts["superseded"]),
        "current_open": f"{counts['current_open']}/{counts['current']}",
        "current_open_rate": _ratio(counts["current_open"], counts["current"]),
        "dates": f"{counts['dates_passed']}/{counts['date_checks']}",
        "false_by_cause": {c: counts["false:" + c] for c in (*CAUSES, "unlisted") if counts["false:" + c]},
    }  # fmt: skip


def run_set(ws: Workspace, dialogues: Iterable[dict[str, Any]], *, extractor: str, prefix: str,
            verbose: bool = False) -> dict[str, Any]:  # fmt: skip
    """Extract every dialogue as its own agent of ``ws`` and score the facts."""
    total: Counter[str] = Counter()
    n = 0
    service = extraction_service(ws, extractor=extractor)  # one service: the ontology is read once
    for dialogue in dialogues:
        n += 1
        agent = f"{prefix}-{dialogue['id']}".lower()
        ws.agents.add(agent)
        rows = [{"role": m.get("role", "user"), "content": m["text"], "created_at": m["at"]}
                for m in dialogue["messages"]]  # fmt: skip
        ws.conversations.ingest(agent, "s1", rows)
        service.extract(agent)
        scored = score_dialogue(dialogue, ws.facts.query(agent, limit=1000))
        total.update(scored["counts"])
        if verbose and scored["wrong"]:
            print(f"{dialogue['id']} ({dialogue['kind']}): " + "; ".join(scored["wrong"]), file=sys.stderr)
    return summarise(total, n)


def run(sets: list[str], *, data: Path = DATA, verbose: bool = False) -> dict[str, Any]:
    """Every set with the deterministic extractor and, when a model is configured, the LLM one."""
    results: list[dict[str, Any]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        ws = init_workspace(Path(tmp) / "ws", clock=FixedClock(datetime(2026, 1, 1, tzinfo=UTC)))
        try:
            extractors = ["deterministic"]
            if workspace_chat(ws) is not None:
                extractors.append("llm")
            else:
                skipped.append("llm: no [llm] / MABOS_LLM_URL configured")
            for extractor in extractors:
                for name in sets:
                    scores = run_set(ws, load(name, data), extractor=extractor, prefix=f"{extractor[:3]}-{name}",
                                     verbose=verbose)  # fmt: skip
                    results.append({"extractor": extractor, "set": name, **scores})
        finally:
            ws.close()
    return {"bench": "extraction-dev", "data": str(data), "results": results, "skipped": skipped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--sets", default="dev,heldout")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("MABOS_EMBEDDER", "none")
    print(json.dumps(run([s for s in args.sets.split(",") if s], data=Path(args.data), verbose=args.verbose)))


if __name__ == "__main__":
    main()
