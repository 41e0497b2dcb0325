"""``mabos memory extract`` and ``mabos memory list`` end to end: conversation -> memories -> facts, the report,
idempotent re-runs, --valid-at before and after a move, and one-line errors (issue 21). No embedder, no LLM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Mabos

A = ("--agent", "sales-agent")


@pytest.fixture(autouse=True)
def _no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MABOS_EMBEDDER", "none")
    monkeypatch.delenv("MABOS_LLM_URL", raising=False)


def ingest(ready: Mabos, tmp_path: Path, name: str, rows: list[tuple[str, str]]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"role": "user", "content": c, "created_at": t}) + "\n" for t, c in rows))
    ready.json("conversation", "ingest", *A, "--session", "s1", "--file", str(path))


def facts_of(data: object) -> list[str]:
    rows = data["facts"] if isinstance(data, dict) else data
    assert isinstance(rows, list)
    return [f["object"] for f in rows]


def test_conversation_to_memories_to_facts(ready: Mabos, tmp_path: Path) -> None:
    ingest(ready, tmp_path, "first", [("2024-05-01T09:00:00Z", "I live in Berlin. I love hiking."),
                                      ("2024-05-01T09:01:00Z", "Do you remember my sister?")])  # fmt: skip
    first = ready.json("memory", "extract", *A)
    assert first["totals"]["windows_done"] == 1 and first["totals"]["items_written"] == 2
    assert first["report"]["windows"][0]["decisions"] == {"create": 2}
    assert first["markdown"].startswith("# Extraction report: sales-agent")

    listed = ready.json("memory", "list", *A)
    assert listed["count"] == 2
    assert all(item["derived_from"] and item["source"] == "extraction" for item in listed["items"])
    prefs = ready.json("memory", "list", *A, "--category", "preferences")
    assert [i["type"] for i in prefs["items"]] == ["preference"]

    assert ready.json("memory", "extract", *A)["totals"]["windows"] == 0  # nothing new: nothing read

    ingest(ready, tmp_path, "move", [("2024-06-01T09:00:00Z", "I moved to Paris.")])
    moved = ready.json("memory", "extract", *A)
    assert moved["totals"]["facts_invalidated"] == 1
    before = ready.json("fact", "query", *A, "--subject", "user", "--predicate", "livesIn",
                        "--valid-at", "2024-05-15T00:00:00Z")  # fmt: skip
    after = ready.json("fact", "query", *A, "--subject", "user", "--predicate", "livesIn",
                       "--valid-at", "2024-06-15T00:00:00Z")  # fmt: skip
    assert facts_of(before) == ["berlin"] and facts_of(after) == ["paris"]

    text = ready.ok("memory", "extract", *A, "--markdown").stdout
    assert text.startswith("# Extraction report: sales-agent")


def test_bad_input_is_one_line_and_changes_nothing(ready: Mabos) -> None:
    missing = ready("memory", "extract", *A, "--session", "nope")
    assert missing.exit_code == 1 and missing.stderr.count("\n") == 1 and "session" in missing.stderr
    llm = ready("memory", "extract", *A, "--extractor", "llm")
    assert llm.exit_code == 1 and "extractor" in llm.stderr
    usage = ready("memory", "extract", *A, "--window", "0")
    assert usage.exit_code == 2
    assert ready.json("memory", "list", *A)["count"] == 0


def test_compaction_runs_extraction_and_saves_its_report(ready: Mabos, tmp_path: Path) -> None:
    ingest(ready, tmp_path, "first", [("2024-05-01T09:00:00Z", "I live in Berlin.")])
    assert ready.json("memory", "list", *A)["count"] == 0  # ingest alone extracts nothing by default
    ready.json("conversation", "compact", *A, "--session", "s1")
    assert ready.json("memory", "list", *A)["count"] == 1
    reports = sorted((ready.workspace / ".mabos" / "extraction-reports").glob("extraction-*-compact.*"))
    assert [p.suffix for p in reports] == [".json", ".md"]
    assert json.loads(reports[0].read_text())["agent_id"] == "sales-agent"


def test_configuration_turns_the_automatic_runs_on_and_off(ready: Mabos, tmp_path: Path) -> None:
    config = ready.workspace / "mabos.toml"
    config.write_text(config.read_text() + "\n[extraction]\nafter_compact = false\nevery_messages = 2\n")
    ingest(ready, tmp_path, "one", [("2024-05-01T09:00:00Z", "I live in Berlin.")])
    assert ready.json("memory", "list", *A)["count"] == 0  # 1 of 2 messages waiting
    ingest(ready, tmp_path, "two", [("2024-05-01T09:01:00Z", "I love hiking.")])
    assert ready.json("memory", "list", *A)["count"] == 2  # the second message made it due
    ingest(ready, tmp_path, "three", [("2024-05-01T09:02:00Z", "I prefer green tea.")])
    ready.json("conversation", "compact", *A, "--session", "s1")
    assert ready.json("memory", "list", *A)["count"] == 2  # after_compact is off
