"""``mabos conversation ...`` and ``mabos lcm ...`` on a real workspace: the whole path from a JSONL file to
expanded summaries, and bad input that changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conftest import Mabos

DIALOGUE = Path(__file__).resolve().parents[1] / "data" / "conversation" / "compaction-dialogue.jsonl"
A = ("--agent", "sales-agent")


def _long_session(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    """The rows as a JSONL file to ingest."""
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_ingest_compact_assemble_and_expand_back_to_every_message(
    ready: Mabos, tmp_path: Path, long_dialogue: Callable[[int], list[dict[str, Any]]]
) -> None:
    rows = _long_session(tmp_path, long_dialogue(4))
    ingested = ready.json("conversation", "ingest", *A, "--session", "long", "--file", str(rows))
    assert (ingested["created"], ingested["appended"]) == (True, 192)
    report = ready.json("conversation", "compact", *A, "--session", "long")
    assert report["compacted"] is True and report["checkpoint"]
    assert report["depths"][0]["compression_ratio"] <= 0.65  # at least 35% smaller
    context: dict[str, Any] = ready.json("conversation", "assemble", *A, "--session", "long", "--budget", "4000")
    kinds = {item["kind"] for item in context["items"]}
    assert kinds == {"message", "summary"} and "lcm_expand" in context["system_prompt_addition"]
    covered: set[str] = set()
    for uid in report["created"]:
        expanded = ready.json("lcm", "expand", *A, uid, "--include-messages", "--max-tokens", "1000000",
                              "--max-depth", "10")  # fmt: skip
        assert expanded["truncated"] is False
        covered |= {i["uid"] for i in expanded["items"] if i["kind"] == "message"}
    tail = [i["uid"] for i in context["items"] if i.get("in_tail")]
    assert len(covered) + len(tail) == 192  # every message is under a summary or in the fresh tail


def test_a_bad_line_names_itself_and_writes_nothing(ready: Mabos, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n{"role": "robot", "content": "beep"}\n', encoding="utf-8")
    result = ready("conversation", "ingest", *A, "--session", "s", "--file", str(bad))
    assert result.exit_code == 1 and result.stderr.startswith("error: line 2: role")
    missing = ready("lcm", "grep", *A, "hi", "--json")
    assert missing.exit_code == 0 and json.loads(missing.stdout)["hits"] == []


def test_another_agent_cannot_read_the_summaries(populated: dict[str, str], ready: Mabos) -> None:
    own = ready.json("lcm", "describe", *A, populated["summary"])
    assert own["kind"] == "leaf" and own["method"] == "extractive"
    other = ready("lcm", "describe", "--agent", "finance-agent", populated["summary"])
    assert other.exit_code == 1 and "error:" in other.stderr
    hits = ready.json("lcm", "grep", "--agent", "finance-agent", "Lisbon")["hits"]
    assert hits == []


def test_a_window_is_split_and_the_history_share_is_the_budget(populated: dict[str, str], ready: Mabos) -> None:
    context = ready.json("conversation", "assemble", *A, "--session", "s1", "--window", "10000")
    allocation = context["allocation"]
    assert context["budget_tokens"] == allocation["history"] == 4000  # 40% of the window: the default ratios
    assert sum(allocation[k] for k in ("system", "tools", "memory", "history", "request", "response_reserve")) == 10000
    neither = ready("conversation", "assemble", *A, "--session", "s1")
    both = ready("conversation", "assemble", *A, "--session", "s1", "--budget", "10", "--window", "10")
    assert neither.exit_code == both.exit_code == 1 and neither.stderr.startswith("error: budget: give either")


def test_recall_keeps_the_best_hits_that_fit_the_memory_share(ready: Mabos) -> None:
    for text in ("Acme renewal needs SSO " * 10, "Acme prefers annual billing", "Acme CFO is Dana Reyes"):
        ready.ok("memory", "store", *A, text, "--type", "fact", "--store", "long_term")
    env = {"MABOS_EMBEDDER": "none"}
    unbounded = json.loads(ready("memory", "recall", *A, "acme", "--mode", "bm25", "--json", env=env).stdout)
    bounded = json.loads(ready("memory", "recall", *A, "acme", "--mode", "bm25", "--max-tokens", "20", "--json",
                               env=env).stdout)  # fmt: skip
    assert len(unbounded["hits"]) == 3 and unbounded["max_tokens"] is None
    assert bounded["max_tokens"] == 20 and bounded["budget_dropped"] == 3 - len(bounded["hits"]) >= 1
    assert sum(len(h["item"]["content"]) for h in bounded["hits"]) <= 20 * 4
    window = json.loads(ready("memory", "recall", *A, "acme", "--mode", "bm25", "--window", "100", "--json",
                              env=env).stdout)  # fmt: skip
    assert window["max_tokens"] == 20  # the retrieved-memory share: 20% of the window


def test_admit_scores_dedups_and_writes_each_candidate_once(ready: Mabos) -> None:
    candidates = DIALOGUE.with_name("candidates.jsonl")
    env = {"MABOS_EMBEDDER": "none"}  # token Jaccard instead of cosine: the pipeline, not the model, is tested
    dry = json.loads(ready("memory", "admit", *A, "--file", str(candidates), "--dry-run", "--json", env=env).stdout)
    assert [r["decision"] for r in dry["admission"]] == ["admit", "admit", "reject"]
    before = ready("memory", "status", *A, "--json", env=env)
    result = ready("memory", "admit", *A, "--file", str(candidates), "--json", env=env)
    assert result.exit_code == 0, result.output
    actions = {o["key"]: o["action"] for o in json.loads(result.stdout)["outcomes"]}
    assert actions == {"m1": "create", "m2": "duplicate", "m3": "reject"}
    after = ready("memory", "status", *A, "--json", env=env)
    stored = lambda r: sum(s["active"] for s in json.loads(r.stdout)["stores"].values())  # noqa: E731
    assert stored(after) == stored(before) + 1
    bad = ready("memory", "admit", *A, "--file", str(DIALOGUE), env=env)  # messages, not candidates
    assert bad.exit_code == 1 and bad.stderr.startswith("error: line 1: ")
